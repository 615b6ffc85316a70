"""Why a number differs here: causes named from yardsticks of the same run, or facts.

Each function takes the runs and the reading's verdict and returns a :class:`Why`
when its yardstick was measured and points the way the difference goes, else
None (then the next is tried; none left: "unexplained"). "Because this is a
virtual machine" is said only where the busy-partner wake-up shows that idling
and waking a CPU adds most of the cross-CPU cost, on a machine whose fingerprint
names a hypervisor.
"""

from __future__ import annotations

import re
from typing import Any

from threadcost.claims import logic
from threadcost.claims.model import AssertionVerdict, Measurement, Why, WhyFn
from threadcost.claims.read.memory import split_rss_cause
from threadcost.claims.read.switching import yardstick
from threadcost.claims.runs import Runs, UnreadableRun

SAME, CROSS, BUSY = "pipe_switch_pinned", "wakeup_cross_cpu", "wakeup_cross_cpu_busy"
COLD, WARM, SYSCALL = "memcpy_64kib_cold", "memcpy_64kib", "syscall"
PIPE = "pipe_write_read"
S0_MEMCPY_NS = 3000.0  # S0-code: a 64 KiB memcpy takes about 3 us (C09's record)
# each yardstick in words (tables and setups show these, never the names)
YARDSTICK_WORDS = {
    "syscall": "an empty system call (getppid)",
    "pipe_write_read": "a pipe write and read, no switch",
    "memcpy_64kib": "a 64 KiB memcpy, in cache",
    "memcpy_64kib_cold": "a 64 KiB memcpy, in no cache",
    "pipe_switch_pinned": "a wake-up on the same CPU (half a pinned pipe round trip)",
    "wakeup_cross_cpu": "a wake-up on another, idle CPU",
    "wakeup_cross_cpu_busy": "a wake-up on another, busy CPU",
}
IDLE_SHARE = 0.3  # idling adds at least this share of a cross-CPU wake-up: say so


def _yard(runs: Runs, name: str) -> Measurement | None:
    try:
        got = yardstick(name)(runs)
    except UnreadableRun:  # the yardsticks run could not be read: nothing explains
        return None
    return got if isinstance(got, Measurement) else None


def _slower(v: AssertionVerdict) -> bool | None:
    """Is the measured number slower (costlier) than the published one?"""
    ref = v.published if v.published else (v.low if v.low is not None else v.high)
    if v.measured is None or not ref:
        return None
    more = v.measured > ref
    return (not more) if v.unit in ("iterations/s", "round trips/s") else more


def _virtual(runs: Runs) -> str:
    for run in runs.runs:
        virt = str(run.meta.get("machine", {}).get("virtualization", "") or "")
        if virt and virt not in ("none", "unknown"):
            return virt
    return ""


def cross_cpu(runs: Runs, v: AssertionVerdict) -> Why | None:
    """A slower number where threads wake each other across CPUs: the cross-CPU
    wake-up against the same-CPU one, and what idling the partner CPU adds."""
    same, cross, busy = _yard(runs, SAME), _yard(runs, CROSS), _yard(runs, BUSY)
    if same is None or cross is None or _slower(v) is not True:
        return None
    sticks = {SAME: same.value, CROSS: cross.value}
    text = (f"a wake-up on another CPU costs {logic.number(cross.value)} ns here against "
            f"{logic.number(same.value)} ns on the same CPU "
            f"({cross.value / same.value:.1f}x)")
    if cross.value <= same.value * 1.2:
        return None
    if busy is not None:
        sticks[BUSY] = busy.value
        idle = cross.value - busy.value
        if idle > 0:
            text += (f"; with the partner CPU kept busy it costs {logic.number(busy.value)} "
                     f"ns, so idling and waking that CPU adds {logic.number(idle)} ns")
        else:  # a busy partner is no cheaper: the cost is the crossing itself, not the idling
            text += (f"; with the partner CPU kept busy it costs {logic.number(busy.value)} "
                     "ns, no less, so the cost is the crossing itself rather than waking an "
                     "idle CPU")
        virt = _virtual(runs)
        if virt and idle > IDLE_SHARE * cross.value:
            text += (f": on this virtual machine ({virt}) an idle virtual CPU is woken "
                     "through the hypervisor")
    return Why(text, sticks, cross.run_id)


def cpu_speed(runs: Runs, v: AssertionVerdict) -> Why | None:
    """This CPU's uncached 64 KiB copy against S0-code's 3 us, when it points the way
    the difference goes."""
    cold = _yard(runs, COLD)
    slower = _slower(v)
    if cold is None or slower is None:
        return None
    if (cold.value > S0_MEMCPY_NS) != slower:
        return None
    f = cold.value / S0_MEMCPY_NS
    k, word = (f, "slower") if f >= 1 else (1 / f, "faster")
    sticks = {COLD: cold.value}
    warm = _yard(runs, WARM)
    if warm is not None:
        sticks[WARM] = warm.value
    return Why(f"this CPU copies 64 KiB in no cache in {logic.number(cold.value)} ns against "
               f"S0-code's {logic.number(S0_MEMCPY_NS)} ns: {k:.1f}x {word} at the same "
               "piece of work", sticks, cold.run_id)


