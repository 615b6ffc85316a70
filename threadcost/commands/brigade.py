"""threadcost brigade: switches driven by I/O readiness, a bucket brigade over pipes."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from threadcost.commands import _options as opt
from threadcost.textout import table

if TYPE_CHECKING:
    from threadcost.results import Result

NAME = "brigade"
HELP = ("pass a byte along N tasks joined by N+1 pipes (threads, an epoll loop, one thread, "
        "goroutines) and time each hop (claims C18-C23)")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    opt.declared(parser, "--tasks", "brigade_tasks",
                 "brigade sizes, a comma list (a task needs 2 fds)")
    kinds = opt.declaration("brigade_kinds").choices
    opt.choice(parser, "--kinds", kinds, ",".join(kinds),
               "what passes the byte (one-thread is the baseline of the net cost)",
               source="threadcost.experiments.brigade.run:KINDS", several=True)
    places = opt.declaration("brigade_placements").choices
    opt.choice(parser, "--placement", places, ",".join(places),
               "same-cpu: every thread on one CPU (Go with GOMAXPROCS=1); unpinned",
               source="threadcost.experiments.brigade.run:PLACEMENTS", several=True)
    opt.declared(parser, "--iterations", "brigade_iterations", "timed trips per run")
    opt.declared(parser, "--warmup", "brigade_warmup", "untimed trips before timing")
    opt.declared(parser, "--repeats", "brigade_repeats",
                 "independent runs of each condition, interleaved")
    opt.value(parser, "--cpu", "auto", "the CPU of same-cpu runs ('auto': the first usable)")
    opt.declared(parser, "--stack-kib", "brigade_stack_kib",
                 "stack of each task thread (0: system default)")
    opt.timeout(parser, "10", "a completed trip")
    opt.value(parser, "--max-fds", None,
              "cap RLIMIT_NOFILE (soft and hard) of the measuring processes at this many fds, "
              "to see a limit stop a run (default: raise the soft limit to the hard one)")
    opt.switch(parser, "--progress", "one line per run on stderr")


RUNS = "threadcost.experiments.brigade.run:run"


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def arguments(args: argparse.Namespace) -> dict[str, Any]:
    return {"tasks": args.tasks, "kinds": args.kinds, "placement": args.placement,
            "iterations": args.iterations, "warmup": args.warmup, "repeats": args.repeats,
            "cpu": args.cpu, "stack_kib": args.stack_kib, "timeout_s": args.timeout,
            "max_fds": args.max_fds, "progress": _say if args.progress else None}


def _num(value: float | None, digits: int = 0) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def format_text(result: Result) -> str:
    rows = []
    for r in result.summary["results"]:
        d = r.get("per_hop_ns") or {}
        note = r.get("not_run") or (r["limit_hit"] or {}).get("limit", "")
        rows.append([r["kind"], f"{r['tasks']:,}", r["placement"],
                     *(_num(d.get(k)) for k in ("min", "p50", "p99", "mean")),
                     _num(r["net_per_hop_ns"]), _num(r["rss_per_task_kib"], 1),
                     _num(r.get("kernel_per_task_kib"), 1), note])
    head = ("per hop = (trip - one clock read) / (tasks + 1), ns; net = p50 minus the "
            "one-thread p50 at the same tasks and placement; memory per task = slope over "
            "tasks\n")
    return head + table(["kind", "tasks", "placement", "min ns", "p50 ns", "p99 ns", "mean ns",
                         "net ns", "RSS KiB/task", "kernel KiB/task", "note"], rows)
