"""How long it takes to start a thread, against starting a process (C09, C10, C11).

Each launch is timed in C (``native/launch.c``) from just before the create
call: when the call returns in the parent (``create_ns``), when the child runs
its first instruction (``first_run_ns``, read by the child itself), and how long
the join or ``waitpid`` takes after that (``join_ns``); the whole short life is
``lifecycle_ns``. Kinds: ``thread`` (pthread_create/join), ``fork``, ``vfork``,
``posix_spawn`` (of a tiny static binary) and ``clone`` with
CLONE_VM|CLONE_VFORK, each with the parent holding some touched memory.

A *burst* starts N threads that stay alive until all exist, timing every
create, then joins them: the scaled-down form of C10's million-thread run.

Every measurement runs in a small process of its own, never in the caller's (a big
Jupyter kernel, whose fork would measure the kernel, not the launch): a series in
``launch_driver`` (a small static C program, with a deadline; an isolated Python child
around it only added a fork of the harness, about 40 ms, per series), the rest in an
isolated child (:func:`threadcost.runsafety.isolate.run_isolated`).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from threadcost import cbuild, paths, stats
from threadcost.errors import KernelError, ParameterError, check_status
from threadcost.experiments.launch.spec import METRICS
from threadcost.experiments.parameters import declared
from threadcost.experiments.thread_memory.limits import name_from_errno
from threadcost.native import ffi, lib, run_stoppable
from threadcost.progress import bar
from threadcost.results import Result
from threadcost.runsafety.isolate import run_isolated
from threadcost.settings import validate

EXPERIMENT = "launch"
KINDS = {"thread": lib.TC_LAUNCH_THREAD, "fork": lib.TC_LAUNCH_FORK, "vfork": lib.TC_LAUNCH_VFORK,
         "posix_spawn": lib.TC_LAUNCH_POSIX_SPAWN, "clone": lib.TC_LAUNCH_CLONE,
         "fork_exec": lib.TC_LAUNCH_FORK_EXEC}
EXECS = ("posix_spawn", "fork_exec")  # the kinds that start the tiny binary
MAX_BURST = int(declared("launch_burst_sizes").maximum or 0)  # threads alive at once
MAX_PARENT_MIB = int(declared("launch_parent_touch_mib").maximum or 0)

NATIVE = paths.REPO_ROOT / "native"
TOOLS_DIR = paths.REPO_ROOT / "build" / "native"
# Small static programs built from native/ subfolders (the Makefile's `native`
# target builds them; launch.py builds them on first use if they are missing).
TOOLS = {p.name: list(p.sources) for p in cbuild.helpers()}
TOOL_HEADERS = [NATIVE / "threadcost.h", NATIVE / "tc_launch.h"]
BUILD_FAILURES: dict[str, str] = {}  # helper -> why it could not be built (this process)
SPAWN_FALLBACK = "/bin/true"
PARENTS = ("small", "python")
HEADER_FIELDS = 7  # int64 fields before the samples in launch_driver's output


# ---------------------------------------------------------------- parameters

def _kinds(value: Any) -> list[str]:
    return validate.choice_list("kinds", value, declared("launch_kinds").choices)


def _optional_sizes(name: str, value: Any, maximum: int) -> list[int]:
    """A list of sizes, where None, [] and "" mean "none"."""
    if value is None or (isinstance(value, str | list | tuple) and not value) or \
            (isinstance(value, str) and not value.strip()):
        return []
    return validate.integer_list(name, value, minimum=1, maximum=maximum)


ITERATIONS, WARMUP = declared("launch_iterations"), declared("launch_warmup")
BURST_REPEATS, MEMCPY_KIB = declared("launch_burst_repeats"), declared("launch_memcpy_kib")
STACK_KIB, REPEATS = declared("launch_stack_kib"), declared("launch_growth_repeats")
GROWTH_ITERATIONS, PIN = declared("launch_growth_iterations"), declared("launch_pin")


def check_params(kinds: Any = "thread", iterations: Any = ITERATIONS.default,
                 warmup: Any = WARMUP.default, stack_kib: Any = STACK_KIB.default, pin: Any = None,
                 parent_touch_mib: Any = 0, pause_us: Any = 0, burst_sizes: Any = None,
                 burst_repeats: Any = BURST_REPEATS.default,
                 memcpy_kib: Any = MEMCPY_KIB.default, baseline: Any = True,
                 parent: Any = "small") -> dict[str, Any]:
    """Validate and normalise every parameter (raises ParameterError); defaults and
    ranges are the notebook parameters' (threadcost.experiments.parameters)."""
    mems = validate.integer_list("parent_touch_mib", parent_touch_mib, minimum=0,
                                 maximum=MAX_PARENT_MIB, max_items=32)
    validate.memory_fits("parent_touch_mib", parent_touch_mib, max(mems) * 1024)
    if not isinstance(baseline, bool):
        raise ParameterError("baseline", baseline, "must be True or False")
    return {
        "kinds": _kinds(kinds),
        "iterations": validate.integer("iterations", iterations, **ITERATIONS.bounds),
        "warmup": validate.integer("warmup", warmup, **WARMUP.bounds),
        "stack_kib": validate.stack_kib("stack_kib", stack_kib),
        "pin": validate.cpus("pin", pin),
        "parent_touch_mib": sorted(set(mems)),
        "pause_us": validate.integer("pause_us", pause_us, minimum=0, maximum=1_000_000),
        "burst_sizes": sorted(set(_optional_sizes("burst_sizes", burst_sizes, MAX_BURST))),
        "burst_repeats": validate.integer("burst_repeats", burst_repeats,
                                          **BURST_REPEATS.bounds),
        "memcpy_kib": validate.integer("memcpy_kib", memcpy_kib, **MEMCPY_KIB.bounds),
        "baseline": baseline,
        "parent": validate.choice("parent", parent, PARENTS),
    }


