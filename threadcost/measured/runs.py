"""One machine's stored runs, looked up by experiment and setup (never by recency).

Runs are pooled only when their fingerprints agree in everything that sets
performance (:func:`threadcost.host.machine.identity`: CPU vendor, family, model
number, stepping, microcode, kernel release, mitigations, CPUs, memory,
virtualization). A machine folder that holds runs of two hosts (copied in by hand,
or named the old way, without the identity hash) is judged on one host's runs; the
others are refused, and :attr:`Runs.refused` says which and how the hosts differ.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from threadcost.host import machine
from threadcost.results import run_files
from threadcost.store import datastore


class UnreadableRun(ValueError):
    """A reading would have read a stored run that could not be read: it says so
    ("could not read <run>: <why>") instead of reading another run or "none stored"."""

    def __init__(self, skipped: datastore.Skipped) -> None:
        self.skipped = skipped
        super().__init__(run_files.printable(f"could not read {skipped.path.name}: "
                                             f"{_why(skipped)}"))


def _why(skipped: datastore.Skipped) -> str:
    """The reason, without the run folder's path that starts it (the page names the run)."""
    reason = skipped.reason
    folder = str(skipped.path)
    if reason.startswith(folder):
        reason = reason[len(folder):].lstrip("/")
    return reason


@dataclass(frozen=True)
class Runs:
    """The complete runs of one machine folder, all measured on one host.

    ``refused``: one sentence per group of runs in the folder that were left out
    because their fingerprint names another host (empty when none were).
    ``unreadable``: the folder's runs that could not be read (damaged, edited, or
    hostile: :func:`threadcost.store.datastore.load_run`); a reading that would have read one
    raises :class:`UnreadableRun` (:meth:`matching`, :meth:`refuse_unreadable`).
    """

    machine_id: str
    runs: tuple[datastore.Run, ...]
    refused: tuple[str, ...] = ()
    unreadable: tuple[datastore.Skipped, ...] = ()

    @classmethod
    def load(cls, machine_id: str, data_dir: str | Path | None = None) -> Runs:
        stored, skipped = datastore.scan(data_dir, machine_id)
        kept, refused = one_host(stored, machine_id)
        return cls(machine_id, tuple(kept), tuple(refused), tuple(skipped))

    def refuse_unreadable(self, experiment: str, params: dict[str, Any] | None = None,
                          newest: bool = False) -> None:
        """Raise :class:`UnreadableRun` when a run of ``experiment`` that could not be
        read may be one a reading wants: its parameters match ``params`` (or cannot be
        read), and with ``newest``, it is newer than every readable run of it (the
        rule of a reading that takes the newest run)."""
        for skipped in self.unreadable:
            if skipped.experiment not in (experiment, ""):
                continue
            said = skipped.params
            if params and said is not None and not all(
                    _matches(said.get(k, _ABSENT), v) for k, v in params.items()):
                continue
            if newest and any(r.experiment == experiment and r.path.name > skipped.path.name
                              for r in self.runs):
                continue
            raise UnreadableRun(skipped)

    def with_results(self, results: list[Any], fingerprint: dict[str, Any]) -> Runs:
        """These runs with in-memory results (not yet saved) in place of the stored runs
        of the same experiments: a notebook judges what it has just measured. Stored
        runs of another host than ``fingerprint``'s are refused, not pooled."""
        fresh = [MemoryRun.of(r, i, fingerprint) for i, r in enumerate(results)]
        replaced = {r.experiment for r in fresh}
        here = machine.identity_hash(fingerprint)
        kept = tuple(r for r in self.runs if r.experiment not in replaced
                     and host(r) == here)
        other = [r for r in self.runs if r.experiment not in replaced and host(r) != here]
        refused = self.refused + ((refusal(other, fingerprint, len(kept) + len(fresh),
                                           self.machine_id),) if other else ())
        unreadable = tuple(s for s in self.unreadable if s.experiment not in replaced)
        return Runs(self.machine_id, kept + tuple(fresh), refused, unreadable)

    def host_fingerprint(self) -> dict[str, Any]:
        """The fingerprint of the host these runs were measured on (its newest run's)."""
        fp = self.runs[-1].meta.get("machine") if self.runs else None
        return dict(fp) if isinstance(fp, dict) else {}

    def holds(self, result: Any) -> bool:
        """Is ``result`` one of these stored runs read back (same experiment, parameters,
        summary and limit)? Then it is pooled already and stands in for nothing."""
        return any(r.experiment == result.experiment
                   and r.meta.get("params") == result.params
                   and r.meta.get("summary") == result.summary
                   and r.meta.get("limit_hit") == result.limit_hit for r in self.runs)

    def matching(self, experiment: str, **params: Any) -> list[datastore.Run]:
        """Runs of ``experiment`` whose parameters equal every given value.

        A value may be a callable (a predicate on the stored parameter). Runs
        are returned in run-id order; callers pool them, never pick the newest.
        A run of it that could not be read and may match raises :class:`UnreadableRun`.
        """
        self.refuse_unreadable(experiment, params)
        out = []
        for run in self.runs:
            if run.experiment != experiment:
                continue
            stored = run.meta.get("params", {})
            if all(_matches(stored.get(k, _ABSENT), v) for k, v in params.items()):
                out.append(run)
        return sorted(out, key=lambda r: r.meta["run_id"])

    def tables(self, runs: list[datastore.Run], name: str) -> pd.DataFrame:
        """One table of several runs, stacked, with ``run_id`` and ``run_index``."""
        frames = []
        for i, run in enumerate(runs):
            if name in run.meta.get("tables", []):
                frames.append(run.table(name).assign(run_id=run.meta["run_id"], run_index=i))
        return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


