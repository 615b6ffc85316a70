"""Judging a claim's record: each reading on its own, in words about this machine.

- an **as-published** reading "holds here" when its whole interval lies inside the
  tolerance the source's words give, "differs here: 1.9x slower" when it lies
  wholly outside (the factor: measured / published, in the direction of the
  quantity), and is "inconclusive here" otherwise;
- a **shape** reading (a relation the source states) "holds" or "fails";
- every differing as-published reading gets its **why**: its why functions' causes, each
  a more elementary quantity measured here (never the reading's own kind re-measured),
  or "unexplained" (with what was measured around it as context);
- every timing reading carries its **power**: the half-width of its interval set
  against the half-width of its tolerance band (two-sided) or against the distance
  from its value to the bound (one-sided). A reading that cannot resolve its band
  says so, and names the parameter set that runs more repeats.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

from threadcost import findings
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
    Assertion,
    AssertionVerdict,
    CauseGroup,
    Claim,
    ClaimVerdict,
    Why,
)
from threadcost.measured.runs import Runs

LARGE = "params/large.yaml"
TIME_UNITS = {"ns", "us", "µs", "ms", "s"}
RATE_UNITS = {"iterations/s", "round trips/s"}


def factor_words(measured: float, reference: float, unit: str) -> str:
    """"1.9x slower" / "2.2x faster" / "1.3x larger": measured against the reference."""
    if reference == 0 or measured == 0 or (measured > 0) != (reference > 0):
        return f"{logic.number(measured)} against {logic.number(reference)}"
    f = measured / reference
    big = f >= 1
    k = f if big else 1 / f
    if unit in TIME_UNITS or unit.startswith("empty"):
        word = "slower" if big else "faster"
    elif unit in RATE_UNITS:
        word = "faster" if big else "slower"
    elif unit in ("KiB", "MiB", "GiB", "threads"):
        word = "larger" if big else "smaller"
    else:
        word = "higher" if big else "lower"
    return f"{k:.1f}x {word}"


def _reference(v: AssertionVerdict) -> float | None:
    """What "differs" is measured against: the published value, else the nearest bound."""
    if v.published is not None and v.published != 0:
        return v.published
    if v.measured is None:
        return None
    bounds = [b for b in (v.low, v.high) if b is not None]
    return min(bounds, key=lambda b: abs(b - v.measured)) if bounds else None


def factor_text(x: float, unit: str) -> str:
    """A factor as a shape reading words it: "2.7x", "10%", "2 switches"."""
    if unit == "ratio":
        return f"{x:.2f}".rstrip("0").rstrip(".") + "x"
    if unit == "fraction":
        return f"{x * 100:.0f}%"
    return f"{logic.number(x)} {unit}"


def published_factor_words(reading: Assertion, v: AssertionVerdict) -> str:
    """A published factor judged as one: "differs here: grows 2.7x against 2x published:
    steeper here", "holds: takes 3.11x against 3x published";
    the words of :func:`words` where nothing was measured or judged."""
    if v.measured is None or v.published is None or v.verdict not in (
            SUPPORTED, CONTRADICTED, INCONCLUSIVE):
        return v.words
    got = (f"{reading.verb} " if reading.verb else "") + (
        f"{factor_text(v.measured, v.unit)} against {factor_text(v.published, v.unit)} "
        "published")
    if v.verdict == SUPPORTED:
        return f"holds: {got}"
    if v.verdict == CONTRADICTED:
        above, below = reading.directions
        return f"differs here: {got}: {above if v.measured > v.published else below}"
    return f"{v.words}; {got}"


INCONCLUSIVE_HERE = "inconclusive here"
UNRESOLVED = "its interval is wider than the tolerance"  # said of an underpowered reading

def words(v: AssertionVerdict) -> str:
    """The verdict of one reading in words about this machine."""
    shape = v.kind == "shape"
    if v.verdict == NOT_RUN:
        # the legend's words, also for a relation measured but not judged (C30: the
        # source's words could not be read, so no tolerance of its own can be set)
        return f"not run here: {v.reason.removeprefix('no verdict: ')}"
    if v.verdict == COMPUTED:
        return "computed here, not measured"
    if v.verdict == SUPPORTED:
        return "holds" if shape else "holds here"
    if v.verdict == NOT_REPRODUCED and v.reason.startswith(logic.NOT_REPRODUCIBLE):
        return v.reason  # the setup cannot run as published here: no factor is a verdict
    if v.verdict in (CONTRADICTED, NOT_REPRODUCED):
        if shape:
            return "fails" if v.verdict == CONTRADICTED else logic.NOT_REPRODUCIBLE
        ref = _reference(v)
        how = factor_words(v.measured, ref, v.unit) if ref and v.measured is not None else ""
        # the legend's words: a known cause (the kernel's RSS counting) keeps the
        # published effect from showing here: "not reproducible on this machine"
        head = "differs here" if v.verdict == CONTRADICTED else logic.NOT_REPRODUCIBLE
        return f"{head}: {how}" if how else head
    if v.power and not v.power.get("resolves", True) and v.reason.startswith("underpowered") \
            and "; " not in v.reason:
        # the only reason it is not judged; the verdict keeps the legend's word
        return f"{INCONCLUSIVE_HERE}: {UNRESOLVED}"
    return INCONCLUSIVE_HERE


def power(v: AssertionVerdict) -> dict[str, Any] | None:
    """Can this timing reading's interval resolve its tolerance? Measured from its
    own interval (never asserted)."""
    if not v.timing or v.measured is None or v.ci_low is None or v.ci_high is None:
        return None
    half = (v.ci_high - v.ci_low) / 2
    if v.low is not None and v.high is not None:
        band = (v.high - v.low) / 2
        resolves = half < band
        text = (f"interval half-width {logic.number(half)} against a tolerance half-width "
                f"of {logic.number(band)}")
    else:
        bound = v.low if v.low is not None else v.high
        if bound is None:
            return None
        band = abs(v.measured - bound)
        resolves = half < band
        text = (f"interval half-width {logic.number(half)} against the distance "
                f"{logic.number(band)} from the value to the bound")
    if v.repeats < logic.MIN_REPEATS:
        resolves = False
        text += (f"; {v.repeats} independent repeat{'s' if v.repeats != 1 else ''}, a timing "
                 f"verdict needs {logic.MIN_REPEATS}")
    out: dict[str, Any] = {"half_width": half, "band": band, "resolves": resolves,
                           "text": text}
    if not resolves:
        need = logic.MIN_REPEATS
        if band > 0 and half > 0 and v.repeats > 1:
            need = max(need, math.ceil(v.repeats * (half / band) ** 2))
        out["repeats_needed"] = need
        out["can"] = (f"about {need:,} repeats (an interval narrows as one over the square "
                      f"root of the repeats), or a longer run: {LARGE} runs more")
    return out


def judge_reading(kind: str, reading: Assertion, runs: Runs) -> AssertionVerdict:
    v = logic.judge_assertion(reading, runs)
    v = replace(v, kind=kind, quote=reading.quote, up_front=reading.up_front)
    if reading.finding:  # the paper's value of the same quantity, from the same runs
        v = replace(v, finding=findings.compute(reading.finding, runs))
    # power is the question of a reading that ran as published: one that cannot is not
    # underpowered, and more repeats would not make it judgeable
    v = replace(v, power=None if v.verdict == NOT_REPRODUCED
                or v.reason.startswith(logic.SPANS) else power(v))
    if v.verdict == INCONCLUSIVE and v.power and not v.power["resolves"]:
        other = "" if v.reason in ("", logic.STRADDLES) else f"; {v.reason}"
        v = replace(v, reason=f"underpowered: {v.power['text']}{other}")
    v = replace(v, words=words(v))
    if kind == "shape":
        v = replace(v, states=reading.states)
        if reading.states == FACTOR:
            v = replace(v, words=published_factor_words(reading, v))
    if v.verdict == NOT_REPRODUCED and v.reason.startswith(logic.NOT_REPRODUCIBLE):
        # the setup did not run as published: its reason (measured by the run, e.g. the
        # CPUs saturated) is the why, never a cause of a difference it did not measure
        v = replace(v, why=(Why(v.reason.removeprefix(f"{logic.NOT_REPRODUCIBLE}: "),
                                fact=True),))
    elif kind == "as_published" and v.verdict in (CONTRADICTED, NOT_REPRODUCED):
        v = replace(v, why=why(reading, runs, v))
    elif kind == "shape" and reading.why and v.verdict in (SUPPORTED, CONTRADICTED):
        # a relation the source states, explained by a more elementary quantity measured
        # in the same run (none measured: nothing is said)
        v = replace(v, why=tuple(w for w in why(reading, runs, v) if w.text != UNEXPLAINED))
    return v


def why(reading: Assertion, runs: Runs, v: AssertionVerdict) -> tuple[Why, ...]:
    """The causes the reading's why functions find, or "unexplained"."""
    found: list[Why] = []
    for fn in reading.why:
        try:
            got = fn(runs, v)
        except (KeyError, ValueError, IndexError):
            got = None
        if got is not None:
            found.append(got)
    if v.verdict == NOT_REPRODUCED and v.reason and not found:
        found.append(Why(v.reason, fact=True))
    return tuple(found) or (Why(UNEXPLAINED),)


