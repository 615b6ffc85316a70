"""Findings of notebook 02 (thread and process memory): the parts of an idle thread's and
an idle forked child's memory, from the newest run (the headline's rule; the totals are
the headline's findings, ``memory_thread_slope_kib`` and ``memory_process_slope_kib``).

Selectors of memory (C05-C08, C10-C12, C16): idle threads, stack touch, malloc,
limits, goroutine memory, the thread ceiling, one million goroutines."""

from __future__ import annotations

from typing import Any

import pandas as pd

from threadcost import findings, stats, vocabulary
from threadcost.findings.context_switch import (
    peers_skipped,
)
from threadcost.findings.selectors import (
    DEFAULT_STACK_BYTES,
    Select,
    at_setup,
    holds_all,
    no_run,
)
from threadcost.findings.summary import from_run
from threadcost.measured.intervals import over_repeats, slope
from threadcost.measured.measurement import Measurement, Missing
from threadcost.measured.runs import Runs, kernel_version, run_ids
from threadcost.vocabulary import words

THREAD_PARTS = {"vsz_kib": ("virtual size (VmSize)", ",.0f"),
                "rss_rollup_kib": ("resident set counted by walking the page tables "
                                   "(smaps_rollup)", ".2f"),
                "rss_pmap_kib": ("resident set read from outside the process (pmap -x)",
                                 ".2f"),
                "kernel_kib": ("kernel memory: kernel stack + page tables + unreclaimable "
                               "slab", ".1f"),
                "kernel_stack_kib": ("kernel stack (KernelStack, system-wide)", ".1f"),
                "page_tables_kib": ("page tables (VmPTE)", ".2f"),
                "slab_kib": ("unreclaimable slab (SUnreclaim, system-wide)", ".1f")}


def _thread_fit(key: str) -> Any:
    return lambda run: run.meta["summary"]["per_thread"]["fit"][key]["per_thread"]


for _key, (_words, _fmt) in THREAD_PARTS.items():
    from_run(f"memory_thread_{_key[:-4]}_slope_kib", "thread_memory", _thread_fit(_key),
             "KiB", "slope", f"per idle thread (8 MiB default stacks): {_words}, slope over "
             "thread counts (the thread_memory run)", fmt=_fmt)


def _deviation(key: str) -> Any:
    def read(run: Any) -> float:
        fit = run.meta["summary"]["per_thread"]["fit"]
        rss = fit["rss_kib"]["per_thread"]
        return 100 * (fit[key]["per_thread"] - rss) / rss
    return read


for _key, _words in (("rss_rollup_kib", "the page walk (smaps_rollup)"),
                     ("rss_pmap_kib", "pmap -x")):
    from_run(f"memory_thread_{_key[:-4]}_vs_rss_share_pct", "thread_memory", _deviation(_key),
             "%", "share of the RSS slope", f"how far {_words} reads from VmRSS per idle "
             "thread: the difference of the slopes as a share of the RSS slope", fmt="+.2f")
from_run("thread_memory_create_median_us", "thread_memory",
         lambda run: run.meta["summary"]["create_us_per_thread"]["p50"], "µs", "median",
         "creating a thread while every earlier one stays alive (the thread_memory sweep): "
         "median per thread", fmt=".1f")

PROCESS_PARTS = {"uss_kib": "private resident (USS: Private_Clean + Private_Dirty)",
                 "pss_kib": "proportional resident (PSS)",
                 "page_tables_kib": "page tables (VmPTE, per child)",
                 "kernel_stack_kib": "kernel stack (KernelStack, system-wide)",
                 "slab_kib": "unreclaimable slab (SUnreclaim, system-wide)"}
for _key, _words in PROCESS_PARTS.items():
    from_run(f"memory_process_{_key[:-4]}_slope_kib", "process_memory",
             lambda run, k=_key: run.meta["summary"]["per_process_kib"][k], "KiB", "slope",
             f"per idle child forked from the Python harness: {_words}, slope over child "
             "counts", fmt=",.0f")
from_run("process_memory_parent_rss_recorded_mib", "process_memory",
         lambda run: run.meta["summary"]["parent_rss_kib"] / 1024, "MiB", "recorded",
         "the resident memory of the process the idle children are forked from", fmt=",.0f")
from_run("process_memory_parent_page_tables_recorded_kib", "process_memory",
         lambda run: run.meta["summary"]["parent_pte_kib"], "KiB", "recorded",
         "the page tables of the process the idle children are forked from (VmPTE)",
         fmt=",.0f")


