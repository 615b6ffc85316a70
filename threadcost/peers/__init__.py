"""Peers: programs in other languages that run a named workload and print one
JSON object, under one contract for every language.

A peer (:class:`~threadcost.peers.base.Peer`) knows how to find its toolchain,
build itself once into ``build/peers/<language>/`` (rebuilt when a source
changes), and run ``<program> -runtime <runtime> -flag value ...``. Python runs
it in a subprocess with a deadline (pinned to a CPU when asked, and timed from
outside with wait4's rusage when asked) and checks that the JSON carries the
fields its program promises (:data:`~threadcost.peers.base.CONTRACT`).

Without its toolchain a peer is "not run here": :meth:`Peer.absent_reason`
names what is missing and how to install it; nothing raises.

The registry (:data:`PEERS`) maps a language to its peer; :data:`KINDS` maps
the task kinds the paper shows (``rust-thread``, ``tokio-task``...) to a
language, a runtime name and a label (the label from :mod:`threadcost.vocabulary`).
"""

from __future__ import annotations

from threadcost import vocabulary
from threadcost.peers.base import CONTRACT, Kind, Peer, RunOutput
from threadcost.peers.go import GO
from threadcost.peers.java import JAVA
from threadcost.peers.rust import RUST

PEERS: dict[str, Peer] = {p.language: p for p in (GO, RUST, JAVA)}

# (task kind, language, runtime): each kind's label is the vocabulary's, with the
# runtime it runs on (threadcost/vocabulary.py: one label table for every page)
KINDS: dict[str, Kind] = {name: Kind(name, language, runtime,
                                     vocabulary.task_label(name, runtime=True))
                          for name, language, runtime in (
    ("goroutine", "go", ""),
    ("rust-thread", "rust", "thread"),
    ("tokio-task", "rust", "tokio-ct"),
    ("tokio-task-mt", "rust", "tokio-mt"),
    ("java-platform", "java", "platform"),
    ("java-virtual", "java", "virtual"),
)}


def peer(language: str) -> Peer:
    """The registered peer of ``language`` (KeyError names the known ones)."""
    try:
        return PEERS[language]
    except KeyError:
        raise KeyError(f"no peer for {language!r}; known: {', '.join(PEERS)}") from None


def kind_reason(kind: str) -> str | None:
    """None when ``kind``'s peer can run here, else why not (``not run here``)."""
    return PEERS[KINDS[kind].language].absent_reason()


def run_kind(kind: str, program: str, args: dict[str, object], timeout: float,
             cpu: int | None = None, timed: bool = False) -> RunOutput:
    """Run ``program`` of ``kind``'s peer on its runtime."""
    k = KINDS[kind]
    return PEERS[k.language].run(program, k.runtime, args, timeout=timeout, cpu=cpu,
                                 timed=timed)


__all__ = ["CONTRACT", "KINDS", "PEERS", "Kind", "Peer", "RunOutput", "kind_reason",
           "peer", "run_kind"]
