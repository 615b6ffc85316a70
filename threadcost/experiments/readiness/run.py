"""Tokens in flight: K tokens circulate among N tasks joined in a ring of N channels
(``native/readiness.c``). One **event** is one token handled: read from its channel,
its hops counted down and, unless that was its last hop, written on. The cost per event
of a run is its wall time (from the first token written to the last retired) / the
events it handled; the paper reads the median over the repeats.

Models: ``thread`` (N threads blocking in ``read``), ``goroutine`` (N goroutines on the
Go peer, parked and woken by the Go runtime's poller; without Go: not run, with why),
``epoll-lt`` and ``epoll-et`` (one thread, one epoll set, level- or edge-triggered),
``io_uring`` (one thread, an io_uring driven by raw system calls, a read always queued
per task). Placement ``unpinned`` leaves every thread to the scheduler; ``same-cpu``
pins every thread of a run to one CPU. Each repeat runs every model in a rotated order,
each model in a fresh child process (:mod:`threadcost.runsafety.isolate`) that sets the
ring up once, hands every task one token (the warm-up, untimed) and then times every K
in a rotated order. Counted in the same window: system calls (by the loop itself),
context switches (``getrusage``: the kernel's count for the whole process) and events
whose token was written on another CPU than the one reading it (``sched_getcpu`` at both
ends). Every read takes one token and every write puts one, so a complete run has reads
== writes == events. The ``cost`` table is the paper's: per model, placement and K asked
(``tokens``; ``tokens_in_flight`` is the K measured, N when a limit narrowed N below
it), the median over the repeats of the cost per event, with its range and quartiles,
and the medians of the counts per event. """

from __future__ import annotations

from typing import Any

import pandas as pd

from threadcost import peers
from threadcost.errors import KernelError, ParameterError, check_status
from threadcost.experiments.parameters import declared
from threadcost.experiments.user_space_tasks import goroutines
from threadcost.results import Result
from threadcost.runsafety.isolate import run_isolated
from threadcost.settings import validate
from threadcost.settings.validate import one_cpu

EXPERIMENT = "readiness"
TASKS, TOKENS = declared("readiness_tasks"), declared("readiness_tokens")
MODELS = declared("readiness_models").choices
CHANNELS = declared("readiness_channel").choices
PLACEMENTS = declared("readiness_placements").choices
LOOPS = ("epoll-lt", "epoll-et", "io_uring")  # the event loops, against "thread"
EVENTS, REPEATS = declared("readiness_events"), declared("readiness_repeats")
STACK_KIB = declared("readiness_stack_kib")
MIN_HOPS = 2  # hops of every token at least (its first write is the driver's putting it in)
MAX_POINTS = 32  # TC_RD_MAX_POINTS
MAX_EVENTS_PER_RUN = 200_000_000


def check_params(tasks: Any = TASKS.default, tokens: Any = tuple(TOKENS.default),
                 models: Any = MODELS, channel: Any = CHANNELS[0],
                 placements: Any = ("unpinned",), events: Any = EVENTS.default,
                 repeats: Any = REPEATS.default, cpu: Any = "auto",
                 stack_kib: Any = STACK_KIB.default, timeout_s: Any = 10,
                 max_fds: Any = None) -> dict[str, Any]:
    """Validate and normalise the parameters (raises ParameterError naming the
    parameter, its value and what is allowed), before any C runs."""
    p: dict[str, Any] = {
        "tasks": validate.integer("tasks", tasks, **TASKS.bounds),
        "tokens": sorted(validate.integer_list("tokens", tokens, **TOKENS.bounds,
                                               max_items=MAX_POINTS)),
        "models": validate.choice_list("models", models, MODELS),
        "channel": validate.choice("channel", channel, CHANNELS),
        "placements": validate.choice_list("placements", placements, PLACEMENTS),
        "events": validate.integer("events", events, **EVENTS.bounds),
        "repeats": validate.integer("repeats", repeats, **REPEATS.bounds),
        "stack_kib": validate.stack_kib("stack_kib", stack_kib),
        "timeout_s": validate.number("timeout_s", timeout_s, minimum=0.05, maximum=3600),
        "max_fds": None if max_fds is None else validate.integer("max_fds", max_fds,
                                                                 minimum=16,
                                                                 maximum=1 << 20),
    }
    if p["tokens"][-1] > p["tasks"]:
        raise ParameterError("tokens", tokens,
                             f"tokens in flight K from 1 to the tasks N ({p['tasks']:,})")
    total = sum(hops_for(p["events"], k) * k for k in p["tokens"]) * p["repeats"] * len(
        p["models"]) * len(p["placements"])
    if total > MAX_EVENTS_PER_RUN:
        raise ParameterError("events", events,
                             f"at most {MAX_EVENTS_PER_RUN:,} events over the whole run "
                             f"(these parameters ask for {total:,})")
    p["cpu"] = one_cpu("cpu", cpu, allow_none=False)
    validate.memory_fits("tasks", tasks, p["tasks"] * (p["stack_kib"] + 32))
    return p


