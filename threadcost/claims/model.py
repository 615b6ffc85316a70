"""The claims layer's vocabulary: measurements, readings, claims and verdicts.

A claim's **record** (threadcost/claims/records/<source>.py) holds its source,
the source's words, its published values (typed once) and its readings:

- ``as_published``: every number the source printed, read like for like (the
  source's program, definition, statistic and setup) or by a labelled substitute
  (``substitute``: what stands in and what differs), one mechanism or variant at a time;
- ``shape``: only the relations the source itself states, with its sentence;
- each reading's ``why``: functions that name the cause of a difference from a more
  elementary quantity measured on the same machine (an empty system call, a wake-up
  on another CPU, a copy's cache state, the CPUs); the same quantity measured again
  is no why (none applies: "unexplained").

A reading is an :class:`Assertion` (the older name, kept so that modules written
against it plug in unchanged: a claim with only ``assertions`` has them read as
its as-published readings)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from threadcost import vocabulary
from threadcost.measured.measurement import Measurement, Missing
from threadcost.measured.runs import Runs

# Verdict classes, in the order a tally lists them: the one vocabulary's.
SUPPORTED, CONTRADICTED, INCONCLUSIVE = (
    vocabulary.SUPPORTED, vocabulary.CONTRADICTED, vocabulary.INCONCLUSIVE)
NOT_REPRODUCED, COMPUTED, SUBSTITUTE, NOT_RUN = (
    vocabulary.NOT_REPRODUCED, vocabulary.COMPUTED, vocabulary.SUBSTITUTE, vocabulary.NOT_RUN)
CLASSES, JUDGED = vocabulary.CLASSES, vocabulary.JUDGED

MIN_REPEATS = 5  # a timing assertion is judged only on at least this many repeats

# What a shape reading judges, as its source states it: a relation in words ("grows with",
# "does not depend on", "over 6x": judged by those words' bound, worded "holds" or
# "fails"), or a factor it publishes (22.3 -> 44.7 µs: 2.0x; judged against that factor,
# worded as one: "grows 2.7x against 2.0x published: steeper here")
WORDS, FACTOR = "words", "factor"


@dataclass(frozen=True)
class Why:
    """A cause of a difference, from yardsticks measured in the same run (or a fact)."""

    text: str
    yardsticks: dict[str, float] = field(default_factory=dict)  # name -> value (ns ...)
    run_id: str = ""
    fact: bool = False  # a fact of the kernel or runtime version, not a measurement
    # False: no cause is named ("unexplained"); the text only gives what was measured
    # around it as context (a decomposition, the machine's system-call cost), said so
    explains: bool = True

    def as_dict(self) -> dict[str, Any]:
        return {"text": self.text, "yardsticks": dict(self.yardsticks),
                "run_id": self.run_id, "fact": self.fact, "explains": self.explains}


UNEXPLAINED = "unexplained"

Selector = Callable[[Runs], "Measurement | Missing"]
Cause = Callable[[Runs, Measurement], "str | None"]
WhyFn = Callable[[Runs, "AssertionVerdict"], "Why | None"]


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
    quote: str = ""  # the source's own sentence this reading judges
    why: tuple[WhyFn, ...] = ()  # causes of a difference, tried in order
    up_front: str = ""  # said before the numbers (e.g. inconclusive by construction)
    # the paper's own finding of the same quantity in its one definition (the headline's
    # switch: a median of runs), where this reading keeps its source's statistic: a
    # summary that prints the quantity beside the paper's (the abstract) prints the
    # finding, and the claim's own pages print this reading, named as the claim's
    finding: str = ""
    # a shape reading's kind (WORDS or FACTOR); a factor's verb ("grows") and what it is
    # above and below the published factor ("steeper here", "flatter here")
    states: str = ""
    verb: str = ""
    directions: tuple[str, str] = ("larger here", "smaller here")


Reading = Assertion  # the name the records use


@dataclass(frozen=True)
class Published:
    """One number a source printed (typed once, in its claim's record)."""

    quantity: str
    value: float
    unit: str
    note: str = ""
    low: float | None = None
    high: float | None = None


@dataclass(frozen=True)
class MachineProperty:
    """A property of a machine a claim's verdict turns on (the empty system call, the
    CPUs, the kernel): its words, and how to read it from one machine folder's runs."""

    words: str
    read: Callable[[Runs], str | None]


@dataclass(frozen=True)
class Quote:
    """A source's own sentence (or table cell) behind a published value, and where it
    was read."""

    text: str
    address: str = ""


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
    """One published claim, declared once: its words, source, quotes, published values,
    readings, the pages that show it and the experiments it reads (the published
    tables, the notebooks' and the experiments' claim lists are computed from these).
    ``assertions`` (older modules) are read as ``as_published`` when a claim declares no
    as-published or shape readings. ``finding``: the project's own reading of a source,
    listed apart from the published claims."""

    id: str
    assertions: tuple[Assertion, ...] = ()
    context: tuple[Context, ...] = ()
    source: str = ""  # a key of data/published/references.csv
    words: str = ""  # the claim in one sentence, as the source put it
    published: tuple[Published, ...] = ()
    as_published: tuple[Assertion, ...] = ()
    shape: tuple[Assertion, ...] = ()
    finding: bool = False
    up_front: str = ""
    source_doc: str = ""  # the source's document, in a few words
    their_machine: str = ""  # the machine the source measured on, as published
    quotes: tuple[Quote, ...] = ()  # the source's sentences behind its published values
    # the notebooks (file stems) whose pages show its verdict, its home page first
    pages: tuple[str, ...] = ()
    experiments: tuple[str, ...] = ()  # the registered experiments its readings read
    # the machine property a verdict that flips between machines is put down to
    flips_on: MachineProperty | None = None

    def readings(self) -> tuple[tuple[str, Assertion], ...]:
        """(kind, reading) for every reading: "as_published" or "shape"."""
        if not self.as_published and not self.shape:
            return tuple(("as_published", a) for a in self.assertions)
        return (tuple(("as_published", a) for a in self.as_published)
                + tuple(("shape", a) for a in self.shape))

    def value(self, quantity: str) -> float:
        for p in self.published:
            if p.quantity == quantity:
                return p.value
        raise KeyError(f"no published value {quantity!r} in claim {self.id}")


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
    kind: str = "as_published"  # or "shape"
    quote: str = ""
    words: str = ""  # the verdict in words: "holds here", "differs here: 1.9x slower"
    power: dict[str, Any] | None = None  # for timing readings: can it resolve its band?
    why: tuple[Why, ...] = ()
    up_front: str = ""
    # the reading's ``finding`` as measured from the same runs (a findings.Quantity)
    finding: Any = None
    states: str = ""  # a shape reading's kind: WORDS or FACTOR

    def as_dict(self) -> dict[str, Any]:
        out = {"text": self.text, "quote": self.quote, "measured": self.measured,
               "ci_low": self.ci_low, "ci_high": self.ci_high, "low": self.low,
               "high": self.high, "unit": self.unit, "repeats": self.repeats,
               "verdict": self.verdict, "words": self.words, "setup": self.setup,
               "run_id": self.run_id, "reason": self.reason, "how": self.how,
               "substitute": self.substitute, "published": self.published,
               "tolerance_words": self.tolerance_words, "timing": self.timing,
               "where": self.where, "power": self.power, "up_front": self.up_front}
        if self.kind == "shape":
            out["states"] = self.states
        if self.kind == "as_published" or self.why:
            out["why"] = [w.as_dict() for w in self.why]
        if self.finding is not None:
            out["finding"] = {"name": self.finding.name, "value": self.finding.value,
                              "statistic": self.finding.statistic}
        return out


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
class CauseGroup:
    """One distinct cause among a claim's whys, and the readings it is given for."""

    readings: tuple[str, ...]
    why: Why


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
    finding: bool = False
    label: str = ""  # the verdict as shown: never hides a reading ("substitute, contradicted")
    up_front: str = ""
    whys: tuple[CauseGroup, ...] = ()  # one per distinct cause, with its readings
    # the claim in one line: what holds, what differs and by how much, reading by reading
    takeaway: str = ""

    @property
    def as_published(self) -> tuple[AssertionVerdict, ...]:
        return tuple(a for a in self.assertions if a.kind == "as_published")

    @property
    def shape(self) -> tuple[AssertionVerdict, ...]:
        return tuple(a for a in self.assertions if a.kind == "shape")

    def as_dict(self) -> dict[str, Any]:
        """The JSON contract of ``threadcost claims --json``."""
        verdict = (self.label or self.verdict) + (f" ({self.reason})" if self.reason else "")
        why = [{"reading": " and ".join(g.readings), "readings": list(g.readings),
                **g.why.as_dict()} for g in self.whys]
        out: dict[str, Any] = {"id": self.id, "takeaway": self.takeaway,
                               "source": self.source, "claim": self.claim,
                               "verdict": verdict, "class": self.verdict,
                               "finding": self.finding, "up_front": self.up_front,
                               "sentence": self.sentence,
                               "as_published": [a.as_dict() for a in self.as_published],
                               "shape": [a.as_dict() for a in self.shape], "why": why,
                               "assertions": [a.as_dict() for a in self.assertions]}
        if self.verdict == NOT_RUN or self.reason:
            out["reason"] = self.reason
        return out
