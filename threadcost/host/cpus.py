"""Which CPUs the experiments run on, chosen from this process's affinity mask.

Nothing here assumes two CPUs or CPUs numbered from 0: a mask may hold one CPU,
CPUs 5 and 11 of a 16-CPU machine, or hundreds. Every experiment that pins asks
this module, so one rule decides everywhere:

- :func:`usable`: the CPUs this process may run on (``sched_getaffinity``), sorted.
- :func:`first` (what ``"auto"`` means for one pinned CPU) and :func:`last` (the CPU
  of the ``same-cpu`` placement: away from CPU 0's housekeeping where the mask allows).
- :func:`pair` and :func:`partner`: two CPUs for "another CPU": two physical cores
  of one package when the mask has them, else two packages, else two SMT siblings,
  and a note that says which (:attr:`Pair.relation`).
- :func:`two_cpus_reason`: None, or why an experiment that needs two CPUs is not
  run here ("needs two usable CPUs; this process may use one (CPU 3)").
- :func:`threadcost.settings.validate.cpus` and
  :func:`threadcost.experiments.user_space_tasks.fibers.one_cpu` check CPU parameters
  against the mask (naming the parameter, the value and the CPUs allowed) before any C runs.

The kernels' ``cpu_set_t`` holds CPUs 0 to ``CPU_SETSIZE - 1`` (1023): a CPU above
it is refused here, by name, rather than by a kernel's EINVAL.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from threadcost.errors import ParameterError
from threadcost.host import sysinfo

CPU_SETSIZE = 1024  # glibc's cpu_set_t: what a kernel's CPU_SET() can name
SYS_CPU = Path("/sys/devices/system/cpu")


def usable() -> list[int]:
    """The CPUs this process may run on, sorted (its affinity mask)."""
    return sysinfo.affinity()


def first(mask: Sequence[int] | None = None) -> int:
    """The lowest CPU of the mask: what ``cpu="auto"`` pins to."""
    return min(mask if mask is not None else usable())


def last(mask: Sequence[int] | None = None) -> int:
    """The highest CPU of the mask: the CPU of the ``same-cpu`` placement."""
    return max(mask if mask is not None else usable())


def in_words(mask: Sequence[int]) -> str:
    """``[3]`` -> "CPU 3"; ``[5, 11]`` -> "CPUs 5 and 11"; runs of three or more as
    ranges ("CPUs 0-63, 100")."""
    cpus = sorted(set(mask))
    if len(cpus) == 1:
        return f"CPU {cpus[0]}"
    spans: list[str] = []
    start = prev = cpus[0]
    for cpu in [*cpus[1:], None]:
        if cpu is not None and cpu == prev + 1:
            prev = cpu
            continue
        spans += ([f"{start}-{prev}"] if prev - start >= 2
                  else [str(c) for c in range(start, prev + 1)])
        if cpu is not None:
            start = prev = cpu
    if len(spans) == 2:
        return f"CPUs {spans[0]} and {spans[1]}"
    return "CPUs " + ", ".join(spans)


def two_cpus_reason(mask: Sequence[int] | None = None) -> str | None:
    """None when this process may use two CPUs or more, else why an experiment
    that needs two is not run here."""
    cpus = sorted(mask if mask is not None else usable())
    if len(cpus) >= 2:
        return None
    return f"needs two usable CPUs; this process may use one ({in_words(cpus)})"


# ---------------------------------------------------------------- topology

def core_of(cpu: int) -> tuple[int, ...] | None:
    """The logical CPUs sharing ``cpu``'s physical core, None if the kernel does not say."""
    for name in ("thread_siblings_list", "core_cpus_list"):
        text = sysinfo.read_text(SYS_CPU / f"cpu{cpu}" / "topology" / name)
        if text:
            try:
                return tuple(parse_list(text))
            except ValueError:
                return None
    return None


def package_of(cpu: int) -> int | None:
    """The physical package (socket) of ``cpu``, None if the kernel does not say."""
    return sysinfo.read_int(SYS_CPU / f"cpu{cpu}" / "topology" / "physical_package_id")


