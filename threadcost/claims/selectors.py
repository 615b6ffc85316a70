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
from threadcost.claims.intervals import log_ratio, over_repeats, quotient, slope
from threadcost.claims.model import Measurement, Missing
from threadcost.claims.runs import Runs, kernel_version, run_ids

DEFAULT_STACK_BYTES = 8 * 1024 * 1024  # S0: ulimit -s 8192


def _missing(experiment: str, setup: str, where: str) -> Missing:
    return Missing(f"no stored {experiment} run with {setup} on this machine ({where})")


def _at(got: Measurement | Missing, where: str, **more: Any) -> Measurement | Missing:
    """The measurement with its setup in a few words (shown beside the value)."""
    if isinstance(got, Missing):
        return got
    return Measurement(**{**got.__dict__, "where": where, **more})


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
    from threadcost import findings  # one definition: the findings layer

    return findings.measurement(
        "switch_over_memcpy_mean_ratio", runs,
        how="per repeat: one switch (half a pinned pipe round trip) / one 64 KiB memcpy, "
            "both timed in the same repeat on the same CPU")


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
    from threadcost import findings  # one definition: the findings layer

    return findings.measurement("echo_unpinned_over_pinned_mean_ratio", runs,
                                how="per repeat: echoes per second unpinned / pinned")


def echo_pinned_rate(runs: Runs) -> Measurement | Missing:
    from threadcost import findings  # one definition: the findings layer

    return findings.measurement("echo_pinned_rate_mean_per_s", runs, setup={}, how="")


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
    from threadcost import findings  # one definition: the findings layer

    q = findings.compute("thread_ceiling_threads", runs)
    return findings.measurement(q, low=None, high=None, computed=True,
                                how="computed from this machine's limits, not spawned; "
                                    "binding first: " + str(q.extra.get("binding", "")))


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


# --- launch (C09) --------------------------------------------------------------------------------

def _launch(runs: Runs) -> tuple[pd.DataFrame, list[Any]] | Missing:
    found = runs.matching("launch", kinds=_has("thread", "fork"),
                          parent_touch_mib=_has(0, 8))
    table = runs.tables(found, "distributions")
    if table.empty:
        return _missing("launch", "thread and fork at 0 and 8 MiB touched", "notebook 03")
    rows = table[(table.metric == "create_ns") & (table.phase == "steady")]
    return rows, found


def _growth_repeats(kind: str, runs: Runs) -> Measurement | Missing:
    """launch_growth/repeats: median create time at 8 MiB / at 0 MiB, paired by repeat."""
    found = runs.matching("launch_growth", kinds=_has(kind), parent_touch_mib=_has(0, 8))
    table = runs.tables(found, "repeats")
    if table.empty:
        return _missing("launch_growth", f"{kind} at 0 and 8 MiB touched", "notebook 03")
    wide = table[table.kind == kind].pivot_table(index=["run_index", "repeat"],
                                                 columns="parent_touch_mib",
                                                 values="create_ns_p50")
    return log_ratio((wide[8] / wide[0]).dropna(), run_id=run_ids(found),
                     setup={"experiment": "launch_growth", "kind": kind,
                            "parent_touch_mib": "0 vs 8, alternating",
                            "iterations": found[0].meta["params"].get("iterations")},
                     how=f"per repeat: median {kind} create time with 8 MiB touched in the "
                         "parent / with none, each series in a fresh launch process")


def _launch_growth(kind: str) -> Any:
    def select(runs: Runs) -> Measurement | Missing:
        repeated = _growth_repeats(kind, runs)
        if isinstance(repeated, Measurement):
            return repeated
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
    from threadcost import findings  # one definition: the findings layer

    return findings.measurement("memcpy_64kib_mean_ns", runs,
                                how="mean over repeats of the median batch; each batch "
                                    "timed whole, one clock read subtracted")


# --- pinned vs unpinned ping-pong, repeated (C02) -------------------------------------------

