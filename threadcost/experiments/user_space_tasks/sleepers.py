"""Many tasks that mostly sleep: C threads (unpinned, pinned) against goroutines.

The workload of claims C15 and C17: ``count`` tasks, each first waiting a fixed
pseudo-random stagger below ``stagger_ms`` (so they do not all wake at once),
then sleeping ``period_ms`` at a time until it has slept ``duration_ms``. The
published run used 10,000 tasks x 1000 sleeps of 10 ms; the defaults here keep
10,000 tasks and 10 ms but sleep only a few seconds.

Variants, each in a process of its own:

- ``threads``: C threads (native/sleepers.c) with the system default stack,
  placed by the scheduler; in a child process (run_isolated);
- ``threads_pinned``: the same, thread i pinned to CPU i mod n round-robin;
- ``goroutines``: the Go peer program (:mod:`threadcost.experiments.user_space_tasks.goroutines`).

Memory is the growth of the process's resident set while the tasks run: the
peak (sampled every period by the main thread, and VmHWM where it can be
reset) minus the resident set just before the first task started. That growth
is what the tasks cost; the baseline of a Python child and of a Go binary
differ, and are shown beside it. The peers also report the program's page
tables (VmPTE, outside RSS; C16): before the first task, and the largest
reading, once every task exists and then every period (the C-thread variants
leave them empty, as do runs stored before the peers reported them). CPU is
user and system time of the process over the run (getrusage), from the moment
every task exists (they wait at a gate) to the last one's end.

:func:`run` repeats the variants ``repeats`` times, each run a fresh process,
the variants in alternating order from one repeat to the next; it stores one
row per (repeat, variant) (table ``repeats``, with how busy the CPUs were) and,
per variant, the mean over the repeats (table ``variants`` and the summary).
A run stored before the repeats holds only the per-variant rows: one repeat.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from threadcost import peers as peer_kinds
from threadcost import stats
from threadcost.errors import ParameterError, check_status
from threadcost.experiments.parameters import declared
from threadcost.host import sysinfo
from threadcost.native import ffi, lib, proc_status_dict
from threadcost.progress import bar as progress_bar
from threadcost.results import Result
from threadcost.runsafety.isolate import run_isolated
from threadcost.settings import validate

EXPERIMENT = "sleepers"
VARIANTS = ("threads", "threads_pinned", "goroutines")
# The peers' variants, as each runtime's registry entry declares them (threadcost.peers):
# variant -> (peer kind, extra flags). S4's program is Rust threads, unpinned and pinned
# round-robin.
PEER_VARIANTS: dict[str, tuple[str, dict[str, Any]]] = {
    v.name: (name, dict(v.flags)) for name, kind in peer_kinds.KINDS.items()
    for v in kind.sleepers}
ALL_VARIANTS = ("threads", "threads_pinned", *PEER_VARIANTS)
# Rough resident cost of one idle thread (stack pages, TLS, kernel side), for
# the memory check before running.
THREAD_BUDGET_KIB = 64
# Defaults and ranges: the notebook parameters' (threadcost.experiments.parameters): S4's
# run (:func:`run`) and the sweep's (:func:`sweep`).
COUNT, PERIOD_MS = declared("tasks_s4_count"), declared("tasks_sleep_period_ms")
DURATION_MS, STAGGER_MS = declared("tasks_s4_duration_ms"), declared("tasks_sleep_stagger_ms")
REPEATS = declared("tasks_s4_repeats")
SWEEP_COUNTS, SWEEP_DURATION_MS = (declared("tasks_sleep_counts"),
                                   declared("tasks_sleep_sweep_duration_ms"))
SWEEP_REPEATS = declared("tasks_sleep_sweep_repeats")
SATURATION_SHARE, LATE_FACTOR = stats.SATURATION_SHARE, stats.LATE_FACTOR  # the one rule


def max_threads() -> int:
    """Half of what the kernel allows system-wide (other processes need pids too), at
    most the declared count's maximum."""
    limits = [int(COUNT.maximum or 0)]
    for key in ("kernel.pid_max", "kernel.threads-max"):
        value = sysinfo.sysctl(key)
        if value:
            limits.append(value // 2)
    return max(1, min(limits))


def check_params(count: Any = COUNT.default, period_ms: Any = PERIOD_MS.default,
                 duration_ms: Any = DURATION_MS.default, stagger_ms: Any = STAGGER_MS.default,
                 stack_kib: Any = 0, variants: Any = VARIANTS, address_space_mib: Any = None,
                 repeats: Any = REPEATS.default) -> dict[str, Any]:
    """Validate and normalise the parameters (raises ParameterError); defaults and
    ranges are the notebook parameters' (a count is also bounded by :func:`max_threads`)."""
    p: dict[str, Any] = {
        "count": validate.integer("count", count, minimum=COUNT.minimum, maximum=max_threads()),
        "period_ms": validate.integer("period_ms", period_ms, **PERIOD_MS.bounds),
        "duration_ms": validate.integer("duration_ms", duration_ms, **DURATION_MS.bounds),
        "stagger_ms": validate.integer("stagger_ms", stagger_ms, **STAGGER_MS.bounds),
        "stack_kib": validate.stack_kib("stack_kib", stack_kib),
    }
    if p["duration_ms"] < p["period_ms"]:
        raise ParameterError("duration_ms", duration_ms,
                             f"must be at least period_ms ({p['period_ms']} ms)")
    chosen = validate.choice_list("variants", variants, ALL_VARIANTS)
    p["variants"] = [v for v in ALL_VARIANTS if v in chosen]
    p["address_space_mib"] = None if address_space_mib is None else validate.integer(
        "address_space_mib", address_space_mib, minimum=16, maximum=1 << 30)
    p["repeats"] = validate.integer("repeats", repeats, **REPEATS.bounds)
    validate.memory_fits("count", count, p["count"] * THREAD_BUDGET_KIB)
    return p


def _threads_child(count: int, period_ms: int, duration_ms: int, stagger_ms: int,
                   pinned: bool, stack_kib: int,
                   address_space_mib: int | None = None) -> dict[str, Any]:
    if address_space_mib is not None:  # cap the address space this far above now
        import resource

        status_now = ffi.new("tc_proc_status *")
        lib.tc_read_proc_status(status_now)
        cap = (int(status_now.vsz_kib) + address_space_mib * 1024) * 1024
        resource.setrlimit(resource.RLIMIT_AS, (cap, resource.getrlimit(resource.RLIMIT_AS)[1]))
    out = ffi.new("tc_sleepers_result *")
    status = lib.tc_sleepers_run(count, period_ms * 1_000_000, duration_ms * 1_000_000,
                                 stagger_ms * 1_000_000,
                                 lib.TC_SLEEPERS_PINNED if pinned else lib.TC_SLEEPERS_UNPINNED,
                                 stack_kib, out)
    check_status("tc_sleepers_run", status, out.err)
    before = proc_status_dict(out.before)
    return {
        "status": int(status), "err": int(out.err), "tasks": int(out.started),
        "finished": int(out.finished), "wakeups": int(out.wakeups),
        "wall_ns": int(out.wall_ns), "spawn_ns": int(out.spawn_ns),
        "user_us": int(out.user_us), "sys_us": int(out.sys_us),
        "rss_before_kib": before["rss_kib"], "vsz_before_kib": before["vsz_kib"],
        "peak_rss_kib": int(out.peak_rss_kib), "peak_vsz_kib": int(out.peak_vsz_kib),
        "peak_threads": int(out.peak_threads), "hwm_reset": bool(out.hwm_reset),
        "cpus": int(out.cpus), "vcsw": int(out.vcsw), "ivcsw": int(out.ivcsw),
    }


def _row(variant: str, raw: dict[str, Any]) -> dict[str, Any]:
    tasks = max(raw["tasks"], 1)
    growth = raw["peak_rss_kib"] - raw["rss_before_kib"]
    vsz_growth = raw["peak_vsz_kib"] - raw["vsz_before_kib"]
    user_s, sys_s = raw["user_us"] / 1e6, raw["sys_us"] / 1e6
    return {
        "variant": variant, "tasks": raw["tasks"], "wakeups": raw["wakeups"],
        "wall_s": raw["wall_ns"] / 1e9, "spawn_s": raw["spawn_ns"] / 1e9,
        "user_s": user_s, "sys_s": sys_s, "cpu_s": user_s + sys_s,
        "cpu_us_per_wakeup": (user_s + sys_s) * 1e6 / raw["wakeups"] if raw["wakeups"] else None,
        "rss_before_kib": raw["rss_before_kib"], "peak_rss_kib": raw["peak_rss_kib"],
        "rss_growth_kib": growth, "rss_per_task_kib": growth / tasks,
        "vsz_growth_kib": vsz_growth, "vsz_per_task_kib": vsz_growth / tasks,
        "peak_os_threads": raw["peak_threads"], **_page_tables(raw, tasks), "not_run": None,
    }


def _page_tables(raw: dict[str, Any], tasks: int) -> dict[str, Any]:
    """The program's page tables (VmPTE, KiB): before the first task, the peak, the
    growth and the growth per task; None where the program did not report them."""
    before, peak = raw.get("page_tables_before_kib"), raw.get("peak_page_tables_kib")
    growth = peak - before if before is not None and peak is not None else None
    return {"page_tables_before_kib": before, "peak_page_tables_kib": peak,
            "page_tables_growth_kib": growth,
            "page_tables_per_task_kib": None if growth is None else growth / tasks}


def _peer_raw(variant: str, count: int, p: dict[str, Any], timeout: float) -> dict[str, Any]:
    """One peer's sleepers run, as the C kernel's fields."""
    kind, extra = PEER_VARIANTS[variant]
    data = peer_kinds.run_kind(kind, "sleepers", {
        "count": count, "period_ms": p["period_ms"], "duration_ms": p["duration_ms"],
        "stagger_ms": p["stagger_ms"], **extra}, timeout=timeout).data
    return {"tasks": int(data.get("started", data["count"])), "wakeups": data["wakeups"],
            "wall_ns": data["wall_ns"], "spawn_ns": data["spawn_ns"],
            "user_us": data["user_us"], "sys_us": data["sys_us"],
            "rss_before_kib": data["rss_before_kib"],
            "vsz_before_kib": data.get("vsz_before_kib", 0),
            "peak_rss_kib": max(data["peak_rss_kib"], data.get("hwm_kib") or 0),
            "peak_vsz_kib": data.get("peak_vsz_kib", 0), "peak_threads": data["peak_threads"],
            "page_tables_before_kib": data["page_tables_before_kib"],
            "peak_page_tables_kib": data["peak_page_tables_kib"],
            "runtime_version": data.get("version") or data.get("go_version")}


def _not_run_row(variant: str, reason: str) -> dict[str, Any]:
    return {"variant": variant, "not_run": reason}


def _busy(row: dict[str, Any], raw: dict[str, Any], cpus: int, planned_s: float
          ) -> dict[str, Any]:
    """A measured row with CPU per wake-up split into user and system, and how busy
    the CPUs were: ``cpu_busy`` = CPU seconds / wall seconds, ``saturated`` when that
    reaches SATURATION_SHARE of the usable CPUs or the run took more than
    LATE_FACTOR times its planned sleeping time."""
    wakeups = max(raw["wakeups"], 1)
    row["user_us_per_wakeup"] = raw["user_us"] / wakeups
    row["sys_us_per_wakeup"] = raw["sys_us"] / wakeups
    row["cpu_busy"] = row["cpu_s"] / row["wall_s"] if row["wall_s"] > 0 else None
    row["cpu_bound"], row["late"] = stats.saturation(row["cpu_s"], row["wall_s"], cpus,
                                                     planned_s)
    row["saturated"] = row["cpu_bound"] or row["late"]
    return row


def _threads_raw(variant: str, count: int, p: dict[str, Any], timeout: float,
                 address_space_mib: int | None = None) -> dict[str, Any]:
    """One C-thread run in a child process of its own."""
    return run_isolated(_threads_child, {
        "count": count, "period_ms": p["period_ms"], "duration_ms": p["duration_ms"],
        "stagger_ms": p["stagger_ms"], "pinned": variant == "threads_pinned",
        "stack_kib": p["stack_kib"], "address_space_mib": address_space_mib},
        timeout=timeout)


def _limit(raw: dict[str, Any], variant: str) -> dict[str, Any]:
    return {"limit": "thread creation refused (pthread_create: threads-max, pid_max, "
                     "cgroup pids.max, RLIMIT_NPROC or memory)",
            "errno": raw["err"], "variant": variant, "threads_started": raw["tasks"]}


def _mean_rows(table: pd.DataFrame, variants: list[str]) -> dict[str, dict[str, Any]]:
    """Per variant: the mean over its measured repeats (counts rounded back to
    integers), with how many repeats and whether any saturated; a variant with no
    measured repeat keeps its reason."""
    out: dict[str, dict[str, Any]] = {}
    for variant in variants:
        rows = table[table.variant == variant]
        measured = rows[rows.not_run.isna()]
        if measured.empty:
            out[variant] = _not_run_row(variant, str(rows.not_run.iloc[0]))
            continue
        row: dict[str, Any] = {"variant": variant}
        for column in _ROW_COLUMNS:
            values = pd.to_numeric(measured[column], errors="coerce")
            mean = float(values.mean()) if values.notna().any() else None
            row[column] = (round(mean) if column in _INTEGER_COLUMNS and mean is not None
                           else mean)
        row.update(not_run=None, repeats=len(measured),
                   saturated=bool(measured.saturated.astype(bool).any()))
        out[variant] = row
    return out


_ROW_COLUMNS = ("tasks", "wakeups", "wall_s", "spawn_s", "user_s", "sys_s", "cpu_s",
                "cpu_us_per_wakeup", "rss_before_kib", "peak_rss_kib", "rss_growth_kib",
                "rss_per_task_kib", "vsz_growth_kib", "vsz_per_task_kib", "peak_os_threads",
                "page_tables_before_kib", "peak_page_tables_kib", "page_tables_growth_kib",
                "page_tables_per_task_kib", "user_us_per_wakeup", "sys_us_per_wakeup",
                "cpu_busy")
_INTEGER_COLUMNS = ("tasks", "wakeups", "peak_os_threads")


def run(count: Any = COUNT.default, period_ms: Any = PERIOD_MS.default,
        duration_ms: Any = DURATION_MS.default, stagger_ms: Any = STAGGER_MS.default,
        stack_kib: Any = 0, variants: Any = VARIANTS, progress: bool = False,
        address_space_mib: Any = None, repeats: Any = REPEATS.default) -> Result:
    """Run each variant of the sleepers workload ``repeats`` times.

    ``count`` tasks; ``period_ms`` per sleep; ``duration_ms`` of sleep per task;
    ``stagger_ms`` bound of the start delay; ``stack_kib`` for C threads (0:
    system default); ``variants`` a subset of ``ALL_VARIANTS``; ``address_space_mib``
    caps the C-thread processes' address space (RLIMIT_AS) that far above their
    size before starting threads, to show a limit being hit; ``repeats`` runs of
    every variant, each a fresh process, the variants interleaved (in order, then
    reversed, from one repeat to the next).

    Tables: ``repeats``, one row per (repeat, variant), and ``variants``, the mean
    of each variant over its repeats (also the summary's ``variants``). A peer
    whose toolchain is missing is ``not_run`` (with the reason). A refused
    pthread_create returns the partial result with ``limit_hit``: the repeat it
    happened in is finished, no further repeat starts.
    """
    p = check_params(count, period_ms, duration_ms, stagger_ms, stack_kib, variants,
                     address_space_mib, repeats)
    planned_s = (p["duration_ms"] + p["stagger_ms"]) / 1000
    timeout = 120.0 + planned_s * 3 + p["count"] * 1e-3
    cpus = len(sysinfo.affinity())
    absent = {v: peer_kinds.kind_reason(PEER_VARIANTS[v][0]) for v in p["variants"]
              if v in PEER_VARIANTS}
    plan = [(rep, v) for rep in range(p["repeats"])
            for v in (p["variants"] if rep % 2 == 0 else list(reversed(p["variants"])))]
    bar = None
    if progress:
        bar = progress_bar(total=len(plan), desc="sleepers", unit="run")
    rows: list[dict[str, Any]] = []
    raws: dict[str, list[dict[str, Any]]] = {}
    limit_hit = None
    for rep, variant in plan:
        if limit_hit is not None and rep > limit_hit["repeat"]:
            break
        base = {"repeat": rep, "cpus": cpus, "planned_s": planned_s}
        if absent.get(variant):
            rows.append({**base, **_not_run_row(variant, str(absent[variant]))})
        else:
            if variant in PEER_VARIANTS:
                raw = _peer_raw(variant, p["count"], p, timeout)
            else:
                raw = _threads_raw(variant, p["count"], p, timeout, p["address_space_mib"])
                if raw["status"] == lib.TC_ELIMIT and limit_hit is None:
                    limit_hit = {**_limit(raw, variant), "repeat": rep}
            raws.setdefault(variant, []).append(raw)
            rows.append({**base, **_busy(_row(variant, raw), raw, cpus, planned_s)})
        if bar is not None:
            bar.update(1)
    if bar is not None:
        bar.close()
    table = pd.DataFrame(rows)
    means = _mean_rows(table, p["variants"])
    summary: dict[str, Any] = {
        "variants": means,
        "repeats": p["repeats"], "cpus": cpus, "planned_s": planned_s,
        "raw": raws,
    }
    return Result(EXPERIMENT, p, summary,
                  {"variants": pd.DataFrame([means[v] for v in p["variants"]]),
                   "repeats": table}, limit_hit)


# --- the sweep over counts (notebook 05's figure; C threads, no claim reads it) -------

SWEEP_EXPERIMENT = "sleepers_sweep"


def check_sweep(counts: Any, variants: Any, period_ms: Any, duration_ms: Any,
                stagger_ms: Any, repeats: Any) -> dict[str, Any]:
    """What :func:`sweep` refuses, before anything runs (threadcost.paper.prechecks)."""
    listed = validate.integer_list("counts", counts, minimum=SWEEP_COUNTS.minimum,
                                   maximum=min(int(SWEEP_COUNTS.maximum or 0), max_threads()))
    validate.integer("duration_ms", duration_ms, **SWEEP_DURATION_MS.bounds)
    p = check_params(max(listed), period_ms, duration_ms, stagger_ms, 0, variants)
    p["counts"] = sorted(set(listed))
    p["repeats"] = validate.integer("repeats", repeats, **SWEEP_REPEATS.bounds)
    del p["count"]
    return p


def sweep(counts: Any = tuple(SWEEP_COUNTS.default), variants: Any = VARIANTS,
          period_ms: Any = PERIOD_MS.default, duration_ms: Any = SWEEP_DURATION_MS.default,
          stagger_ms: Any = STAGGER_MS.default, repeats: Any = SWEEP_REPEATS.default,
          progress: bool = False) -> Result:
    """The sleepers workload at several task counts, every variant at every count
    (variants alternate within a count; counts ascend, repeats interleaved).

    Every task is created before timing starts (a gate in the C kernel and the Go
    peer). Per point: CPU per wake-up (user and system), peak RSS growth per task,
    and how busy the CPUs were: ``cpu_busy`` = CPU seconds / wall seconds, and
    ``saturated`` when that reaches 80% of the usable CPUs or the run took more
    than 1.25x its planned sleeping time. Goroutine points read "not run" (with
    the reason) without Go.
    """
    p = check_sweep(counts, variants, period_ms, duration_ms, stagger_ms, repeats)
    cpus = len(sysinfo.affinity())
    planned_s = (p["duration_ms"] + p["stagger_ms"]) / 1000
    plan = [(rep, n, v) for rep in range(p["repeats"]) for n in p["counts"]
            for v in (p["variants"] if rep % 2 == 0 else list(reversed(p["variants"])))]
    bar = None
    if progress:
        bar = progress_bar(total=len(plan), desc="sleepers sweep", unit="run")
    rows: list[dict[str, Any]] = []
    limit_hit = None
    for rep, n, variant in plan:
        base = {"repeat": rep, "count": n, "variant": variant, "cpus": cpus,
                "planned_s": planned_s}
        if variant in PEER_VARIANTS:
            why = peer_kinds.kind_reason(PEER_VARIANTS[variant][0])
            if why:
                rows.append({**base, "not_run": why})
                if bar is not None:
                    bar.update(1)
                continue
            raw = _peer_raw(variant, n, p, 120.0 + planned_s * 3 + n * 2e-3)
            status = 0
        else:
            raw = _threads_raw(variant, n, p, 120.0 + planned_s * 3 + n * 2e-3)
            status = raw["status"]
        rows.append({**base, **_busy(_row(variant, raw), raw, cpus, planned_s)})
        if bar is not None:
            bar.update(1)
        if status == lib.TC_ELIMIT:
            limit_hit = {"limit": "thread creation refused (pthread_create: threads-max, "
                                  "pid_max, cgroup pids.max or memory)",
                         "errno": raw["err"], "variant": variant, "count": n,
                         "threads_started": raw["tasks"]}
            break
    if bar is not None:
        bar.close()
    points = pd.DataFrame(rows)
    measured = points[points["not_run"].isna()] if "not_run" in points else points
    first_saturated = {}
    for variant, grp in measured.groupby("variant"):
        sat = grp[grp["saturated"]]
        first_saturated[variant] = int(sat["count"].min()) if not sat.empty else None
    summary: dict[str, Any] = {
        "cpus": cpus, "planned_s": planned_s, "first_saturated_count": first_saturated,
        "tasks_started": int(measured["tasks"].sum()) if not measured.empty else 0,
        "not_run": {r["variant"]: r["not_run"] for r in rows if r.get("not_run")},
    }
    return Result(SWEEP_EXPERIMENT, p, summary, {"points": points}, limit_hit)
