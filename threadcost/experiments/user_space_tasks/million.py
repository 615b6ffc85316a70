"""S1's one-million-task runs (claims C10 and C11), as far as this machine allows.

- :func:`goroutines` runs S1's goroutine program (the Go peer's ``million``:
  ``count`` goroutines that each sleep ``sleep_ms``, then wait for all) and
  measures it from outside the way ``/usr/bin/time`` does: wall clock from start
  to reap, and wait4's rusage (user, system, ``ru_maxrss``). It is skipped, with
  the reason, when MemAvailable is below twice the expected need, or without Go.
- :func:`threads` starts as many sleeping C threads with 2 MiB stacks (Rust's
  default, S1's program) as this machine allows while staying clear of pid_max,
  threads-max and vm.max_map_count (and at most ``cap``), sleeping ``sleep_ms``;
  it measures that count in a fresh process (wall, user and system time over the
  whole create-sleep-join, peak RSS and VSZ growth). One-million figures are then
  **computed** by scaling per thread, and labelled so.
"""

from __future__ import annotations

import os
import resource
import subprocess
import threading
import time
from typing import Any

import pandas as pd

from threadcost import peers as registry
from threadcost.errors import KernelError, ParameterError, check_status
from threadcost.experiments.parameters import declared
from threadcost.experiments.user_space_tasks import goroutines as peers
from threadcost.host import sysinfo
from threadcost.native import ffi, lib
from threadcost.results import Result
from threadcost.runsafety.isolate import run_isolated
from threadcost.settings import validate
from threadcost.vocabulary import CAP_WORDS

GOROUTINES_EXPERIMENT = "goroutines_million"
THREADS_EXPERIMENT = "threads_ceiling"
S1_COUNT = 1_000_000
# Expected resident cost of one sleeping goroutine (its declaration in the Go peer's
# registry entry): the memory check asks for twice this much.
GOROUTINE_NEED_KIB = registry.KINDS["goroutine"].need_kib
PID_RESERVE = 4096  # process ids left to everyone else on the machine
MAP_RESERVE = 1000  # mappings left for the process's own libraries and heap
# Defaults and ranges: the notebook parameters' (threadcost.experiments.parameters). S1's
# program on the peers (peer_tasks) reads S1's; S6's run passes the same ranges.
COUNT, SLEEP_MS = declared("tasks_c11_goroutines"), declared("tasks_c11_sleep_ms")
REPEATS = declared("tasks_c11_repeats")
CAP, THREAD_SLEEP_MS = declared("memory_c10_cap"), declared("memory_c10_sleep_ms")
PEER_COUNT, THREAD_CAP = declared("tasks_s1_peer_count"), declared("tasks_s1_thread_cap")


def _wait4_timed(argv: list[str], timeout: float) -> dict[str, Any]:
    """Start argv, reap it with wait4; wall from start to reap (like /usr/bin/time)."""
    env = os.environ.copy()
    for name in ("GOMAXPROCS", "GOGC", "GODEBUG", "GOMEMLIMIT"):
        env.pop(name, None)
    t0 = time.monotonic_ns()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL, env=env)
    box: dict[str, Any] = {}

    def reap() -> None:
        _, status, usage = os.wait4(proc.pid, 0)
        box["t1"] = time.monotonic_ns()
        box["status"], box["usage"] = status, usage

    waiter = threading.Thread(target=reap, daemon=True)
    waiter.start()
    waiter.join(timeout)
    if waiter.is_alive():
        proc.kill()
        waiter.join(30)
        proc.returncode = -9
        proc.stdout.close()  # type: ignore[union-attr]
        proc.stderr.close()  # type: ignore[union-attr]
        raise KernelError(os.path.basename(argv[0]), 5, 0,
                          f"did not finish within {timeout:g} s and was stopped")
    proc.returncode = os.waitstatus_to_exitcode(box["status"])
    out = proc.stdout.read()  # type: ignore[union-attr]
    err = proc.stderr.read()  # type: ignore[union-attr]
    proc.stdout.close()  # type: ignore[union-attr]
    proc.stderr.close()  # type: ignore[union-attr]
    if proc.returncode != 0:
        raise KernelError(os.path.basename(argv[0]), 4, 0,
                          f"exit status {proc.returncode}: {err.decode()[-300:]}")
    import json

    usage = box["usage"]
    return {"wall_ns": box["t1"] - t0, "user_s": usage.ru_utime, "sys_s": usage.ru_stime,
            "max_rss_kib": usage.ru_maxrss, "output": json.loads(out)}


