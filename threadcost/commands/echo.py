"""threadcost echo: pipe echo rate, pinned and unpinned (claim C03)."""

from __future__ import annotations

import argparse

from threadcost.experiments import echo
from threadcost.results import Result
from threadcost.textout import table

NAME = "echo"
HELP = "echo a short message through two pipes and a second thread: iterations/s (claim C03)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--placement", default="same-cpu,unpinned",
                        help="comma-separated: same-cpu, cross-cpu, smt-siblings, unpinned "
                             "(default same-cpu,unpinned)")
    parser.add_argument("--iterations", default="50000",
                        help="echoes per run, 1 .. 10,000,000 (default 50,000)")
    parser.add_argument("--message-bytes", default="16",
                        help="bytes per message, 1 .. 4096 (default 16)")
    parser.add_argument("--repeats", default="5",
                        help="runs per placement, alternating, 1 .. 1000 (default 5)")
    parser.add_argument("--warmup", default="2000", help="untimed echoes per run (default 2,000)")
    parser.add_argument("--timeout", default="10",
                        help="watchdog: seconds without progress before the run is stopped")


def execute(args: argparse.Namespace) -> Result:
    return echo.run(placements=args.placement, iterations=args.iterations,
                    message_bytes=args.message_bytes, repeats=args.repeats,
                    warmup=args.warmup, timeout_s=args.timeout)


def format_text(result: Result) -> str:
    rows = []
    for place, d in result.summary["placements"].items():
        r = d["rate_per_s"]
        rows.append([place, f"{r['p50']:,.0f}", f"{r['min']:,.0f}", f"{r['max']:,.0f}",
                     f"{d['ns_per_iteration_median']:,.0f}",
                     f"{d['switches_per_iteration']:.2f}"])
    return table(["placement", "iterations/s (median)", "slowest run", "fastest run",
                  "ns per iteration", "switches per iteration"], rows)
