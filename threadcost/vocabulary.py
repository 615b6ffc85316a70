"""The study's one vocabulary: verdict classes, task kinds, and their colours.

Every module that names a verdict class or a task kind, or colours one, imports it
from here (the claims layer, the index page, the views), so a class added or
renamed here is added or renamed everywhere, colour included.

To add a verdict class: add one :class:`VerdictClass` line to ``VERDICT_CLASSES``
(in the order a tally lists it) and, if the claims layer gives it, a constant
beside the others. To add a task kind: a C kind is one line in ``TASK_KINDS``; a peer's
runtime is its declaration in the peer's registry entry (:mod:`threadcost.peers`: one
:class:`~threadcost.peers.kinds.Runtime`, its words and colour included), read here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from threadcost.peers import KINDS as PEER_KINDS
from threadcost.peers.kinds import TaskKind

GREY = "#eeeeee"  # a class or kind this vocabulary does not know


@dataclass(frozen=True)
class VerdictClass:
    """One verdict class: its name, the background a chip or cell of it gets, the
    colour of its marker in a figure, and what it means, in a few words (the gallery's
    legend)."""

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


def bare_reason(why: object) -> str:
    """A stored reason without its leading "not run here: " (a peer's reason begins with
    it): the words a sentence that says "not run" itself goes on with."""
    text, lead = str(why), f"{NOT_RUN}: "
    while text.startswith(lead):
        text = text[len(lead):]
    return text


def verdict_colour(name: str) -> str:
    """The background of a verdict class (grey for a name this vocabulary lacks)."""
    return VERDICT_COLOURS.get(name, GREY)


def verdict_order(name: str) -> int:
    """Where a class comes in a tally (unknown names last)."""
    return CLASSES.index(name) if name in CLASSES else len(CLASSES)


# The C kinds; the peers' runtimes follow, as their registry entries declare them.
TASK_KINDS: tuple[TaskKind, ...] = (
    TaskKind("thread", "OS thread", "#0173b2"),
    TaskKind("process", "OS process", "#de8f05"),
    TaskKind("fiber", "C fiber", "#029e73"),
    *PEER_KINDS.values(),
)
TASKS: tuple[str, ...] = tuple(k.key for k in TASK_KINDS if k.headline)  # the headline's rows
TASK_LABELS: dict[str, str] = {k.key: k.label for k in TASK_KINDS}
TASK_COLOURS: dict[str, str] = {k.label: k.colour for k in TASK_KINDS} | {
    k.key: k.colour for k in TASK_KINDS}


def task_label(key: str, runtime: bool = False, plural: bool = False) -> str:
    """A task kind in words ("Rust thread"); with ``runtime``, the runtime a peer runs
    it on in brackets ("Rust thread (std::thread)"); with ``plural``, for many ("Rust
    threads", "Tokio tasks (multi-thread runtime)"). A key this vocabulary lacks comes
    back with its hyphens as spaces. A label holds no comma, so a list of them reads."""
    kind = next((k for k in TASK_KINDS if k.key == key), None)
    if kind is None:
        return key.replace("-", " ").replace("_", " ")
    return kind.words(runtime=runtime, plural=plural)


# --- the identifiers a run stores, in words -----------------------------------------
# A run stores identifiers (a placement, a variant, a mode: what its API takes); a
# page shows words. Every view that prints one reads :func:`words`; a new identifier
# a reader may see is one line here.

PLACEMENT_WORDS: dict[str, str] = {
    "same-cpu": "one CPU", "cross-cpu": "two CPUs", "smt-siblings": "two SMT siblings",
    "unpinned": "unpinned",
}
IDENTIFIER_WORDS: dict[str, str] = PLACEMENT_WORDS | {
    k.key: k.label for k in TASK_KINDS if "-" in k.key} | {
    # the brigade's kinds (07) beside the task kinds
    "one-thread": "one thread", "epoll": "epoll loop",
    # launch kinds (03, 08)
    "fork_exec": "fork + exec", "posix_spawn": "posix_spawn",
    # variants and modes
    "as_published": "as published", "all_at_once": "all at once",
    "threads_pinned": "threads (pinned round-robin)",
    # experiments whose names do not read as words once split at "_"
    "go_lockosthread": "Go LockOSThread",
} | {  # the peers' variants of S4's sleepers program: "Rust threads (pinned round-robin)"
    v.name: k.words(plural=True) + (f" ({v.note})" if v.note else "")
    for k in PEER_KINDS.values() for v in k.sleepers
}


def words(value: object) -> str:
    """A stored identifier (or a list of them) in words: ``same-cpu`` -> "one CPU",
    ``rust-thread`` -> "Rust thread", ``as_published`` -> "as published"; an
    identifier this vocabulary lacks comes back with its underscores as spaces."""
    if isinstance(value, list | tuple):
        return ", ".join(words(v) for v in value)
    text = str(value)
    return IDENTIFIER_WORDS.get(text) or text.replace("_", " ")

# a run's parameter names that do not read as words once split at "_" (the unit
# suffix, _kib, _ms ..., is read apart: threadcost.views.summary)
PARAMETER_WORDS: dict[str, str] = {
    "impl": "fiber switch", "ws_ints": "working-set integers",
    "ws_limit": "working-set iterations", "cpu_a": "CPU of task A",
    "cpu_b": "CPU of task B", "gomaxprocs": "GOMAXPROCS", "llc": "last-level cache",
    "max_fds": "most file descriptors", "pmap": "read pmap", "per_sample": "time each sample",
    "record_cpus": "record the CPUs", "gate": "start together", "exhaust": "spawn until failure",
    "pin": "CPUs pinned to", "cap": "most threads started", "thread_cap": "most threads started",
    "mib": "allocation", "baseline": "baselines", "touch_fraction": "share touched",
}
# what an unset (None) parameter means, where "not set" does not say it
UNSET_WORDS: dict[str, str] = {"pin": "none", "max_fds": "no limit",
                               "address_space_mib": "no limit"}


# what perf_event_open's error means, in words (the run stores the raw errno name)
PERF_ERRORS = {
    "ENOENT": "this CPU does not expose the event (no such counter: a virtual "
              "machine's CPU often hides its hardware counters)",
    "EOPNOTSUPP": "this CPU does not support the event here",
    "ENODEV": "no performance-monitoring unit here",
    "EACCES": "not permitted to this user (kernel.perf_event_paranoid)",
    "EPERM": "not permitted to this user (kernel.perf_event_paranoid)",
}


# the bound a run's thread count was set by, when it is the run's own cap (runs stored
# before this wording read "cap (parameter)")
CAP_WORDS = "the cap on threads this run was given"


def bound_words(bound: str) -> str:
    """The bound that set a run's thread count, as a reader reads it."""
    return CAP_WORDS if bound == "cap (parameter)" else bound


def perf_words(note: str) -> str:
    """A stored counter note as a reader reads it: "not available here: <why>", from the
    errno name the run stored (ENOENT: no such event here, not a permission)."""
    m = re.search(r"perf_event_open: (E[A-Z]+)", note)
    if not note.startswith("not available") or m is None:
        return note
    why = PERF_ERRORS.get(m.group(1), "the kernel refused to open it")
    paranoid = re.search(r"perf_event_paranoid = (-?\d+)", note)
    if m.group(1) in ("EACCES", "EPERM") and paranoid:
        why = f"not permitted to this user (kernel.perf_event_paranoid is {paranoid.group(1)})"
    return f"not available here: {why}"