def c02_placement_pairs(runs: Runs) -> Measurement | Missing:
    """context_switch_placement/repeats: switch unpinned / pinned, paired by repeat,
    pipe and condvar pooled (S0 quotes both mechanisms together)."""
    found = runs.matching("context_switch_placement", tasks="threads",
                          placements=_has("same-cpu", "unpinned"))
    table = runs.tables(found, "repeats")
    if table.empty:
        return _missing("context_switch_placement", "threads pinned and unpinned",
                        "notebook 04")
    wide = table.pivot_table(index=["run_index", "repeat", "mechanism"], columns="placement",
                             values="switch_ns")
    ratio = (wide["unpinned"] / wide["same-cpu"]).dropna()
    mechs = sorted(set(table.mechanism))
    pairs = int(ratio.groupby(level="mechanism").size().min())
    got = log_ratio(ratio, run_id=run_ids(found),
                     setup={"experiment": "context_switch_placement", "tasks": "threads",
                            "mechanisms": ", ".join(mechs),
                            "placements": "same-cpu vs unpinned, interleaved"},
                     how="per repeat and mechanism: one switch (half the mean round trip of a "
                         "run timed whole) unpinned / pinned; geometric mean, interval on "
                         "the logarithms")
    # independent repeats: the pairs of each mechanism (pipe and condvar are pooled)
    return _at(got, f"({pairs} pairs each of {' and '.join(mechs)})", repeats=pairs)


def c02_unpinned_over_pinned(runs: Runs) -> Measurement | Missing:
    """The repeated pairs when stored; the echo stand-in otherwise (marked in ``how``)."""
    got = c02_placement_pairs(runs)
    if isinstance(got, Measurement):
        return got
    echo = c02_unpinned_over_pinned_switch(runs)
    if isinstance(echo, Missing):
        return got
    return Measurement(**{**echo.__dict__, "substitute": ECHO_FOR_PINGPONG})


ECHO_FOR_PINGPONG = ("pipe echo between two threads (notebook 04's echo) stands in for S0's "
                     "pipe ping-pong pairs, which no stored run holds")


# --- goroutine pinning pairs (C04) -----------------------------------------------------------

def _pinning(runs: Runs) -> tuple[pd.DataFrame, list[Any]] | Missing:
    every = runs.matching("goroutine_pinning")
    found = [r for r in every if not r.meta["summary"].get("skipped")]
    table = runs.tables(found, "runs")
    if table.empty:
        reason = next((r.meta["summary"]["skipped"] for r in every
                       if r.meta["summary"].get("skipped")), None)
        return (Missing(f"the Go peer did not run: {reason}") if reason else
                _missing("goroutine_pinning", "pinned/default pairs", "notebook 05"))
    return table, found


def c04_pinning_gain(runs: Runs) -> Measurement | Missing:
    """goroutine_pinning/runs: batch rate GOMAXPROCS=1 pinned / default - 1, per pair
    (the table ``gain``'s "batch" basis, pooled over stored runs)."""
    got = _pinning(runs)
    if isinstance(got, Missing):
        return c04_gomaxprocs1_gain(runs)  # older data: one peers run per pair
    table, found = got
    wide = table.pivot_table(index=["run_index", "repeat"], columns="mode",
                             values="round_trips_per_s")
    gain = (wide["gomaxprocs1_pinned"] / wide["default"] - 1).dropna()
    iters = sorted({r.meta["params"].get("iterations") for r in found})
    return over_repeats(gain, "fraction", run_id=run_ids(found),
                        setup={"experiment": "goroutine_pinning", "channel": "unbuffered",
                               "modes": "default vs GOMAXPROCS=1 pinned, alternating",
                               "iterations": iters[0] if len(iters) == 1 else iters},
                        how="per pair: round trips per second over a batch without clock "
                            "reads, pinned / default, minus 1")


def goroutine_switch_default_ns(runs: Runs) -> Measurement | Missing:
    """Context for C04's 170 ns: one switch (batch / 2) with the runtime's defaults."""
    got = _pinning(runs)
    if isinstance(got, Missing):
        return goroutine_switch_ns(runs)
    table, found = got
    rows = table[table["mode"] == "default"]
    return over_repeats(rows.switch_ns_batch, "ns", run_id=run_ids(found))


def goroutine_switch_pinned_ns(runs: Runs) -> Measurement | Missing:
    got = _pinning(runs)
    if isinstance(got, Missing):
        return got
    table, found = got
    rows = table[table["mode"] == "gomaxprocs1_pinned"]
    return over_repeats(rows.switch_ns_batch, "ns", run_id=run_ids(found),
                        setup={"experiment": "goroutine_pinning",
                               "mode": "GOMAXPROCS=1 pinned"},
                        how="per run: a batch of channel round trips timed whole / 2")


# --- the thread ceiling (C10) ----------------------------------------------------------------

def _ceiling(runs: Runs) -> list[Any] | Missing:
    found = runs.matching("threads_ceiling", stack_kib=2048)
    found = [r for r in found if "measured" in r.meta.get("tables", [])]
    if not found:
        return _missing("threads_ceiling", "2 MiB stacks", "notebook 02")
    return found