def hops_for(events: int, tokens: int) -> int:
    """Hops of every token when ``tokens`` share ``events`` (at least MIN_HOPS)."""
    return max(-(-events // tokens), MIN_HOPS)


def _child(model: str, channel: str, tasks: int, cpu: int, tokens: list[int],
           hops: list[int], stack_kib: int, timeout_ms: int, raise_hard: int,
           stall: int = 0, uring_errno: int = 0) -> dict[str, Any]:
    """Child side: one ring, every K of ``tokens`` in order; plain values back."""
    from threadcost.native import ffi, interruptible, lib

    codes = {"thread": lib.TC_RD_THREAD, "epoll-lt": lib.TC_RD_EPOLL_LT,
             "epoll-et": lib.TC_RD_EPOLL_ET, "io_uring": lib.TC_RD_URING}
    cfg = ffi.new("tc_readiness_config *")
    cfg.model, cfg.tasks, cfg.cpu = codes[model], tasks, cpu
    cfg.channel = lib.TC_RD_PIPE if channel == "pipe" else lib.TC_RD_SOCKETPAIR
    cfg.points = len(tokens)
    for i, (k, h) in enumerate(zip(tokens, hops, strict=True)):
        cfg.tokens[i], cfg.hops[i] = k, h
    cfg.stack_kib, cfg.timeout_ms, cfg.raise_hard_nofile = stack_kib, timeout_ms, raise_hard
    cfg.test_stall, cfg.test_uring_errno = stall, uring_errno
    out = ffi.new("tc_readiness_result *")
    status = interruptible(lib.tc_readiness_run, cfg, out)
    if status not in (lib.TC_OK, lib.TC_ELIMIT, lib.TC_ETIMEOUT):
        check_status("tc_readiness_run", status, out.err, f"step {out.where}")
    fields = ("tokens", "hops", "events", "retired", "wall_ns", "cpu_ns", "reads",
              "empty_reads", "writes", "waits", "wait_events", "voluntary", "involuntary",
              "cross_cpu")
    points = [{f: int(getattr(out.point[i], f)) for f in fields}
              for i in range(int(out.completed))]
    return {"status": int(status), "limit": int(out.limit), "err": int(out.err),
            "where": int(out.where), "tasks_ready": int(out.tasks_ready),
            "nofile_hard": int(out.nofile_hard), "timeout_code": int(lib.TC_ETIMEOUT),
            "timed_out": int(out.timed_out), "points": points,
            "uring_code": int(lib.TC_RD_LIMIT_URING)}


LIMITS = {
    1: "open files (RLIMIT_NOFILE or fs.file-max): a task needs 2 fds",
    2: "thread creation refused (pthread_create EAGAIN: cgroup pids.max, kernel.threads-max "
       "or kernel.pid_max)",
    3: "memory (ENOMEM)",
    4: "io_uring refused by this kernel (io_uring_setup failed)",
    5: "a channel's buffer was full (EAGAIN on a write of the event loop)",
}


GO_LIMITS = {"fds": 1, "memory": 3}  # the Go peer's limit words -> the kernel's codes


def _run_go(p: dict[str, Any], tokens: list[int], hops: list[int], placement: str,
            deadline: float) -> dict[str, Any]:
    """The goroutine model: the Go peer's ring (``native/peers/go/readiness.go``), its
    JSON in the C child's shape (no CPU is read per event: cross-CPU counts are NaN)."""
    args = ["readiness", "-tasks", str(p["tasks"]), "-tokens", ",".join(map(str, tokens)),
            "-hops", ",".join(map(str, hops)), "-channel", p["channel"],
            "-timeout-ms", str(int(p["timeout_s"] * 1000))]
    if placement == "same-cpu":
        args += ["-cpu", str(p["cpu"])]
    if p.get("max_fds"):
        args += ["-max-fds", str(p["max_fds"])]
    data = goroutines.run_program(args, timeout=deadline)
    points = [{**pt, "cross_cpu": float("nan")} for pt in data.get("points") or []]
    return {"status": -1 if data.get("timed_out") else 0,
            "limit": GO_LIMITS.get(data.get("limit") or "", 0), "err": int(data["errno"]),
            "tasks_ready": int(data["tasks_ready"]), "points": points,
            "nofile_hard": int(data.get("nofile_hard") or -1), "timeout_code": -1,
            "uring_code": -2}


def _run_tokio(p: dict[str, Any], tokens: list[int], hops: list[int], placement: str,
               deadline: float) -> dict[str, Any]:
    """The tokio-task model: the Rust peer's ring on Tokio's default (multi-thread)
    runtime, socket pairs only (``native/peers/rust/src/readiness.rs``)."""
    import resource


    args = {"tasks": p["tasks"], "tokens": ",".join(map(str, tokens)),
            "hops": ",".join(map(str, hops)), "timeout_ms": int(p["timeout_s"] * 1000)}
    cpu = p["cpu"] if placement == "same-cpu" else None  # max_fds does not reach it
    data = peers.PEERS["rust"].run("readiness", "tokio-mt", args, timeout=deadline,
                                   cpu=cpu).data
    points = [{**pt, "cross_cpu": float("nan")} for pt in data.get("points") or []]
    return {"status": -1 if data.get("timed_out") else 0,
            "limit": GO_LIMITS.get(data.get("limit") or "", 0), "err": int(data["errno"]),
            "tasks_ready": int(data["tasks_ready"]), "points": points,
            "nofile_hard": resource.getrlimit(resource.RLIMIT_NOFILE)[1],  # inherited
            "timeout_code": -1, "uring_code": -2}


def run_one(model: str, p: dict[str, Any], tokens: list[int], placement: str = "unpinned",
            stall: int = 0, uring_errno: int = 0) -> dict[str, Any]:
    """One model in a fresh child process with a deadline (parameters validated);
    ``stall`` and ``uring_errno`` are the kernel's test hooks."""
    import errno
    import resource


    hops = [hops_for(p["events"], k) for k in tokens]
    events = sum(k * h for k, h in zip(tokens, hops, strict=True)) + p["tasks"]
    deadline = 60.0 + p["tasks"] * 2e-3 + events * 50e-6 + p["timeout_s"]
    if model in ("goroutine", "tokio-task"):
        go = model == "goroutine"
        raw = (_run_go if go else _run_tokio)(p, tokens, hops, placement, deadline)
        raw["limit_words"] = _limit_words(raw, p, errno)
        return raw
    fds = p.get("max_fds")
    raw = run_isolated(_child, {
        "model": model, "channel": p["channel"], "tasks": p["tasks"],
        "cpu": p["cpu"] if placement == "same-cpu" else -1,
        "tokens": tokens, "hops": hops, "stack_kib": p["stack_kib"],
        "timeout_ms": int(p["timeout_s"] * 1000), "raise_hard": 0 if fds else 1,
        "stall": stall, "uring_errno": uring_errno},
        timeout=deadline, rlimits={resource.RLIMIT_NOFILE: (fds, fds)} if fds else None)
    raw["limit_words"] = _limit_words(raw, p, errno)
    return raw


def _limit_words(raw: dict[str, Any], p: dict[str, Any], errno: Any) -> str | None:
    if not raw["limit"]:
        return None
    words = LIMITS.get(raw["limit"], "a system limit")
    if raw["limit"] == raw["uring_code"]:
        words = f"{words}: {errno.errorcode.get(raw['err'], raw['err'])}"
        words += _uring_sysctl()
    if raw["limit"] in (1, 2):
        words += (f"; measured with the {raw['tasks_ready']:,} tasks made of "
                  f"{p['tasks']:,} (RLIMIT_NOFILE hard {raw['nofile_hard']:,})")
    return words


def _go_absent() -> str | None:
    """Why the goroutine model cannot run here (no Go, or its peer did not build)."""
    why = goroutines.go_absent_reason()
    if why is None:
        try:
            goroutines.ensure_built()
        except KernelError as exc:
            why = f"the Go peer did not build: {exc}"
    return why


def _rust_absent() -> str | None:
    """Why the tokio-task model cannot run here (no Rust, or its peer did not build)."""
    rust = peers.PEERS["rust"]
    why = rust.absent_reason()
    if why is None:
        try:
            rust.ensure_built()
        except KernelError as exc:
            why = f"the Rust peer did not build: {exc}"
    return why


def _uring_sysctl() -> str:
    try:
        with open("/proc/sys/kernel/io_uring_disabled", encoding="ascii") as f:
            value = f.read().strip()
    except OSError:
        return ""
    return f" (kernel.io_uring_disabled = {value})" if value != "0" else ""


def _row(model: str, p: dict[str, Any], placement: str, repeat: int, tasks: int,
         pt: dict[str, Any], limit: str) -> dict[str, Any]:
    ev = max(pt["events"], 1)
    # system calls the model makes: reads (those that found nothing too), writes and
    # waits; the io_uring loop's reads and writes are queued entries, its calls the enters
    calls = pt["waits"] if model == "io_uring" else (
        pt["reads"] + pt["empty_reads"] + pt["writes"] + pt["waits"])
    return {
        "model": model, "channel": p["channel"], "placement": placement, "repeat": repeat,
        "tasks": tasks, "tokens_asked": min((k for k in p["tokens"] if k >= pt["tokens"]),
                                            default=pt["tokens"]),
        "tokens": pt["tokens"], "hops": pt["hops"], "events": pt["events"],
        "retired": pt["retired"], "wall_ns": pt["wall_ns"], "cpu_ns": pt["cpu_ns"],
        "ns_per_event": pt["wall_ns"] / ev, "cpu_ns_per_event": pt["cpu_ns"] / ev,
        "reads": pt["reads"], "empty_reads": pt["empty_reads"], "writes": pt["writes"],
        "waits": pt["waits"], "wait_events": pt["wait_events"],
        "voluntary_switches": pt["voluntary"], "involuntary_switches": pt["involuntary"],
        "cross_cpu_events": pt["cross_cpu"],
        "syscalls_per_event": calls / ev,
        "switches_per_event": (pt["voluntary"] + pt["involuntary"]) / ev,
        "cross_cpu_per_event": pt["cross_cpu"] / ev,
        "events_per_wait": pt["wait_events"] / pt["waits"] if pt["waits"] else 0.0,
        "limit": limit,
    }


COUNTS = ("syscalls_per_event", "switches_per_event", "cross_cpu_per_event",
          "events_per_wait")


def cost_table(points: pd.DataFrame) -> pd.DataFrame:
    """Per model, placement and K: the cost per event over the repeats (median, range,
    quartiles) and the median of each count per event. The one summary of the points:
    the figure and the findings read it."""
    cols = ["model", "channel", "placement", "tasks", "tokens", "tokens_in_flight", "repeats",
            "ns_per_event_p50", "ns_per_event_min", "ns_per_event_p25", "ns_per_event_p75",
            "ns_per_event_max", "cpu_ns_per_event_p50", *COUNTS]
    rows = []
    for (model, channel, placement, tokens), g in points.groupby(
            ["model", "channel", "placement", "tokens_asked"], sort=False):
        ns = g.ns_per_event
        rows.append({"model": model, "channel": channel, "placement": placement,
                     "tasks": int(g.tasks.min()), "tokens": int(tokens),
                     "tokens_in_flight": int(g.tokens.min()), "repeats": len(g),
                     "ns_per_event_p50": float(ns.median()),
                     "ns_per_event_min": float(ns.min()),
                     "ns_per_event_p25": float(ns.quantile(0.25)),
                     "ns_per_event_p75": float(ns.quantile(0.75)),
                     "ns_per_event_max": float(ns.max()),
                     "cpu_ns_per_event_p50": float(g.cpu_ns_per_event.median()),
                     **{c: float(g[c].median()) for c in COUNTS}})
    return pd.DataFrame(rows, columns=cols).sort_values(
        ["placement", "model", "tokens"], ignore_index=True)


def run(tasks: Any = TASKS.default, tokens: Any = tuple(TOKENS.default),
        models: Any = MODELS, channel: Any = CHANNELS[0], placements: Any = ("unpinned",),
        events: Any = EVENTS.default, repeats: Any = REPEATS.default, cpu: Any = "auto",
        stack_kib: Any = STACK_KIB.default, timeout_s: Any = 10,
        max_fds: Any = None) -> Result:
    """Every model at every K and placement, ``repeats`` times, interleaved: each repeat
    runs every model in a rotated order (each a fresh process), each timing every K in a
    rotated order. ``max_fds`` caps RLIMIT_NOFILE (soft and hard) of every measuring
    process, to show a limit being hit (None: raise the soft limit to the hard one).
    A model io_uring is refused to is "not run" with the reason; a limit on fds or
    threads narrows N and the run goes on, the limit named on its rows."""
    p = check_params(tasks, tokens, models, channel, placements, events, repeats, cpu,
                     stack_kib, timeout_s, max_fds)
    rows: list[dict[str, Any]] = []
    not_run: dict[str, str] = {}
    for model, absent in (("goroutine", _go_absent), ("tokio-task", _rust_absent)):
        if model in p["models"]:
            why = absent()
            if why:
                not_run[model] = why
    limits: list[dict[str, Any]] = []
    ks = p["tokens"]
    for repeat in range(p["repeats"]):
        for placement in p["placements"]:
            m = len(p["models"])
            order = [p["models"][(i + repeat) % m] for i in range(m)]
            k_order = [ks[(i + repeat) % len(ks)] for i in range(len(ks))]
            for model in order:
                if model in not_run:
                    continue
                raw = run_one(model, p, k_order, placement)
                if raw["status"] == raw["timeout_code"]:
                    raise KernelError("tc_readiness_run", raw["status"], 0,
                                      f"{model}: no event handled for {p['timeout_s']:g} s")
                if raw["limit_words"]:
                    if not raw["points"]:
                        not_run[model] = raw["limit_words"]
                    if raw["limit"] != raw["uring_code"]:
                        limits.append({"model": model, "placement": placement,
                                       "repeat": repeat, "limit": raw["limit_words"],
                                       "tasks_ready": raw["tasks_ready"]})
                for pt in raw["points"]:
                    rows.append(_row(model, p, placement, repeat, raw["tasks_ready"], pt,
                                     raw["limit_words"] or ""))
    points = pd.DataFrame(rows, columns=list(
        _row("thread", p, "unpinned", 0, 0, _EMPTY, "").keys()))
    summary = {
        "not_run": not_run, "limits": limits,
        "definitions": {
            "event": "one token handled: read from its channel, its hops counted down, "
                     "written on unless that was its last hop",
            "ns_per_event": "wall time from the first token written to the last retired / "
                            "events handled (tokens x hops)",
            "syscalls_per_event": "system calls the model made (reads, reads that found "
                                  "nothing, writes, epoll_wait; io_uring: io_uring_enter; "
                                  "goroutines: the reads and writes that moved a token, "
                                  "the runtime's own polling not counted) / events",
            "switches_per_event": "voluntary + involuntary context switches of the process "
                                  "(getrusage) / events",
            "cross_cpu_per_event": "events whose token was written on another CPU than the "
                                   "one reading it (sched_getcpu) / events",
            "events_per_wait": "ready fds per epoll_wait, or read completions per "
                               "io_uring_enter",
        },
    }
    return Result(EXPERIMENT, p, summary, {"points": points, "cost": cost_table(points)},
                  limits[0] if limits else None)


_EMPTY = {f: 0 for f in ("tokens", "hops", "events", "retired", "wall_ns", "cpu_ns", "reads",
                          "empty_reads", "writes", "waits", "wait_events", "voluntary",
                          "involuntary", "cross_cpu")}
