"""Page 05's kernel-task rows (an OS thread, an OS process), drawn from stored runs, each
number printed once across the paper:

- one switch: page 05's own bare batches
  (:mod:`threadcost.experiments.user_space_tasks.kernel_task_switch`), the headline's finding;
- the round trips, each timed, and the switches the kernel counted per round trip: notebook
  04's sweep (:func:`sweep_round_trips`), the row page 04's table prints;
- the thread's memory per idle thread and its launch: the findings pages 02 and 03 print
  (:data:`THREAD_FINDINGS`).

Every stored run these read is logged as read, so the page's data line names it.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from threadcost import findings, vocabulary
from threadcost.findings.headline import latest
from threadcost.results import Result
from threadcost.store import datastore
from threadcost.views.user_space_tasks import NOT_STORED, _row, measured_value, switch_of

# The thread row's memory and launch are notebook 02's and 03's findings, and the kernel
# rows' round trips notebook 04's sweep: the numbers pages 02-04 print (one quantity, one
# value). Only the switch (the headline's) is this page's own run.
THREAD_FINDINGS = {"rss_kib": "memory_thread_rss_slope_kib",
                   "vsz_kib": "memory_thread_vsz_slope_kib",
                   "kernel_kib": "memory_thread_kernel_slope_kib",
                   "create_ns": "launch_thread_create_median_ns",
                   "life_ns": "launch_thread_median_ns"}
KERNEL_TASKS = ("thread", "process")  # the rows, by task kind


def thread_findings(data_dir: Any = None, machine_id: str | None = None
                    ) -> dict[str, findings.Quantity]:
    """The thread row's memory and launch findings (:data:`THREAD_FINDINGS`), on the
    machine drawn. The stored runs they read are logged as read, so the page's data line
    lists them beside the runs the notebook read itself."""
    got = {key: findings.get(name, data_dir, machine_id)
           for key, name in THREAD_FINDINGS.items()}
    ids = {run_id for q in got.values() for run_id in q.run_ids}
    for run in findings.runs_of(data_dir, machine_id).runs:
        if run.meta.get("run_id") in ids:
            datastore.log_run("read", run.path)
    return got


def thread_launch_samples(data_dir: Any = None, machine_id: str | None = None
                          ) -> pd.DataFrame | None:
    """The samples of the launch run the thread row's create finding read (notebook 03's,
    for the creation figure), or None when that finding is not measured."""
    q = findings.get(THREAD_FINDINGS["create_ns"], data_dir, machine_id)
    if not q.measured:
        return None
    runs = findings.runs_of(data_dir, machine_id).runs
    run = next((r for r in runs if r.meta.get("run_id") in q.run_ids), None)
    return None if run is None else run.table("samples")


PING_PONG_TASKS = {"thread": "threads", "process": "processes"}
QUANTILES = ("min", "p50", "p90", "p99", "max", "mean")


def sweep_round_trips(data_dir: Any = None, machine_id: str | None = None
                      ) -> dict[str, dict[str, Any]]:
    """Task kind -> the round trips of notebook 04's futex ping-pong pinned to one CPU, the
    row page 04's table prints (the newest context_switch run, logged as read):
    ``{"round_trip": {min, p50, p90, p99, max, mean, n}, "switches_per_round_trip": x}``.
    Empty when no such run is stored or it cannot be read (the cells then say so)."""
    try:
        run = latest(findings.runs_of(data_dir, machine_id), "context_switch")
        configs = run.table("configs") if run is not None else None
    except (OSError, ValueError, KeyError, datastore.DataError):
        return {}
    if run is None or configs is None:
        return {}
    datastore.log_run("read", run.path)
    out = {}
    for kind, tasks in PING_PONG_TASKS.items():
        hit = configs[(configs.mechanism == "futex") & (configs.placement == "same-cpu")
                      & (configs.tasks == tasks)]
        if not hit.empty:
            row = hit.iloc[0]
            out[kind] = {"round_trip": {q: float(row[f"round_trip_{q}_ns"]) for q in QUANTILES}
                         | {"n": int(row["iterations"])},
                         "switches_per_round_trip": float(row["switches_per_round_trip"])}
    return out


def switch_findings(runs: dict[str, Any], data_dir: Any = None,
                    machine_id: str | None = None) -> dict[str, findings.Quantity]:
    """Task kind -> its one switch, the headline's finding (``switch_thread_batch_median_ns``,
    ``switch_process_batch_median_ns``): of its run here (``runs``: kind -> the run the
    store gave, a Result, or a stand-in when this machine's folder holds none), else of
    the machine's stored runs, as the headline reads it (a folder stored before page 05
    measured the switch gives notebook 04's sweep, marked partial)."""
    out = {}
    for kind in KERNEL_TASKS:
        name, run = f"switch_{kind}_batch_median_ns", runs.get(kind)
        got = switch_of(name, [run]) if isinstance(run, Result) else None
        out[kind] = got if got is not None else findings.get(name, data_dir, machine_id)
    return out


def kernel_task_rows(switches: dict[str, findings.Quantity | None],
                     thread: dict[str, findings.Quantity],
                     sweep: dict[str, dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """The thread and process rows. ``switches``: :func:`switch_findings`; ``thread``:
    :func:`thread_findings`; ``sweep``: :func:`sweep_round_trips` (the round-trip
    columns, page 04's numbers)."""
    sweep = sweep or {}
    rows = []
    for kind in KERNEL_TASKS:
        task = f"{vocabulary.TASK_LABELS[kind]}, futex, same CPU"
        switch = switches.get(kind)
        rt = (sweep.get(kind) or {}).get("round_trip")
        reason = None if switch is not None and switch.measured else f"its switch: {NOT_STORED}"
        own = ({key: measured_value(q) for key, q in thread.items()} if kind == "thread"
               else {})
        memory = thread.get("rss_kib") if kind == "thread" else None
        rows.append(_row(
            task, kind, round_trip=rt,
            switch=switch if switch is not None and switch.measured else None,
            rss_kib=own.get("rss_kib"), vsz_kib=own.get("vsz_kib"),
            kernel_kib=own.get("kernel_kib"), create_ns=own.get("create_ns"),
            life_ns=own.get("life_ns"),
            switches_per_round_trip=(sweep.get(kind) or {}).get("switches_per_round_trip"),
            switch_how="futex wait/wake ping-pong, both pinned to one CPU (notebook 4's "
                       "sweep)",
            memory_how=("not measured per process here (see notebook 3)" if memory is None
                        else "slope over idle threads (notebook 2)" if memory.measured
                        else str(memory.missing)),
            missing=reason))
    return rows


# the thread row's numbers in words, by the run they read (one line per run missing)
THREAD_WORDS = {("rss_kib", "vsz_kib", "kernel_kib"): "a thread's resident, virtual and "
                                                      "kernel memory",
                ("create_ns", "life_ns"): "`pthread_create` and a thread's whole life"}


def missing_text(switches: dict[str, findings.Quantity | None],
                 thread: dict[str, findings.Quantity],
                 round_trips: dict[str, dict[str, Any]] | None = None) -> str:
    """Each kernel-task number the table lacks, in words, and why: a switch not measured
    (``switches``: :func:`switch_findings`), a finding of the thread row not measured, or
    notebook 04's round trips (``round_trips``: :func:`sweep_round_trips`; None: not
    asked)."""
    lines = [f"- one {vocabulary.TASK_LABELS[kind]} switch (futex, same CPU): {NOT_STORED}"
             for kind, q in switches.items() if q is None or not q.measured]
    for keys, words in THREAD_WORDS.items():
        absent = [thread[k] for k in keys if k in thread and not thread[k].measured]
        if absent:
            lines.append(f"- {words}: {absent[0].missing or NOT_STORED}")
    if round_trips is not None and not round_trips:
        lines.append("- the threads' and processes' round trips: no context switch run "
                     "with a futex ping-pong on one CPU stored (notebook 04)")
    if not lines:
        return "All kernel-task experiments ran; every row of the table below is measured."
    return "**Missing from the table, and why:**\n\n" + "\n".join(lines)