@dataclass(frozen=True)
class MemoryRun(datastore.Run):
    """A Result not (yet) saved, looked at as a stored run."""

    frames: dict[str, pd.DataFrame] | None = None

    @classmethod
    def of(cls, result: Any, index: int, fingerprint: dict[str, Any]) -> MemoryRun:
        meta = {"experiment": result.experiment,
                "run_id": f"this notebook's {result.experiment} run ({index + 1}, unsaved)",
                "params": result.params, "summary": result.summary,
                "tables": list(result.tables), "machine": fingerprint, "complete": True}
        return cls(path=Path("."), meta=meta, frames=dict(result.tables))

    def table(self, name: str) -> pd.DataFrame:
        if self.frames is None or name not in self.frames:
            raise datastore.DataError(f"no table {name!r} in this unsaved run")
        return self.frames[name]


_ABSENT = object()


def _matches(stored: Any, wanted: Any) -> bool:
    if callable(wanted):
        return stored is not _ABSENT and bool(wanted(stored))
    return stored == wanted


def kernel_version(run: datastore.Run) -> tuple[int, int] | None:
    """(major, minor) of the kernel a run was measured on, from its fingerprint."""
    text = str(run.meta.get("machine", {}).get("kernel", ""))
    m = re.search(r"(\d+)\.(\d+)", text)
    return (int(m.group(1)), int(m.group(2))) if m else None


def host(run: datastore.Run) -> str:
    """The identity hash of the host a run was measured on (from its fingerprint)."""
    fp = run.meta.get("machine")
    return machine.identity_hash(fp if isinstance(fp, dict) else {})


def one_host(runs: list[datastore.Run], machine_id: str,
             ) -> tuple[list[datastore.Run], list[str]]:
    """(the runs of one host, a sentence per other host's refused runs).

    The host kept is the one the folder's name hashes (``<prefix>-<hash>``); in a
    folder named without a hash, or when no run matches it, the host of the
    newest run.
    """
    groups: dict[str, list[datastore.Run]] = {}
    for run in runs:
        groups.setdefault(host(run), []).append(run)
    if len(groups) <= 1:
        return list(runs), []
    suffix = machine_id.rsplit("-", 1)[-1]
    keep = suffix if suffix in groups else host(runs[-1])
    kept = groups[keep]
    fp = kept[-1].meta.get("machine") or {}
    refused = [refusal(other, fp, len(kept), machine_id)
               for key, other in sorted(groups.items()) if key != keep]
    return kept, refused


def refusal(other: list[datastore.Run], fingerprint: dict[str, Any], n_kept: int,
            machine_id: str) -> str:
    """The sentence that says which runs were not pooled and why."""
    theirs = other[-1].meta.get("machine")
    differ = machine.identity_differences(fingerprint if isinstance(fingerprint, dict)
                                          else {}, theirs if isinstance(theirs, dict)
                                          else {})
    names = ", ".join(str(r.meta.get("run_id")) for r in other[:3])
    more = f" and {len(other) - 3} more" if len(other) > 3 else ""
    return (f"not pooled: {len(other)} run(s) in {machine_id} ({names}{more}) were "
            f"measured on another host than the {n_kept} judged here; they differ in "
            f"{'; '.join(differ) or 'their fingerprint'}")


def run_ids(runs: list[datastore.Run]) -> str:
    return ", ".join(r.meta["run_id"] for r in runs)
