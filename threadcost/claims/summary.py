"""What the claims say in a few sentences: which folklore holds here, which does not, why.

Read by the index and the abstract (threadcost/paper/summary.py), notebook 06 and
``threadcost claims``; every number comes from :func:`threadcost.claims.judge`.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from threadcost.claims import logic
from threadcost.claims.model import (
    COMPUTED,
    CONTRADICTED,
    FACTOR,
    INCONCLUSIVE,
    NOT_REPRODUCED,
    NOT_RUN,
    SUPPORTED,
    UNEXPLAINED,
    AssertionVerdict,
    ClaimVerdict,
)

BUCKETS = {"as_published": ("holds", "differs", "inconclusive", "not reproducible",
                            "not run here", "computed"),
           "shape": ("holds", "differs", "fails", "inconclusive", "not reproducible",
                     "not run here", "computed")}


def bucket(v: AssertionVerdict) -> str:
    if v.verdict == SUPPORTED:
        return "holds"
    if v.verdict == NOT_REPRODUCED:  # its words say "not reproducible on this machine"
        return "not reproducible"
    if v.verdict == CONTRADICTED:
        # a published factor differs; a relation in words fails
        return "differs" if v.kind == "as_published" or v.states == FACTOR else "fails"
    if v.verdict == NOT_RUN:
        return "not run here"
    if v.verdict == COMPUTED:
        return "computed"
    return "inconclusive"


def tally_readings(verdicts: list[ClaimVerdict]) -> dict[str, dict[str, int]]:
    """kind ("as_published", "shape") -> bucket -> count, published claims only."""
    out: dict[str, dict[str, int]] = {}
    for kind, names in BUCKETS.items():
        rows = [a for v in verdicts if not v.finding for a in v.assertions if a.kind == kind]
        seen = Counter(bucket(a) for a in rows)
        out[kind] = {n: seen.get(n, 0) for n in names}
        # stand-ins are counted across the buckets: how many readings rest on one
        out[kind]["of them on a substitute"] = sum(
            1 for a in rows if a.substitute and a.verdict not in (NOT_RUN, COMPUTED))
    return out


def underpowered(verdicts: list[ClaimVerdict]) -> list[tuple[str, AssertionVerdict]]:
    """The readings left inconclusive because the run cannot resolve their tolerance:
    inconclusive, with a measured power that does not resolve (one definition, used by
    the abstract, notebook 06 and ``threadcost claims``)."""
    return [(v.id, a) for v in verdicts if not v.finding for a in v.assertions
            if a.verdict == INCONCLUSIVE and a.power and not a.power.get("resolves", True)]


def _value(a: AssertionVerdict) -> str:
    """"3.28 million iterations/s", "153 ns", "1.00": three significant figures."""
    if a.measured is None:
        return "-"
    return f"{logic.numbers(a.measured)[0]}{logic.scaled(a.unit, a.measured)}"


def _published(a: AssertionVerdict) -> str:
    if a.published is None:
        return ""
    return f"; published {logic.numbers(a.published)[0]}{logic.scaled(a.unit, a.published)}"


def paper_finding(a: AssertionVerdict) -> Any:
    """The paper's own finding of the reading's quantity (its one definition, e.g. the
    headline's median of runs), when the reading declares one, measured it, and is no
    substitute; else None."""
    q = a.finding
    return q if q is not None and q.measured and not a.substitute else None


def finding_text(q: Any) -> str:
    """A finding as the paper prints it, with the runs it reads when more than one."""
    return q.text() + (f" ({q.runs_words()})" if q.pooled else "")


def _example(cid: str, a: AssertionVerdict) -> str:
    """A reading that holds, as the abstract gives it. A quantity the paper also prints in
    its own definition (the headline's Tokio switch) is printed once, as the paper's
    finding; the claim's own statistic stays on its verdict pages, named as the claim's."""
    q = paper_finding(a)
    if q is None:
        return f"{_subject(a.text)} measures {_value(a)} ({cid}{_published(a)})"
    return (f"{_subject(a.text)} measures {finding_text(q)} (the headline's {q.statistic}; "
            f"{cid} holds on its own reading, in its source's statistic{_published(a)})")


def _and(parts: list[str]) -> str:
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def _subject(text: str) -> str:
    """The reading's text as a sentence's subject: a comma closes an inserted phrase."""
    phrase = _phrase(text)
    return phrase + "," if "," in phrase else phrase


def _phrase(text: str) -> str:
    """A reading's text as the subject of a sentence (an acronym keeps its capitals)."""
    return text if text[1:2].isupper() else text[0].lower() + text[1:]


def _cause(a: AssertionVerdict) -> str:
    """The kind of cause: the yardstick it was read from, a fact, or unexplained."""
    w = a.why[0] if a.why else None
    if w is None or w.text == UNEXPLAINED or not w.explains:
        return "unexplained"  # a why that gives only context names no cause
    if w.fact:
        return "a fact of the kernel or runtime version"
    if "wakeup_cross_cpu" in w.yardsticks:
        return "the cost of a cross-CPU wake-up"
    if "syscall" in w.yardsticks:
        return "the cost of an empty system call"
    if "memcpy_64kib_cold" in w.yardsticks:
        return "the cache state of a copy"
    if "gomaxprocs" in w.yardsticks:
        return "the CPUs Go's runtime spreads over"
    if "rss_idle_kib" in w.yardsticks:
        return "how deep an idle thread's stack reaches"
    return "a more elementary quantity measured in the same run"


def folklore(verdicts: list[ClaimVerdict]) -> list[str]:
    """A few sentences with numbers: what holds here, what does not, and why."""
    published = [v for v in verdicts if not v.finding]
    ap = [(v.id, a) for v in published for a in v.as_published]
    sh = [(v.id, a) for v in published for a in v.shape]
    t = tally_readings(published)
    out = []
    tp = t["as_published"]
    under = sum(1 for _, a in underpowered(published) if a.kind == "as_published")
    out.append(f"Of the {len(ap)} numbers the sources printed, each read here like for like "
               f"(the source's program, definition and statistic) or by a labelled substitute "
               f"that says what differs ({tp['of them on a substitute']} of them): "
               f"{tp['holds']} hold on this machine, {tp['differs']} "
               f"differ, {tp['inconclusive']} are inconclusive ({under} of them because the "
               f"default run cannot resolve the tolerance), "
               + (f"{tp['not reproducible']} are not reproducible on this machine (their "
                  "setup cannot run as published here), " if tp["not reproducible"] else "")
               + f"{tp['not run here']} were not run "
               f"here and {tp['computed']} are computed (from limits, or scaled), not measured.")
    holds = [(cid, a) for cid, a in ap if a.verdict == SUPPORTED and a.timing][:3]
    if holds:
        out.append("Holding here, for example: " + "; ".join(
            _example(cid, a) for cid, a in holds) + ".")
    differs = [(cid, a) for cid, a in ap if bucket(a) == "differs"]
    if differs:
        causes = Counter(_cause(a) for _, a in differs)
        lead = sorted(causes.items(), key=lambda kv: -kv[1])
        parts = [f"{n} {'are' if n != 1 else 'is'} " + ("unexplained" if c == "unexplained"
                                                        else f"explained by {c}")
                 for c, n in lead]
        out.append("Of those that differ, " + _and(parts) + ".")
        cross = next((a for _, a in differs if _cause(a).startswith("the cost of a cross")),
                     None)
        if cross is not None:
            out.append(f"For example, {_subject(cross.text)} measures "
                       f"{_value(cross)} ({cross.words}): {cross.why[0].text}.")
    ts = t["shape"]
    def n(count: int, many: str, one: str) -> str:
        return f"{count} {one if count == 1 else many}"

    counts = [n(ts["holds"], "hold here", "holds here"), n(ts["fails"], "fail", "fails"),
              n(ts["inconclusive"], "are inconclusive", "is inconclusive")]
    if ts["differs"]:  # a published factor measured otherwise
        counts.insert(1, n(ts["differs"], "differ here as factors", "differs here as a factor"))
    if ts["not reproducible"]:
        counts.append(n(ts["not reproducible"], "are not reproducible on this machine",
                        "is not reproducible on this machine"))
    if ts["not run here"]:
        counts.append(n(ts["not run here"], "were not run here", "was not run here"))
    if ts["computed"]:
        counts.append(n(ts["computed"], "are computed, not measured",
                        "is computed, not measured"))
    out.append(f"Of the {len(sh)} relations the sources themselves state, {_and(counts)}.")
    found = [v for v in verdicts if v.finding]
    for v in found:
        out.append(f"{v.id} is this study's own reading of its source, listed apart as a "
                   f"finding: {v.label or v.verdict}.")
    return out