def pipe_handoff(runs: Runs, v: AssertionVerdict) -> Why | None:
    """A pinned pipe switch or pipe echo: the same-CPU pipe hand-off of the yardsticks
    run (half a pinned pipe round trip) against the hand-off the published number
    implies, split into a pipe write and read with no switch and the rest (the wake-up
    and the switch), when the hand-off points the way the difference goes."""
    same, pipe = _yard(runs, SAME), _yard(runs, PIPE)
    slower = _slower(v)
    if same is None or slower is None or not v.published:
        return None
    if v.unit in ("iterations/s", "round trips/s"):  # an echo iteration: two hand-offs
        implied, per = 1e9 / (2 * v.published), "an echo iteration is two of them"
    elif v.unit == "ns":
        implied, per = v.published, "a switch is one"
    else:
        return None
    if (same.value > implied) != slower:
        return None
    f = same.value / implied
    k, word = (f, "slower") if f >= 1 else (1 / f, "faster")
    text = (f"a pipe hand-off between two threads on one CPU (the yardsticks run) costs "
            f"{logic.number(same.value)} ns here against the {logic.number(implied)} ns the "
            f"published number implies ({per}): {k:.1f}x {word}")
    sticks = {SAME: same.value}
    if pipe is not None and pipe.value < same.value:
        sticks[PIPE] = pipe.value
        text += (f"; of it, a pipe write and read with no switch take "
                 f"{logic.number(pipe.value)} ns and the wake-up and switch "
                 f"{logic.number(same.value - pipe.value)} ns")
    return Why(text, sticks, same.run_id)


def split_rss(runs: Runs, v: AssertionVerdict) -> Why | None:
    if v.measured is None:
        return None
    got = Measurement(v.measured, v.unit)
    text = split_rss_cause(runs, got)
    return Why(text, fact=True) if text else None


def _go_version(runs: Runs) -> tuple[int, int] | None:
    for run in runs.runs:
        text = str(run.meta.get("summary", {}).get("go_version", ""))
        m = re.search(r"go(\d+)\.(\d+)", text)
        if m:
            return int(m.group(1)), int(m.group(2))
    return None


def go_stack(runs: Runs, v: AssertionVerdict) -> Why | None:
    """Go >= 1.19 sizes a new goroutine's first stack from the average use so far."""
    ver = _go_version(runs)
    if ver is None or ver < (1, 19):
        return None
    return Why(f"measured with Go {ver[0]}.{ver[1]}: since Go 1.19 the runtime sizes a new "
               "goroutine's initial stack from the average stack use of the goroutines "
               "before it (at least 2 KiB), so a goroutine's resident memory depends on the "
               "program and the Go version the source used", fact=True)


def tick(runs: Runs, v: AssertionVerdict) -> Why | None:
    """CPU time read from getrusage moves in scheduler ticks."""
    hz = None
    for run in runs.runs:
        hz = run.meta.get("machine", {}).get("hz") or hz
    if not hz or v.measured is None or v.measured > 10 / float(hz):
        return None  # ten ticks or more: the tick cannot account for the difference
    return Why(f"system time is sampled at the scheduler tick (HZ={hz}: "
               f"{1000 / float(hz):g} ms), so small totals move in steps of a tick",
               fact=True)


def computed(select: Any, yardstick: str) -> WhyFn:
    """A why read by a selector of the same run (sources S7..S12): its measurement's
    sentence, attached to the reading it explains, and its value as the yardstick."""
    def why_fn(runs: Runs, v: AssertionVerdict) -> Why | None:
        got = select(runs)
        if not isinstance(got, Measurement) or not got.how:
            return None
        text = got.how.removeprefix("why: ")
        return Why(text, {yardstick: got.value}, got.run_id)
    why_fn.__name__ = f"computed_{yardstick}"
    return why_fn


SWITCH_UNPINNED: tuple[WhyFn, ...] = (cross_cpu,)
PIPE_PINNED: tuple[WhyFn, ...] = (pipe_handoff,)  # a pinned pipe switch or echo
# A launch, a goroutine switch, a Go program's CPU time: no yardstick of their own
# mechanism is measured, and a 64 KiB copy is not one (it explains a copy, C09's last
# reading): their differences are said "unexplained", never put down to the copy.
CPU_BOUND: tuple[WhyFn, ...] = ()
PINNED = CPU_BOUND  # the older name
GO_MEMORY: tuple[WhyFn, ...] = (go_stack,)


def yardsticks_of(runs: Runs) -> dict[str, Any]:
    """Every yardstick of the runs: name -> Measurement (for the views)."""
    names = (SYSCALL, PIPE, WARM, COLD, SAME, CROSS, BUSY)
    return {n: m for n in names if (m := _yard(runs, n)) is not None}
