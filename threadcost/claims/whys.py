"""Why a number differs here: causes named from yardsticks of the same run, or facts.

Each function takes the runs and the reading's verdict and returns a :class:`Why`
when its yardstick was measured and points the way the difference goes, else
None (then the next is tried; none left: "unexplained"). A yardstick of the
reading's own kind (:data:`YARDSTICK_KIND`: the pipe hand-off re-measured pinned)
or one whose counterpart on the source's machine was never published (the empty
system call) names no cause: such a why says "unexplained" and gives its numbers as
context (``Why.explains`` False). Nothing is put down to "a virtual machine": no
run here measures the hypervisor.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from threadcost import findings
from threadcost.claims import logic
from threadcost.claims.model import AssertionVerdict, Why, WhyFn
from threadcost.findings.brigade_pinning import (
    CPU_PARTS,
    CROSS_ACCOUNTED,
    CROSS_SHARE,
    UNPINNING_ADDED,
    cpu_part_name,
    cross_cpu_name,
    cross_cpu_parts,
)
from threadcost.findings.context_switch import YARDSTICK_STATISTIC, yardstick
from threadcost.findings.memory import split_rss_cause
from threadcost.findings.more_sources import s9_count, stored_table
from threadcost.measured.measurement import Measurement, Missing
from threadcost.measured.runs import Runs, UnreadableRun, run_ids

SAME, CROSS, BUSY = "pipe_switch_pinned", "wakeup_cross_cpu", "wakeup_cross_cpu_busy"
COLD, WARM, SYSCALL = "memcpy_64kib_cold", "memcpy_64kib", "syscall"
PIPE = "pipe_write_read"
# the one statistic every why prints a yardstick in (the findings'): one, and several
SYSCALL_STATISTIC = YARDSTICK_STATISTIC
YARDSTICKS_STATISTIC = "medians over repeats"
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


def wake_up_ratio(cross: float, same: float) -> str:
    """The cross-CPU wake-up as a multiple of the same-CPU one, as the why prints it
    (and as page 06's summary finds it to mark it with its finding's name)."""
    return f"{cross / same:.1f}x"


# What each yardstick measures, as a kind of quantity. A why whose yardstick is the
# reading's own kind re-measures the claim's quantity: it names no cause, so it is
# given as context (a decomposition), and the reading says "unexplained".
HAND_OFF = "a thread hand-off through the kernel"
COUNTED = "the context switches the kernel counts"
# the yardsticks the sources S8..S12's whys read from their own runs (``computed``)
YIELDLESS_COUNT = "futex switches per round trip without sched_yield"  # C32: a count
PER_ADDED_SWITCH = "ns per added kernel switch"  # C34: a time split by counted switches
SIGPROCMASK_GAP = "rt_sigprocmask calls in the gap"  # C31: a system call, more elementary
YARDSTICK_KIND = {SAME: HAND_OFF, CROSS: HAND_OFF, BUSY: HAND_OFF,
                  SYSCALL: "an empty system call", PIPE: "a pipe write and read",
                  WARM: "a 64 KiB copy", COLD: "a 64 KiB copy",
                  YIELDLESS_COUNT: COUNTED, PER_ADDED_SWITCH: HAND_OFF,
                  SIGPROCMASK_GAP: "an empty system call"}
HOP = "per task per trip"  # a brigade's reading: one hop is a pipe read, a write and a switch


def reading_kind(v: AssertionVerdict) -> str:
    """The kind of quantity a reading measures, in :data:`YARDSTICK_KIND`'s words ("":
    none of them): a count of switches (per iteration, or locked / unlocked) is the
    kernel's counters; a switch, an echo, a ping-pong or a brigade hop is a thread
    hand-off."""
    text = v.text.lower()
    if v.unit == "switches" or "kernel counters" in text:
        return COUNTED
    if "memcpy" in text:
        return "a 64 KiB copy"
    if any(w in text for w in ("switch", "echo", "ping-pong", HOP)):
        return HAND_OFF
    return ""


UNEXPLAINED_BY = "unexplained: "


def cross_cpu(runs: Runs, v: AssertionVerdict) -> Why | None:
    """A slower number where threads wake each other across CPUs. The wake-up yardsticks
    are the same pipe hand-off pinned (to one CPU, to two, with the partner kept busy):
    the reading's own kind of quantity, re-measured. They name no cause, so the reading
    is "unexplained" and they are given as a decomposition, said so. Nothing measured
    here says why the cross-CPU hand-off costs what it does (a hypervisor is not
    measured)."""
    same, cross, busy = yard_of(runs, SAME), yard_of(runs, CROSS), yard_of(runs, BUSY)
    if same is None or cross is None or _slower(v) is not True:
        return None
    if cross.value <= same.value * 1.2:
        return None
    sticks = {SAME: same.value, CROSS: cross.value}
    text = (f"{UNEXPLAINED_BY}no more elementary quantity measured here accounts for it. "
            "As a decomposition, not a cause (the yardsticks' thread hand-off through a "
            f"pipe, pinned): across two CPUs it costs {logic.number(cross.value)} ns here against "
            f"{logic.number(same.value)} ns on one CPU "
            f"({wake_up_ratio(cross.value, same.value)}; {YARDSTICKS_STATISTIC})")
    if busy is not None:
        sticks[BUSY] = busy.value
        idle = cross.value - busy.value
        if idle > 0:
            text += (f"; with the partner CPU kept busy it costs {logic.number(busy.value)} "
                     f"ns, so idling and waking that CPU adds {logic.number(idle)} ns")
        else:
            text += (f"; with the partner CPU kept busy it costs {logic.number(busy.value)} "
                     "ns, no less")
    return Why(text, sticks, cross.run_id, explains=False)


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



def syscalls(runs: Runs, v: AssertionVerdict) -> Why | None:
    """A pinned switch (an echo, a brigade hop, S10's direct cost) beside this machine's
    own unit of kernel entry, as context only.
    The source published no system-call cost of its machine, so nothing measured here
    says why its number differs (a dear or a cheap call would move both machines'
    switches alike): the reading is "unexplained", and the empty system call of the
    yardsticks run (its finding, the median over repeats) is given as context, said so, with
    the mitigations the machine card lists (their cost is not measured). The switch in
    system calls is page 06's context row (one value, the yardsticks run's own switch),
    never recomputed here."""
    call = yard_of(runs, SYSCALL)
    if call is None or reading_kind(v) != HAND_OFF or _slower(v) is None:
        return None
    sticks = {SYSCALL: call.value}
    text = (f"{UNEXPLAINED_BY}the source published no system-call cost of its machine, so "
            "no quantity measured here says why its number differs. For context, not a "
            f"cause: {syscall_words(call.value)}")
    # the pipe's own I/O beside a pipe reading only (a condvar switch makes no pipe call)
    pipe = yard_of(runs, PIPE) if "pipe" in v.text.lower() or HOP in v.text else None
    if pipe is not None:
        sticks[PIPE] = pipe.value
        text += (f", and a pipe write and read with no switch "
                 f"{logic.number(pipe.value)} ns ({SYSCALL_STATISTIC})")
    mit = mitigations(runs)
    if mit:
        text += ("; the machine card lists these kernel-entry mitigations (their cost is "
                 f"not measured): {mit}")
    return Why(text, sticks, call.run_id, explains=False)


def syscall_words(ns: float, where: str = "here") -> str:
    """An empty system call as every why says it: its call, its value, its statistic,
    where."""
    return (f"{YARDSTICK_WORDS[SYSCALL]} costs {logic.number(ns)} ns {where} "
            f"({SYSCALL_STATISTIC})")


def cache_state(runs: Runs, v: AssertionVerdict) -> Why | None:
    """A 64 KiB copy judged outside its tolerance: the copy is measured here in both cache
    states (the published 3 µs does not say which), so a difference that stands in both
    is not the cache state's doing. The two copies are the reading's own quantity: given
    as context, and the reading says "unexplained"."""
    cold, warm = yard_of(runs, COLD), yard_of(runs, WARM)
    if cold is None or warm is None:
        return None
    return Why(f"{UNEXPLAINED_BY}the difference stands with the copy in cache and in no "
               "cache alike. For context, not a cause (the same copy, measured in both "
               f"states): a 64 KiB memcpy takes {logic.number(warm.value)} ns here with its "
               f"buffers in cache and {logic.number(cold.value)} ns with them in no cache "
               f"({cold.value / warm.value:.1f}x; {YARDSTICKS_STATISTIC})",
               {WARM: warm.value, COLD: cold.value}, cold.run_id, explains=False)


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


def computed(select: Any, yardstick: str, explains: bool = True) -> WhyFn:
    """A why read by a selector of the same run (sources S7..S12): its measurement's
    sentence, attached to the reading it explains, and its value as the yardstick.
    ``explains`` False: the sentence names no cause (it says "unexplained" and gives
    context), and no yardstick is recorded."""
    def why_fn(runs: Runs, v: AssertionVerdict) -> Why | None:
        got = select(runs)
        if not isinstance(got, Measurement) or not got.how:
            return None
        text = got.how.removeprefix("why: ")
        if not explains:
            return Why(text, {}, got.run_id, explains=False)
        return Why(text, {yardstick: got.value}, got.run_id)
    why_fn.__name__ = f"computed_{yardstick}"
    return why_fn


# the share of what unpinning adds that the counted cross-CPU wake-ups account for, from
# which it is a cause (below it, or far above: the rest is unexplained). From half on they
# are most of it, so the cause; the share is printed, and below ALL_OF_IT so is the part
# left unaccounted for (named, not hidden).
ACCOUNTS = (0.5, 1.5)
ALL_OF_IT = 0.9


def cross_cpu_wakeups(runs: Runs, v: AssertionVerdict) -> Why | None:
    """S5's "I don't know why" (pinned threads beat unpinned ones): what unpinning adds to
    the thread brigade, against the wake-ups across CPUs the same run counted, each at the
    extra cost of a wake-up on another CPU (the yardsticks'). A cause when they account
    for about all of it (:data:`ACCOUNTS`), or when unpinning adds nothing and they come to
    little (the scheduler kept the brigade on one CPU: nothing for pinning to remove);
    else the share they account for, and the rest unexplained. Its yardsticks are the
    findings it prints, by name."""
    p = cross_cpu_parts(runs)
    if isinstance(p, str):
        return None
    counted = (f"{logic.number(p['unpinned_pct'])}% of the unpinned hops woke a thread on "
               f"another CPU than its writer's and {logic.number(p['pinned_pct'])}% of the "
               "pinned ones (counted by the run), each wake-up across CPUs "
               f"{logic.number(p['cross_ns'] - p['same_ns'])} ns dearer than one on the same "
               "CPU (the yardsticks' pipe hand-off to another, idle CPU minus the same on one "
               f"CPU, {YARDSTICKS_STATISTIC}): together {logic.number(p['accounted_ns'])} ns "
               "per task per trip")
    added = (f"unpinned minus pinned, the Rust-thread brigade takes "
             f"{logic.number(p['added_ns'])} ns per task per trip here (mean over repeats)")
    # in the order the text prints them (a view marks each with its finding's name)
    sticks = {cross_cpu_name("unpinned"): p["unpinned_pct"],
              cross_cpu_name("same-cpu"): p["pinned_pct"], CROSS: p["cross_ns"],
              SAME: p["same_ns"], CROSS_ACCOUNTED: p["accounted_ns"],
              UNPINNING_ADDED: p["added_ns"]}
    if p["added_ns"] <= 0:
        if p["accounted_ns"] > abs(p["added_ns"]) + p["same_ns"]:
            return None  # crossings that cost something, yet no time added: not this
        return Why(f"few wake-ups cross CPUs here, so pinning has little to remove: "
                   f"{counted}; {added}", sticks, p["run_id"])
    share = p["accounted_ns"] / p["added_ns"]
    sticks[CROSS_SHARE] = 100 * share
    of = f"the wake-ups across CPUs account for {logic.number(100 * share)}% of that"
    if ACCOUNTS[0] <= share <= ACCOUNTS[1]:
        rest = ("" if share >= ALL_OF_IT else
                f"; no quantity measured here accounts for the other "
                f"{logic.number(100 * (1 - share))}%")
        return Why(f"wake-ups across CPUs: {counted}; {added}: {of}{rest}", sticks,
                   p["run_id"])
    rest = ("more than all of it, so a cross-CPU wake-up in the brigade does not cost what "
            "the yardsticks' does" if share > ACCOUNTS[1]
            else "and no quantity measured here accounts for the rest")
    return Why(f"{UNEXPLAINED_BY}{counted}; {added}: {of}, {rest}", sticks, p["run_id"],
               explains=False)


def cpu_time_split(published: dict[str, float], their_count: str) -> WhyFn:
    """A pinned brigade's time per task per trip split as the source's own ``/bin/time``
    split it (``published``: ns of each of :data:`CPU_PARTS`, ``their_count`` in words):
    user and system CPU time and the rest of the wall time, off the CPU, each measured by
    the same run. The part that holds most of the difference is named (a cause when it
    holds at least half of it); what makes that part dearer here is not measured."""
    def why_fn(runs: Runs, v: AssertionVerdict) -> Why | None:
        if _slower(v) is not True or v.measured is None or not v.published:
            return None
        got = {part: findings.measurement(cpu_part_name(part), runs) for part in CPU_PARTS}
        here = {k: m for k, m in got.items() if isinstance(m, Measurement)}
        if len(here) < len(CPU_PARTS):
            return None
        gap = {k: here[k].value - published[k] for k in CPU_PARTS}
        top = max(gap, key=lambda k: gap[k])
        parts = "; ".join(f"{CPU_PARTS[k].split(' (')[0]} {logic.number(here[k].value)} ns "
                          f"(published {logic.number(published[k])} ns)" for k in CPU_PARTS)
        text = (f"per task per trip here (the same run; published: {their_count}): {parts}")
        sticks = {cpu_part_name(k): here[k].value for k in CPU_PARTS}
        run_id = here[top].run_id
        if gap[top] < 0.5 * (v.measured - v.published):
            return Why(f"{UNEXPLAINED_BY}no part of the hop holds most of the difference. As a "
                       f"decomposition, not a cause: {text}", sticks, run_id, explains=False)
        where = ("the kernel's own time: what makes it dearer here is not measured"
                 if top == "system" else "the time the brigade spent off its CPU: the CPU "
                 "ran other work, or idled" if top == "off_cpu" else "the user-space code")
        return Why(f"most of the difference lies in {where}; {text}", sticks, run_id)
    why_fn.__name__ = "cpu_time_split"
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


# --- the computed whys of notebook 08's claims (C30-C32, C34): each returns a computed
# measurement whose sentence :func:`computed` attaches to the reading it explains

def _why(value: float, unit: str, how: str, found: list[Any], **setup: Any) -> Measurement:
    return Measurement(value, unit, value, value, repeats=1, run_id=run_ids(found), how=how,
                       computed=True, unjudgeable=how, setup=setup)


def s7_why(runs: Runs) -> Measurement | Missing:
    """Slope of fork+exec's life over the parent's MiB, in bare forks' slopes."""
    got = stored_table(runs, "launch_spawn_growth", "repeats")
    if isinstance(got, Missing):
        return got
    table, found = got
    slopes = {}
    for kind in ("fork_exec", "fork"):
        rows = table[table.kind == kind]
        if rows.parent_touch_mib.nunique() < 2:
            return Missing("the stored run has one parent size only")
        slopes[kind] = float(np.polyfit(rows.parent_touch_mib, rows.lifecycle_ns_p50, 1)[0])
    if slopes["fork"] <= 0:
        return Missing("a bare fork did not grow with the parent here")
    ratio = slopes["fork_exec"] / slopes["fork"]
    return _why(ratio, "ratio",
                f"why: fork+exec grows by {slopes['fork_exec'] / 1000:,.1f} µs per MiB of "
                f"dirty parent memory and a bare fork (no exec) by "
                f"{slopes['fork'] / 1000:,.1f} µs per MiB, measured in the same run: the "
                "growth is fork's copy of the page tables, not exec's", found,
                experiment="launch_spawn_growth")


def s8_why(runs: Runs) -> Measurement | Missing:
    """The swapcontext gap in empty rt_sigprocmask calls: the finding
    ``fiber_gap_over_sigprocmask_mean_ratio`` (the value page 08 prints), by name."""
    got = stored_table(runs, "fiber_gap", "ratios")
    if isinstance(got, Missing):
        return got
    _, found = got
    gap = findings.measurement("fiber_gap_over_sigprocmask_mean_ratio", runs)
    if isinstance(gap, Missing):
        return gap
    call = findings.measurement("fiber_gap_sigprocmask_mean_ns", runs)
    cost = (f", and an empty rt_sigprocmask call costs {call.value:,.0f} ns here (mean over "
            "repeats)" if isinstance(call, Measurement) else "")
    return _why(gap.value, "system calls",
                f"why: the swapcontext switch costs {gap.value:.2f} empty rt_sigprocmask "
                "calls more than the hand-written one (the gap of the means over repeats / "
                "the mean call, all timed in the same process): the gap is the signal-mask "
                f"system call swapcontext makes{cost}, so the ratio follows what a system "
                "call costs on each machine, not the switch itself", found,
                experiment="fiber_gap")


def s9_why(runs: Runs) -> Measurement | Missing:
    """Context for C32's count (no cause): the run counts the kernel's switches, not the
    loop's sched_yield calls, so what it has is the reading's own quantity, split
    (voluntary and involuntary) and counted again without the yields (the C32 shape
    reading's value). The reading says "unexplained" and gives these as context."""
    got = stored_table(runs, "switch_counts", "runs")
    if isinstance(got, Missing):
        return got
    table, found = got
    rows = table[(table.mechanism == "futex_yield") & (table.tasks == "processes")]
    if rows.empty:
        return Missing("the stored switch_counts run has no run of tsuna's loop")
    plain = s9_count("futex", "processes")(runs)
    if isinstance(plain, Missing):
        return plain
    vol = float((rows.voluntary / rows.round_trips).mean())
    inv = float((rows.involuntary / rows.round_trips).mean())
    return _why(plain.value, "switches",
                f"{UNEXPLAINED_BY}the run counts the switches the kernel made, not the "
                "loop's sched_yield calls (or its retried wake-ups), so no more elementary "
                "quantity measured here says why one iteration makes more switches than the "
                "source counts. For context, not a cause (the same counters, split and "
                f"counted again): of each iteration's switches, {vol:.2f} are voluntary (a "
                f"side went to sleep) and {inv:.2f} involuntary (a side was switched out "
                "while still runnable); the same futex ping-pong without its sched_yield "
                f"calls makes {plain.value:.2f} switches per round trip (means over repeats, "
                "the same run)", found, experiment="switch_counts")


def s11_why(runs: Runs) -> Measurement | Missing:
    """Context for C34's slowdown (no cause): the added time split by the kernel switches
    locking adds, beside the yardsticks' pipe hand-off. Both are the reading's own kind
    of quantity (a hand-off between OS threads, timed), so the reading says
    "unexplained" and gives them as a decomposition."""
    got = stored_table(runs, "go_lockosthread", "runs")
    if isinstance(got, Missing):
        return got
    table, found = got
    locked, free = table[table.locked], table[~table.locked]
    extra_ns = float(locked.ns_per_round_trip.mean() - free.ns_per_round_trip.mean())
    extra_sw = float(locked.switches_per_round_trip.mean()
                     - free.switches_per_round_trip.mean())
    if extra_sw <= 0:
        return Missing("locking added no counted kernel switch")
    per = extra_ns / extra_sw
    text = (f"{UNEXPLAINED_BY}no more elementary quantity measured here says why locking "
            "slows the round trip by this much: a time per counted switch and a thread "
            "hand-off are the reading's own kind of quantity. As a decomposition, not a "
            f"cause: locking adds {extra_sw:.2f} kernel switches per round trip and "
            f"{extra_ns / 1000:,.1f} µs (means over repeats), {per / 1000:,.2f} µs per added "
            "switch")
    same, cross = yardstick("pipe_switch_pinned")(runs), yardstick("wakeup_cross_cpu")(runs)
    if isinstance(same, Measurement) and isinstance(cross, Measurement):
        text += (f"; the yardsticks' pipe hand-off between two threads takes "
                 f"{same.value:,.0f} ns on one CPU and {cross.value:,.0f} ns across two, idle "
                 f"({YARDSTICKS_STATISTIC})")
    text += (f"; the unlocked round trip, the ratio's denominator, takes "
             f"{free.ns_per_round_trip.mean():,.0f} ns here (S11: 500 ns)")
    return _why(per, "ns", text, found, experiment="go_lockosthread")