def ceiling_per_thread(column: str, fallback: Any) -> Any:
    def select(runs: Runs) -> Measurement | Missing:
        found = _ceiling(runs)
        if isinstance(found, Missing):
            return fallback(runs)
        table = runs.tables(found, "measured")
        counts = [int(r.meta["params"]["count"]) for r in found]
        bound = found[0].meta["params"].get("bound", "")
        got = over_repeats(table[column], "KiB", run_id=run_ids(found),
                            setup={"experiment": "threads_ceiling", "stack_kib": 2048,
                                   "threads": counts[0] if len(counts) == 1 else counts,
                                   "count set by": bound},
                            how=f"{column.replace('_', ' ')}: growth over the run / threads "
                                f"measured, at {counts[0]:,} sleeping threads (set by {bound})")
        return _at(got, f"(at {counts[0]:,} sleeping threads; the count was set by {bound})")
    return select



def c10_million_scaled(runs: Runs) -> Measurement | Missing:
    """threads_ceiling/scaled: one million threads, computed from the measured count."""
    from threadcost import findings  # one definition: the findings layer

    rss, user, sys_ = (findings.compute(f"c10_million_threads_{k}", runs)
                       for k in ("rss_mib", "user_s", "sys_s"))
    return findings.measurement(
        rss, low=None, high=None, repeats=1, computed=True,
        how=f"{rss.extra.get('label', 'computed by scaling')}: RSS {rss.text()}, user "
            f"{user.text()}, sys {sys_.text()} (the findings c10_million_threads_*)")


def c10_measured(column: str) -> Any:
    """Context: wall/user/sys of the measured thread count (threads_ceiling/measured)."""
    def select(runs: Runs) -> Measurement | Missing:
        found = _ceiling(runs)
        if isinstance(found, Missing):
            return found
        table = runs.tables(found, "measured")
        return Measurement(float(table[column].iloc[0]), "s", run_id=run_ids(found),
                           setup={"threads": int(table.threads.iloc[0])})
    return select


# --- one million goroutines (C11) -------------------------------------------------------------

S1_COUNT = 1_000_000


def _million(runs: Runs, variant: str) -> tuple[pd.DataFrame, list[Any]] | Missing:
    every = runs.matching("goroutines_million")
    skipped = [r.meta["summary"].get("skipped") for r in every
               if r.meta["summary"].get("skipped")]
    found = [r for r in every if not r.meta["summary"].get("skipped")]
    table = runs.tables(found, "runs")
    if table.empty or variant not in set(table.variant):
        if skipped:
            return Missing(f"the one-million-goroutine run was skipped: {skipped[0]}")
        return _missing("goroutines_million", f"the {variant} variant", "notebook 05")
    return table[table.variant == variant], found


def c11_million_rss(runs: Runs) -> Measurement | Missing:
    """goroutines_million/runs, all_at_once: wait4's max RSS / goroutines."""
    got = _million(runs, "all_at_once")
    if isinstance(got, Missing):
        return got
    rows, found = got
    count = int(rows["count"].max())
    rows = rows[rows["count"] == count]
    meas = over_repeats(rows.max_rss_kib_per_goroutine, "KiB", run_id=run_ids(found),
                        setup={"experiment": "goroutines_million", "variant": "all_at_once",
                               "goroutines": count,
                               "sleep_ms": found[0].meta["params"].get("sleep_ms")},
                        how="max RSS of the whole program (wait4's ru_maxrss, like "
                            "the time command) / goroutines, every goroutine asleep at once")
    meas = Measurement(**{**meas.__dict__, "where": f"at {count:,} goroutines"})
    if count < S1_COUNT:
        meas = Measurement(**{**meas.__dict__, "unjudgeable": (
            f"measured at {count:,} goroutines, not S1's {S1_COUNT:,}: the runtime's own "
            "resident memory is not amortised over them")})
    return meas


def c11_as_published(column: str) -> Any:
    """Context: S1's program as published, wall/user/sys from wait4."""
    def select(runs: Runs) -> Measurement | Missing:
        got = _million(runs, "as_published")
        if isinstance(got, Missing):
            return got
        rows, found = got
        count = int(rows["count"].max())
        if count < S1_COUNT:
            return Missing(f"measured at {count:,} goroutines, not one million")
        return Measurement(float(rows[rows["count"] == count][column].median()), "s",
                           run_id=run_ids(found), setup={"goroutines": count})
    return select


# --- S3's CPU-bound tasks on one CPU (C13, C14) ------------------------------------------------

