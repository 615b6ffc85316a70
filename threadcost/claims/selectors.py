"""Which stored measurement feeds each assertion: one small function each.

Every selector picks runs by **setup** (experiment, and the parameters that
must match the source's: stack size, allocator, placement, workload), pools all
runs that match (each run, or each repeat row inside a run, is one repeat) and
returns a :class:`Measurement` or a :class:`Missing` with the reason. None of
them looks at when a run was made. To point an assertion at a new table,
change its function here; the catalogue and the verdict rules stay as they are.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from threadcost import stats
from threadcost.claims.intervals import over_repeats, slope
from threadcost.claims.model import Measurement, Missing
from threadcost.claims.runs import Runs, kernel_version, run_ids

DEFAULT_STACK_BYTES = 8 * 1024 * 1024  # S0: ulimit -s 8192


def _missing(experiment: str, setup: str, where: str) -> Missing:
    return Missing(f"no stored {experiment} run with {setup} on this machine ({where})")


def _has(*items: Any) -> Any:
    """A parameter predicate: the stored list holds every item."""
    return lambda stored: isinstance(stored, list) and all(i in stored for i in items)


# --- yardsticks (C01, and the normalisation of absolute numbers) -----------------------

def yardstick_repeats(runs: Runs) -> tuple[pd.DataFrame, list[Any]]:
    found = runs.matching("yardsticks")
    table = runs.tables(found, "repeats")
    return table, found


def yardstick(name: str) -> Any:
    """A selector: the mean over repeats of one yardstick (ns per operation)."""
    def select(runs: Runs) -> Measurement | Missing:
        table, found = yardstick_repeats(runs)
        if table.empty or name not in set(table.yardstick):
            return _missing("yardsticks", f"the {name} yardstick",
                            "the last cell of notebook 04")
        rows = table[table.yardstick == name]
        return over_repeats(rows.ns_median, "ns", setup={"experiment": "yardsticks",
                                                          "yardstick": name, "cpu": "pinned"},
                            run_id=run_ids(found), how="mean over repeats of the median "
                            "batch; each batch timed whole, one clock read subtracted")
    return select


def c01_switch_over_memcpy(runs: Runs) -> Measurement | Missing:
    """yardsticks/repeats: pipe_switch_pinned / memcpy_64kib, paired by repeat."""
    table, found = yardstick_repeats(runs)
    need = {"pipe_switch_pinned", "memcpy_64kib"}
    if table.empty or not need <= set(table.yardstick):
        return _c01_from_two_runs(runs)
    wide = table.pivot_table(index=["run_index", "repeat"], columns="yardstick",
                             values="ns_median")
    ratio = (wide["pipe_switch_pinned"] / wide["memcpy_64kib"]).dropna()
    return over_repeats(ratio, "ratio", run_id=run_ids(found),
                        setup={"experiment": "yardsticks", "mechanism": "pipe",
                               "placement": "same-cpu", "tasks": "threads",
                               "memcpy_bytes": 65536},
                        how="per repeat: one switch (half a pinned pipe round trip) / one "
                            "64 KiB memcpy, both timed in the same repeat on the same CPU")


def _c01_from_two_runs(runs: Runs) -> Measurement | Missing:
    """Fallback without a yardsticks run: the switch and the memcpy of two other runs."""
    cs_runs = runs.matching("context_switch", placements=_has("same-cpu"))
    configs = runs.tables(cs_runs, "configs")
    launch = runs.matching("launch", memcpy_kib=64)
    copies = runs.tables(launch, "memcpy")
    if configs.empty or copies.empty:
        return _missing("yardsticks", "a pinned switch and a 64 KiB memcpy",
                        "the last cell of notebook 04")
    rows = configs[(configs.mechanism == "pipe") & (configs.placement == "same-cpu")
                   & (configs.tasks == "threads") & (configs.working_set_kib == 0)]
    switch = float(rows.switch_p50_ns.median())
    copy = float(copies.ns.median())
    ratio = switch / copy
    return Measurement(ratio, "ratio", ratio, ratio, repeats=1,
                       setup={"experiment": "context_switch + launch", "mechanism": "pipe",
                              "placement": "same-cpu", "memcpy_bytes": 65536},
                       run_id=run_ids(cs_runs + launch),
                       how="median switch of the context_switch run / median 64 KiB memcpy "
                           "of the launch run",
                       unjudgeable="the switch and the memcpy come from two different runs "
                                   "(no yardsticks run is stored)")


# --- pipe echo (C02 stand-in, C03) ------------------------------------------------------

def _echo(runs: Runs) -> tuple[pd.DataFrame, list[Any]] | Missing:
    found = runs.matching("echo", placements=_has("same-cpu", "unpinned"))
    table = runs.tables(found, "repeats")
    if table.empty:
        return _missing("echo", "placements same-cpu and unpinned", "notebook 04")
    wide = table.pivot_table(index=["run_index", "repeat"], columns="placement",
                             values="rate_per_s")
    return wide, found


def c02_unpinned_over_pinned_switch(runs: Runs) -> Measurement | Missing:
    """echo/repeats: rate same-cpu / rate unpinned (= time unpinned / time pinned)."""
    got = _echo(runs)
    if isinstance(got, Missing):
        return got
    wide, found = got
    return over_repeats((wide["same-cpu"] / wide["unpinned"]).dropna(), "ratio",
                        run_id=run_ids(found),
                        setup={"experiment": "echo", "mechanism": "pipe", "tasks": "threads",
                               "placements": "same-cpu vs unpinned, interleaved"},
                        how="per repeat: time per echo unpinned / pinned (two switches each)")


def c03_unpinned_over_pinned_rate(runs: Runs) -> Measurement | Missing:
    """echo/repeats: rate unpinned / rate same-cpu, paired by repeat."""
    got = _echo(runs)
    if isinstance(got, Missing):
        return got
    wide, found = got
    return over_repeats((wide["unpinned"] / wide["same-cpu"]).dropna(), "ratio",
                        run_id=run_ids(found),
                        setup={"experiment": "echo", "mechanism": "pipe", "tasks": "threads",
                               "placements": "same-cpu vs unpinned, interleaved"},
                        how="per repeat: echoes per second unpinned / pinned")


def echo_pinned_rate(runs: Runs) -> Measurement | Missing:
    got = _echo(runs)
    if isinstance(got, Missing):
        return got
    wide, found = got
    return over_repeats(wide["same-cpu"].dropna(), "iterations/s", run_id=run_ids(found))


# --- context switch, one run per configuration (context for C01/C02) ----------------------

def switch_pinned_ns(runs: Runs) -> Measurement | Missing:
    """Context: yardsticks' pinned switch if stored, else context_switch/configs."""
    got = yardstick("pipe_switch_pinned")(runs)
    if isinstance(got, Measurement):
        return got
    found = runs.matching("context_switch", placements=_has("same-cpu"))
    table = runs.tables(found, "configs")
    if table.empty:
        return _missing("context_switch", "pipe, same-cpu", "notebook 04")
    rows = table[(table.mechanism == "pipe") & (table.placement == "same-cpu")
                 & (table.tasks == "threads") & (table.working_set_kib == 0)]
    return over_repeats(rows.switch_p50_ns, "ns", run_id=run_ids(found))