# ---------------------------------------------------------------- the tiny binary

def build_tool(name: str) -> Path | None:
    """Path of the static helper ``name`` under build/native/, compiled if missing
    or older than its sources (with threadcost.cbuild's user-facing flags: warnings
    shown, never errors); None when no C compiler can build it (the reason is kept in
    :data:`BUILD_FAILURES`)."""
    sources = TOOLS[name]
    dst = TOOLS_DIR / name
    newest = max(p.stat().st_mtime for p in [*sources, *TOOL_HEADERS] if p.is_file())
    if dst.is_file() and os.access(dst, os.X_OK) and dst.stat().st_mtime >= newest:
        return dst
    if not all(p.is_file() for p in sources):
        return None
    try:  # static when libc.a exists: no dynamic loader to run
        return cbuild.compile_program(sources, dst, program=str(sources[0].relative_to(
            paths.REPO_ROOT)), extra=[f"-I{NATIVE}"], alternatives=(["-static"], []))
    except cbuild.CompileError as exc:
        BUILD_FAILURES[name] = str(exc)
        return None


def spawn_target() -> tuple[str, str]:
    """(path, what) of the program posix_spawn starts: build/native/spawn_target
    (from native/spawn_target/), or /bin/true when it cannot be built."""
    path = build_tool("spawn_target")
    if path is None:
        why = BUILD_FAILURES.get("spawn_target", "no C compiler")
        return SPAWN_FALLBACK, f"/bin/true ({why}; first-run time not available)"
    return str(path), "tiny static program (native/spawn_target): reads the clock, exits"


# ------------------------------------------ child-side tasks (each returns plain data)

def _pin(pin: list[int] | None) -> None:
    if pin:
        os.sched_setaffinity(0, pin)


def _array(buf: Any, n: int) -> np.ndarray:
    return np.frombuffer(ffi.buffer(buf, n * ffi.sizeof("int64_t")), dtype=np.int64).copy()