# --- C06: resident memory as the threads write their stacks (the touch grid) ------------------

def _deepest(column: str) -> Any:
    def read(run: Any) -> float:
        table = run.table("per_touch_depth")
        return float(table.loc[table.touch_kib_asked.idxmax(), column])
    return read


TOUCH = "thread_memory_touch"
from_run("memory_thread_touch_rss_per_touched_kib_slope", TOUCH,
         lambda run: run.meta["summary"]["rss_vs_touch_fit"]["rss_per_touched_kib"], "KiB",
         "slope", "resident memory each KiB a thread writes into its stack adds: slope of RSS "
         "per thread over the KiB written", fmt=".3f")
from_run("memory_thread_touch_untouched_intercept_kib", TOUCH,
         lambda run: run.meta["summary"]["rss_vs_touch_fit"]["untouched_kib"], "KiB",
         "intercept", "resident memory of a thread that wrote nothing: the intercept of RSS "
         "per thread over the KiB written", fmt=".1f")
from_run("memory_thread_deepest_touch_rss_median_kib", TOUCH,
         _deepest("rss_kib_per_thread"), "KiB", "median over runs", "RSS growth per thread "
         "at the deepest stack write measured (VmRSS): median over the runs", fmt=".1f")
from_run("memory_thread_deepest_touch_rss_rollup_median_kib", TOUCH,
         _deepest("rss_rollup_kib_per_thread"), "KiB", "median over runs", "the same, counted "
         "by walking the page tables (smaps_rollup): median over the runs", fmt=".1f")
from_run("memory_thread_deepest_touch_rollup_vs_rss_share_pct", TOUCH,
         lambda run: 100 * (_deepest("rss_rollup_kib_per_thread")(run)
                            / _deepest("rss_kib_per_thread")(run) - 1), "%",
         "share of VmRSS", "how far the page walk reads from VmRSS at the deepest stack write",
         fmt="+.2f")
from_run("c06_ten_thousand_threads_rss_gib", TOUCH,
         lambda run: _deepest("rss_kib_per_thread")(run) * 10_000 / 1024**2, "GiB",
         "computed (scaled linearly)", "C06, scaled: 10,000 threads each writing the deepest "
         "stack measured, at the measured RSS growth per thread (not a measurement)",
         fmt=".2f", computed=True)


# --- the largest count of 2 MiB-stack sleeping threads measured (C10's base) ------------------

CEILING = {"wall_s": ("wall time", "s", ".2f"), "spawn_s": ("time to start them", "s", ".2f"),
           "user_s": ("user CPU time", "s", ".2f"), "sys_s": ("system CPU time", "s", ".2f"),
           "rss_kib_per_thread": ("resident growth per thread", "KiB", ".1f"),
           "vsz_kib_per_thread": ("virtual growth per thread", "KiB", ",.0f")}
for _key, (_words, _unit, _fmt) in CEILING.items():
    from_run(f"threads_ceiling_{_key.replace('_kib_per_thread', '')}_recorded_"
             f"{_unit.lower()}", "threads_ceiling",
             lambda run, k=_key: run.meta["summary"]["measured"][k], _unit, "recorded",
             f"the largest count of 2 MiB-stack threads sleeping one second measured here "
             f"(one run, C10's base before scaling): {_words}", fmt=_fmt,
             params={"stack_kib": 2048})
from_run("thread_memory_left_behind_recorded_threads", "thread_memory",
         lambda run: run.meta["summary"]["threads_left_behind"], "threads", "recorded",
         "threads still alive in the thread_memory sweep after every join (a leak check)",
         fmt=",.0f")


# --- notebook 01 (malloc_touch): one allocation's changes since the child's baseline -------

def _malloc_delta(stage: str, counter: str, per: float) -> Any:
    return lambda run: run.meta["summary"]["deltas_kib"][stage][counter] / per


MALLOC_STAGES = {("after_alloc", "vsz"): ("MiB", 1024, ",.1f", "virtual size (VmSize) right "
                                          "after allocating, before any page is touched"),
                 ("after_alloc", "rss"): ("KiB", 1, ",.0f", "resident set (VmRSS) right "
                                          "after allocating, before any page is touched"),
                 ("after_touch", "rss"): ("MiB", 1024, ",.1f", "resident set after one byte "
                                          "was written to every page"),
                 ("after_free", "rss"): ("MiB", 1024, "+,.1f", "resident set after freeing"),
                 ("after_free", "vsz"): ("MiB", 1024, "+,.1f", "virtual size after freeing")}