def _cpu_bound(runs: Runs, ws: str) -> tuple[pd.DataFrame, list[Any]] | Missing:
    found = runs.matching("cpu_bound", working_sets=_has(ws),
                          modes=_has("threads", "processes"))
    table = runs.tables(found, "runs")
    if table.empty:
        return _missing("cpu_bound", f"working set '{ws}', threads and processes",
                        "notebook 04")
    return table[table.working_set == ws], found


def _cpu_ratio(runs: Runs, ws: str, quantity: str, words: str) -> Measurement | Missing:
    got = _cpu_bound(runs, ws)
    if isinstance(got, Missing):
        return got
    rows, found = got
    wide = rows.pivot_table(index=["run_index", "repeat"], columns="mode", values=quantity)
    if "processes" not in wide or "threads" not in wide:
        return Missing(f"the cpu_bound run has no {quantity} for both modes")
    ratio = (wide["processes"] / wide["threads"]).replace([np.inf, -np.inf], np.nan).dropna()
    p = found[0].meta["params"]
    return log_ratio(ratio, run_id=run_ids(found),
                     setup={"experiment": "cpu_bound", "tasks": p.get("tasks"),
                            "working_set": ws, "cpu": "all tasks on one CPU",
                            "ws_mib": round(p.get("ws_ints", 0) * 8 / 2**20, 1)
                            if ws == "own" else 0,
                            "limit": p.get("ws_limit") if ws == "own" else p.get("limit")},
                     how=f"per repeat (threads and processes back to back): {words}, "
                         "processes / threads; geometric mean, interval on the logarithms")


def c13_process_over_thread_time(runs: Runs) -> Measurement | Missing:
    return _cpu_ratio(runs, "none", "wall_s", "wall time of the run (gate to last task's end)")


TICK_MS_IF_UNKNOWN = 10.0  # HZ=100, the coarsest tick a Linux kernel is built with
# getrusage system time is sampled at the tick: with >= 10 ticks in the smaller total,
# the tick alone moves a total by at most about 10%, well inside the 2x C14 asks for
MIN_TICKS = 10


def c14_process_over_thread_sys(runs: Runs) -> Measurement | Missing:
    got = _cpu_bound(runs, "own")
    if isinstance(got, Missing):
        return got
    rows, found = got
    hz = _hz(found)
    tick_s = 1.0 / hz if hz else TICK_MS_IF_UNKNOWN / 1000
    tick_words = f"HZ={hz}" if hz else "HZ unknown, taken as 100"
    smallest_ms = float(rows.whole_sys_s.min() * 1000)
    ticks = smallest_ms / (tick_s * 1000)
    by_mode = rows.groupby("mode").whole_sys_s.median()
    totals = (f"median totals: processes {by_mode.get('processes', float('nan')):.3f} s, "
              f"threads {by_mode.get('threads', float('nan')):.3f} s (S3: 0.74 s vs 0.084 s)")
    short = (f"the smallest system-time total is {smallest_ms:,.1f} ms, {ticks:,.1f} scheduler "
             f"ticks ({tick_words}); getrusage CPU time is sampled at the tick, so a ratio "
             f"needs >= {MIN_TICKS} ticks in every run")
    wide = rows.pivot_table(index=["run_index", "repeat"], columns="mode", values="whole_sys_s")
    if "processes" not in wide or "threads" not in wide:
        return Missing("the cpu_bound run lacks threads or processes with the working set")
    if (wide["threads"] <= 0).any():
        # below one tick in some run: the ratio is only bounded; show it with the threads'
        # totals taken as one tick, never judged
        floor = wide["threads"].clip(lower=tick_s)
        value = float((wide["processes"] / floor).median())
        return Measurement(value, "ratio", value, value, repeats=len(wide),
                           run_id=run_ids(found),
                           setup={"experiment": "cpu_bound", "working_set": "own"},
                           how=f"{totals}; the threads' system time was below one tick in some "
                               "runs, taken as one tick (an upper bound on them)",
                           unjudgeable=short)
    meas = _cpu_ratio(runs, "own", "whole_sys_s", "system time of the whole run like "
                      "the time command (RUSAGE_SELF + RUSAGE_CHILDREN)")
    if isinstance(meas, Missing):
        return meas
    meas = Measurement(**{**meas.__dict__, "how": f"{meas.how}; {totals}"})
    if ticks < MIN_TICKS:
        meas = Measurement(**{**meas.__dict__, "unjudgeable": short})
    return meas


def c14_dtlb_ratio(runs: Runs) -> Measurement | Missing:
    """Context for C14 (S3's mechanism): dTLB load misses, processes / threads, own set."""
    got = _cpu_bound(runs, "own")
    if isinstance(got, Missing):
        return got
    rows, found = got
    if rows.dtlb_misses.isna().all():
        perf = found[0].meta["summary"].get("perf", {}).get("dtlb_misses", "not counted")
        return Missing(f"dTLB misses not counted: {perf}")
    return _cpu_ratio(runs, "own", "dtlb_misses", "dTLB load misses over the loops")


