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

The registry (:data:`PEERS`) maps a language to its peer. Each peer declares the
runtimes it runs, once, in its registry entry (``threadcost/peers/<language>.py``:
one :class:`~threadcost.peers.kinds.Runtime` each); :data:`KINDS` maps every task
kind the peers run (``rust-thread``, ``tokio-task``...) to that declaration, and the
vocabulary, the experiments, the views and the headline read it there.
"""

from __future__ import annotations

from threadcost.peers.base import CONTRACT, Peer, RunOutput
from threadcost.peers.go import GO
from threadcost.peers.java import JAVA
from threadcost.peers.kinds import Runtime, SleepersVariant
from threadcost.peers.rust import RUST

PEERS: dict[str, Peer] = {p.language: p for p in (GO, RUST, JAVA)}

# every runtime of every peer, in the registry's order (a table lists them so)
KINDS: dict[str, Runtime] = {k.key: k for p in PEERS.values() for k in p.kinds}
LANGUAGES: dict[str, str] = {k.key: p.language for p in PEERS.values() for k in p.kinds}
# the rows of page 5's runtimes table (experiment peer_runtimes); ALL, in a list of
# them, stands for every one (page 5's default: a new runtime needs no parameter changed)
PAGE5_KINDS: tuple[str, ...] = tuple(name for name, k in KINDS.items() if k.page5)
ALL = "all"
# the kinds whose tasks are kernel threads of their own (each holds a pid)
KERNEL_TASK_KINDS: tuple[str, ...] = tuple(name for name, k in KINDS.items() if k.kernel_task)


def peer(language: str) -> Peer:
    """The registered peer of ``language`` (KeyError names the known ones)."""
    try:
        return PEERS[language]
    except KeyError:
        raise KeyError(f"no peer for {language!r}; known: {', '.join(PEERS)}") from None


def peer_of(kind: str) -> Peer:
    """The peer that runs ``kind``."""
    return PEERS[LANGUAGES[kind]]


def kind_reason(kind: str) -> str | None:
    """None when ``kind``'s peer can run here, else why not (``not run here``)."""
    return peer_of(kind).absent_reason()


def run_kind(kind: str, program: str, args: dict[str, object], timeout: float,
             cpu: int | None = None, timed: bool = False) -> RunOutput:
    """Run ``program`` of ``kind``'s peer on its runtime."""
    return peer_of(kind).run(program, KINDS[kind].flag, args, timeout=timeout, cpu=cpu,
                             timed=timed)


__all__ = ["ALL", "CONTRACT", "KERNEL_TASK_KINDS", "KINDS", "LANGUAGES", "PAGE5_KINDS", "PEERS",
           "Peer", "RunOutput", "Runtime", "SleepersVariant", "kind_reason", "peer",
           "peer_of", "run_kind"]