# where a why's context begins: what follows is the measurements around its cause
CONTEXT_MARKS = (" For context, not a cause", " As a decomposition, not a cause")


def cause_of(w: Why) -> str:
    """A why's cause: its text up to the context it gives, so two readings put down to
    one cause (an unpinned pipe switch and an unpinned condvar switch, each with the
    context of its own mechanism) have one."""
    cut = [w.text.index(mark) for mark in CONTEXT_MARKS if mark in w.text]
    return w.text[:min(cut)] if cut else w.text


def by_cause(verdicts: list[AssertionVerdict]) -> tuple[CauseGroup, ...]:
    """One why per distinct cause, with every reading it is given for: of the readings'
    whys of one cause, the one that gives the most measured context."""
    groups: dict[str, tuple[list[str], list[Why]]] = {}
    for v in verdicts:
        for w in v.why:
            texts, found = groups.setdefault(cause_of(w), ([], []))
            if v.text not in texts:
                texts.append(v.text)
            found.append(w)
    return tuple(CauseGroup(tuple(texts), max(found, key=lambda w: len(w.yardsticks)))
                 for texts, found in groups.values())


ORDER = (NOT_REPRODUCED, CONTRADICTED, INCONCLUSIVE, SUPPORTED)


def label(cls: str, verdicts: list[AssertionVerdict]) -> str:
    """The claim's verdict as shown: its class, then every other judged verdict among its
    readings, so none is hidden ("substitute, contradicted", "contradicted, supported")."""
    seen = [c for c in ORDER if any(v.verdict == c for v in verdicts)]
    rest = [c for c in seen if c != cls]
    return ", ".join([cls, *rest])


