"""The verdict rules: one place, small enough to read in full.

An assertion's measured interval (95%, from the spread across repeats) is set
against the tolerance its claim's words allow:

- **supported**: the whole interval lies inside the tolerance;
- **contradicted**: the whole interval lies outside it;
- **inconclusive**: the interval straddles a bound, or a timing assertion rests
  on fewer than MIN_REPEATS independent repeats (then the measured value is
  shown but not judged);
- **not reproduced**: not supported, and a known cause (named) keeps the
  published effect from showing on the measured machine;
- **computed**: derived from limits or scaled, not measured;
- **not run here**: nothing was measured (the reason is given).

A claim takes the verdict of its judged assertions (not reproduced, then
contradicted, then inconclusive, then supported); "substitute" when every
assertion that decides that verdict rests on a stand-in method (whatever the
stand-in gave: the legend's "judged with a different experiment"); "computed" or
"not run here" when nothing was judged.
"""

from __future__ import annotations

from typing import Any

from threadcost.claims.model import (
    COMPUTED,
    CONTRADICTED,
    INCONCLUSIVE,
    JUDGED,
    MIN_REPEATS,
    NOT_REPRODUCED,
    NOT_RUN,
    SUBSTITUTE,
    SUPPORTED,
    Assertion,
    AssertionVerdict,
    Claim,
    ClaimVerdict,
    Context,
    ContextRow,
)
from threadcost.measured.measurement import Measurement, Missing
from threadcost.measured.runs import Runs, UnreadableRun
from threadcost.textout import number as number  # re-exported: logic.number in claims and views
from threadcost.textout import numbers, scaled

DEFAULT_COMPUTED = "computed, not measured"
STRADDLES = "the interval straddles a bound of the tolerance"
NOT_REPRODUCIBLE = "not reproducible on this machine"
SPANS = "decided by a setting the source does not state"


def classify(lo: float, hi: float, tol_low: float | None, tol_high: float | None) -> str:
    """supported / contradicted / inconclusive for an interval [lo, hi] and a tolerance."""
    inside = (tol_low is None or lo >= tol_low) and (tol_high is None or hi <= tol_high)
    outside = ((tol_low is not None and hi < tol_low)
               or (tol_high is not None and lo > tol_high))
    return SUPPORTED if inside else CONTRADICTED if outside else INCONCLUSIVE


def judge_measurement(assertion: Assertion, got: Measurement | Missing,
                      cause: str | None = None) -> AssertionVerdict:
    """The verdict of one assertion on what its selector read."""
    base: dict[str, Any] = {"text": assertion.text, "low": assertion.low,
                            "high": assertion.high, "unit": assertion.unit,
                            "substitute": assertion.substitute,
                            "published": assertion.published,
                            "tolerance_words": assertion.tolerance_words,
                            "timing": assertion.timing}
    if isinstance(got, Missing):
        return AssertionVerdict(measured=None, repeats=0, verdict=NOT_RUN, setup={},
                                run_id="", reason=got.reason, **base)
    lo = got.low if got.low is not None else got.value
    hi = got.high if got.high is not None else got.value
    if got.substitute:
        base["substitute"] = got.substitute
    common = {**base, "measured": got.value, "repeats": got.repeats, "setup": got.setup,
              "run_id": got.run_id, "ci_low": lo, "ci_high": hi, "how": got.how,
              "where": got.where}
    if got.computed:
        return AssertionVerdict(verdict=COMPUTED, reason=got.unjudgeable or DEFAULT_COMPUTED,
                                **common)
    if got.not_reproducible:
        return AssertionVerdict(verdict=NOT_REPRODUCED,
                                reason=f"{NOT_REPRODUCIBLE}: {got.not_reproducible}", **common)
    verdict = classify(lo, hi, assertion.low, assertion.high)
    reason = ""
    if verdict != SUPPORTED and cause:
        return AssertionVerdict(verdict=NOT_REPRODUCED, reason=cause, **common)
    problems = []
    if assertion.timing and got.repeats < MIN_REPEATS:
        problems.append(f"rests on {got.repeats} independent repeat"
                        f"{'s' if got.repeats != 1 else ''}; a timing verdict needs "
                        f">= {MIN_REPEATS}")
    if got.unjudgeable:
        problems.append(got.unjudgeable)
    if problems:
        verdict, reason = INCONCLUSIVE, "; ".join(problems)
    elif verdict == INCONCLUSIVE:
        reason = f"{SPANS}: {got.spans}" if got.spans else STRADDLES
    return AssertionVerdict(verdict=verdict, reason=reason, **common)


def judge_assertion(assertion: Assertion, runs: Runs) -> AssertionVerdict:
    try:
        got = assertion.select(runs)
    except UnreadableRun as exc:  # the run it would read could not be read: say which
        got = Missing(str(exc))
    except (KeyError, ValueError, IndexError) as exc:  # a table without the setup
        got = Missing(f"the stored run lacks what this assertion reads ({exc})")
    cause = (assertion.known_cause(runs, got)
             if assertion.known_cause is not None and isinstance(got, Measurement)
             else None)
    return judge_measurement(assertion, got, cause)