for _alloc in ("malloc", "mmap"):
    for (_stage, _counter), (_unit, _per, _fmt, _words) in MALLOC_STAGES.items():
        from_run(f"malloc_touch_{_alloc}_{_counter}_{_stage}_{_unit.lower()}", "malloc_touch",
                 _malloc_delta(_stage, _counter, _per), _unit, "recorded (one reading)",
                 f"one {_alloc} of the run's size in a forked one-thread child: the change of "
                 f"its {_words}, since the reading before allocating", fmt=_fmt,
                 params={"allocator": _alloc})
    from_run(f"malloc_touch_{_alloc}_touch_rate_mib_per_s", "malloc_touch",
             lambda run: run.meta["summary"]["touch_mib_per_s"], "MiB/s",
             "recorded (one pass)", f"writing one byte to every page of one {_alloc} "
             "allocation, first touch (one page fault per page): MiB per second over the "
             "whole pass", fmt=",.0f", params={"allocator": _alloc})


# --- idle-thread memory (C05, C12, C16) ----------------------------------------------------

def thread_points(runs: Runs, stack_kib: int = 0) -> tuple[pd.DataFrame, list[Any]] | Missing:
    found = runs.matching("thread_memory", stack_kib=stack_kib, touch_kib=0)
    table = runs.tables(found, "points")
    if table.empty:
        return no_run("thread_memory", "default stacks and no touch", "notebook 02")
    return table[table.started == table.requested], found


def _per_thread_at(column: str, threads: int, unit: str) -> Any:
    def select(runs: Runs) -> Measurement | Missing:
        got = thread_points(runs)
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


def _points_100_1000(runs: Runs) -> tuple[pd.DataFrame, list[Any]] | Missing:
    """The sweep's points from 100 to 1,000 idle threads (C12's range, also the slab
    slope's), with the runs they come from; Missing under 3 thread counts."""
    got = thread_points(runs)
    if isinstance(got, Missing):
        return got
    table, found = got
    rows = table[(table.threads >= 100) & (table.threads <= 1000)]
    if rows.threads.nunique() < 3:
        return Missing("fewer than 3 thread counts between 100 and 1,000")
    return rows, found


def _slope_100_1000(column: str) -> Any:
    def select(runs: Runs) -> Measurement | Missing:
        got = _points_100_1000(runs)
        if isinstance(got, Missing):
            return got
        rows, found = got
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
    found = runs.matching("thread_memory_touch", touch_depths_kib=holds_all(400))
    table = runs.tables(found, "points")
    if table.empty:
        return no_run("thread_memory_touch", "a 400 KiB stack touch", "notebook 02")
    rows = table[(table.touch_kib_asked == 400) & (table.started == table.requested)]
    return over_repeats(rows.rss_kib / rows.threads / 400.0, "ratio", run_id=run_ids(found),
                        setup={"experiment": "thread_memory_touch", "touch_kib": 400,
                               "threads": int(rows.threads.iloc[0]), "stack_kib": "default"},
                        how="per repeat: RSS change per thread / 400 KiB written")


def split_rss_cause(runs: Runs, got: Measurement) -> str | None:
    """Kernels >= 6.2 count RSS exactly; the published under-count cannot show."""
    found = runs.matching("thread_memory_touch", touch_depths_kib=holds_all(400))
    versions = [v for v in (kernel_version(r) for r in found) if v is not None]
    if versions and min(versions) >= (6, 2):
        v = min(versions)
        return (f"measured on Linux {v[0]}.{v[1]}: kernels 2.6.34 to 6.1 cached each "
                "thread's RSS changes (SPLIT_RSS_COUNTING) and folded them in every 64 page "
                "faults, so RSS lagged what was touched; 6.2 replaced the cache with per-CPU "
                "counters, so the published under-count cannot show on this kernel")
    return None


# --- malloc then touch (C07) --------------------------------------------------------------------

# --- limits (C08, C10) -------------------------------------------------------------------------

def c08_max_threads(runs: Runs) -> Measurement | Missing:

    q = findings.compute("thread_ceiling_threads", runs)
    return findings.measurement(q, low=None, high=None, computed=True,
                                how="computed from this machine's limits, not spawned; "
                                    "binding first: " + str(q.extra.get("binding", "")))


