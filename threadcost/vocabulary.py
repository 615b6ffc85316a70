"""The study's one vocabulary: verdict classes, task kinds, and their colours.

Every module that names a verdict class or a task kind, or colours one, imports it
from here (the claims layer, the index page, the views), so a class added or
renamed here is added or renamed everywhere, colour included.

To add a verdict class: add one :class:`VerdictClass` line to ``VERDICT_CLASSES``
(in the order a tally lists it) and, if the claims layer gives it, a constant
beside the others. To add a task kind: one line in ``TASK_KINDS``.
"""

from __future__ import annotations

from dataclasses import dataclass

GREY = "#eeeeee"  # a class or kind this vocabulary does not know


@dataclass(frozen=True)
class VerdictClass:
    """One verdict class: its name, the background a chip or cell of it gets, the
    colour of its marker in a figure, and what it means, in a few words."""

    name: str
    background: str
    marker: str
    meaning: str


VERDICT_CLASSES: tuple[VerdictClass, ...] = (
    VerdictClass("supported", "#d8f0d8", "#2e7d32",
                 "the measurement lies within what the claim's words allow"),
    VerdictClass("contradicted", "#f8d0d0", "#c62828",
                 "the measurement lies outside what the claim's words allow"),
    VerdictClass("inconclusive", "#fff3c4", "#b08900",
                 "too few repeats, or an interval straddling the claim's bound"),
    VerdictClass("not reproduced", "#f3dcc4", "#a65c00",
                 "the effect cannot show on this machine, for a known reason"),
    VerdictClass("computed", "#e4ecf7", "#3b6ea8",
                 "computed from this machine's limits or by scaling, not measured"),
    VerdictClass("substitute", "#e8def3", "#6a4c93",
                 "judged with a different experiment standing in for the source's"),
    VerdictClass("not run here", GREY, "#888888",
                 "nothing stored on this machine could be read"),
)

# The claims layer's constants (threadcost.claims.model re-exports them).
SUPPORTED, CONTRADICTED, INCONCLUSIVE = "supported", "contradicted", "inconclusive"
NOT_REPRODUCED, COMPUTED, SUBSTITUTE, NOT_RUN = (
    "not reproduced", "computed", "substitute", "not run here")

CLASSES: tuple[str, ...] = tuple(c.name for c in VERDICT_CLASSES)  # a tally's order
JUDGED: tuple[str, ...] = (SUPPORTED, CONTRADICTED, INCONCLUSIVE)
VERDICT_COLOURS: dict[str, str] = {c.name: c.background for c in VERDICT_CLASSES}
VERDICT_MARKERS: dict[str, str] = {c.name: c.marker for c in VERDICT_CLASSES}


def verdict_colour(name: str) -> str:
    """The background of a verdict class (grey for a name this vocabulary lacks)."""
    return VERDICT_COLOURS.get(name, GREY)


def verdict_order(name: str) -> int:
    """Where a class comes in a tally (unknown names last)."""
    return CLASSES.index(name) if name in CLASSES else len(CLASSES)


@dataclass(frozen=True)
class TaskKind:
    """A kind of task the study compares: its key, its label, its colour."""

    key: str
    label: str
    colour: str


TASK_KINDS: tuple[TaskKind, ...] = (
    TaskKind("thread", "OS thread", "#0173b2"),
    TaskKind("process", "OS process", "#de8f05"),
    TaskKind("fiber", "C fiber", "#029e73"),
    TaskKind("goroutine", "goroutine", "#cc78bc"),
    TaskKind("rust-thread", "Rust thread", "#d55e00"),
    TaskKind("tokio-task", "Tokio task", "#56b4e9"),
    TaskKind("java-platform", "Java platform thread", "#ca9161"),
    TaskKind("java-virtual", "Java virtual thread", "#949494"),
)
TASKS: tuple[str, ...] = tuple(k.key for k in TASK_KINDS)
TASK_LABELS: dict[str, str] = {k.key: k.label for k in TASK_KINDS}
TASK_COLOURS: dict[str, str] = {k.label: k.colour for k in TASK_KINDS} | {
    k.key: k.colour for k in TASK_KINDS}