def parse_list(text: str) -> list[int]:
    """A kernel CPU list ("0-3,8,10-11") as CPUs."""
    out: list[int] = []
    for part in text.strip().split(","):
        if "-" in part:
            lo, hi = part.split("-")
            out.extend(range(int(lo), int(hi) + 1))
        elif part.strip():
            out.append(int(part))
    return out


def smt_siblings(mask: Sequence[int] | None = None) -> list[list[int]]:
    """Groups of logical CPUs sharing a core, for the cores the mask touches (empty
    if the kernel does not say)."""
    groups = {core_of(cpu) for cpu in (mask if mask is not None else usable())}
    return [list(g) for g in sorted(g for g in groups if g is not None)]


@dataclass(frozen=True)
class Pair:
    """Two CPUs for a cross-CPU placement and how they relate."""

    a: int
    b: int
    relation: str  # "two cores", "two packages" or "SMT siblings"

    def words(self) -> str:
        """"CPUs 5 and 11 (two cores)"."""
        return f"CPUs {self.a} and {self.b} ({self.relation})"


def pair(mask: Sequence[int] | None = None,
         siblings: Sequence[Sequence[int]] | None = None,
         packages: Mapping[int, int | None] | None = None) -> Pair | None:
    """Two CPUs of the mask for "another CPU", None when it holds only one.

    Side A is the mask's first CPU; side B its :func:`partner`. ``siblings`` and
    ``packages`` stand in for /sys (tests; given siblings and no packages, one package).
    """
    cpus = sorted(mask if mask is not None else usable())
    if len(cpus) < 2:
        return None
    return partner(cpus[0], cpus, siblings, packages)


def partner(cpu: int, mask: Sequence[int] | None = None,
            siblings: Sequence[Sequence[int]] | None = None,
            packages: Mapping[int, int | None] | None = None) -> Pair | None:
    """``cpu`` and the CPU of the mask its partner runs on: the first on another
    physical core of the same package, else on another package, else ``cpu``'s SMT
    sibling (said so in ``relation``: a sibling shares the core and its caches).
    None when the mask holds no other CPU."""
    rest = sorted(c for c in (mask if mask is not None else usable()) if c != cpu)
    if not rest:
        return None
    if packages is None and siblings is not None:
        packages = {}
    groups = [tuple(g) for g in (siblings if siblings is not None
                                 else smt_siblings([cpu, *rest]))]
    own_core = next((set(g) for g in groups if cpu in g), {cpu})

    def package(c: int) -> int | None:
        return packages.get(c) if packages is not None else package_of(c)

    others = [c for c in rest if c not in own_core]
    same_package = [c for c in others if package(c) == package(cpu)]
    if same_package:
        return Pair(cpu, same_package[0], "two cores")
    if others:
        return Pair(cpu, others[0], "two packages")
    return Pair(cpu, rest[0], "SMT siblings")


# ---------------------------------------------------------------- validation

def check_settable(name: str, value: Any, listed: Sequence[int]) -> None:
    """Refuse CPUs a kernel's ``cpu_set_t`` cannot name (CPU_SETSIZE and above)."""
    big = [c for c in listed if c >= CPU_SETSIZE]
    if big:
        raise ParameterError(name, value, f"CPUs {big} are beyond what the kernels can pin "
                                          f"(CPU_SETSIZE: CPUs 0-{CPU_SETSIZE - 1})")


# ---------------------------------------------------------------- caches

def last_level_cache_bytes(cpu: int | None = None) -> int:
    """The largest data or unified cache of ``cpu`` (default: :func:`first`), bytes;
    0 when the kernel does not say."""
    where = SYS_CPU / f"cpu{first() if cpu is None else cpu}" / "cache"
    best = (0, 0)  # (level, bytes)
    for index in sorted(where.glob("index*")):
        kind = sysinfo.read_text(index / "type")
        level = sysinfo.read_int(index / "level")
        size = (sysinfo.read_text(index / "size") or "").upper()
        if kind == "Instruction" or level is None or not size:
            continue
        mult = {"K": 1024, "M": 1 << 20, "G": 1 << 30}.get(size[-1:], 1)
        try:
            value = int(size.rstrip("KMG")) * mult
        except ValueError:
            continue
        best = max(best, (level, value))
    return best[1]