def _samples(arr: Any, n: int) -> dict[str, np.ndarray]:
    raw = np.frombuffer(ffi.buffer(arr, n * ffi.sizeof("tc_launch_sample")),
                        dtype=np.int64).reshape(-1, 4).copy() if n else np.empty((0, 4),
                                                                                 np.int64)
    return {"create_ns": raw[:, 0], "first_run_ns": raw[:, 1], "join_ns": raw[:, 2],
            "lifecycle_ns": raw[:, 3]}


DRIVER_STOPPED = 3  # launch_driver's exit status after SIGINT/SIGTERM stopped its series
def _series_in_driver(driver: str, kind: str, iterations: int, warmup: int,
                      stack_kib: int, parent_touch_mib: int, pause_us: int,
                      spawn_path: str, timeout: float, baseline_iterations: int = 0,
                      ) -> tuple[list[int], np.ndarray, np.ndarray, list[int]]:
    args = [driver, str(KINDS[kind]), str(iterations), str(warmup), str(stack_kib),
            str(parent_touch_mib * 1024), str(pause_us * 1000), spawn_path or "-",
            str(baseline_iterations)]
    proc = run_stoppable(args, timeout)
    if proc.returncode == DRIVER_STOPPED:
        raise KeyboardInterrupt
    if proc.returncode != 0:
        raise KernelError("launch_driver", lib.TC_ESYS, 0,
                          f"exited with status {proc.returncode} for kind {kind}")
    raw = np.frombuffer(proc.stdout, dtype=np.int64)
    head = [int(v) for v in raw[:HEADER_FIELDS]]
    warm_done, done = head[2], head[3]
    end = HEADER_FIELDS + 4 * (warm_done + done)
    tail = [int(v) for v in raw[end:]]
    if len(raw) < end or len(tail) != (3 if baseline_iterations else 0):
        raise KernelError("launch_driver", lib.TC_ESYS, 0, "output of unexpected length")
    body = raw[HEADER_FIELDS:end].reshape(-1, 4)
    return head, body[:warm_done], body[warm_done:], tail


def _columns(raw: np.ndarray) -> dict[str, np.ndarray]:
    return {"create_ns": raw[:, 0].copy(), "first_run_ns": raw[:, 1].copy(),
            "join_ns": raw[:, 2].copy(), "lifecycle_ns": raw[:, 3].copy()}


def series_task(kind: str, iterations: int, warmup: int, stack_kib: int,
                parent_touch_mib: int, pause_us: int, spawn_path: str,
                pin: list[int] | None, parent: str = "small", timeout: float = 600.0,
                baseline_iterations: int = 0) -> dict[str, Any]:
    """One series of launches of one kind (see :func:`_series` for where it runs).
    parent "small": in launch_driver, a small static C process, so fork copies only
    what that process holds; "python": right here, in this Python process. With
    baseline_iterations > 0 (driver only), the plain create+join loop runs in the same
    process right after the series."""
    baseline: dict[str, Any] | None = None
    _pin(pin)
    driver = build_tool("launch_driver") if parent == "small" else None
    if driver is not None:
        head, first, steady, tail = _series_in_driver(
            str(driver), kind, iterations, warmup, stack_kib, parent_touch_mib, pause_us,
            spawn_path, timeout, baseline_iterations)
        check_status("tc_launch_series", head[0], head[1], f"kind {kind}")
        if tail:
            check_status("tc_launch_plain_loop", tail[0], tail[1])
            baseline = {"status": tail[0], "err": tail[1], "iterations": baseline_iterations,
                        "total_ns": tail[2], "where": "launch_driver, after the series"}
        status, err, touched, rss0, rss1 = head[0], head[1], head[4], head[5], head[6]
        first_cols, steady_cols = _columns(first), _columns(steady)
        where = "launch_driver (small static C process)"
    else:
        f_buf = ffi.new("tc_launch_sample[]", max(warmup, 1))
        s_buf = ffi.new("tc_launch_sample[]", iterations)
        out = ffi.new("tc_launch_result *")
        path = ffi.new("char[]", spawn_path.encode())
        status = lib.tc_launch_series(KINDS[kind], iterations, warmup, stack_kib,
                                      parent_touch_mib * 1024, pause_us * 1000, path,
                                      f_buf, s_buf, out)
        check_status("tc_launch_series", status, out.err, f"kind {kind}")
        err, touched = int(out.err), int(out.touched_kib)
        rss0, rss1 = int(out.rss_before_touch_kib), int(out.rss_after_touch_kib)
        first_cols = _samples(f_buf, int(out.warmup_done))
        steady_cols = _samples(s_buf, int(out.done))
        where = "this Python process" if parent == "python" else \
            "this Python process (launch_driver could not be built)"
    return {"status": int(status), "err": int(err), "first": first_cols,
            "steady": steady_cols, "touched_kib": int(touched),
            "rss_growth_kib": int(rss1 - rss0), "parent_rss_kib": int(rss1),
            "parent": where, "cpu": int(lib.tc_current_cpu()), "baseline": baseline}