def c10_million_threads(runs: Runs) -> Measurement | Missing:
    found = [r for r in runs.matching("thread_limits")
             if r.meta["params"].get("target_threads") == 1_000_000]
    if not found:
        return no_run("thread_limits", "a one-million-thread target", "notebook 02")
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
    found = runs.matching("thread_memory_stack", stack_sizes_kib=holds_all(stack_kib))
    table = runs.tables(found, "points")
    if table.empty:
        return no_run("thread_memory_stack", f"{stack_kib:,} KiB stacks", "notebook 02")
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
        return peers_skipped(runs)
    return slope(table.goroutines, table.rss_kib, "KiB", len(found), run_id=run_ids(found),
                 setup={"experiment": "peers", "goroutines": int(table.goroutines.max()),
                        "state": "blocked on a channel"},
                 how="slope of VmRSS over goroutines blocked on a channel")


# --- the thread ceiling (C10) ----------------------------------------------------------------

def _ceiling(runs: Runs) -> list[Any] | Missing:
    found = runs.matching("threads_ceiling", stack_kib=2048)
    found = [r for r in found if "measured" in r.meta.get("tables", [])]
    if not found:
        return no_run("threads_ceiling", "2 MiB stacks", "notebook 02")
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
        return at_setup(got, f"(at {counts[0]:,} sleeping threads; the count was set by {bound})")
    return select



def c10_million_scaled(runs: Runs) -> Measurement | Missing:
    """threads_ceiling/scaled: one million threads, computed from the measured count."""

    rss, user, sys_ = (findings.compute(f"c10_million_threads_{k}", runs)
                       for k in ("rss_mib", "user_s", "sys_s"))
    return findings.measurement(
        rss, low=None, high=None, repeats=1, computed=True,
        how=f"{rss.extra.get('label', 'computed by scaling')}: RSS {rss.text()}, user "
            f"{user.text()}, sys {sys_.text()} (the findings c10_million_threads_*)")


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
            return Missing(f"the one-million-goroutine run was skipped: "
                           f"{vocabulary.bare_reason(skipped[0])}")
        return no_run("goroutines_million", f"the variant {words(variant)}", "notebook 05")
    return table[table.variant == variant], found


def c11_million_rss(runs: Runs) -> Measurement | Missing:
    """goroutines_million/runs, S1's own program (``as_published``): wait4's max RSS /
    goroutines, over its repeats. The modified program that keeps every goroutine
    asleep at once (``all_at_once``) is another program: page 05 shows it beside."""
    got = _million(runs, "as_published")
    if isinstance(got, Missing):
        return got
    rows, found = got
    count = int(rows["count"].max())
    rows = rows[rows["count"] == count]
    meas = over_repeats(rows.max_rss_kib_per_goroutine, "KiB", run_id=run_ids(found),
                        setup={"experiment": "goroutines_million", "variant": "as_published",
                               "goroutines": count,
                               "sleep_ms": found[0].meta["params"].get("sleep_ms")},
                        how="S1's program as published, per run (a fresh process): max RSS "
                            "of the whole program (wait4's ru_maxrss, like the time command) "
                            "/ goroutines")
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
        return over_repeats(rows[rows["count"] == count][column], "s",
                            run_id=run_ids(found),
                            setup={"experiment": "goroutines_million",
                                   "variant": "as_published", "goroutines": count},
                            how="per run (a fresh process): wait4's figure, like the "
                                "time command")
    return select


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


# What the sources counted as a thread's kernel memory, and what this study counts in its
# place. S2 and S5 read slabtop (the commented-out line of their scripts prints the
# "Active / Total Size" line's first value); the runs here read /proc/meminfo.
SLABTOP = ("slabtop's active size (the objects in use in every slab cache, reclaimable ones "
           "included, counted by object size)")
SUNRECLAIM = ("the system's unreclaimable slab (SUnreclaim of /proc/meminfo: the pages of the "
              "unreclaimable slab caches, a thread's task_struct and pid among them)")
SLAB_NOT_COUNTED = ("neither count holds a thread's kernel stack (not a slab object: "
                    "KernelStack counts it) or its page tables")


def slab_slope(runs: Runs) -> Measurement | Missing:
    """Unreclaimable slab per idle thread (SUnreclaim, system-wide): slope over 100..1,000
    threads. Not slabtop's count: it leaves out the reclaimable caches and counts pages."""
    got = _points_100_1000(runs)
    if isinstance(got, Missing):
        return got
    rows, found = got
    return slope(rows.threads, rows.slab_kib, "KiB", int(rows.groupby("threads").size().min()),
                 run_id=run_ids(found),
                 setup={"experiment": "thread_memory", "threads": "100..1000",
                        "counted": "unreclaimable slab (SUnreclaim), not slabtop's count"},
                 how="slope of the system's unreclaimable slab (SUnreclaim) over 100..1,000 "
                     "idle threads")