# --- Go channel ping-pong (C04) -----------------------------------------------------------

def _peers_skipped(runs: Runs) -> Missing:
    reasons = [r.meta["summary"].get("skipped") for r in runs.matching("peers")]
    reason = next((r for r in reasons if r), None)
    return (Missing(f"the Go peers did not run: {reason}") if reason else
            _missing("peers", "the channel ping-pong in both modes",
                     "notebook 05; needs the Go toolchain"))


def _peers_round_trips(runs: Runs) -> tuple[pd.DataFrame, list[Any]] | Missing:
    found = [r for r in runs.matching("peers") if not r.meta["summary"].get("skipped")]
    table = runs.tables(found, "round_trips")
    if table.empty or not {"default", "gomaxprocs1_pinned"} <= set(table["mode"]):
        return _peers_skipped(runs)
    return table, found


def c04_gomaxprocs1_gain(runs: Runs) -> Measurement | Missing:
    """peers summary: batch rate (no clock reads) GOMAXPROCS=1 pinned / default - 1, per run."""
    found = [r for r in runs.matching("peers")
             if "round_trips_per_s" in r.meta["summary"].get("channel_pingpong", {})]
    if not found:
        return _peers_skipped(runs)
    gain = [r.meta["summary"]["channel_pingpong"]["round_trips_per_s"]
            / r.meta["summary"]["channel_pingpong_default"]["round_trips_per_s"] - 1
            for r in found]
    return over_repeats(gain, "fraction", run_id=run_ids(found),
                        setup={"experiment": "peers", "modes": "default vs GOMAXPROCS=1 "
                               "pinned to one CPU", "channel": "unbuffered"},
                        how="per run: round trips per second over a batch without clock reads, "
                            "GOMAXPROCS=1 pinned / default, minus 1")


