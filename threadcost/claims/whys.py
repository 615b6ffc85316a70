"""Why a number differs here: causes named from yardsticks of the same run, or facts.

Each function takes the runs and the reading's verdict and returns a :class:`Why`
when its yardstick was measured and points the way the difference goes, else
None (then the next is tried; none left: "unexplained"). "Because this is a
virtual machine" is said only where the busy-partner wake-up shows that idling
and waking a CPU adds most of the cross-CPU cost, on a machine whose fingerprint
names a hypervisor.
"""

from __future__ import annotations

from typing import Any

from threadcost.claims import logic
from threadcost.claims.model import AssertionVerdict, Why, WhyFn
from threadcost.claims.read.memory import split_rss_cause
from threadcost.claims.read.switching import yardstick
from threadcost.measured.measurement import Measurement
from threadcost.measured.runs import Runs, UnreadableRun

SAME, CROSS, BUSY = "pipe_switch_pinned", "wakeup_cross_cpu", "wakeup_cross_cpu_busy"
COLD, WARM, SYSCALL = "memcpy_64kib_cold", "memcpy_64kib", "syscall"
PIPE = "pipe_write_read"
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


def yard_of(runs: Runs, name: str) -> Measurement | None:
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


def wake_up_ratio(cross: float, same: float) -> str:
    """The cross-CPU wake-up as a multiple of the same-CPU one, as the why prints it
    (and as page 06's summary finds it to mark it with its finding's name)."""
    return f"{cross / same:.1f}x"


def cross_cpu(runs: Runs, v: AssertionVerdict) -> Why | None:
    """A slower number where threads wake each other across CPUs: the cross-CPU
    wake-up against the same-CPU one, and what idling the partner CPU adds."""
    same, cross, busy = yard_of(runs, SAME), yard_of(runs, CROSS), yard_of(runs, BUSY)
    if same is None or cross is None or _slower(v) is not True:
        return None
    sticks = {SAME: same.value, CROSS: cross.value}
    text = (f"a wake-up on another CPU costs {logic.number(cross.value)} ns here against "
            f"{logic.number(same.value)} ns on the same CPU "
            f"({wake_up_ratio(cross.value, same.value)}; means over repeats)")
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


MITIGATION_KEYS = ("spectre_v2", "spec_rstack_overflow", "retbleed", "meltdown")


def mitigations(runs: Runs) -> str:
    """The mitigations in the machine card that sit on the system-call path, in words
    ("spectre_v2: Retpolines; spec_rstack_overflow: Safe RET"); "" when none is recorded."""
    for run in runs.runs:
        vul = run.meta.get("machine", {}).get("cpu_vulnerabilities")
        if isinstance(vul, dict) and vul:
            parts = []
            for key in MITIGATION_KEYS:
                text = str(vul.get(key, "") or "")
                if text.startswith("Mitigation: "):
                    parts.append(f"{key}: {text.removeprefix('Mitigation: ').split(';')[0]}")
            return "; ".join(parts)
    return ""


HOP = "per task per trip"  # a brigade's reading: one hop is a pipe read, a write and a switch


def _switch_ns(v: AssertionVerdict) -> tuple[float, str] | None:
    """The measured number as the time of what it counts, in words: one switch (half a
    round trip), half an echo iteration (an iteration is a round trip: two switches), or
    one hop of a brigade (its pipe read and write included)."""
    if v.measured is None or v.measured <= 0:
        return None
    if v.unit in ("iterations/s", "round trips/s"):
        return 1e9 / (2 * v.measured), "half an echo iteration (one switch)"
    if v.unit == "ns":
        if HOP in v.text:
            return v.measured, "one hop of the brigade (a pipe read, a write and a switch)"
        return v.measured, "one switch"
    return None


def syscalls(runs: Runs, v: AssertionVerdict) -> Why | None:
    """A pinned switch read in this machine's own unit of kernel entry: the empty
    system call of the yardsticks run (and the mitigations in the machine card that
    set its cost). A pinned switch is a few system calls' worth of kernel work (a write,
    a read, a wake-up and the switch on one CPU); where an empty call is dear, so is it.
    The call is the yardstick's finding (mean over repeats), labelled so wherever a why
    prints it."""
    call = yard_of(runs, SYSCALL)
    got = _switch_ns(v)
    if call is None or got is None or _slower(v) is None:
        return None  # either way: a dear or a cheap system call moves the switch alike
    ns, what = got
    sticks = {SYSCALL: call.value}
    text = (f"{syscall_words(call.value)}; {what}, {logic.number(ns)} ns, is "
            f"{ns / call.value:.1f} of them")
    mit = mitigations(runs)
    if mit:
        text += f" (the kernel-entry mitigations in the machine card: {mit})"
    # the pipe's own I/O in system calls, beside a pipe reading only (a condvar switch
    # makes no pipe call: one mechanism at a time)
    pipe = yard_of(runs, PIPE) if "pipe" in v.text.lower() or HOP in v.text else None
    if pipe is not None:
        sticks[PIPE] = pipe.value
        text += (f"; a pipe write and read with no switch is "
                 f"{pipe.value / call.value:.1f} of them")
    text += ("; the source published no system-call cost of its machine, so the time in "
             "system calls is what compares across machines (the claims across machines "
             "show it)")
    return Why(text, sticks, call.run_id)


SYSCALL_STATISTIC = "mean over repeats"  # the one statistic every why prints a call in