def timer_task(pin: list[int] | None) -> int:
    _pin(pin)
    return int(lib.tc_timer_overhead_ns(100_001))


def baseline_task(iterations: int, pin: list[int] | None) -> dict[str, Any]:
    """The plain create+join loop, timed as a whole (child side)."""
    _pin(pin)
    total = ffi.new("int64_t *")
    err = ffi.new("int *")
    warm = lib.tc_launch_plain_loop(min(iterations, 100), total, err)
    check_status("tc_launch_plain_loop", warm, err[0])
    status = lib.tc_launch_plain_loop(iterations, total, err)
    check_status("tc_launch_plain_loop", status, err[0])
    return {"status": int(status), "err": int(err[0]), "iterations": iterations,
            "total_ns": int(total[0]), "where": "a Python child process"}


def burst_task(n: int, repeats: int, stack_kib: int,
               pin: list[int] | None) -> list[dict[str, Any]]:
    """`repeats` bursts of n threads in one process: the first needs fresh stacks,
    later ones may reuse glibc's cached stacks (child side)."""
    _pin(pin)
    rows = []
    for repeat in range(repeats):
        create = ffi.new("int64_t[]", n)
        out = ffi.new("tc_burst_result *")
        status = lib.tc_launch_burst(n, stack_kib, create, out)
        check_status("tc_launch_burst", status, out.err)
        rows.append({"n": n, "repeat": repeat, "status": int(status), "err": int(out.err),
                     "created": int(out.created),
                     "create_samples": _array(create, int(out.created)),
                     "create_total_ns": int(out.create_total_ns),
                     "join_total_ns": int(out.join_total_ns),
                     "user_us": int(out.user_us), "sys_us": int(out.sys_us),
                     "threads_alive": int(out.threads_alive),
                     "vsz_delta_kib": int(out.vsz_delta_kib),
                     "rss_delta_kib": int(out.rss_delta_kib)})
        if status != lib.TC_OK:
            break
    return rows


def memcpy_task(kib: int, iterations: int, pin: list[int] | None) -> np.ndarray:
    _pin(pin)
    samples = ffi.new("int64_t[]", iterations)
    status = lib.tc_memcpy_series(kib * 1024, iterations, min(iterations, 100), samples)
    check_status("tc_memcpy_series", status)
    return _array(samples, iterations)


# ---------------------------------------------------------------- orchestration

def _timeout(launches: int, mib: int = 0) -> float:
    """Generous deadline: 5 ms per launch plus 1 ms per MiB held, plus a minute."""
    return 60.0 + launches * (0.005 + mib * 0.00002)


def _progress(total: int, enabled: bool) -> Any:
    """A progress bar (on the paper runner's terminal under ``make paper``)."""
    return bar(total=total, desc="launch", unit="task", disable=not enabled, mininterval=2.0)


