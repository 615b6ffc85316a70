"""What a task kind is, and what the study needs to know of a peer's runtime.

Plain data, no imports of the project: :mod:`threadcost.vocabulary` (a basic module
every layer reads) builds its table of task kinds from these classes.

- :class:`TaskKind`: a kind of task the study compares, its words and its colour. The
  C kinds (thread, process, fiber) are declared in :mod:`threadcost.vocabulary`.
- :class:`Runtime`: a task kind a peer runs, declared once, in its peer's registry entry
  (``threadcost/peers/<language>.py``), with every fact the rest of the study reads of
  it: the vocabulary its words and colour, the experiments whether it holds a kernel task
  and what a sleeping task needs, S4's sleepers program its variants, page 5 whether its
  table has a row for it and the words of that row, the headline whether it is a row.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TaskKind:
    """A kind of task the study compares: its key (as runs store it), its label (the
    words every page, figure and finding prints; no comma, so a list of them reads), its
    colour, the runtime a peer runs it on in words (the peer registry's label adds it in
    brackets), and whether it is a row of the headline."""

    key: str
    label: str
    colour: str
    runtime: str = ""
    headline: bool = True

    def words(self, runtime: bool = False, plural: bool = False) -> str:
        """The kind in words ("Rust thread"); with ``runtime``, the runtime a peer runs
        it on in brackets ("Rust thread (std::thread)"); with ``plural``, for many ("Rust
        threads", "Tokio tasks (multi-thread runtime)": the first words take the s)."""
        head, sep, tail = self.label.partition(" (")
        text = f"{head}s{sep}{tail}" if plural else self.label
        return f"{text} ({self.runtime})" if runtime and self.runtime else text


@dataclass(frozen=True)
class SleepersVariant:
    """A variant of S4's sleepers program on a runtime (:mod:`threadcost.experiments.
    sleepers`): the name its runs store, the flags its peer program is given, and what
    its words add to the runtime's plural, in brackets ("pinned round-robin")."""

    name: str
    flags: tuple[tuple[str, str], ...] = ()
    note: str = ""


@dataclass(frozen=True, kw_only=True)
class Runtime(TaskKind):
    """A task kind a peer runs: one declaration in its peer's registry entry.

    ``flag`` is the ``-runtime NAME`` its peer's programs take ("" when the language
    has one runtime). ``kernel_task``: each task is a kernel
    thread of its own (it holds a pid, so its counts stay under the thread limits, and
    the headline leaves its switch to the OS thread's row). ``need_kib``: the resident
    KiB a sleeping task needs, generously, for S1's program's memory check.
    ``sleepers``: its variants of S4's sleepers program. ``page5``: a row of page 5's
    runtimes table (experiment ``peer_runtimes``), run there by default (False for a
    kind page 5 measures with experiments of its own: the goroutine). ``switch_how`` and
    ``memory_how``: that row's words for its ping-pong ("": its peer has none) and for
    the tasks its memory slope counts."""

    flag: str
    kernel_task: bool
    need_kib: int
    sleepers: tuple[SleepersVariant, ...] = ()
    page5: bool = True
    switch_how: str = ""
    memory_how: str = "idle tasks"

    @property
    def peer_label(self) -> str:
        """Its words with the runtime its peer runs it on ("Rust thread (std::thread)"),
        as its runs store them."""
        return self.words(runtime=True)