MILLION_VARIANTS = {
    "as_published": "S1's program: each goroutine sleeps as soon as it starts",
    "all_at_once": "each waits until all exist, then sleeps: all asleep at once",
}


def check_goroutines(count: Any, sleep_ms: Any, variants: Any, repeats: Any) -> dict[str, Any]:
    """What :func:`goroutines` refuses, before anything runs (threadcost.paper.prechecks)."""
    return {"count": validate.integer("count", count, **COUNT.bounds),
            "sleep_ms": validate.integer("sleep_ms", sleep_ms, **SLEEP_MS.bounds),
            "variants": [v for v in MILLION_VARIANTS
                         if v in validate.choice_list("variants", variants, MILLION_VARIANTS)],
            "repeats": validate.integer("repeats", repeats, **REPEATS.bounds)}


def goroutines(count: Any = COUNT.default, sleep_ms: Any = SLEEP_MS.default,
               variants: Any = tuple(MILLION_VARIANTS), repeats: Any = REPEATS.default
               ) -> Result:
    """S1's goroutine program at ``count`` goroutines, timed like /usr/bin/time.

    ``as_published`` is S1's program; where starting them all takes longer than
    one sleep, the first ones end before the last start, so fewer are asleep at
    once (``alive_at_spawn_end`` says how many). ``all_at_once`` holds every
    goroutine at a gate until all exist, so its max RSS is that of ``count``
    sleeping goroutines together. ``as_published`` runs ``repeats`` times (its
    wall, user and system times are judged over independent repeats), each run a
    fresh process; ``all_at_once`` (a memory peak) runs once, between the first two.
    """
    p = check_goroutines(count, sleep_ms, variants, repeats)
    need_kib = p["count"] * GOROUTINE_NEED_KIB
    available = sysinfo.mem_available_kib()
    reason = peers.go_absent_reason()
    if reason is None and available < 2 * need_kib:
        reason = (f"needs about {need_kib / 2**20:,.1f} GiB and runs only with twice that "
                  f"available; MemAvailable is {available / 2**20:,.1f} GiB")
    if reason is not None:
        return Result(GOROUTINES_EXPERIMENT, p, {"skipped": reason}, {})
    binary = peers.ensure_built()
    rows = []
    version = None
    order = [(v, 0) for v in p["variants"]]
    if "as_published" in p["variants"]:
        order += [("as_published", rep) for rep in range(1, p["repeats"])]
    for variant, repeat in order:
        argv = [str(binary), "million", "-count", str(p["count"]), "-sleep-ms",
                str(p["sleep_ms"])] + (["-gate"] if variant == "all_at_once" else [])
        timed = _wait4_timed(argv, timeout=120.0 + p["count"] * 5e-5 + p["sleep_ms"] / 1000)
        out = timed["output"]
        version = out["go_version"]
        rows.append({"variant": variant, "repeat": repeat, "count": p["count"],
                     "finished": int(out["finished"]),
                     "alive_at_spawn_end": int(out["alive_at_spawn_end"]),
                     "spawn_s": out["spawn_ns"] / 1e9, "wall_s": timed["wall_ns"] / 1e9,
                     "user_s": timed["user_s"], "sys_s": timed["sys_s"],
                     "max_rss_kib": int(timed["max_rss_kib"]),
                     "max_rss_kib_per_goroutine": timed["max_rss_kib"] / p["count"],
                     "gomaxprocs": int(out["gomaxprocs"])})
    summary: dict[str, Any] = {"skipped": None, "go_version": version,
                               "variants": {r["variant"]: r for r in rows
                                            if r["repeat"] == 0}}
    return Result(GOROUTINES_EXPERIMENT, p, summary, {"runs": pd.DataFrame(rows)})




def thread_ceiling(stack_kib: int = 2048, cap: int = 8000) -> tuple[int, str]:
    """The largest thread count to try here, and which bound set it."""
    now = sysinfo.system_threads() or 0
    bounds = {CAP_WORDS: cap}
    pid_max = sysinfo.sysctl("kernel.pid_max")
    if pid_max:
        bounds[f"kernel.pid_max {pid_max:,} - {now:,} threads running - "
               f"{PID_RESERVE:,} reserve"] = pid_max - now - PID_RESERVE
    threads_max = sysinfo.sysctl("kernel.threads-max")
    if threads_max:
        bounds[f"half of kernel.threads-max {threads_max:,}"] = threads_max // 2 - now
    maps = sysinfo.sysctl("vm.max_map_count")
    if maps:  # each thread stack: its mapping and its guard page
        bounds[f"vm.max_map_count {maps:,} / 2 mappings per thread"] = (maps - MAP_RESERVE) // 2
    avail = sysinfo.mem_available_kib()
    bounds["half of MemAvailable at 64 KiB per thread"] = avail // 2 // 64
    name = min(bounds, key=lambda k: bounds[k])
    return max(1, bounds[name]), name