def goroutine_switch_ns(runs: Runs) -> Measurement | Missing:
    got = _peers_round_trips(runs)
    if isinstance(got, Missing):
        return got
    table, found = got
    med = table[table["mode"] == "default"].groupby("run_index").round_trip_ns.median() / 2
    return over_repeats(med, "ns", run_id=run_ids(found))


# --- idle-thread memory (C05, C12, C16) ----------------------------------------------------

def _thread_points(runs: Runs, stack_kib: int = 0) -> tuple[pd.DataFrame, list[Any]] | Missing:
    found = runs.matching("thread_memory", stack_kib=stack_kib, touch_kib=0)
    table = runs.tables(found, "points")
    if table.empty:
        return _missing("thread_memory", "default stacks and no touch", "notebook 02")
    return table[table.started == table.requested], found


def _per_thread_at(column: str, threads: int, unit: str) -> Any:
    def select(runs: Runs) -> Measurement | Missing:
        got = _thread_points(runs)
        if isinstance(got, Missing):
            return got
        table, found = got
        rows = table[(table.threads == threads) & (table.stack_bytes == DEFAULT_STACK_BYTES)]
        if rows.empty:
            stacks = sorted(set(table.stack_bytes // 1024))
            return Missing(f"no run with {threads:,} threads on 8 MiB default stacks "
                           f"(stored default stacks: {stacks} KiB)")
        return over_repeats(rows[column] / rows.threads, unit, run_id=run_ids(found),
                            setup={"experiment": "thread_memory", "threads": threads,
                                   "stack_kib": 8192, "touch_kib": 0},
                            how=f"per repeat: change of {column} with {threads:,} idle "
                                "threads / threads")
    return select


c05_vsz_per_thread = _per_thread_at("vsz_kib", 10_000, "KiB")
c05_rss_per_thread = _per_thread_at("rss_kib", 10_000, "KiB")
c16_page_tables_per_thread = _per_thread_at("page_tables_kib", 10_000, "KiB")


def _slope_100_1000(column: str) -> Any:
    def select(runs: Runs) -> Measurement | Missing:
        got = _thread_points(runs)
        if isinstance(got, Missing):
            return got
        table, found = got
        rows = table[(table.threads >= 100) & (table.threads <= 1000)]
        if rows.threads.nunique() < 3:
            return Missing("fewer than 3 thread counts between 100 and 1,000")
        repeats = int(rows.groupby("threads").size().min())
        how = f"slope of {column} over 100..1,000 idle threads"
        if column == "kernel_kib":
            parts = {c: stats.fit_line(rows.threads, rows[c]).slope
                     for c in ("kernel_stack_kib", "page_tables_kib", "slab_kib")}
            how += ("; of which kernel stack {kernel_stack_kib:.1f} KiB, page tables "
                    "{page_tables_kib:.1f} KiB, slab {slab_kib:.1f} KiB").format(**parts)
        return slope(rows.threads, rows[column], "KiB", repeats, run_id=run_ids(found),
                     setup={"experiment": "thread_memory", "threads": "100..1000",
                            "stack_kib": "default", "touch_kib": 0}, how=how)
    return select


c12_rss_slope = _slope_100_1000("rss_kib")
c12_vsz_slope = _slope_100_1000("vsz_kib")
c12_kernel_slope = _slope_100_1000("kernel_kib")


# --- stack touch (C06) ----------------------------------------------------------------------

def c06_rss_over_touched(runs: Runs) -> Measurement | Missing:
    """thread_memory_touch/points at touch 400 KiB: RSS per thread / 400 KiB."""
    found = runs.matching("thread_memory_touch", touch_depths_kib=_has(400))
    table = runs.tables(found, "points")
    if table.empty:
        return _missing("thread_memory_touch", "a 400 KiB stack touch", "notebook 02")
    rows = table[(table.touch_kib_asked == 400) & (table.started == table.requested)]
    return over_repeats(rows.rss_kib / rows.threads / 400.0, "ratio", run_id=run_ids(found),
                        setup={"experiment": "thread_memory_touch", "touch_kib": 400,
                               "threads": int(rows.threads.iloc[0]), "stack_kib": "default"},
                        how="per repeat: RSS change per thread / 400 KiB written")


def split_rss_cause(runs: Runs, got: Measurement) -> str | None:
    """Kernels >= 6.2 count RSS exactly; the published under-count cannot show."""
    found = runs.matching("thread_memory_touch", touch_depths_kib=_has(400))
    versions = [v for v in (kernel_version(r) for r in found) if v is not None]
    if versions and min(versions) >= (6, 2):
        v = min(versions)
        return (f"measured on Linux {v[0]}.{v[1]}: kernels 2.6.34 to 6.1 cached each "
                "thread's RSS changes (SPLIT_RSS_COUNTING) and folded them in every 64 page "
                "faults, so RSS lagged what was touched; 6.2 replaced the cache with per-CPU "
                "counters, so the published under-count cannot show on this kernel")
    return None


# --- malloc then touch (C07) --------------------------------------------------------------------

def _malloc_ratio(after: str, column: str, what: str) -> Any:
    def select(runs: Runs) -> Measurement | Missing:
        found = runs.matching("malloc_touch", allocator="malloc", touch_fraction=1.0)
        if not found:
            return _missing("malloc_touch", "allocator malloc, full touch", "notebook 01")
        ratios = []
        for run in found:
            st = run.table("stages").set_index("stage")
            alloc_kib = float(run.meta["params"]["mib"]) * 1024
            ratios.append((st.loc[after, column] - st.loc["before", column]) / alloc_kib)
        mib = sorted({r.meta["params"]["mib"] for r in found})
        return over_repeats(ratios, "ratio", run_id=run_ids(found),
                            setup={"experiment": "malloc_touch", "allocator": "malloc",
                                   "mib": mib[0] if len(mib) == 1 else mib},
                            how=f"per run: {what} / the allocation")
    return select


c07_vsz_after_alloc = _malloc_ratio("after_alloc", "vsz_kib", "VmSize growth after malloc")
c07_rss_after_alloc = _malloc_ratio("after_alloc", "rss_kib", "VmRSS growth after malloc")
c07_rss_after_touch = _malloc_ratio("after_touch", "rss_kib",
                                    "VmRSS growth after touching every page")


# --- limits (C08, C10) -------------------------------------------------------------------------

def _limits(runs: Runs, stack_kib: int) -> Any:
    return runs.matching("thread_limits", stack_kib=stack_kib)


def c08_max_threads(runs: Runs) -> Measurement | Missing:
    found = _limits(runs, 0)
    if not found:
        return _missing("thread_limits", "default stacks", "notebook 02")
    s = found[0].meta["summary"]
    values = [float(r.meta["summary"]["max_threads"]) for r in found]
    return Measurement(float(np.median(values)), "threads", repeats=len(found),
                       setup={"experiment": "thread_limits", "stack_kib": "default"},
                       run_id=run_ids(found), computed=True,
                       how="computed from this machine's limits, not spawned; binding first: "
                           + _binding(s.get("binding")))


def _binding(binding: Any) -> str:
    if not isinstance(binding, dict):
        return "no limit caps the thread count"
    allowed = binding.get("threads_allowed")
    count = f"{allowed:,.0f} threads" if isinstance(allowed, int | float) else "?"
    return f"{binding.get('limit')} ({count}; {binding.get('note', '')})".replace("; )", ")")


def c10_million_threads(runs: Runs) -> Measurement | Missing:
    found = [r for r in runs.matching("thread_limits")
             if r.meta["params"].get("target_threads") == 1_000_000]
    if not found:
        return _missing("thread_limits", "a one-million-thread target", "notebook 02")
    run = found[0]
    advice = run.table("advice") if "advice" in run.meta["tables"] else pd.DataFrame()
    short = (", ".join(f"{a.setting} {a.current:,.0f} (needs {a.needed:,.0f})"
                       for a in advice.itertuples() if not bool(a.enough))
             if not advice.empty else "")
    return Measurement(float(run.meta["summary"]["max_threads"]), "threads",
                       setup={"experiment": "thread_limits", "target_threads": 1_000_000},
                       run_id=run.meta["run_id"], computed=True,
                       how="threads this machine's limits allow, computed not spawned"
                           + (f"; short of one million: {short}" if short else ""))


def c10_million_thread_times(runs: Runs) -> Missing:
    return Missing("starting one million threads needs kernel.pid_max and "
                   "kernel.threads-max far above this shared machine's (the project never "
                   "comes near kernel.pid_max)")


def _stack_points(runs: Runs, stack_kib: int) -> tuple[pd.DataFrame, list[Any]] | Missing:
    found = runs.matching("thread_memory_stack", stack_sizes_kib=_has(stack_kib))
    table = runs.tables(found, "points")
    if table.empty:
        return _missing("thread_memory_stack", f"{stack_kib:,} KiB stacks", "notebook 02")
    rows = table[(table.stack_kib_asked == stack_kib) & (table.started == table.requested)]
    return rows, found


def _per_thread_stack(column: str, stack_kib: int) -> Any:
    def select(runs: Runs) -> Measurement | Missing:
        got = _stack_points(runs, stack_kib)
        if isinstance(got, Missing):
            return got
        rows, found = got
        return over_repeats(rows[column] / rows.threads, "KiB", run_id=run_ids(found),
                            setup={"experiment": "thread_memory_stack",
                                   "stack_kib": stack_kib,
                                   "threads": int(rows.threads.iloc[0])},
                            how=f"per repeat: change of {column} / threads, "
                                f"{stack_kib:,} KiB stacks (Rust's default)")
    return select


c10_vsz_per_thread = _per_thread_stack("vsz_kib", 2048)
c10_rss_per_thread = _per_thread_stack("rss_kib", 2048)


# --- goroutine memory (C11) ----------------------------------------------------------------------

def c11_rss_per_goroutine(runs: Runs) -> Measurement | Missing:
    found = [r for r in runs.matching("peers") if not r.meta["summary"].get("skipped")]
    table = runs.tables(found, "memory_points")
    if table.empty or table.goroutines.nunique() < 3:
        return _peers_skipped(runs)
    return slope(table.goroutines, table.rss_kib, "KiB", len(found), run_id=run_ids(found),
                 setup={"experiment": "peers", "goroutines": int(table.goroutines.max()),
                        "state": "blocked on a channel"},
                 how="slope of VmRSS over goroutines blocked on a channel")


def c11_million_goroutines(runs: Runs) -> Missing:
    return Missing("no one-million-goroutine run is stored (the sweep stops at "
                   "10,000 goroutines)")


# --- threads vs processes on one CPU (C13, C14) ---------------------------------------------------

def _working_set(runs: Runs, ws: int) -> tuple[pd.DataFrame, list[Any]] | Missing:
    found = runs.matching("context_switch_working_set", working_sets_kib=_has(ws),
                          tasks=_has("threads", "processes"), placement="same-cpu")
    table = runs.tables(found, "points")
    if table.empty:
        return _missing("context_switch_working_set", f"{ws:,} KiB per task", "notebook 04")
    rows = table[table.working_set_kib == ws]
    return rows.pivot_table(index="run_index", columns="tasks",
                            values=["round_trip_p50_ns", "sys_ns_per_round_trip",
                                    "iterations"]), found


def c13_process_over_thread_time(runs: Runs) -> Measurement | Missing:
    got = _working_set(runs, 0)
    if isinstance(got, Missing):
        return got
    wide, found = got
    ratio = wide["round_trip_p50_ns"]["processes"] / wide["round_trip_p50_ns"]["threads"]
    return over_repeats(ratio.dropna(), "ratio", run_id=run_ids(found),
                        setup={"experiment": "context_switch_working_set",
                               "working_set_kib": 0, "placement": "same-cpu",
                               "mechanism": "pipe"},
                        how="per run: median round trip, two processes / two threads")


TICK_MS_IF_UNKNOWN = 10.0  # HZ=100, the coarsest tick a Linux kernel is built with
MIN_TICKS = 100


def c14_process_over_thread_sys(runs: Runs) -> Measurement | Missing:
    got = _working_set(runs, 8192)
    if isinstance(got, Missing):
        return got
    wide, found = got
    sys_ns = wide["sys_ns_per_round_trip"]
    ratio = sys_ns["processes"] / sys_ns["threads"]
    totals_ms = sys_ns * wide["iterations"] / 1e6
    hz = _hz(found)
    tick_ms = 1000.0 / hz if hz else TICK_MS_IF_UNKNOWN
    ticks = float(totals_ms.min().min() / tick_ms)
    meas = over_repeats(ratio.dropna(), "ratio", run_id=run_ids(found),
                        setup={"experiment": "context_switch_working_set",
                               "working_set_kib": 8192, "placement": "same-cpu",
                               "mechanism": "pipe"},
                        how=f"per run: getrusage system time per round trip, processes / "
                            f"threads; smallest total {totals_ms.min().min():,.1f} ms")
    if ticks < MIN_TICKS:
        tick_words = f"HZ={hz}" if hz else "HZ unknown, taken as 100"
        meas = Measurement(**{**meas.__dict__, "unjudgeable": (
            f"the smaller system-time total is {ticks:,.1f} scheduler ticks ({tick_words}); "
            f"getrusage CPU time is sampled at the tick, so a ratio needs >= {MIN_TICKS} "
            "ticks per condition")})
    return meas


def _hz(found: list[Any]) -> int | None:
    for run in found:
        hz = run.meta.get("machine", {}).get("kernel_config", {}).get("CONFIG_HZ")
        if hz:
            try:
                return int(hz)
            except ValueError:
                return None
    return None


# --- sleeping threads vs goroutines (C15, C17) -------------------------------------------------

def _sleepers(runs: Runs, *variants: str) -> tuple[pd.DataFrame, list[Any]] | Missing:
    found = runs.matching("sleepers", variants=_has(*variants), count=10_000)
    table = runs.tables(found, "variants")
    if table.empty:
        return _missing("sleepers", f"10,000 tasks, variants {', '.join(variants)}",
                        "notebook 05")
    table = table[table.not_run.isna()] if "not_run" in table else table
    return table.pivot_table(index="run_index", columns="variant",
                             values=["rss_growth_kib", "cpu_s"]), found


def c15_thread_over_goroutine_rss(runs: Runs) -> Measurement | Missing:
    got = _sleepers(runs, "threads", "goroutines")
    if isinstance(got, Missing):
        return got
    wide, found = got
    ratio = wide["rss_growth_kib"]["threads"] / wide["rss_growth_kib"]["goroutines"]
    return over_repeats(ratio.dropna(), "ratio", run_id=run_ids(found),
                        setup={"experiment": "sleepers", "tasks": 10_000, "period_ms": 10,
                               "stack_kib": found[0].meta["params"].get("stack_kib")},
                        how="per run: peak RSS growth of 10,000 sleeping threads / goroutines")


def c17_threads_over_goroutines_cpu(runs: Runs) -> Measurement | Missing:
    got = _sleepers(runs, "threads", "goroutines")
    if isinstance(got, Missing):
        return got
    wide, found = got
    ratio = wide["cpu_s"]["threads"] / wide["cpu_s"]["goroutines"]
    return over_repeats(ratio.dropna(), "ratio", run_id=run_ids(found),
                        setup={"experiment": "sleepers", "tasks": 10_000, "period_ms": 10},
                        how="per run: process CPU time (user + sys), threads / goroutines")


def c17_pinning_cut(runs: Runs) -> Measurement | Missing:
    got = _sleepers(runs, "threads", "threads_pinned")
    if isinstance(got, Missing):
        return got
    wide, found = got
    cut = 1 - wide["cpu_s"]["threads_pinned"] / wide["cpu_s"]["threads"]
    return over_repeats(cut.dropna(), "fraction", run_id=run_ids(found),
                        setup={"experiment": "sleepers", "tasks": 10_000, "period_ms": 10,
                               "pinning": "round-robin"},
                        how="per run: 1 - CPU time pinned / unpinned threads")


# --- launch (C09) --------------------------------------------------------------------------------

def _launch(runs: Runs) -> tuple[pd.DataFrame, list[Any]] | Missing:
    found = runs.matching("launch", kinds=_has("thread", "fork"),
                          parent_touch_mib=_has(0, 8))
    table = runs.tables(found, "distributions")
    if table.empty:
        return _missing("launch", "thread and fork at 0 and 8 MiB touched", "notebook 03")
    rows = table[(table.metric == "create_ns") & (table.phase == "steady")]
    return rows, found


def _launch_growth(kind: str) -> Any:
    def select(runs: Runs) -> Measurement | Missing:
        got = _launch(runs)
        if isinstance(got, Missing):
            return got
        rows, found = got
        wide = rows[rows.kind == kind].pivot_table(index="run_index",
                                                   columns="parent_touch_mib", values="p50")
        return over_repeats((wide[8] / wide[0]).dropna(), "ratio", run_id=run_ids(found),
                            setup={"experiment": "launch", "kind": kind,
                                   "parent_touch_mib": "0 vs 8"},
                            how=f"per run: median {kind} create time with 8 MiB touched in "
                                "the parent / with none")
    return select


c09_thread_growth = _launch_growth("thread")
c09_fork_growth = _launch_growth("fork")


def launch_ns(kind: str) -> Any:
    def select(runs: Runs) -> Measurement | Missing:
        got = _launch(runs)
        if isinstance(got, Missing):
            return got
        rows, found = got
        hit = rows[(rows.kind == kind) & (rows.parent_touch_mib == 0)]
        return over_repeats(hit["mean"], "ns", run_id=run_ids(found))
    return select


def memcpy_ns(runs: Runs) -> Measurement | Missing:
    got = yardstick("memcpy_64kib")(runs)
    if isinstance(got, Measurement):
        return got
    found = runs.matching("launch", memcpy_kib=64)
    table = runs.tables(found, "memcpy")
    if table.empty:
        return got
    return over_repeats(table.groupby("run_index").ns.median(), "ns", run_id=run_ids(found))
