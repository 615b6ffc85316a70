"""The machine properties a claim's verdict turns on, read from one machine folder's runs
(``threadcost claims --all-machines`` names the one behind a verdict that flips between
folders). A claim's record names its property (``flips_on``).

A property is read from each folder's own runs: a yardstick measured there (an empty
system call, a wake-up on another CPU), a quantity of the same folder's runs (a
thread's RSS with 16 KiB of its stack written), or the machine card (CPUs, glibc,
kernel, the toolchains that ran). A folder that cannot feed a claim says "not measured
on this machine: <why>" in its cell, never a blank.
"""

from __future__ import annotations

from typing import Any

from threadcost.claims import logic, whys
from threadcost.claims.model import MachineProperty
from threadcost.claims.whys import mitigations
from threadcost.findings.context_switch import switch_in_syscalls
from threadcost.measured.measurement import Measurement
from threadcost.measured.runs import Runs


def _card(runs: Runs, key: str) -> Any:
    for run in reversed(runs.runs):
        value = run.meta.get("machine", {}).get(key)
        if value not in (None, "", {}):
            return value
    return None


def _yard_ns(runs: Runs, name: str) -> float | None:

    got = whys.yard_of(runs, name)
    return got.value if got is not None else None


def syscall(runs: Runs) -> str | None:
    """The empty system call, and a pinned pipe switch in those system calls."""

    call = _yard_ns(runs, "syscall")
    if call is None:
        return None
    text = f"empty system call {logic.number(call)} ns ({whys.SYSCALL_STATISTIC})"
    per = switch_in_syscalls(runs)
    if isinstance(per, Measurement):  # the yardsticks run's switch, not a claim's reading
        text += f"; the yardsticks' pinned switch = {per.value:.1f} system calls"
    mit = mitigations(runs)
    return f"{text} ({mit})" if mit else text


def wakeup(runs: Runs) -> str | None:
    """A wake-up on another CPU, its partner idle and busy."""
    idle = _yard_ns(runs, "wakeup_cross_cpu")
    busy = _yard_ns(runs, "wakeup_cross_cpu_busy")
    if idle is None:
        return None
    text = f"wake-up on another CPU {logic.number(idle)} ns idle"
    return text + (f", {logic.number(busy)} ns busy" if busy is not None else "")


def cpus(runs: Runs) -> str | None:
    n = _card(runs, "logical_cpus")
    return f"{n} CPUs" if n else None


def idle_thread(runs: Runs) -> str | None:
    """glibc, and where an idle thread's pages lie (the touch run: idle and 16 KiB)."""
    glibc = _card(runs, "glibc")
    found = runs.matching("thread_memory_touch")
    table = runs.tables(found, "per_touch_depth")
    text = f"glibc {glibc}" if glibc else ""
    if not table.empty and {0, 16} <= set(table.touch_kib_asked):
        idle = float(table[table.touch_kib_asked == 0].rss_kib_per_thread.mean())
        wrote = float(table[table.touch_kib_asked == 16].rss_kib_per_thread.mean())
        text += (f"; RSS per idle thread {logic.number(idle)} KiB, "
                 f"{logic.number(wrote - 16)} KiB beside 16 KiB of stack written")
    return text.strip("; ") or None


def kernel(runs: Runs) -> str | None:
    k = _card(runs, "kernel")
    return str(k) if k else None


def hz(runs: Runs) -> str | None:
    value = _card(runs, "hz")
    return f"HZ={value}" if value else None


def toolchains(runs: Runs) -> str | None:
    """Which runtimes' peers ran (Go, Rust, Java), from the stored peer runs."""
    ran = set()
    for run in runs.matching("peer_runtimes"):
        for kind, row in (run.meta.get("summary", {}).get("kinds") or {}).items():
            if isinstance(row, dict) and not row.get("not_run"):
                ran.add(kind.split("-")[0])
    if any(not (r.meta.get("summary") or {}).get("skipped")
           for r in runs.matching("goroutines_million")):
        ran.add("go")
    return ("ran: " + ", ".join(sorted(ran))) if ran else "no Go, Rust or Java peer ran"


def limits(runs: Runs) -> str | None:
    lim = _card(runs, "limits") or {}
    pid = lim.get("kernel.pid_max")
    return f"kernel.pid_max {pid:,}" if isinstance(pid, int) else None


def memcpy(runs: Runs) -> str | None:
    warm, cold = _yard_ns(runs, "memcpy_64kib"), _yard_ns(runs, "memcpy_64kib_cold")
    if warm is None or cold is None:
        return None
    return f"64 KiB memcpy {logic.number(warm)} ns in cache, {logic.number(cold)} ns in none"


def _either(runs: Runs) -> str | None:
    return "; ".join(x for x in (syscall(runs), wakeup(runs)) if x) or None


SYSCALL = MachineProperty("the empty system call (mitigations)", syscall)
SYSCALL_AND_WAKEUP = MachineProperty("the empty system call and the cross-CPU wake-up", _either)
WAKEUP = MachineProperty("the cross-CPU wake-up", wakeup)
GOMAXPROCS = MachineProperty("CPUs (GOMAXPROCS)", cpus)
CPUS = MachineProperty("CPUs", cpus)
CPUS_SATURATED = MachineProperty("CPUs (saturation at 10,000 tasks)", cpus)
IDLE_THREAD = MachineProperty("glibc and the idle thread's stack depth", idle_thread)
KERNEL = MachineProperty("the kernel", kernel)
TICK = MachineProperty("the scheduler tick", hz)
COPY_CACHE = MachineProperty("the copy's cache state", memcpy)
PID_MAX = MachineProperty("kernel.pid_max", limits)
TOOLCHAINS = MachineProperty("the toolchains present", toolchains)
