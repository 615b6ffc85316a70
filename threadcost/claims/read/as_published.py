"""Selectors of the as-published readings: each number measured the way its source did,
one mechanism, variant or placement at a time (never pooled)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from threadcost.claims.logic import number
from threadcost.claims.read.brigade import (
    S5_TASKS,
    brigade_at_s5,
    brigade_memory,
    brigade_setup,
    slope_measurement,
)
from threadcost.claims.read.common import at_setup, holds_all, no_run
from threadcost.claims.read.launch_cpu import cpu_bound_runs
from threadcost.claims.read.memory import thread_points
from threadcost.claims.read.switching import (
    pinning_pairs,
    placement_skipped,
    yardstick,
    yardstick_repeats,
)
from threadcost.measured.intervals import log_ratio, over_repeats, quotient, slope
from threadcost.measured.measurement import Measurement, Missing
from threadcost.measured.runs import Runs, run_ids

Select = Any


def _placement(runs: Runs) -> tuple[pd.DataFrame, list[Any]] | Missing:
    found = runs.matching("context_switch_placement", tasks="threads",
                          placements=holds_all("same-cpu", "unpinned"))
    table = runs.tables(found, "repeats")
    if table.empty:
        return placement_skipped(found) or no_run(
            "context_switch_placement", "threads pinned and unpinned", "notebook 04")
    return table, found


def switch_ns(mechanism: str, placement: str) -> Select:
    """One switch (half a round trip of a ping-pong timed whole), one mechanism and
    placement, over the repeats of context_switch_placement."""
    def select(runs: Runs) -> Measurement | Missing:
        got = _placement(runs)
        if isinstance(got, Missing):
            return got
        table, found = got
        rows = table[(table.mechanism == mechanism) & (table.placement == placement)]
        if rows.empty:
            return Missing(f"no {mechanism} ping-pong {placement} is stored")
        return over_repeats(rows.switch_ns, "ns", run_id=run_ids(found),
                            setup={"experiment": "context_switch_placement",
                                   "mechanism": mechanism, "placement": placement,
                                   "tasks": "threads"},
                            how="per repeat: half the mean round trip of a ping-pong timed "
                                "whole (S0's per switch)")
    return select


def switch_ratio(mechanism: str) -> Select:
    """Unpinned / pinned switch of one mechanism, paired by repeat."""
    def select(runs: Runs) -> Measurement | Missing:
        got = _placement(runs)
        if isinstance(got, Missing):
            return got
        table, found = got
        rows = table[table.mechanism == mechanism]
        wide = rows.pivot_table(index=["run_index", "repeat"], columns="placement",
                                values="switch_ns")
        if "unpinned" not in wide or "same-cpu" not in wide:
            return Missing(f"no {mechanism} pair pinned and unpinned is stored")
        return log_ratio((wide["unpinned"] / wide["same-cpu"]).dropna(),
                         run_id=run_ids(found),
                         setup={"experiment": "context_switch_placement",
                                "mechanism": mechanism,
                                "placements": "same-cpu vs unpinned, interleaved"},
                         how="per repeat: one switch unpinned / pinned, this mechanism only")
    return select


def switch_over_cold_memcpy(runs: Runs) -> Measurement | Missing:
    """yardsticks: pinned pipe switch / uncached 64 KiB memcpy, paired by repeat."""
    table, found = yardstick_repeats(runs)
    need = {"pipe_switch_pinned", "memcpy_64kib_cold"}
    if table.empty or not need <= set(table.yardstick):
        return no_run("yardsticks", "the uncached 64 KiB memcpy", "the last cell of "
                        "notebook 04")
    wide = table.pivot_table(index=["run_index", "repeat"], columns="yardstick",
                             values="ns_median")
    ratio = (wide["pipe_switch_pinned"] / wide["memcpy_64kib_cold"]).dropna()
    return over_repeats(ratio, "ratio", run_id=run_ids(found),
                        setup={"experiment": "yardsticks", "mechanism": "pipe",
                               "placement": "same-cpu", "memcpy": "64 KiB, in no cache"},
                        how="per repeat: one pinned switch / one 64 KiB memcpy between "
                            "buffers in no cache (as S0-code's 3 µs copy), same repeat")


def _cache_states(runs: Runs) -> tuple[pd.DataFrame, list[Any]] | Missing:
    table, found = yardstick_repeats(runs)
    need = {"pipe_switch_pinned", "memcpy_64kib", "memcpy_64kib_cold"}
    if table.empty or not need <= set(table.yardstick):
        return no_run("yardsticks", "the 64 KiB memcpy in cache and in no cache",
                        "the last cell of notebook 04")
    wide = table.pivot_table(index=["run_index", "repeat"], columns="yardstick",
                             values="ns_median")
    return wide, found


def _either(warm: Measurement, cold: Measurement, unit: str, **info: Any) -> Measurement:
    """One reading spanning two cache states: the value between them (their geometric
    mean), the interval from the lower end of the one to the upper end of the other."""
    lows = [m.low if m.low is not None else m.value for m in (warm, cold)]
    highs = [m.high if m.high is not None else m.value for m in (warm, cold)]
    return Measurement(float(np.sqrt(warm.value * cold.value)), unit, min(lows), max(highs),
                       repeats=min(warm.repeats, cold.repeats),
                       spans=(f"the copy's cache state: {number(warm.value)} in cache, "
                              f"{number(cold.value)} in no cache"), **info)


NO_CACHE_STATE = ("S0 gives no cache state for its 64 KiB copy (its 3 µs is a bar typed in "
                  "S0-code's plot script), so the interval spans the copy in cache and in "
                  "no cache")


def memcpy_either(runs: Runs) -> Measurement | Missing:
    """A 64 KiB memcpy in cache and in no cache, as one reading whose interval spans both."""
    got = _cache_states(runs)
    if isinstance(got, Missing):
        return got
    wide, found = got
    warm = over_repeats(wide["memcpy_64kib"].dropna(), "ns")
    cold = over_repeats(wide["memcpy_64kib_cold"].dropna(), "ns")
    return _either(warm, cold, "ns", run_id=run_ids(found),
                   setup={"experiment": "yardsticks", "memcpy": "64 KiB, in cache and in "
                          "no cache", "cpu": "pinned"},
                   how=f"per repeat, the median batch: in cache {warm.value:,.0f} ns, in no "
                       f"cache {cold.value:,.0f} ns; {NO_CACHE_STATE}",
                   where="(in cache to in no cache)")


def switch_over_memcpy_either(runs: Runs) -> Measurement | Missing:
    """Pinned pipe switch / 64 KiB memcpy, paired by repeat, for both cache states."""
    got = _cache_states(runs)
    if isinstance(got, Missing):
        return got
    wide, found = got
    warm = over_repeats((wide["pipe_switch_pinned"] / wide["memcpy_64kib"]).dropna(), "ratio")
    cold = over_repeats((wide["pipe_switch_pinned"] / wide["memcpy_64kib_cold"]).dropna(),
                        "ratio")
    return _either(warm, cold, "ratio", run_id=run_ids(found),
                   setup={"experiment": "yardsticks", "mechanism": "pipe",
                          "placement": "same-cpu", "memcpy": "64 KiB, in cache and in no "
                          "cache"},
                   how=f"per repeat: one pinned switch / one 64 KiB memcpy, same repeat: "
                       f"{warm.value:.2f} against the copy in cache, {cold.value:.2f} in no "
                       f"cache; {NO_CACHE_STATE}",
                   where="(copy in cache to in no cache)")


def switch_in_syscalls(runs: Runs) -> Measurement | Missing:
    """A pinned pipe switch in empty system calls, paired by repeat (yardsticks)."""
    table, found = yardstick_repeats(runs)
    need = {"pipe_switch_pinned", "syscall"}
    if table.empty or not need <= set(table.yardstick):
        return no_run("yardsticks", "the empty system call", "the last cell of notebook 04")
    wide = table.pivot_table(index=["run_index", "repeat"], columns="yardstick",
                             values="ns_median")
    return over_repeats((wide["pipe_switch_pinned"] / wide["syscall"]).dropna(),
                        "empty system calls", run_id=run_ids(found),
                        setup={"experiment": "yardsticks"},
                        how="per repeat: half a pinned pipe round trip / one empty system "
                            "call (getppid), same repeat")


def in_units(select: Select, yard_name: str, unit: str) -> Select:
    """A time read in multiples of a yardstick of the same machine (the property a
    verdict turns on, in its own units): the reading / the yardstick's mean, with the
    conservative interval of the two."""

    def select_in_units(runs: Runs) -> Measurement | Missing:
        top, bottom = select(runs), yardstick(yard_name)(runs)
        if isinstance(top, Missing):
            return top
        if isinstance(bottom, Missing):
            return bottom
        return quotient(top, bottom, unit, run_id=f"{top.run_id}; {bottom.run_id}",
                        setup={**top.setup, "yardstick": yard_name},
                        how=f"{top.how or 'the reading'} / the {yard_name} yardstick's mean "
                            "(another run of the same machine); conservative interval")
    return select_in_units


def echo_rate(placement: str) -> Select:
    def select(runs: Runs) -> Measurement | Missing:
        found = runs.matching("echo", placements=holds_all(placement))
        table = runs.tables(found, "repeats")
        if table.empty:
            return no_run("echo", f"placement {placement}", "notebook 04")
        rows = table[table.placement == placement]
        return over_repeats(rows.rate_per_s, "iterations/s", run_id=run_ids(found),
                            setup={"experiment": "echo", "placement": placement,
                                   "message_bytes": found[0].meta["params"].get(
                                       "message_bytes")},
                            how="per repeat: echoes per second (two switches each)")
    return select


def goroutine(mode: str, column: str, unit: str) -> Select:
    def select(runs: Runs) -> Measurement | Missing:
        got = pinning_pairs(runs)
        if isinstance(got, Missing):
            return got
        table, found = got
        rows = table[table["mode"] == mode]
        return over_repeats(rows[column], unit, run_id=run_ids(found),
                            setup={"experiment": "goroutine_pinning", "mode": mode,
                                   "channel": "unbuffered"},
                            how=f"per run: {column.replace('_', ' ')}, a batch of channel "
                                "round trips timed whole (one iteration = one round trip)")
    return select


def touch_rss_per_thread(runs: Runs) -> Measurement | Missing:
    found = runs.matching("thread_memory_touch", touch_depths_kib=holds_all(400))
    table = runs.tables(found, "points")
    if table.empty:
        return no_run("thread_memory_touch", "a 400 KiB stack touch", "notebook 02")
    rows = table[(table.touch_kib_asked == 400) & (table.started == table.requested)]
    return over_repeats(rows.rss_kib / rows.threads, "KiB", run_id=run_ids(found),
                        setup={"experiment": "thread_memory_touch", "touch_kib": 400,
                               "threads": int(rows.threads.iloc[0])},
                        how="per repeat: RSS growth / threads, each writing 400 KiB of stack")


def malloc_delta_kib(after: str, column: str) -> Select:
    def select(runs: Runs) -> Measurement | Missing:
        found = runs.matching("malloc_touch", allocator="malloc", touch_fraction=1.0, mib=400)
        if not found:
            return no_run("malloc_touch", "malloc of 400 MiB, full touch", "notebook 01")
        deltas = []
        for run in found:
            st = run.table("stages").set_index("stage")
            deltas.append(float(st.loc[after, column] - st.loc["before", column]))
        return over_repeats(deltas, "KiB", run_id=run_ids(found),
                            setup={"experiment": "malloc_touch", "allocator": "malloc",
                                   "mib": 400},
                            how=f"per run: {column} at {after.replace('_', ' ')} minus before")
    return select


def slab_slope(runs: Runs) -> Measurement | Missing:
    """Slab memory per idle thread (as slabtop reads it): slope over 100..1,000 threads."""
    got = thread_points(runs)
    if isinstance(got, Missing):
        return got
    table, found = got
    rows = table[(table.threads >= 100) & (table.threads <= 1000)]
    if rows.threads.nunique() < 3:
        return Missing("fewer than 3 thread counts between 100 and 1,000")
    return slope(rows.threads, rows.slab_kib, "KiB", int(rows.groupby("threads").size().min()),
                 run_id=run_ids(found),
                 setup={"experiment": "thread_memory", "threads": "100..1000",
                        "counted": "slab (as slabtop)"},
                 how="slope of the system's slab memory over 100..1,000 idle threads")


def cpu_bound_total(mode: str, column: str) -> Select:
    def select(runs: Runs) -> Measurement | Missing:
        got = cpu_bound_runs(runs, "own")
        if isinstance(got, Missing):
            return got
        rows, found = got
        rows = rows[rows["mode"] == mode]
        return over_repeats(rows[column], "s", run_id=run_ids(found),
                            setup={"experiment": "cpu_bound", "mode": mode,
                                   "working_set": "own (8 MB per task)"},
                            how="per repeat: system time of the whole run, like the time "
                                "command")
    return select


def brigade_hop(kind: str, placement: str, net: bool = False) -> Select:
    """Mean time per hop at 500 tasks (S5: a trip's mean time / tasks); ``net``: minus
    the one-thread brigade's of the same repeat (S5's per switch)."""
    def select(runs: Runs) -> Measurement | Missing:
        kinds = (kind, "one-thread") if net else (kind,)
        got = brigade_at_s5(runs, kinds)
        if isinstance(got, Missing):
            return got
        rows, found = got
        at = rows[(rows.tasks == S5_TASKS) & (rows.placement == placement)]
        wide = at.pivot_table(index=["run_index", "repeat"], columns="kind",
                              values="per_hop_ns_mean")
        if kind not in wide or (net and "one-thread" not in wide):
            return Missing(f"the brigade did not run {kind} {placement} at 500 tasks")
        values = (wide[kind] - wide["one-thread"]) if net else wide[kind]
        # the C brigade stores trip / (tasks + 1); S5's unit is trip / tasks
        values = values * (S5_TASKS + 1) / S5_TASKS
        return at_setup(over_repeats(values.dropna(), "ns", run_id=run_ids(found),
                                setup=brigade_setup(found, placement),
                                how="per repeat: mean trip / 500 tasks (S5's \"per task per "
                                    "iter\")"
                                    + ("; minus the one-thread brigade's (pipe I/O alone)"
                                       if net else "")), "at 500 tasks")
    return select


def brigade_rss_slope(kind: str) -> Select:
    def select(runs: Runs) -> Measurement | Missing:
        got = brigade_memory(runs)
        if isinstance(got, Missing):
            return got
        table, found = got
        by = {r.kind: r for r in table.itertuples(index=False)}
        if kind not in by or pd.isna(by[kind].rss_per_task_kib):
            return Missing(f"the brigade's memory table lacks {kind}")
        return slope_measurement(by[kind], "rss", found,
                                  "slope of RSS over the task count (S5's method)")
    return select