def _series(kwargs: dict[str, Any], timeout: float,
            rlimits: dict[int, tuple[int, int]] | None = None) -> dict[str, Any]:
    """:func:`series_task`: a series in launch_driver (a process of its own, with a deadline)
    is started from here, this thread pinned meanwhile (the driver inherits it); one in
    Python (parent "python", no driver built) or under rlimits runs isolated."""
    if kwargs["parent"] == "small" and not rlimits and build_tool("launch_driver") is not None:
        mask = os.sched_getaffinity(0)
        try:
            return series_task(**kwargs)
        finally:
            os.sched_setaffinity(0, mask)
    return run_isolated(series_task, kwargs, timeout=timeout, rlimits=rlimits)


def _limit(kind: str, err: int) -> dict[str, Any]:
    what = "threads" if kind in ("thread", "burst") else "processes"
    return {"limit": f"{name_from_errno(err, what)} (a {kind} create failed)",
            "errno": err, "where": kind}


def run(kinds: Any = "thread", iterations: Any = ITERATIONS.default,
        warmup: Any = WARMUP.default, stack_kib: Any = STACK_KIB.default,
        pin: Any = None, parent_touch_mib: Any = 0, pause_us: Any = 0,
        burst_sizes: Any = None, burst_repeats: Any = BURST_REPEATS.default,
        memcpy_kib: Any = MEMCPY_KIB.default,
        baseline: Any = True, parent: Any = "small", progress: bool = False,
        rlimits: dict[int, tuple[int, int]] | None = None) -> Result:
    """Launch ``iterations`` threads/processes of each kind at each parent memory size.

    Parameters (all validated before any C runs):
      kinds: "thread", "fork", "vfork", "posix_spawn", "clone", "fork_exec" (a list, or
      comma-separated).
      iterations: timed launches per kind and parent memory size (1 .. 1,000,000).
      warmup: launches before timing, kept apart as the "first launches" (0 .. 100,000).
      stack_kib: thread stack size, 0 for the system default (ulimit -s).
      pin: CPUs (e.g. "0" or [0, 1]; "auto": the first this process may use) to pin the
        measuring process to; None: not pinned.
      parent_touch_mib: MiB the parent holds, every page written (a list: one series each).
      pause_us: sleep between create and join (outside the timing), 0 for none.
      burst_sizes: N for bursts of N threads all alive at once (None: no burst).
      burst_repeats: bursts per N, in one process (the first needs fresh stacks).
      memcpy_kib: size of the memcpy yardstick (C09 used 64 KiB); 0 skips it.
      baseline: also time a plain create+join loop written the obvious way.
      parent: "small" launches from a small static C process (launch_driver), so a
        fork copies only the memory asked for; "python" launches from a Python
        process (tens of MiB more for fork to copy), to show the difference.
      progress: show a progress bar over the measuring tasks.
      rlimits: resource limits for the measuring child (tests provoke limits with these).
    """
    p = check_params(kinds, iterations, warmup, stack_kib, pin, parent_touch_mib, pause_us,
                     burst_sizes, burst_repeats, memcpy_kib, baseline, parent)
    if p["parent"] == "small":
        build_tool("launch_driver")  # compile once here, not in every child
    spawn_path, spawn_how = spawn_target() if set(EXECS) & set(p["kinds"]) else ("", "")
    tasks: list[tuple[str, Callable[..., Any], dict[str, Any], float]] = [
        ("timer", timer_task, {"pin": p["pin"]}, 60.0)]
    deadline = _timeout(p["iterations"] + p["warmup"], max(p["parent_touch_mib"])) + \
        (p["iterations"] + p["warmup"]) * p["pause_us"] / 1e6
    in_driver = p["baseline"] and p["parent"] == "small" and build_tool("launch_driver")
    for mib in p["parent_touch_mib"]:
        for kind in p["kinds"]:
            with_baseline = in_driver and kind == "thread" and mib == min(p["parent_touch_mib"])
            tasks.append((f"series:{kind}:{mib}", series_task, {
                "kind": kind, "iterations": p["iterations"], "warmup": p["warmup"],
                "stack_kib": p["stack_kib"], "parent_touch_mib": mib,
                "pause_us": p["pause_us"], "spawn_path": spawn_path, "pin": p["pin"],
                "parent": p["parent"], "timeout": deadline,
                "baseline_iterations": p["iterations"] if with_baseline else 0},
                deadline + 10.0))
    if p["baseline"] and "thread" in p["kinds"] and not in_driver:
        tasks.append(("baseline", baseline_task,
                      {"iterations": p["iterations"], "pin": p["pin"]},
                      _timeout(p["iterations"])))
    for n in p["burst_sizes"]:
        tasks.append((f"burst:{n}", burst_task, {"n": n, "repeats": p["burst_repeats"],
                                                 "stack_kib": p["stack_kib"], "pin": p["pin"]},
                      _timeout(n * p["burst_repeats"])))
    if p["memcpy_kib"]:
        tasks.append(("memcpy", memcpy_task, {"kib": p["memcpy_kib"],
                                              "iterations": min(p["iterations"] * 2, 100_000),
                                              "pin": p["pin"]}, 120.0))

    outputs: dict[str, Any] = {}
    seconds: dict[str, float] = {}
    limit_hit = None
    with _progress(len(tasks), progress) as bar:
        for name, func, kwargs, timeout in tasks:
            bar.set_postfix_str(name)
            started = time.monotonic()
            value = _series(kwargs, timeout, rlimits) if func is series_task else \
                run_isolated(func, kwargs, timeout=timeout, rlimits=rlimits)
            seconds[name] = round(time.monotonic() - started, 3)
            outputs[name] = value
            bar.update(1)
            limit_hit = _limit_of(name, value)
            if limit_hit:
                break
    summary, tables = _assemble(p, outputs, spawn_path, spawn_how)
    summary["task_seconds"] = seconds
    return Result(EXPERIMENT, p, summary, tables, limit_hit)