def _threads_child(count: int, stack_kib: int, sleep_ms: int) -> dict[str, Any]:
    out = ffi.new("tc_sleepers_result *")
    r0 = resource.getrusage(resource.RUSAGE_SELF)
    t0 = time.monotonic_ns()
    ns = max(sleep_ms, 1) * 1_000_000
    status = lib.tc_sleepers_run(count, ns, ns, 0, lib.TC_SLEEPERS_UNPINNED, stack_kib, out)
    t1 = time.monotonic_ns()
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    check_status("tc_sleepers_run", status, out.err)
    return {"status": int(status), "err": int(out.err), "started": int(out.started),
            "finished": int(out.finished), "wall_s": (t1 - t0) / 1e9,
            "spawn_s": out.spawn_ns / 1e9,
            "user_s": r1.ru_utime - r0.ru_utime, "sys_s": r1.ru_stime - r0.ru_stime,
            "rss_growth_kib": int(out.peak_rss_kib - out.before.rss_kib),
            "vsz_growth_kib": int(out.peak_vsz_kib - out.before.vsz_kib),
            "peak_threads": int(out.peak_threads)}


def check_threads(cap: Any, stack_kib: Any, sleep_ms: Any) -> dict[str, Any]:
    """What :func:`threads` refuses, before anything runs (threadcost.paper.prechecks)."""
    return {"cap": validate.integer("cap", cap, **CAP.bounds),
            "stack_kib": validate.stack_kib("stack_kib", stack_kib),
            "sleep_ms": validate.integer("sleep_ms", sleep_ms, **THREAD_SLEEP_MS.bounds)}


def threads(cap: Any = CAP.default, stack_kib: Any = 2048,
            sleep_ms: Any = THREAD_SLEEP_MS.default) -> Result:
    """As many sleeping threads as this machine allows (at most ``cap``), measured."""
    p = check_threads(cap, stack_kib, sleep_ms)
    count, bound = thread_ceiling(p["stack_kib"], p["cap"])
    p["count"], p["bound"] = count, bound
    raw = run_isolated(_threads_child, {"count": count, "stack_kib": p["stack_kib"],
                                        "sleep_ms": p["sleep_ms"]},
                       timeout=120.0 + p["sleep_ms"] / 1000 * 3 + count * 2e-3)
    limit_hit = None
    if raw["status"] == lib.TC_ELIMIT:
        limit_hit = {"limit": "thread creation refused (threads-max, pid_max, "
                              "max_map_count or memory)", "errno": raw["err"],
                     "threads_started": raw["started"], "requested": count}
    n = max(raw["started"], 1)
    measured = {"threads": raw["started"], "finished": raw["finished"],
                "wall_s": raw["wall_s"], "spawn_s": raw["spawn_s"], "user_s": raw["user_s"],
                "sys_s": raw["sys_s"], "rss_growth_kib": raw["rss_growth_kib"],
                "vsz_growth_kib": raw["vsz_growth_kib"],
                "rss_kib_per_thread": raw["rss_growth_kib"] / n,
                "vsz_kib_per_thread": raw["vsz_growth_kib"] / n,
                "peak_threads": raw["peak_threads"]}
    scale = S1_COUNT / n
    scaled = pd.DataFrame([
        {"quantity": q, "value": measured[src] * scale, "unit": unit,
         "label": f"computed (scaled x{scale:,.0f} from {n:,} measured threads)"}
        for q, src, unit in (("rss_kib", "rss_growth_kib", "KiB"),
                             ("vsz_kib", "vsz_growth_kib", "KiB"),
                             ("user_s", "user_s", "s"), ("sys_s", "sys_s", "s"))])
    summary = {"measured": measured, "count_bound": bound,
               "scaled_to_one_million": scaled.to_dict(orient="records")}
    return Result(THREADS_EXPERIMENT, p, summary,
                  {"measured": pd.DataFrame([measured]), "scaled": scaled}, limit_hit)


# --- S1's program on the peers' runtimes (C10: Rust threads; C11: goroutines) ---------

