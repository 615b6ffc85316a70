"""Findings of notebook 02 (thread and process memory): the parts of an idle thread's and
an idle forked child's memory, from the newest run (the headline's rule; the totals are
the headline's findings, ``memory_thread_slope_kib`` and ``memory_process_slope_kib``)."""

from __future__ import annotations

from typing import Any

from threadcost.findings.summary import from_run

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