def sentence(claim_id: str, verdicts: list[AssertionVerdict]) -> str:
    """One sentence per claim: as published, then shape, then why."""
    parts = []
    for kind, head in (("as_published", "as published"), ("shape", "shape")):
        rows = [v for v in verdicts if v.kind == kind]
        if not rows:
            continue
        bits = []
        for v in rows:
            got = (logic.measured_text(v) + (f" {v.where}" if v.where else "")
                   if v.measured is not None else "")
            bits.append(f"{v.text}: {v.words}" + (f" ({got})" if got else ""))
        parts.append(f"{head}: " + "; ".join(bits))
    whys = [group.why.text for group in by_cause(verdicts)]
    if whys:
        parts.append("why: " + "; ".join(whys))
    return f"{claim_id}: " + ". ".join(parts) + "."


def _short(text: str) -> str:
    """A reading's text without the parenthesis it ends with: "Resident memory per idle
    thread (80 MiB / 10,000)" -> "Resident memory per idle thread"."""
    if text.endswith(")") and " (" in text:
        return text[:text.rindex(" (")].rstrip(":;, ")
    return text


def _by_how_much(v: AssertionVerdict) -> str:
    """What a differing reading found, after its verdict's word: "2.0x slower", "grows 2.7x
    against 2x published: steeper here"."""
    return v.words.removeprefix("differs here").removeprefix(":").strip()


def takeaway(claim_id: str, verdicts: list[AssertionVerdict]) -> str:
    """The claim in one line a reader can take away: what holds here, what differs and by
    how much (each named by its reading), then how many readings could not decide."""
    holds = [_short(v.text) for v in verdicts if v.verdict == SUPPORTED]
    differs = [f"{_short(v.text)} ({_by_how_much(v)})" if _by_how_much(v) else _short(v.text)
               for v in verdicts if v.verdict == CONTRADICTED
               and (v.kind == "as_published" or v.states == FACTOR)]
    fails = [_short(v.text) for v in verdicts if v.verdict == CONTRADICTED
             and v.kind == "shape" and v.states != FACTOR]
    parts = []
    if holds:
        parts.append("holds here: " + "; ".join(holds))
    if differs:
        parts.append("differs here: " + "; ".join(differs))
    if fails:
        parts.append("does not hold here: " + "; ".join(fails))
    rest = {NOT_REPRODUCED: "not reproducible on this machine", INCONCLUSIVE: "inconclusive",
            COMPUTED: "computed, not measured", NOT_RUN: "not run here"}
    for cls, said in rest.items():
        n = sum(v.verdict == cls for v in verdicts)
        if n:
            parts.append(f"{n} reading{'s' if n != 1 else ''} {said}")
    return f"{claim_id}: " + ". ".join(p[0].upper() + p[1:] for p in parts) + "."


def judge_record(claim: Claim, runs: Runs, source: str, text: str,
                 yard: dict[str, tuple[float, float]] | None = None) -> ClaimVerdict:
    verdicts = [judge_reading(kind, r, runs) for kind, r in claim.readings()]
    cls, reason = logic.combine(verdicts)
    ctx = tuple(logic.context_row(c, runs, yard or {}) for c in claim.context)
    # said before the numbers only when it is so here: an up-front text explains an
    # inconclusive reading, and sits above a verdict it would contradict otherwise
    up_front = ((claim.up_front if any(v.verdict == INCONCLUSIVE for v in verdicts) else "")
                or " ".join(dict.fromkeys(v.up_front for v in verdicts
                                          if v.up_front and v.verdict == INCONCLUSIVE)))
    return ClaimVerdict(claim.id, source, text, cls, sentence(claim.id, verdicts), reason,
                        tuple(verdicts), ctx, finding=claim.finding,
                        label=label(cls, verdicts), up_front=up_front,
                        whys=by_cause(verdicts), takeaway=takeaway(claim.id, verdicts))
