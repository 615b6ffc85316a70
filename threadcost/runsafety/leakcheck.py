"""Snapshots of what a process holds, to prove a kernel call gave it all back.

A C kernel must leave no thread, file descriptor, child process or mapping
behind (native/README.md). :func:`snapshot` records those four from /proc;
:func:`compare` lists what differs between two snapshots; :func:`check` runs a
callable a few times after a warm-up and reports anything that stayed.

The warm-up matters: the first call of an experiment legitimately keeps things
for later calls (imported modules, glibc's per-thread malloc arenas, the
forkserver that :mod:`threadcost.runsafety.isolate` starts once). What must not happen is
growth *per call* after that, so :func:`check` compares the state after the
warm-up with the state after ``repeat`` more calls.
"""

from __future__ import annotations

import gc
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Mapping:
    start: int
    end: int
    perms: str
    path: str

    @property
    def kib(self) -> int:
        return (self.end - self.start) // 1024


@dataclass(frozen=True)
class Snapshot:
    """Threads, open fds, live (or unreaped) children and mappings of one process."""

    threads: int
    fds: dict[int, str]
    children: dict[int, str]
    mappings: tuple[Mapping, ...]

    @property
    def mapped_kib(self) -> int:
        return sum(m.kib for m in self.mappings)


def _threads(pid: str) -> int:
    return len(os.listdir(f"/proc/{pid}/task"))


def _fds(pid: str) -> dict[int, str]:
    found: dict[int, str] = {}
    base = f"/proc/{pid}/fd"
    for name in os.listdir(base):
        try:
            found[int(name)] = os.readlink(f"{base}/{name}")
        except OSError:  # the fd os.listdir itself used, already closed
            continue
    return found


def _children(pid: int) -> dict[int, str]:
    """Every process whose parent is ``pid``, zombies included (state in the value)."""
    found: dict[int, str] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as fh:
                stat = fh.read()
        except OSError:
            continue
        # "pid (comm) state ppid ...": comm may hold spaces and parentheses
        comm = stat[stat.index("(") + 1:stat.rindex(")")]
        state, ppid = stat[stat.rindex(")") + 2:].split()[:2]
        if int(ppid) == pid:
            found[int(name)] = f"{comm} [{state}]"
    return found


def _mappings(pid: str) -> tuple[Mapping, ...]:
    out = []
    with open(f"/proc/{pid}/maps") as fh:
        for line in fh:
            parts = line.split(maxsplit=5)
            lo, hi = parts[0].split("-")
            path = parts[5].strip() if len(parts) > 5 else ""
            out.append(Mapping(int(lo, 16), int(hi, 16), parts[1], path))
    return tuple(out)


def snapshot() -> Snapshot:
    """What this process holds right now."""
    return Snapshot(threads=_threads("self"), fds=_fds("self"),
                    children=_children(os.getpid()), mappings=_mappings("self"))


@dataclass(frozen=True)
class Tolerance:
    """What may honestly differ between two snapshots of a healthy process.

    Python's own allocators map and unmap memory as objects come and go, so a
    few mappings and a few MiB may move; a leaked thread stack (8 MiB by
    default, or one mapping per thread) or a leaked buffer does not hide in that.
    """

    mappings: int = 8
    mapped_kib: int = 8 * 1024


ARENA_BYTES = 64 << 20  # glibc's per-thread malloc heap on 64-bit (HEAP_MAX_SIZE)


def _new_malloc_arenas(before: Snapshot, after: Snapshot) -> tuple[int, int]:
    """(mappings, KiB) of glibc malloc arenas that appeared between the snapshots.

    A thread's first malloc may create an arena: one 64 MiB-aligned anonymous
    reservation (a read-write head, the rest PROT_NONE), kept for the process's
    life and reused by later threads. Any thread of the process (a test runner's
    timer, a pipe reader) can cause one, so it is not the measured code's leak.
    """
    old = set(before.mappings)
    windows: dict[int, list[Mapping]] = {}
    for m in after.mappings:
        if m not in old and not m.path:
            windows.setdefault(m.start // ARENA_BYTES, []).append(m)
    count = kib = 0
    for base, maps in windows.items():
        lo, hi = min(m.start for m in maps), max(m.end for m in maps)
        covered = sum(m.end - m.start for m in maps)
        if lo == base * ARENA_BYTES and hi - lo == ARENA_BYTES == covered:
            count += len(maps)
            kib += covered // 1024
    return count, kib


def compare(before: Snapshot, after: Snapshot,
            tolerance: Tolerance | None = None) -> list[str]:
    """Human-readable differences that count as a leak (empty list: none)."""
    tol = tolerance or Tolerance()
    problems = []
    if after.threads > before.threads:  # one that ended meanwhile (started earlier) is no leak
        problems.append(f"threads: {before.threads} before, {after.threads} after")
    new_fds = {fd: target for fd, target in after.fds.items() if fd not in before.fds}
    if new_fds:
        problems.append(f"file descriptors left open: {new_fds}")
    new_children = {pid: what for pid, what in after.children.items()
                    if pid not in before.children}
    if new_children:
        problems.append(f"child processes left behind: {new_children}")
    arena_maps, arena_kib = _new_malloc_arenas(before, after)
    grew = len(after.mappings) - len(before.mappings) - arena_maps
    if grew > tol.mappings:
        problems.append(f"mappings: {len(before.mappings)} before, "
                        f"{len(after.mappings)} after (+{grew}, tolerance {tol.mappings})")
    grew_kib = after.mapped_kib - before.mapped_kib - arena_kib
    if grew_kib > tol.mapped_kib:
        problems.append(f"mapped memory grew by {grew_kib:,} KiB "
                        f"(tolerance {tol.mapped_kib:,} KiB)")
    return problems


# How long what a call released may take to leave /proc before it counts as kept.
SETTLE_S = 1.0


def check(func: Callable[[], Any], *, warmup: int = 1, repeat: int = 3,
          tolerance: Tolerance | None = None) -> list[str]:
    """Call ``func`` ``warmup`` times, snapshot, call it ``repeat`` times more,
    snapshot again, and return the differences that count as a leak.

    Before each snapshot the garbage ``func`` made is collected (an unreachable object
    still holding an fd is not a leak). The objects that existed before the call are
    frozen meanwhile (:func:`gc.freeze`): a collection skips them instead of walking a
    large process's whole heap (0.13 s each in a test process)."""
    gc.freeze()
    try:
        for _ in range(warmup):
            func()
        gc.collect()
        before = snapshot()
        for _ in range(repeat):
            func()
        gc.collect()
        after = snapshot()
    finally:
        gc.unfreeze()
    problems = compare(before, after, tolerance)
    # A joined thread's OS thread, a killed child, may take a moment to be gone from
    # /proc: what is left over is looked at again for up to SETTLE_S.
    deadline = time.monotonic() + SETTLE_S
    while problems and time.monotonic() < deadline:
        time.sleep(0.02)
        problems = compare(before, snapshot(), tolerance)
    return problems