def _limit_of(name: str, value: Any) -> dict[str, Any] | None:
    if isinstance(value, dict) and value.get("status") == lib.TC_ELIMIT:
        return _limit(name.split(":")[1] if ":" in name else name, value["err"])
    if isinstance(value, list) and value and value[-1]["status"] == lib.TC_ELIMIT:
        return {**_limit("burst", value[-1]["err"]),
                "created": value[-1]["created"], "n": value[-1]["n"]}
    return None


# ---------------------------------------------------------------- the result

def _dist(values: np.ndarray) -> dict[str, float]:
    arr = np.asarray(values, dtype=float)
    return stats.distribution(arr[arr >= 0])


def _assemble(p: dict[str, Any], outputs: dict[str, Any], spawn_path: str,
              spawn_how: str) -> tuple[dict[str, Any], dict[str, pd.DataFrame]]:
    summary: dict[str, Any] = {"timer_overhead_ns": outputs.get("timer")}
    if spawn_path:
        summary["spawn_target"] = {"path": spawn_path, "what": spawn_how}
    sample_frames, dist_rows, series = [], [], []
    for name, value in outputs.items():
        if not name.startswith("series:"):
            continue
        _, kind, mib = name.split(":")
        entry: dict[str, Any] = {"kind": kind, "parent_touch_mib": int(mib),
                                 "touched_kib": value["touched_kib"],
                                 "rss_growth_kib": value["rss_growth_kib"],
                                 "parent_rss_kib": value["parent_rss_kib"],
                                 "parent": value["parent"],
                                 "n": len(value["steady"]["lifecycle_ns"]),
                                 "cpu": value["cpu"]}
        for metric in METRICS:
            entry[metric] = _dist(value["steady"][metric])
            dist_rows.append({"kind": kind, "parent_touch_mib": int(mib), "phase": "steady",
                              "metric": metric, **entry[metric]})
        first = value["first"]["lifecycle_ns"]
        entry["first_launches_lifecycle_ns"] = _dist(first)
        entry["very_first_lifecycle_ns"] = float(first[0]) if len(first) else None
        if len(first):
            dist_rows.append({"kind": kind, "parent_touch_mib": int(mib), "phase": "first",
                              "metric": "lifecycle_ns", **entry["first_launches_lifecycle_ns"]})
        series.append(entry)
        for phase in ("first", "steady"):
            frame = pd.DataFrame(value[phase])
            if frame.empty:
                continue
            frame = frame.replace(-1, np.nan)
            frame.insert(0, "index", np.arange(len(frame)))
            frame.insert(0, "phase", phase)
            frame.insert(0, "parent_touch_mib", int(mib))
            frame.insert(0, "kind", kind)
            sample_frames.append(frame)
    summary["series"] = series
    if len(series) == 1:  # the CLI's single kind at one memory size
        for metric in METRICS:
            summary[metric] = series[0][metric]
    thread0 = _find(series, "thread", min(p["parent_touch_mib"]))
    if thread0 and summary["timer_overhead_ns"] is not None:
        med = thread0["lifecycle_ns"]["p50"]
        summary["timer_overhead_share_of_median"] = (
            2 * summary["timer_overhead_ns"] / med if med and med > 0 else None)
    series0 = outputs.get(f"series:thread:{min(p['parent_touch_mib'])}") or {}
    b = outputs.get("baseline") or series0.get("baseline")
    if b:
        mean = b["total_ns"] / b["iterations"]
        summary["baseline"] = {
            "what": "plain pthread_create(NULL attr) + pthread_join loop, timed as a whole",
            "where": b["where"], "iterations": b["iterations"], "mean_ns": mean,
            "series_mean_lifecycle_ns": thread0["lifecycle_ns"]["mean"] if thread0 else None,
            "ratio_series_to_baseline": (thread0["lifecycle_ns"]["mean"] / mean
                                         if thread0 and mean > 0 else None)}
    tables: dict[str, pd.DataFrame] = {
        "samples": pd.concat(sample_frames, ignore_index=True) if sample_frames else
        pd.DataFrame(columns=["kind", "parent_touch_mib", "phase", "index", *METRICS]),
        "distributions": pd.DataFrame(dist_rows),
    }
    summary["memory_fit"] = _memory_fits(tables["samples"])
    _assemble_burst(outputs, summary, tables)
    if "memcpy" in outputs:
        summary["memcpy"] = {"bytes": p["memcpy_kib"] * 1024,
                             "ns": _dist(outputs["memcpy"])}
        tables["memcpy"] = pd.DataFrame({"bytes": p["memcpy_kib"] * 1024,
                                         "ns": outputs["memcpy"]})
    return summary, tables


