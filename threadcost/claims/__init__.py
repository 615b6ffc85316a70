"""Claims as code: one record per claim, judged reading by reading.

- :mod:`.records`: one module per source; each claim's published values (typed
  once), as-published readings, shape readings and why functions;
- :mod:`.catalogue`: the records, collected;
- :mod:`.read`: which stored measurement feeds a reading (one module per family);
- :mod:`.logic`, :mod:`.readings`: the verdict rules; :mod:`.whys`: the causes;
- :mod:`.published`: the published words, numbers and quotes as tables (from the
  records) and the citations;
- :mod:`.machines`: each claim's verdict on every machine folder, and the machine
  property behind a verdict that flips between them (``threadcost claims
  --all-machines``, page 06).

:func:`judge` is what notebook 06, ``threadcost claims`` and the summary views use;
:func:`folklore` gives the index its sentences.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

from threadcost import paths
from threadcost.claims import catalogue, readings, summary
from threadcost.claims.model import (
    CLASSES,
    NOT_RUN,
    AssertionVerdict,
    CauseGroup,
    ClaimVerdict,
    ContextRow,
    Why,
)
from threadcost.claims.published import claims, quotes, sources, value, values, values_for
from threadcost.findings import Quantity, folder_cache
from threadcost.findings.context_switch import yardstick
from threadcost.host import machine
from threadcost.measured.measurement import Measurement, Missing
from threadcost.measured.runs import MemoryRun, Runs, UnreadableRun
from threadcost.store import datastore

__all__ = ["CLASSES", "AssertionVerdict", "ClaimVerdict", "claim_reading", "claims",
           "folklore", "for_experiment", "for_page", "judge", "measure", "quotes",
           "reading_name", "sources", "tally", "tally_readings", "value", "values",
           "values_for"]


def for_page(notebook: str) -> list[str]:
    """The claims whose verdicts a page shows (its notebook's file stem, or its number:
    ``for_page("04")``), in order, as their records declare (``pages``)."""
    stem = _notebook(notebook)
    return [c.id for c in catalogue.CLAIMS if stem in c.pages]


def for_experiment(name: str) -> list[str]:
    """The claims judged from a registered experiment's runs, as their records declare
    (``experiments``), in order."""
    return [c.id for c in catalogue.CLAIMS if name in c.experiments]


def _notebook(page: str) -> str:
    if page.isdigit():
        stems = {p for c in catalogue.CLAIMS for p in c.pages if p.startswith(f"{page}_")}
        if len(stems) == 1:
            return stems.pop()
        raise KeyError(f"page {page!r}: no claim's record names a notebook numbered {page}")
    return page


def judge(machine_id: str | None = None, data_dir: str | Path | None = None,
          results: list[Any] | None = None) -> list[ClaimVerdict]:
    """The verdict on every published claim, from one machine's stored runs.

    ``machine_id``: a folder under the data folder (default: this machine).
    ``results``: experiment Results a notebook holds. One read back from a stored run
    of the folder (a notebook measured and saved it, or drew it from the store) is
    pooled with the other stored runs, as every page pools them, so a claim gets
    one verdict on every page. One not stored (``save=False``) stands in for the
    stored runs of its experiment; it was measured on this host, and the folder's
    runs of another host are refused. A folder of another machine (a paper drawn
    from its stored runs) is read with its own runs' fingerprint, never this host's.
    """

    if not results:  # the stored runs alone: judged before, here or in another process?
        return _judge_stored(machine_id or machine.machine_id(), data_dir)
    mid, runs = _runs(machine_id, data_dir, results)
    # the stored runs alone (results, if any, are stored runs read back): judged before?
    if not any(isinstance(r, MemoryRun) for r in runs.runs):
        return _judge_stored(mid, data_dir)
    return _judge_runs(mid, runs, data_dir)


def _judge_runs(mid: str, runs: Runs, data_dir: str | Path | None) -> list[ClaimVerdict]:
    """Every claim judged on these runs of folder ``mid``."""
    yard = {}  # yardstick -> (measured here, published), for the context rows
    try:
        got = yardstick("memcpy_64kib_cold")(runs)
    except UnreadableRun:  # its run could not be read: no context row reads it
        got = None
    if isinstance(got, Measurement):
        yard["memcpy_64kib_cold"] = (got.value,
                                     catalogue.PUBLISHED_YARDSTICKS["memcpy_64kib_cold"])
    out = [readings.judge_record(claim, runs, claim.source, claim.words, yard)
           for claim in catalogue.CLAIMS]
    return _note_skipped(out, data_dir, mid)


# What a verdict is made of: the types folder_cache keeps and rebuilds.
_VERDICT_TYPES = (ClaimVerdict, AssertionVerdict, CauseGroup, ContextRow, Why, Quantity)


def _judge_stored(mid: str, data_dir: str | Path | None) -> list[ClaimVerdict]:
    """The verdicts of folder ``mid``'s stored runs alone: judged once per process and
    set of runs (:data:`_JUDGED`), and kept for the other processes of a paper build,
    which judge the same folder (``threadcost.findings.folder_cache``)."""
    key = _judged_key(mid, data_dir)
    if key is not None and key in _JUDGED:
        return list(_JUDGED[key])
    root = Path(data_dir) if data_dir is not None else paths.data_dir_for(mid)
    out: list[ClaimVerdict] = folder_cache.memo(
        "verdicts", root, mid, lambda: _judge_runs(mid, Runs.load(mid, data_dir), data_dir),
        _VERDICT_TYPES)
    key = _judged_key(mid, data_dir)
    if key is not None:  # every run it read, read whole and unchanged since
        if len(_JUDGED) >= 16:
            _JUDGED.pop(next(iter(_JUDGED)))
        _JUDGED[key] = list(out)
    return list(out)


# Verdicts judged from stored runs alone in this process, keyed by every file of every
# run they were judged from (datastore.folder_state: any change is a new key, and a
# folder holding a run that could not be read is never kept): a page judges its folder
# several times (its summary, its claims sections, the index's abstract and tally).
_JUDGED: dict[tuple[Any, ...], list[ClaimVerdict]] = {}


def _judged_key(mid: str, data_dir: str | Path | None) -> tuple[Any, ...] | None:
    state = datastore.folder_state(data_dir, mid)
    return None if state is None else (mid, str(data_dir), state)


def _runs(machine_id: str | None, data_dir: str | Path | None,
          results: list[Any] | None) -> tuple[str, Any]:
    """(the machine folder, its runs as :func:`judge` reads them)."""

    here = machine.machine_id()
    mid = machine_id or here
    runs = Runs.load(mid, data_dir)
    fresh = [r for r in results or [] if not runs.holds(r)]
    if fresh:
        fp = (machine.fingerprint(include_git=False) if mid == here or not runs.runs
              else runs.host_fingerprint())
        runs = runs.with_results(fresh, fp)
    return mid, runs


def measure(claim_id: str, words: str, machine_id: str | None = None,
            data_dir: str | Path | None = None, results: list[Any] | None = None) -> Any:
    """What one reading (or context row) of a claim reads, from the runs :func:`judge`
    reads: a :class:`~threadcost.claims.model.Measurement` (value, 95% interval,
    repeats) or a ``Missing``. ``words``: a part of the reading's text. A page that
    prints a number a claim judges prints this, so both say the same value of the
    same statistic."""

    _, runs = _runs(machine_id, data_dir, results)
    for claim in catalogue.CLAIMS:
        if claim.id != claim_id:
            continue
        selects = [r.select for _, r in claim.readings() if words in r.text]
        selects += [c.select for c in claim.context if words in c.label]
        if selects:
            try:
                return selects[0](runs)
            except (KeyError, ValueError, IndexError) as exc:
                return Missing(str(exc))
    raise KeyError(f"claim {claim_id} has no reading with the words {words!r}")


def claim_reading(words: str) -> str:
    """The claim that declares a reading (or context row) with ``words`` in its text: a
    page quoting a reading finds its claim here, never by typing its id."""
    for claim in catalogue.CLAIMS:
        if any(words in r.text for _, r in claim.readings()) or any(
                words in c.label for c in claim.context):
            return claim.id
    raise KeyError(f"no claim has a reading with the words {words!r}")


def reading_name(claim_id: str, words: str) -> str:
    """The name a claim's reading prints its measured value under (:func:`measure`'s
    ``words`` pick the reading, as there): ``reading_c33_the_direct_cost_of_a_switch...``.
    A page quoting a claim's reading marks it with this one name, so the check on the
    rendered pages sees every print of it."""
    text = words
    for claim in catalogue.CLAIMS:
        if claim.id == claim_id:
            found = [r.text for _, r in claim.readings() if words in r.text]
            found += [c.label for c in claim.context if words in c.label]
            text = found[0] if found else words
    slug = re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")
    if len(slug) > 60:  # cut, and told apart from another reading cut the same way
        slug = slug[:52].rstrip("_") + "_" + hashlib.sha1(text.encode()).hexdigest()[:7]
    return f"reading_{claim_id.lower()}_{slug}"


def _note_skipped(verdicts: list[ClaimVerdict], data_dir: str | Path | None,
                  mid: str) -> list[ClaimVerdict]:
    """A claim that may have read a run that could not be read says so (#26)."""


    skipped = datastore.skipped_runs(data_dir, mid)
    if not skipped:
        return verdicts
    names = ", ".join(s.path.name for s in skipped[:5]) + (" ..." if len(skipped) > 5 else "")
    note = f"{len(skipped)} stored run(s) could not be read and were skipped ({names})"
    experiments = {s.experiment for s in skipped}
    out = []
    for v in verdicts:
        touched = "" in experiments or any(
            a.verdict == NOT_RUN or any(f"-{e}-" in str(a.run_id) for e in experiments)
            for a in v.assertions)
        if not touched or "could not read " in v.sentence:  # its reading named the run
            out.append(v)
        elif v.verdict == NOT_RUN:  # its own reason first: the skipped run may not be why
            reason = f"{v.reason}; {note}" if v.reason else note
            out.append(replace(v, reason=reason, sentence=f"{v.id} could not be judged: "
                                                          f"{reason}."))
        else:
            out.append(replace(v, sentence=f"{v.sentence} Note: {note}."))
    return out


def tally(verdicts: list[ClaimVerdict]) -> dict[str, int]:
    """How many published claims got each verdict class (every class listed, in order);
    the project's own findings (C23's kind) are not counted."""
    seen = Counter(v.verdict for v in verdicts if not v.finding)
    return {cls: seen.get(cls, 0) for cls in CLASSES}


def tally_readings(verdicts: list[ClaimVerdict]) -> dict[str, dict[str, int]]:
    """As-published readings and shapes counted apart (published claims only):
    kind -> {"holds", "differs", "inconclusive", "not run here", "computed"}."""

    return summary.tally_readings(verdicts)


def folklore(verdicts: list[ClaimVerdict]) -> list[str]:
    """A few sentences with numbers for the index and the abstract."""

    return summary.folklore(verdicts)
