"""S5's "I don't know why" about its pinned thread brigade beating the unpinned one (C21):
what unpinning adds to the Rust peer's thread brigade, the share of its hops whose reader
wakes on another CPU (counted by the run), the CPU time of its timed trips split as S5's
/bin/time split it, and how much of the added time the cross-CPU wake-ups account for.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from threadcost import findings
from threadcost.findings import Value, pooled, quantity
from threadcost.findings.brigade import PLACES, S5_TASKS, on_transport, per_task
from threadcost.findings.context_switch import yardstick
from threadcost.measured.intervals import over_repeats
from threadcost.measured.measurement import Measurement
from threadcost.measured.runs import Runs

RUST_THREAD = "rust-thread"
CROSS_DEFINITION = ("each repeat's timed hops whose reader woke on another CPU than the "
                    "thread that wrote to it (each thread reads its CPU as its read returns; "
                    "a trip is tasks + 1 hops), as a share of the hops; mean over the "
                    "repeats; on S5's Unix socket pairs when stored, else on pipes")
ADDED_DEFINITION = ("S5's brigade of 500 Rust threads on the Rust peer: in each repeat, the "
                    "mean trip / 500 unpinned minus the same pinned to one CPU (both gross, "
                    "socket-pair I/O included; interleaved in the repeat); mean over the "
                    "repeats (S5: 5.313 - 3.417 µs)")
# the extra cost of a wake-up across CPUs: the yardsticks' pipe hand-off to another, idle
# CPU minus the same on one CPU (the dearer of the two cross-CPU ones measured)
CROSS_EXTRA = ("wakeup_cross_cpu", "pipe_switch_pinned")


def _thread_rows(runs: Runs) -> tuple[pd.DataFrame, list[Any]] | str:
    """The peer brigade's Rust-thread rows at 500 tasks on S5's transport (else pipes)."""
    found = runs.matching("peer_brigade")
    table = runs.tables(found, "runs")
    if table.empty:
        return "no stored run of S5's brigade on the Rust peer (notebook 07; needs cargo)"
    rows = on_transport(table, None)
    rows = rows[(rows.kind == RUST_THREAD) & (rows.tasks == S5_TASKS) & (rows.trips > 0)]
    if rows.empty:
        return f"the stored S5 brigade has no Rust-thread brigade of {S5_TASKS} tasks"
    return rows, found


def _read(found: list[Any], rows: pd.DataFrame) -> list[Any]:
    """The runs of ``found`` that hold ``rows`` (a pooled table's ``run_index``)."""
    return [found[i] for i in sorted(set(rows.run_index))] if "run_index" in rows else found


def _cross_share(rows: pd.DataFrame) -> pd.Series:
    """Per row: the share of its timed hops that woke a thread on another CPU (NaN: a run
    stored before the thread brigade counted them)."""
    if "cross_cpu_hops" not in rows:
        return pd.Series(float("nan"), index=rows.index)
    return rows.cross_cpu_hops.astype(float) / (rows.trips * (rows.tasks + 1))


def _cross_cpu(runs: Runs, placement: str) -> Value | str:
    got = _thread_rows(runs)
    if isinstance(got, str):
        return got
    rows, found = got
    share = _cross_share(rows[rows.placement == placement]).dropna()
    if share.empty:
        return (f"the stored S5 brigade counted no CPU of a Rust thread's wake-up "
                f"({PLACES[placement][1]}; stored before it did)")
    m = over_repeats(share * 100, "%")
    return Value(m.value, m.low, m.high, m.repeats, _read(found, rows.loc[share.index]),
                 setup={"experiment": "peer_brigade", "kind": RUST_THREAD,
                        "tasks": S5_TASKS, "placement": placement})


def cross_cpu_name(placement: str) -> str:
    return f"peer_brigade_rust_thread_cross_cpu_{PLACES[placement][0]}_mean_pct"


def _cross_quantity(placement: str) -> None:
    quantity(cross_cpu_name(placement), "%", "mean over repeats",
             f"S5's brigade of {S5_TASKS} Rust threads on the Rust peer, "
             f"{PLACES[placement][1]}: wake-ups across CPUs, {CROSS_DEFINITION}",
             fmt="sig3", reads=pooled("peer_brigade"))(lambda runs: _cross_cpu(runs, placement))


for _placement in PLACES:
    _cross_quantity(_placement)

# where a pinned hop's time goes (C21's as-published reading): the process's user and
# system CPU time over the timed trips, and the rest of the wall time, off its one CPU
CPU_PARTS = {"user": "user CPU time", "system": "system (kernel) CPU time",
             "off_cpu": "wall time off the CPU (the timed trips' wall time minus their user "
                        "and system CPU time: the CPU ran other work, or idled)"}


def _cpu_part(rows: pd.DataFrame, part: str) -> pd.Series:
    """Per row, ns per task per trip of one part (S5's unit; NaN: not stored)."""
    if "timed_wall_ns" not in rows:
        return pd.Series(float("nan"), index=rows.index)
    ns = (rows.timed_wall_ns - rows.cpu_user_ns - rows.cpu_system_ns if part == "off_cpu"
          else rows[f"cpu_{part}_ns"])
    return ns.astype(float) / (rows.trips * rows.tasks)


def cpu_part_name(part: str) -> str:
    return f"peer_brigade_rust_thread_one_cpu_{part}_mean_ns"


def _cpu_quantity(part: str) -> None:
    def select(runs: Runs) -> Value | str:
        got = _thread_rows(runs)
        if isinstance(got, str):
            return got
        rows, found = got
        per = _cpu_part(rows[rows.placement == "same-cpu"], part).dropna()
        if per.empty:
            return ("the stored S5 brigade read no CPU time of the pinned Rust threads "
                    "(stored before it did)")
        m = over_repeats(per, "ns")
        return Value(m.value, m.low, m.high, m.repeats, _read(found, rows.loc[per.index]),
                     setup={"experiment": "peer_brigade", "kind": RUST_THREAD,
                            "tasks": S5_TASKS, "placement": "same-cpu"})
    quantity(cpu_part_name(part), "ns", "mean over repeats",
             f"S5's brigade of {S5_TASKS} Rust threads on the Rust peer, every thread on "
             f"one CPU: the {CPU_PARTS[part]} of each repeat's timed trips / (trips x "
             f"{S5_TASKS}), S5's unit; mean over the repeats",
             reads=pooled("peer_brigade"))(select)


for _part in CPU_PARTS:
    _cpu_quantity(_part)

UNPINNING_ADDED = "peer_brigade_rust_thread_unpinned_minus_one_cpu_mean_ns"


# in ns, as the why of C21 that prints it does
@quantity(UNPINNING_ADDED, "ns", "mean over repeats", ADDED_DEFINITION,
          reads=pooled("peer_brigade"))
def unpinning_added(runs: Runs) -> Value | str:
    got = _thread_rows(runs)
    if isinstance(got, str):
        return got
    rows, found = got
    index = [c for c in ("run_index", "repeat") if c in rows.columns]
    wide = rows.assign(value=per_task(rows)).pivot_table(index=index, columns="placement",
                                                           values="value")
    if not set(PLACES) <= set(wide.columns):
        return "the stored S5 brigade did not run the Rust threads both unpinned and pinned"
    diff = (wide["unpinned"] - wide["same-cpu"]).dropna()
    if diff.empty:
        return "no repeat of the stored S5 brigade ran the Rust threads both ways"
    m = over_repeats(diff, "ns")
    return Value(m.value, m.low, m.high, m.repeats, found,
                 setup={"experiment": "peer_brigade", "kind": RUST_THREAD,
                        "tasks": S5_TASKS, "placement": "unpinned - one CPU"})


CROSS_ACCOUNTED = "peer_brigade_cross_cpu_wakeups_accounted_mean_ns"
CROSS_SHARE = "peer_brigade_cross_cpu_wakeups_share_of_unpinning_pct"
ACCOUNTED_HOW = ("the extra share of hops that cross CPUs unpinned (counted by the run) x "
                 "(tasks + 1) / tasks x the extra cost of a wake-up on another, idle CPU over "
                 "one on the same CPU (the yardsticks' pipe hand-off, medians over repeats)")


@quantity(CROSS_ACCOUNTED, "ns", "computed from means and medians",
          "what the wake-ups across CPUs add per task per trip to S5's unpinned Rust-thread "
          f"brigade: {ACCOUNTED_HOW}", computed=True,
          reads=pooled("peer_brigade and yardsticks runs"))
def cross_cpu_accounted(runs: Runs) -> Value | str:
    got = cross_cpu_parts(runs)
    if isinstance(got, str):
        return got
    return Value(got["accounted_ns"], n=1, runs=got["run_id"].split("; "), setup={
        "experiment": "peer_brigade, yardsticks", "kind": RUST_THREAD, "tasks": S5_TASKS})


@quantity(CROSS_SHARE, "%", "computed from means and medians",
          "how much of what unpinning adds to S5's Rust-thread brigade (per task per trip) "
          f"the wake-ups across CPUs account for: {ACCOUNTED_HOW}, over the mean added time",
          computed=True, reads=pooled("peer_brigade and yardsticks runs"))
def cross_cpu_share(runs: Runs) -> Value | str:
    got = cross_cpu_parts(runs)
    if isinstance(got, str):
        return got
    if got["added_ns"] <= 0:
        return "unpinning added no time to the Rust-thread brigade here"
    return Value(100 * got["accounted_ns"] / got["added_ns"], n=1,
                 runs=got["run_id"].split("; "), setup={
                     "experiment": "peer_brigade, yardsticks", "kind": RUST_THREAD,
                     "tasks": S5_TASKS})


def cross_cpu_parts(runs: Runs) -> dict[str, Any] | str:
    """What the cross-CPU wake-ups account for, in parts: the time unpinning adds (ns),
    the cross-CPU share of hops unpinned and pinned (%), the yardsticks' wake-up across
    CPUs and on one CPU (ns), what the extra crossings add (ns) and the runs read; or
    what is missing."""
    added = findings.compute(UNPINNING_ADDED, runs)
    unpinned = findings.compute(cross_cpu_name("unpinned"), runs)
    pinned = findings.compute(cross_cpu_name("same-cpu"), runs)
    for got in (added, unpinned, pinned):
        if not got.measured or got.value is None:
            return got.missing or f"{got.name} not measured on this machine"
    cross, same = (yardstick(name)(runs) for name in CROSS_EXTRA)
    if not isinstance(cross, Measurement) or not isinstance(same, Measurement):
        return "no stored yardsticks run times a wake-up across CPUs (notebook 04)"
    crossings = (unpinned.value - pinned.value) / 100 * (S5_TASKS + 1) / S5_TASKS
    return {"added_ns": added.value, "unpinned_pct": unpinned.value,
            "pinned_pct": pinned.value, "cross_ns": cross.value, "same_ns": same.value,
            "accounted_ns": crossings * (cross.value - same.value),
            "run_id": "; ".join(dict.fromkeys((*added.run_ids, *unpinned.run_ids,
                                               *cross.run_id.split("; "))))}