PEER_EXPERIMENT = "peer_million"  # S1's program (C10, C11)
PEAK_EXPERIMENT = "peer_peak_memory"  # S6's: peak memory with every task asleep
# Peer kinds whose tasks are kernel threads: their count stays under thread_ceiling.
THREAD_KINDS = registry.KERNEL_TASK_KINDS
# Resident need per sleeping task for the memory check (generous), as each runtime's
# registry entry declares it (threadcost.peers).
PEER_NEED_KIB = {name: kind.need_kib for name, kind in registry.KINDS.items()}


def check_peer_tasks(kinds: Any, count: Any, sleep_ms: Any, thread_cap: Any,
                     gate: Any = True) -> dict[str, Any]:
    """What :func:`peer_tasks` refuses, before anything runs (threadcost.paper.prechecks)."""
    return {"kinds": validate.choice_list("kinds", kinds, list(registry.KINDS)),
            "count": validate.integer("count", count, **PEER_COUNT.bounds),
            "sleep_ms": validate.integer("sleep_ms", sleep_ms, **SLEEP_MS.bounds),
            "thread_cap": validate.integer("thread_cap", thread_cap, **THREAD_CAP.bounds),
            "gate": bool(gate)}


def peer_tasks(kinds: Any = ("rust-thread", "tokio-task"), count: Any = PEER_COUNT.default,
               sleep_ms: Any = SLEEP_MS.default, thread_cap: Any = THREAD_CAP.default,
               gate: Any = True,
               experiment: str = PEER_EXPERIMENT) -> Result:
    """S1's program on each peer kind: ``count`` tasks that each sleep ``sleep_ms``
    (``gate``: all asleep at once), timed from outside like ``/usr/bin/time``.

    Thread kinds run at most as many as :func:`thread_ceiling` allows (and
    ``thread_cap``); when that is below ``count``, the measured run is scaled
    to ``count`` and labelled computed. A kind whose toolchain is missing, or
    whose need exceeds half of MemAvailable, reads "not run here" with the reason.
    """
    if experiment not in (PEER_EXPERIMENT, PEAK_EXPERIMENT):
        raise ParameterError("experiment", experiment,
                             f"one of {PEER_EXPERIMENT}, {PEAK_EXPERIMENT}")
    p = check_peer_tasks(kinds, count, sleep_ms, thread_cap, gate)
    rows = []
    for kind in p["kinds"]:
        base = {"kind": kind, "label": registry.KINDS[kind].peer_label, "requested": p["count"]}
        reason = registry.kind_reason(kind)
        n, bound = p["count"], "requested"
        if kind in THREAD_KINDS:
            ceiling, why = thread_ceiling(2048, p["thread_cap"])
            if ceiling < n:
                n, bound = ceiling, why
        need = n * PEER_NEED_KIB.get(kind, 64)
        if reason is None and sysinfo.mem_available_kib() < 2 * need:
            reason = (f"needs about {need / 2**20:,.1f} GiB and runs only with twice that "
                      f"available")
        if reason is not None:
            rows.append({**base, "not_run": reason})
            continue
        out = registry.run_kind(kind, "million", {"count": n, "sleep_ms": p["sleep_ms"],
                                                  "gate": p["gate"]},
                                timeout=120.0 + n * 2e-4 + p["sleep_ms"] / 1000, timed=True)
        d = out.data
        started = int(d.get("started", d["count"]))
        # wait4's ru_maxrss also counts the forked Python parent's pages before exec;
        # the program's own high-water mark after exec (VmHWM) is its peak
        peak_kib = int(d.get("hwm_kib") or out.max_rss_kib or 0)
        scale = p["count"] / max(started, 1)
        rows.append({**base, "measured_count": started, "count_bound": bound,
                     "finished": int(d["finished"]),
                     "alive_at_spawn_end": int(d["alive_at_spawn_end"]),
                     "spawn_s": d["spawn_ns"] / 1e9, "wall_s": (out.wall_ns or 0) / 1e9,
                     "user_s": out.user_s, "sys_s": out.sys_s,
                     "max_rss_kib": peak_kib, "wait4_maxrss_kib": int(out.max_rss_kib or 0),
                     "max_rss_kib_per_task": peak_kib / max(started, 1),
                     "scale": scale,
                     "at_count_label": "measured" if scale == 1 else
                     f"computed (scaled x{scale:,.1f} from {started:,} measured)",
                     "max_rss_kib_at_count": peak_kib * scale,
                     "user_s_at_count": (out.user_s or 0) * scale,
                     "sys_s_at_count": (out.sys_s or 0) * scale,
                     "version": d.get("version") or d.get("go_version"), "not_run": None})
    summary = {"kinds": {r["kind"]: r for r in rows}}
    return Result(experiment, p, summary, {"runs": pd.DataFrame(rows)})
