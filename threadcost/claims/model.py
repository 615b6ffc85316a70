"""The claims layer's vocabulary: measurements, assertions, claims and verdicts."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from threadcost import vocabulary
from threadcost.claims.runs import Runs

# Verdict classes, in the order a tally lists them: the one vocabulary's.
SUPPORTED, CONTRADICTED, INCONCLUSIVE = (
    vocabulary.SUPPORTED, vocabulary.CONTRADICTED, vocabulary.INCONCLUSIVE)
NOT_REPRODUCED, COMPUTED, SUBSTITUTE, NOT_RUN = (
    vocabulary.NOT_REPRODUCED, vocabulary.COMPUTED, vocabulary.SUBSTITUTE, vocabulary.NOT_RUN)
CLASSES, JUDGED = vocabulary.CLASSES, vocabulary.JUDGED

MIN_REPEATS = 5  # a timing assertion is judged only on at least this many repeats


@dataclass(frozen=True)
class Measurement:
    """One number read from stored runs, with the spread across its repeats.

    ``low``..``high`` is a 95% interval from the repeats (or a slope's interval);
    ``repeats`` counts independent repeats (fresh tasks or processes each time).
    ``setup`` holds the run parameters the number was read under.
    """

    value: float
    unit: str
    low: float | None = None
    high: float | None = None
    repeats: int = 1
    setup: dict[str, Any] = field(default_factory=dict)
    run_id: str = ""
    how: str = ""
    computed: bool = False
    unjudgeable: str = ""  # why this reading cannot carry a verdict (then inconclusive)
    substitute: str | None = None  # a stand-in method this reading fell back to
    where: str = ""  # the setup in a few words, shown with the value ("at 1,000 tasks")


@dataclass(frozen=True)
class Missing:
    """Why no measurement could be read (shown as "not run here: <reason>")."""

    reason: str


Selector = Callable[[Runs], "Measurement | Missing"]
Cause = Callable[[Runs, Measurement], "str | None"]


@dataclass(frozen=True)
class Assertion:
    """A machine-independent statement a claim makes, with its tolerance.

    ``low``/``high`` bound the value the claim's words allow (None: unbounded),
    in ``unit``. ``timing``: a timing (or CPU-time) statement, judged only on
    >= MIN_REPEATS repeats. ``substitute``: the method that stands in when this
    project does not run the source's own experiment. ``known_cause``: a
    function that names a known reason the published effect cannot show on the
    measured machine (then "not reproduced" rather than "contradicted").
    ``published``: the published value in ``unit``, for context.
    """

    text: str
    unit: str
    low: float | None
    high: float | None
    select: Selector
    timing: bool = False
    substitute: str | None = None
    known_cause: Cause | None = None
    published: float | None = None
    tolerance_words: str = ""


@dataclass(frozen=True)
class Context:
    """An absolute published number beside this machine's: context, not a verdict."""

    label: str
    published: float | None  # None: a measured mechanism with no published number
    unit: str
    select: Selector
    yardstick: str | None = None  # yardstick (with a published value) to normalise by


@dataclass(frozen=True)
class Claim:
    id: str
    assertions: tuple[Assertion, ...]
    context: tuple[Context, ...] = ()


@dataclass(frozen=True)
class AssertionVerdict:
    text: str
    measured: float | None
    low: float | None
    high: float | None
    unit: str
    repeats: int
    verdict: str
    setup: dict[str, Any]
    run_id: str
    ci_low: float | None = None
    ci_high: float | None = None
    reason: str = ""
    how: str = ""
    substitute: str | None = None
    published: float | None = None
    tolerance_words: str = ""
    timing: bool = False
    where: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {"text": self.text, "measured": self.measured, "low": self.low,
                "high": self.high, "unit": self.unit, "repeats": self.repeats,
                "verdict": self.verdict, "setup": self.setup, "run_id": self.run_id,
                "ci_low": self.ci_low, "ci_high": self.ci_high, "reason": self.reason,
                "how": self.how, "substitute": self.substitute,
                "published": self.published, "timing": self.timing,
                "where": self.where}


@dataclass(frozen=True)
class ContextRow:
    label: str
    published: float | None
    measured: float | None
    unit: str
    ratio: float | None  # measured / published
    yardstick: str | None = None
    yardstick_ratio: float | None = None  # the yardstick's measured / published
    normalised_ratio: float | None = None  # ratio / yardstick_ratio
    run_id: str = ""
    reason: str = ""


@dataclass(frozen=True)
class ClaimVerdict:
    id: str
    source: str
    claim: str
    verdict: str  # one of CLASSES
    sentence: str
    reason: str
    assertions: tuple[AssertionVerdict, ...]
    context: tuple[ContextRow, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        """The JSON contract of ``threadcost claims --json``."""
        verdict = self.verdict + (f" ({self.reason})" if self.reason else "")
        out: dict[str, Any] = {"id": self.id, "source": self.source, "claim": self.claim,
                               "verdict": verdict, "sentence": self.sentence,
                               "assertions": [a.as_dict() for a in self.assertions]}
        if self.verdict == NOT_RUN or self.reason:
            out["reason"] = self.reason
        return out