def syscall_words(ns: float, where: str = "here") -> str:
    """An empty system call as every why says it: its value, its statistic, where."""
    return (f"an empty system call costs {logic.number(ns)} ns {where} "
            f"({SYSCALL_STATISTIC})")


def cache_state(runs: Runs, v: AssertionVerdict) -> Why | None:
    """A 64 KiB copy: the two cache states measured here (the published 3 µs does not say
    which it was)."""
    cold, warm = yard_of(runs, COLD), yard_of(runs, WARM)
    if cold is None or warm is None:
        return None
    return Why(f"a 64 KiB memcpy takes {logic.number(warm.value)} ns here with its buffers in "
               f"cache and {logic.number(cold.value)} ns with them in no cache "
               f"({cold.value / warm.value:.1f}x): the cache state, which the published "
               "number does not state, decides the copy's time more than the CPU does",
               {WARM: warm.value, COLD: cold.value}, cold.run_id)


def gomaxprocs(published_cpus: float) -> WhyFn:
    """A Go program's CPU time against a run that kept ``published_cpus`` CPUs busy:
    GOMAXPROCS here (the CPUs the runtime's workers, garbage collector included, spread
    over) against the source's."""
    def why_fn(runs: Runs, v: AssertionVerdict) -> Why | None:
        procs = None
        for run in runs.matching("goroutines_million"):
            table = runs.tables([run], "runs")
            if not table.empty and "gomaxprocs" in table:
                procs = int(table.gomaxprocs.max())
        if procs is None or procs >= published_cpus:
            return None
        return Why(f"GOMAXPROCS is {procs} here (this machine's CPUs), where S1's run kept "
                   f"{published_cpus:.1f} CPUs busy on average (its %CPU): the runtime's "
                   "workers and garbage collector spread user time over the CPUs it has, so "
                   "the user seconds follow the CPU count", {"gomaxprocs": float(procs)})
    why_fn.__name__ = "gomaxprocs"
    return why_fn


def stack_depth(runs: Runs, v: AssertionVerdict) -> Why | None:
    """RSS per idle thread larger than published: where the extra pages lie, from the
    touch run of the same folder (an idle thread, and one that wrote 16 KiB of its
    stack). Pages that the written 16 KiB absorb lie within the stack the thread's own
    frames use, not in its descriptor, TLS or a malloc arena."""
    if _slower(v) is not True:
        return None
    found = runs.matching("thread_memory_touch")
    table = runs.tables(found, "per_touch_depth")
    if table.empty or not {0, 16} <= set(table.touch_kib_asked):
        return None
    idle = float(table[table.touch_kib_asked == 0].rss_kib_per_thread.mean())
    wrote = float(table[table.touch_kib_asked == 16].rss_kib_per_thread.mean())
    outside = wrote - 16
    inside = idle - outside
    if inside < 2:  # less than half a page: the idle thread's frames fit where others' do
        return None
    glibc = next((str(r.meta.get("machine", {}).get("glibc")) for r in runs.runs
                  if r.meta.get("machine", {}).get("glibc")), "?")
    return Why(f"an idle thread holds {logic.number(idle)} KiB here and one that wrote 16 KiB "
               f"of its stack {logic.number(wrote)} KiB: {logic.number(outside)} KiB lie "
               f"outside what it wrote (descriptor, TLS and its first frames), and "
               f"{logic.number(inside)} KiB of the idle thread's pages lie inside the 16 KiB "
               "a writing thread fills below its frame: the idle thread's own calls reach "
               f"about {round(inside / 4)} page(s) deeper into its stack (not a malloc arena "
               "or a larger page: both would stay outside what it wrote; where no page lies "
               f"inside, as on the 2-CPU hosts, this why is not given). glibc here: {glibc}; "
               "which call writes that deep "
               "(thread start-up, or the dynamic linker saving the CPU's register state on "
               "the stack) is not measured", {"rss_idle_kib": idle,
                                               "rss_wrote_16_kib": wrote},
               found[0].meta.get("run_id", "") if found else "")


def split_rss(runs: Runs, v: AssertionVerdict) -> Why | None:
    if v.measured is None:
        return None
    got = Measurement(v.measured, v.unit)
    text = split_rss_cause(runs, got)
    return Why(text, fact=True) if text else None


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
# a pinned switch or echo: read in empty system calls (the pipe hand-off measured again
# in another run would be the same quantity, no why)
PIPE_PINNED: tuple[WhyFn, ...] = (syscalls,)
# A launch, a goroutine switch, a Go program's CPU time: no yardstick of their own
# mechanism is measured, and a 64 KiB copy is not one (it explains a copy, C09's last
# reading): their differences are said "unexplained", never put down to the copy.
CPU_BOUND: tuple[WhyFn, ...] = ()
PINNED = CPU_BOUND  # the older name
# a goroutine's memory: no more elementary quantity is stored (the Go version is a fact,
# not a measurement, and the peer counts 2 KiB of stack per goroutine): unexplained
GO_MEMORY: tuple[WhyFn, ...] = ()
IDLE_THREAD_RSS: tuple[WhyFn, ...] = (stack_depth,)


def yardsticks_of(runs: Runs) -> dict[str, Any]:
    """Every yardstick of the runs: name -> Measurement (for the views)."""
    names = (SYSCALL, PIPE, WARM, COLD, SAME, CROSS, BUSY)
    return {n: m for n in names if (m := yard_of(runs, n)) is not None}