def combine(verdicts: list[AssertionVerdict]) -> tuple[str, str]:
    """(class, reason) of a claim from its assertions' verdicts."""
    for cls in (NOT_REPRODUCED,):
        hits = [v for v in verdicts if v.verdict == cls]
        if hits:
            return cls, hits[0].reason
    judged = [v for v in verdicts if v.verdict in JUDGED]
    if judged:
        for cls in (CONTRADICTED, INCONCLUSIVE, SUPPORTED):
            if any(v.verdict == cls for v in judged):
                deciding = [v for v in judged if v.verdict == cls]
                # the legend's "substitute": judged with a stand-in, whatever it gave
                if all(v.substitute for v in deciding):
                    return SUBSTITUTE, f"{cls} by a stand-in: {deciding[0].substitute}"
                reason = next((v.reason for v in judged if v.verdict == cls and v.reason), "")
                return cls, reason if cls == INCONCLUSIVE else ""
    computed = [v for v in verdicts if v.verdict == COMPUTED]
    if computed:
        own = next((v.reason for v in computed if v.reason != DEFAULT_COMPUTED), None)
        return COMPUTED, own or "derived from this machine's limits, not measured"
    reasons = [v.reason for v in verdicts if v.reason]
    return NOT_RUN, reasons[0] if reasons else "no run of its experiment is stored"


def tolerance_text(low: float | None, high: float | None, unit: str) -> str:
    if low is not None and high is not None:
        lo, hi = numbers(low, high)
        return f"{lo} to {hi}{scaled(unit, low, high)}"
    if low is not None:
        return f"above {numbers(low)[0]}{scaled(unit, low)}"
    if high is not None:
        return f"below {numbers(high)[0]}{scaled(unit, high)}"
    return "any value"


def measured_text(v: AssertionVerdict) -> str:
    """"2.40 µs [2.35, 2.44]": the value and its interval at one precision."""
    if v.measured is None:
        return "-"
    if v.ci_low is not None and v.ci_high is not None and v.ci_low != v.ci_high:
        x, lo, hi = numbers(v.measured, v.ci_low, v.ci_high)
        if lo != hi:
            return f"{x}{scaled(v.unit, v.measured, v.ci_low, v.ci_high)} [{lo}, {hi}]"
    return f"{numbers(v.measured)[0]}{scaled(v.unit, v.measured)}"


def sentence(claim_id: str, cls: str, verdicts: list[AssertionVerdict]) -> str:
    """The claim's verdict in one sentence a reader can follow."""
    parts = []
    for v in verdicts:
        acronym = v.text[1:2].isupper()  # "GOMAXPROCS=1 ..." keeps its capitals
        what = v.text if acronym else v.text[0].lower() + v.text[1:]
        if v.verdict == NOT_RUN:
            parts.append(f"{what}: not run here ({v.reason})")
            continue
        got = f"measured {measured_text(v)}" + (f" {v.where}" if v.where else "")
        if v.verdict == COMPUTED:
            why = ", not measured" if v.reason == DEFAULT_COMPUTED else f", {v.reason}"
            at = f" {v.where}" if v.where else ""
            parts.append(f"{what}: computed {measured_text(v)}{at}{why}"
                         + (f" ({v.how})" if v.how else ""))
            continue
        tol = f"where the claim allows {tolerance_text(v.low, v.high, v.unit)}"
        extra = f" ({v.reason})" if v.reason else ""
        if v.verdict == CONTRADICTED and v.how:
            extra = f" ({v.how})"
        stand = f" [stand-in: {v.substitute}]" if v.substitute else ""
        parts.append(f"{what}: {got} {tol}, {v.verdict}{extra}{stand}")
    head = {SUBSTITUTE: f"{claim_id} rests on a substitute",
            NOT_RUN: f"{claim_id} was not run here",
            COMPUTED: f"{claim_id} is computed, not judged",
            NOT_REPRODUCED: f"{claim_id} is not reproduced here"}.get(cls, f"{claim_id} is {cls}")
    return f"{head}: " + "; ".join(parts) + "."


def context_row(ctx: Context, runs: Runs, yard: dict[str, tuple[float, float]]) -> ContextRow:
    """``yard``: yardstick name -> (measured here, published) in the same unit."""
    try:
        got = ctx.select(runs)
    except (KeyError, ValueError, IndexError) as exc:
        got = Missing(str(exc))
    if isinstance(got, Missing):
        return ContextRow(ctx.label, ctx.published, None, ctx.unit, None, ctx.yardstick,
                          reason=got.reason)
    ratio = got.value / ctx.published if ctx.published else None
    ys = yard.get(ctx.yardstick or "")
    y_ratio = ys[0] / ys[1] if ys else None
    norm = ratio / y_ratio if ratio is not None and y_ratio else None
    return ContextRow(ctx.label, ctx.published, got.value, ctx.unit, ratio, ctx.yardstick,
                      y_ratio, norm, got.run_id)


def judge_claim(claim: Claim, runs: Runs, source: str, text: str,
                yard: dict[str, tuple[float, float]] | None = None) -> ClaimVerdict:
    verdicts = [judge_assertion(a, runs) for a in claim.assertions]
    cls, reason = combine(verdicts)
    ctx = tuple(context_row(c, runs, yard or {}) for c in claim.context)
    return ClaimVerdict(claim.id, source, text, cls, sentence(claim.id, cls, verdicts),
                        reason, tuple(verdicts), ctx)
