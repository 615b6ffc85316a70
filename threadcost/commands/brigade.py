"""threadcost brigade: switches driven by I/O readiness, a bucket brigade over pipes."""

from __future__ import annotations

import argparse
import sys

from threadcost.experiments import brigade
from threadcost.results import Result
from threadcost.textout import table

NAME = "brigade"
HELP = ("pass a byte along N tasks joined by N+1 pipes (threads, an epoll loop, one thread, "
        "goroutines) and time each hop (claims C18-C23)")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--tasks", default="2,10,100,1000",
                        help=f"brigade sizes, a comma list, 1 .. {brigade.MAX_TASKS:,} "
                             "(default 2,10,100,1000; a task needs 2 fds)")
    parser.add_argument("--kinds", default=",".join(brigade.KINDS),
                        help="a comma list of " + ", ".join(brigade.KINDS)
                             + " (default: all; one-thread is the baseline of the net cost)")
    parser.add_argument("--placement", default=",".join(brigade.PLACEMENTS),
                        help="same-cpu (every thread on one CPU; Go with GOMAXPROCS=1), "
                             "unpinned, or both as a comma list (default both)")
    parser.add_argument("--iterations", default="1000",
                        help=f"timed trips per run, 1 .. {brigade.MAX_ITERATIONS:,} "
                             "(default 1,000)")
    parser.add_argument("--warmup", default="100",
                        help="untimed trips before timing (default 100)")
    parser.add_argument("--repeats", default="1",
                        help=f"independent runs of each condition, interleaved, 1 .. "
                             f"{brigade.MAX_REPEATS} (default 1)")
    parser.add_argument("--cpu", default="auto",
                        help="the CPU of same-cpu runs ('auto': the first usable; default)")
    parser.add_argument("--stack-kib", default="256",
                        help="stack of each task thread in KiB (0: system default; "
                             "default 256)")
    parser.add_argument("--timeout", default="10",
                        help="watchdog: seconds without a completed trip before a run is "
                             "stopped with an error (default 10)")
    parser.add_argument("--max-fds", default=None,
                        help="cap RLIMIT_NOFILE (soft and hard) of the measuring processes at "
                             "this many fds, to see a limit stop a run (default: raise the "
                             "soft limit to the hard one)")
    parser.add_argument("--progress", action="store_true",
                        help="one line per run on stderr")


def execute(args: argparse.Namespace) -> Result:
    def say(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    return brigade.run(tasks=args.tasks, kinds=args.kinds, placement=args.placement,
                       iterations=args.iterations, warmup=args.warmup, repeats=args.repeats,
                       cpu=args.cpu, stack_kib=args.stack_kib, timeout_s=args.timeout,
                       max_fds=args.max_fds, progress=say if args.progress else None)


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