def _hz(found: list[Any]) -> int | None:
    for run in found:
        fp = run.meta.get("machine", {})
        hz = fp.get("hz") or fp.get("kernel_config", {}).get("CONFIG_HZ")
        if hz:
            try:
                return int(hz)
            except (TypeError, ValueError):
                return None
    return None


# --- sleepers at several counts (C15, C17) -----------------------------------------------------

S4_COUNT = 10_000


def _sweep(runs: Runs, *variants: str) -> tuple[pd.DataFrame, list[Any]] | Missing:
    found = runs.matching("sleepers_sweep", variants=_has(*variants))
    table = runs.tables(found, "points")
    if table.empty:
        return _missing("sleepers_sweep", f"variants {', '.join(variants)}", "notebook 05")
    if "not_run" in table:
        skipped = table[table.not_run.notna() & table.variant.isin(variants)]
        table = table[table.not_run.isna()]
        if table.empty or not set(variants) <= set(table.variant):
            why = skipped.not_run.iloc[0] if not skipped.empty else "no measured points"
            return Missing(f"the sleepers sweep did not measure {', '.join(variants)}: {why}")
    return table[table.variant.isin(variants)], found


def _wide(rows: pd.DataFrame, value: str) -> pd.DataFrame:
    return rows.pivot_table(index=["run_index", "repeat"], columns="variant", values=value)


def c15_thread_over_goroutine_rss(runs: Runs) -> Measurement | Missing:
    """sleepers_sweep/points: RSS per task, threads / goroutines, at 10,000 tasks (or the
    largest count where neither variant saturated the CPUs)."""
    got = _sweep(runs, "threads", "goroutines")
    if isinstance(got, Missing):
        return got
    rows, found = got
    both = [n for n, g in rows.groupby("count") if {"threads", "goroutines"} <= set(g.variant)]
    if S4_COUNT in both:
        count, which = S4_COUNT, "S4's 10,000 tasks"
    else:
        calm = [n for n in both if not rows[rows["count"] == n].saturated.astype(bool).any()]
        if not calm:
            return Missing("no count of the sleepers sweep has both variants unsaturated")
        count = max(calm)
        which = f"{count:,} tasks, the largest unsaturated count (10,000 was not run)"
    wide = _wide(rows[rows["count"] == count], "rss_per_task_kib")
    where = ("at 10,000 tasks" if count == S4_COUNT else
             f"(at {count:,} tasks: the largest unsaturated count; 10,000 was not run)")
    got = log_ratio((wide["threads"] / wide["goroutines"]).dropna(), run_id=run_ids(found),
                     setup={"experiment": "sleepers_sweep", "tasks": count,
                            "period_ms": found[0].meta["params"].get("period_ms")},
                     how=f"per repeat at {which}: peak RSS growth per task, threads / "
                         "goroutines")
    return _at(got, where)


def _unsaturated(rows: pd.DataFrame, variants: tuple[str, str]) -> int | None:
    """The largest count at which every repeat of both variants stayed unsaturated."""
    ok = []
    for n, g in rows.groupby("count"):
        g = g[g.variant.isin(variants)]
        if set(variants) <= set(g.variant) and not g.saturated.astype(bool).any():
            ok.append(int(n))
    return max(ok) if ok else None


def _cpu_per_wakeup(runs: Runs, top: str, bottom: str, words: str,
                    cut: bool = False) -> Measurement | Missing:
    got = _sweep(runs, top, bottom)
    if isinstance(got, Missing):
        return got
    rows, found = got
    count = _unsaturated(rows, (top, bottom))
    if count is None:
        return Missing(f"every count of the sleepers sweep saturated the CPUs for {top} or "
                       f"{bottom}; CPU per wake-up is judged only where they kept up")
    at = rows[rows["count"] == count].assign(
        cpu_us=lambda f: f.user_us_per_wakeup + f.sys_us_per_wakeup)
    wide = _wide(at, "cpu_us")
    ratio = (wide[top] / wide[bottom]).dropna()
    setup = {"experiment": "sleepers_sweep", "tasks": count, "unsaturated": True,
             "period_ms": found[0].meta["params"].get("period_ms"),
             "duration_ms": found[0].meta["params"].get("duration_ms")}
    how = (f"per repeat at {count:,} tasks (the largest count where neither variant "
           f"saturated the CPUs): CPU (user + system) per wake-up, {words}")
    where = f"(at {count:,} tasks: the largest count where neither saturated the CPUs)"
    if not cut:
        return _at(log_ratio(ratio, run_id=run_ids(found), setup=setup, how=how), where)
    return _at(over_repeats(1 - ratio, "fraction", run_id=run_ids(found), setup=setup,
                            how=how + "; cut = 1 - pinned / unpinned"), where)