def _memory_fits(samples: pd.DataFrame) -> dict[str, Any]:
    """Per kind, create time (ns) fitted against parent memory (MiB), every
    steady sample a point: the slope is ns per MiB the parent holds."""
    fits: dict[str, Any] = {}
    steady = samples[samples.phase == "steady"]
    for kind, group in steady.groupby("kind"):
        if group.parent_touch_mib.nunique() >= 2 and len(group) >= 3:
            fits[str(kind)] = stats.fit_line(group.parent_touch_mib,
                                             group.create_ns).as_dict()
    return fits


def _find(series: list[dict[str, Any]], kind: str, mib: int) -> dict[str, Any] | None:
    for entry in series:
        if entry["kind"] == kind and entry["parent_touch_mib"] == mib:
            return entry
    return None


def _assemble_burst(outputs: dict[str, Any], summary: dict[str, Any],
                    tables: dict[str, pd.DataFrame]) -> None:
    rows, creates = [], []
    for name, value in outputs.items():
        if not name.startswith("burst:"):
            continue
        for b in value:
            d = _dist(b["create_samples"])
            rows.append({k: v for k, v in b.items() if k not in ("create_samples", "status")}
                        | {"create_p50_ns": d["p50"], "create_p99_ns": d["p99"],
                           "create_mean_ns": d["mean"],
                           "wall_ns": b["create_total_ns"] + b["join_total_ns"]})
            creates.append(pd.DataFrame({"n": b["n"], "repeat": b["repeat"],
                                         "index": np.arange(b["created"]),
                                         "create_ns": b["create_samples"]}))
    if not rows:
        return
    frame = pd.DataFrame(rows)
    tables["burst"] = frame
    tables["burst_creates"] = pd.concat(creates, ignore_index=True)
    summary["burst"] = frame.to_dict(orient="records")
    done = frame[frame.created == frame.n]
    fits: dict[str, Any] = {}
    if done.n.nunique() >= 2 and len(done) >= 3:
        for label, column in (("create_total_ns", "create_total_ns"),
                              ("join_total_ns", "join_total_ns"), ("wall_ns", "wall_ns")):
            fits[label] = stats.fit_line(done.n, done[column]).as_dict()
    summary["burst_fit"] = fits


