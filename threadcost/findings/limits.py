"""Findings of notebook 02: the thread ceiling (C08) and C10's one million threads, scaled."""

from __future__ import annotations

from typing import Any

import numpy as np

from threadcost.findings import Value, pooled, quantity
from threadcost.measured.runs import Runs

NOTEBOOK_02 = "notebook 02"


def binding_words(binding: Any) -> str:
    """The limit that binds first, in words (from a thread_limits run's summary)."""
    if not isinstance(binding, dict):
        return "no limit caps the thread count"
    allowed = binding.get("threads_allowed")
    count = f"{allowed:,.0f} threads" if isinstance(allowed, int | float) else "?"
    return f"{binding.get('limit')} ({count}; {binding.get('note', '')})".replace("; )", ")")


@quantity("thread_ceiling_threads", "threads", "computed from limits (median over runs)",
          "how many more threads this process could start with the default stack size, "
          "computed from this machine's limits (threads-max, pid_max, max_map_count with "
          "the mappings the process already holds, RLIMIT_AS, cgroup pids.max), not spawned",
          computed=True, reads=pooled("thread_limits (default stacks)"))
def thread_ceiling(runs: Runs) -> Value | str:
    found = runs.matching("thread_limits", stack_kib=0)
    if not found:
        return f"no thread_limits run with default stacks stored ({NOTEBOOK_02})"
    values = [float(r.meta["summary"]["max_threads"]) for r in found]
    binding = found[-1].meta["summary"].get("binding")
    limit = binding.get("limit") if isinstance(binding, dict) else None
    return Value(float(np.median(values)), min(values), max(values), len(found), found,
                 setup={"experiment": "thread_limits", "stack_kib": "default"},
                 extra={"binding": binding_words(binding), "limit": limit or "none",
                        "note": binding.get("note", "") if isinstance(binding, dict) else ""})


# --- C10: one million 2 MiB-stack threads, scaled from the largest count measured ---------

def _ceiling(runs: Runs) -> list[Any] | str:
    found = [r for r in runs.matching("threads_ceiling", stack_kib=2048)
             if {"measured", "scaled"} <= set(r.meta.get("tables", []))]
    if not found:
        return f"no threads_ceiling run with 2 MiB stacks stored ({NOTEBOOK_02})"
    return found


def _scaled(runs: Runs, quantity_name: str, factor: float = 1.0) -> Value | str:
    found = _ceiling(runs)
    if isinstance(found, str):
        return found
    values = []
    for run in found:
        scaled = run.table("scaled").set_index("quantity")
        values.append(float(scaled.loc[quantity_name, "value"]) * factor)
    measured = runs.tables(found, "measured")
    threads = [int(t) for t in measured.threads]
    label = str(found[-1].table("scaled")["label"].iloc[0])
    return Value(float(np.median(values)), min(values), max(values), len(found), found,
                 setup={"experiment": "threads_ceiling", "stack_kib": 2048,
                        "threads measured": threads[0] if len(threads) == 1 else threads},
                 extra={"label": label, "threads_measured": threads[0] if threads else None})


C10_DEFINITION = ("C10, scaled: one million threads with 2 MiB stacks that each sleep one "
                  "second, computed by scaling the largest count this machine measured "
                  "(threads_ceiling: create, sleep and join) linearly to 1,000,000; not a "
                  "measurement")


@quantity("c10_million_threads_user_s", "s", "computed (scaled linearly)",
          C10_DEFINITION + ": user CPU time", fmt=",.1f", computed=True,
          reads=pooled("threads_ceiling (2 MiB stacks)"))
def c10_user(runs: Runs) -> Value | str:
    return _scaled(runs, "user_s")


@quantity("c10_million_threads_sys_s", "s", "computed (scaled linearly)",
          C10_DEFINITION + ": system CPU time", fmt=",.1f", computed=True,
          reads=pooled("threads_ceiling (2 MiB stacks)"))
def c10_sys(runs: Runs) -> Value | str:
    return _scaled(runs, "sys_s")


@quantity("c10_million_threads_rss_mib", "MiB", "computed (scaled linearly)",
          C10_DEFINITION + ": resident memory", fmt=",.0f", computed=True,
          reads=pooled("threads_ceiling (2 MiB stacks)"))
def c10_rss(runs: Runs) -> Value | str:
    return _scaled(runs, "rss_kib", 1 / 1024)


# --- the machine ---------------------------------------------------------------------------

@quantity("machine_memory_gib", "GiB", "recorded",
          "the machine's RAM (MemTotal of /proc/meminfo), as its newest stored run recorded "
          "it in the run's machine fingerprint", fmt=".1f",
          reads="the newest stored run of any experiment")
def machine_memory(runs: Runs) -> Value | str:
    found = sorted(runs.runs, key=lambda r: (r.meta.get("created_utc", ""), r.meta["run_id"]))
    if not found:
        return "no run stored"
    kib = found[-1].meta.get("machine", {}).get("mem_total_kib")
    if kib is None:
        return "the stored run recorded no MemTotal"
    return Value(float(kib) / 1024**2, runs=[found[-1]])