def c17_threads_over_goroutines_cpu(runs: Runs) -> Measurement | Missing:
    return _cpu_per_wakeup(runs, "threads", "goroutines", "threads / goroutines")


def c17_pinning_cut(runs: Runs) -> Measurement | Missing:
    return _cpu_per_wakeup(runs, "threads_pinned", "threads",
                           "threads pinned round-robin vs unpinned", cut=True)


# --- the bucket brigade (C18-C23) ---------------------------------------------------------------

S5_TASKS = 500


def _brigade(runs: Runs) -> tuple[pd.DataFrame, list[Any]] | Missing:
    found = runs.matching("brigade")
    table = runs.tables(found, "runs")
    if table.empty:
        return _missing("brigade", "any task count", "notebook 07")
    return table[table.trips > 0], found


def _brigade_wide(rows: pd.DataFrame, tasks: int, placement: str) -> pd.DataFrame:
    """per_hop_ns_p50 by kind, one row per (run, repeat); kinds as columns."""
    at = rows[(rows.tasks == tasks) & (rows.placement == placement)]
    return at.pivot_table(index=["run_index", "repeat"], columns="kind",
                          values="per_hop_ns_p50")


def _brigade_at_s5(runs: Runs, kinds: tuple[str, ...]) -> tuple[pd.DataFrame, list[Any]] | Missing:
    got = _brigade(runs)
    if isinstance(got, Missing):
        return got
    rows, found = got
    have = sorted(set(rows.tasks))
    if S5_TASKS not in have:
        return Missing(f"the stored brigade ran {', '.join(f'{n:,}' for n in have)} tasks, "
                       f"not S5's {S5_TASKS}")
    at = rows[rows.tasks == S5_TASKS]
    absent = [k for k in kinds if k not in set(at.kind)]
    if absent:
        reasons = [r.meta["summary"].get("not_run", {}) for r in found]
        why = next((x.get(absent[0]) for x in reasons if isinstance(x, dict)
                    and x.get(absent[0])), "not measured")
        return Missing(f"the brigade did not run {', '.join(absent)} at {S5_TASKS} tasks: "
                       f"{why}")
    return rows, found


def _brigade_setup(found: list[Any], placement: str, tasks: Any = S5_TASKS) -> dict[str, Any]:
    p = found[0].meta["params"]
    return {"experiment": "brigade", "tasks": tasks, "placement": placement,
            "iterations": p.get("iterations"), "repeats": p.get("repeats"),
            "channel": "pipes (S5: Unix socket pairs)"}


def c18_thread_net_ns(runs: Runs) -> Measurement | Missing:
    """Context for C18: the thread brigade's net per hop at 500 tasks, unpinned."""
    from threadcost import findings  # one definition: the findings layer

    return findings.measurement("c18_thread_net_hop_mean_ns", runs, setup={}, how="")


def c18_thread_net_over_syscall(runs: Runs) -> Measurement | Missing:
    """C18 normalised: the thread brigade's net per hop in empty system calls, computed
    from the brigade and the yardsticks (two runs): context, not a verdict."""
    net = c18_thread_net_ns(runs)
    stick = yardstick("syscall")(runs)
    if isinstance(net, Missing):
        return net
    if isinstance(stick, Missing):
        return stick
    return quotient(net, stick, "empty system calls", run_id=f"{net.run_id}; {stick.run_id}",
                    setup={"experiment": "brigade + yardsticks", "tasks": S5_TASKS,
                           "placement": "unpinned"}, computed=True,
                    unjudgeable="from two measured runs; an absolute time from another "
                                "machine is context, not a verdict",
                    how="net per hop of the thread brigade (p50 minus the one-thread p50, "
                        "per repeat) / one empty system call (yardsticks)")