# ------------------------------------------- C09: growth with the parent's memory, repeated

GROWTH_EXPERIMENT = "launch_growth"


def check_growth_repeats(kinds: Any, parent_touch_mib: Any, repeats: Any, iterations: Any,
                         warmup: Any, pin: Any) -> dict[str, Any]:
    """What :func:`growth_repeats` refuses, before anything runs (threadcost.paper.prechecks)."""
    p = check_params(kinds, iterations, warmup, 0, pin, parent_touch_mib)
    p["repeats"] = validate.integer("repeats", repeats, **REPEATS.bounds)
    return p


def growth_repeats(kinds: Any = ("thread", "fork"), parent_touch_mib: Any = (0, 8),
                   repeats: Any = REPEATS.default, iterations: Any = GROWTH_ITERATIONS.default,
                   warmup: Any = WARMUP.default, pin: Any = PIN.default) -> Result:
    """C09's comparison as independent repeats: each repeat launches ``iterations``
    tasks of every kind at every parent size, each series in a fresh launch_driver
    process, the order of the parent sizes flipping every repeat (A B, B A, ...).

    The table ``repeats`` has one row per (repeat, kind, parent_touch_mib): the
    median create time (the call alone) and whole life (create, first run,
    join/wait, exit) of that series's launches.
    """
    p = check_growth_repeats(kinds, parent_touch_mib, repeats, iterations, warmup, pin)
    if p["parent"] == "small":
        build_tool("launch_driver")
    spawn_path = spawn_target()[0] if set(EXECS) & set(p["kinds"]) else ""
    deadline = _timeout(p["iterations"] + p["warmup"], max(p["parent_touch_mib"]))
    rows = []
    for rep in range(p["repeats"]):
        sizes = p["parent_touch_mib"] if rep % 2 == 0 else p["parent_touch_mib"][::-1]
        for mib in sizes:
            for kind in p["kinds"]:
                out = _series({
                    "kind": kind, "iterations": p["iterations"], "warmup": p["warmup"],
                    "stack_kib": 0, "parent_touch_mib": mib, "pause_us": 0,
                    "spawn_path": spawn_path, "pin": p["pin"], "parent": "small",
                    "timeout": deadline}, timeout=deadline + 10.0)
                steady = out["steady"]
                rows.append({"repeat": rep, "kind": kind, "parent_touch_mib": mib,
                             "n": len(steady["create_ns"]),
                             "create_ns_p50": float(np.median(steady["create_ns"])),
                             "lifecycle_ns_p50": float(np.median(steady["lifecycle_ns"])),
                             "touched_kib": out["touched_kib"]})
    frame = pd.DataFrame(rows)
    params = {"kinds": p["kinds"], "parent_touch_mib": p["parent_touch_mib"],
              "repeats": p["repeats"], "iterations": p["iterations"], "warmup": p["warmup"],
              "pin": p["pin"]}
    summary = {"create_ns_p50": {f"{k} {m} MiB": float(g.create_ns_p50.median())
                                 for (k, m), g in frame.groupby(["kind", "parent_touch_mib"])}}
    return Result(GROWTH_EXPERIMENT, params, summary, {"repeats": frame})