def c19_thread_over_goroutine_switch(runs: Runs) -> Measurement | Missing:
    """Substitute: pinned thread switch (yardsticks pipe ping-pong) / pinned goroutine
    switch (channel ping-pong, GOMAXPROCS=1), each a mean over its own repeats."""
    thread = yardstick("pipe_switch_pinned")(runs)
    go = goroutine_switch_pinned_ns(runs)
    if isinstance(thread, Missing):
        return thread
    if isinstance(go, Missing):
        return go
    return quotient(thread, go, run_id=f"{thread.run_id}; {go.run_id}",
                    setup={"thread": "pipe ping-pong, two threads on one CPU (yardsticks)",
                           "goroutine": "channel ping-pong, GOMAXPROCS=1 pinned "
                                        "(goroutine_pinning)"},
                    how="one switch each (half a round trip, batches timed whole); the two "
                        "come from two runs, so the interval is the conservative one: the "
                        "lowest and highest ratio the two intervals allow")


def c20_goroutine_over_thread_gross(runs: Runs) -> Measurement | Missing:
    got = _brigade_at_s5(runs, ("thread", "goroutine"))
    if isinstance(got, Missing):
        return got
    rows, found = got
    wide = _brigade_wide(rows, S5_TASKS, "unpinned")
    return _at(log_ratio((wide["goroutine"] / wide["thread"]).dropna(), run_id=run_ids(found),
                     setup=_brigade_setup(found, "unpinned"),
                     how="per repeat (kinds interleaved): p50 time per hop, pipe I/O "
                         "included, goroutines / threads"), "at 500 tasks")


def c20_thread_over_goroutine_net(runs: Runs) -> Measurement | Missing:
    got = _brigade_at_s5(runs, ("thread", "goroutine", "one-thread"))
    if isinstance(got, Missing):
        return got
    rows, found = got
    wide = _brigade_wide(rows, S5_TASKS, "unpinned")
    net_t = wide["thread"] - wide["one-thread"]
    net_g = wide["goroutine"] - wide["one-thread"]
    return _at(log_ratio((net_t / net_g).dropna(), run_id=run_ids(found),
                     setup=_brigade_setup(found, "unpinned"),
                     how="per repeat: net per hop (p50 minus the one-thread p50 of the same "
                         "repeat), threads / goroutines"), "at 500 tasks")


def c21_pinned_thread_over_goroutine(runs: Runs) -> Measurement | Missing:
    got = _brigade_at_s5(runs, ("thread", "goroutine"))
    if isinstance(got, Missing):
        return got
    rows, found = got
    pinned = _brigade_wide(rows, S5_TASKS, "same-cpu")
    free = _brigade_wide(rows, S5_TASKS, "unpinned")
    if "thread" not in pinned or "goroutine" not in free:
        return Missing("the brigade at 500 tasks lacks threads pinned or goroutines unpinned")
    ratio = (pinned["thread"] / free["goroutine"]).dropna()
    return _at(log_ratio(ratio, run_id=run_ids(found),
                     setup={**_brigade_setup(found, "threads same-cpu, goroutines unpinned")},
                     how="per repeat: p50 time per hop, threads pinned to one CPU / "
                         "goroutines unpinned (placements interleaved in each repeat)"),
               "at 500 tasks")


def _brigade_memory(runs: Runs) -> tuple[pd.DataFrame, list[Any]] | Missing:
    found = runs.matching("brigade")
    table = runs.tables(found, "memory")
    if table.empty:
        return _missing("brigade", "memory slopes", "notebook 07")
    placement = "unpinned" if "unpinned" in set(table.placement) else "same-cpu"
    return table[table.placement == placement], found


def _slope_measurement(row: Any, prefix: str, found: list[Any], how: str) -> Measurement:
    value = float(getattr(row, f"{prefix}_per_task_kib"))
    lo, hi = getattr(row, f"{prefix}_ci95_low"), getattr(row, f"{prefix}_ci95_high")
    lo = value if lo is None or pd.isna(lo) else float(lo)
    hi = value if hi is None or pd.isna(hi) else float(hi)
    return Measurement(value, "KiB", lo, hi, repeats=int(row.runs), run_id=run_ids(found),
                       setup={"experiment": "brigade", "kind": row.kind,
                              "placement": row.placement, "tasks": f"up to {row.max_tasks:,}"},
                       how=how)


def c22_thread_over_goroutine_rss(runs: Runs) -> Measurement | Missing:
    got = _brigade_memory(runs)
    if isinstance(got, Missing):
        return got
    table, found = got
    by = {r.kind: r for r in table.itertuples(index=False)}
    if "thread" not in by or "goroutine" not in by or pd.isna(by["goroutine"].rss_per_task_kib):
        return Missing("the brigade's memory table lacks threads or goroutines")
    t = _slope_measurement(by["thread"], "rss", found, "")
    g = _slope_measurement(by["goroutine"], "rss", found, "")
    if g.value <= 0:
        return Missing(f"the goroutines' RSS slope is {g.value:.2f} KiB per task, not above "
                       "zero: no ratio")
    if (g.low or 0) <= 0:
        return Measurement(t.value / g.value, "ratio",
                           repeats=t.repeats, run_id=t.run_id,
                           unjudgeable="the interval of the goroutines' RSS slope reaches "
                                       "zero, so the ratio's interval is unbounded",
                           how="slope of RSS over the task count, threads / goroutines")
    return quotient(t, g, run_id=t.run_id, setup={**t.setup, "kind": "thread vs goroutine"},
                    how=f"slope of RSS over the task count: threads {t.value:.1f} KiB, "
                        f"goroutines {g.value:.2f} KiB per task; conservative interval from "
                        "the two slopes' intervals")


def c22_thread_kernel_kib(runs: Runs) -> Measurement | Missing:
    """Kernel memory per thread beyond the pipes: thread kind's slope minus one-thread's."""
    got = _brigade_memory(runs)
    if isinstance(got, Missing):
        return got
    table, found = got
    by = {r.kind: r for r in table.itertuples(index=False)}
    if "thread" not in by or "one-thread" not in by:
        return Missing("the brigade's memory table lacks threads or the one-thread baseline")
    t = _slope_measurement(by["thread"], "kernel", found, "")
    o = _slope_measurement(by["one-thread"], "kernel", found, "")
    return Measurement(t.value - o.value, "KiB", (t.low or t.value) - (o.high or o.value),
                       (t.high or t.value) - (o.low or o.value), repeats=t.repeats,
                       run_id=t.run_id, setup=t.setup,
                       how="slope over the task count of KernelStack + PageTables + "
                           "SUnreclaim (system-wide) for threads minus the one-thread "
                           "brigade's (the pipes); conservative interval")


def c23_thread_net_minus_user_tasks(runs: Runs) -> Measurement | Missing:
    """Direction at every N and placement: thread net - goroutine net and thread net -
    epoll net, per repeat; the smallest of those differences (and its interval) decides."""
    got = _brigade(runs)
    if isinstance(got, Missing):
        return got
    rows, found = got
    worst: Measurement | None = None
    lows, highs, cells = [], [], 0
    for (tasks, placement), _ in rows.groupby(["tasks", "placement"]):
        wide = _brigade_wide(rows, int(tasks), str(placement))
        if "thread" not in wide or "one-thread" not in wide:
            continue
        for other in ("goroutine", "epoll"):
            if other not in wide:
                continue
            diff = (wide["thread"] - wide[other]).dropna()  # the baseline cancels
            if diff.empty:
                continue
            m = over_repeats(diff, "ns")
            cells += 1
            lows.append(m.low if m.low is not None else m.value)
            highs.append(m.high if m.high is not None else m.value)
            if worst is None or m.value < worst.value:
                worst = Measurement(m.value, "ns", repeats=m.repeats,
                                    setup={"tasks": int(tasks), "placement": placement,
                                           "other": other})
    if worst is None:
        return Missing("the brigade has no thread and user-space kind measured side by side")
    kinds = sorted(set(rows.kind) & {"goroutine", "epoll"})
    return Measurement(worst.value, "ns", min(lows), min(highs), repeats=worst.repeats,
                       run_id=run_ids(found),
                       where=f"(the smallest: {worst.setup['other']} at "
                             f"{worst.setup['tasks']:,} tasks, {worst.setup['placement']})",
                       setup={"experiment": "brigade", "tasks": sorted(set(rows.tasks)),
                              "placements": sorted(set(rows.placement)),
                              "user-space kinds": ", ".join(kinds)},
                       how=f"per repeat: thread net per hop minus {' / '.join(kinds)} net per "
                           f"hop, at each of {cells} (N, placement, kind) cells; shown: the "
                           f"smallest difference ({worst.setup['other']} at "
                           f"{worst.setup['tasks']:,} tasks, {worst.setup['placement']}); "
                           "interval: the lowest lower and upper bounds over the cells")


SLOPE_FOR_MILLION = ("the RSS slope over up to 10,000 goroutines blocked on a channel (Go "
                     "peer) stands in for one million sleeping goroutines, which no stored "
                     "run holds")


def c11_rss(runs: Runs) -> Measurement | Missing:
    """The one-million run when stored (or its skip reason); older data: the peers slope,
    marked as a stand-in."""
    got = c11_million_rss(runs)
    if isinstance(got, Measurement) or runs.matching("goroutines_million"):
        return got
    slope_got = c11_rss_per_goroutine(runs)
    if isinstance(slope_got, Missing):
        return got
    return Measurement(**{**slope_got.__dict__, "substitute": SLOPE_FOR_MILLION})
