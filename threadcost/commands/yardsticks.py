"""threadcost yardsticks: an empty syscall, a lone pipe write+read, a 64 KiB memcpy."""

from __future__ import annotations

import argparse

from threadcost.results import Result

NAME = "yardsticks"
HELP = ("time an empty system call, a lone pipe write+read and a 64 KiB memcpy "
        "(and a pinned pipe switch beside them; claim C01)")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--repeats", default="5",
                        help="interleaved repeats of every yardstick (1 .. 1000, default 5)")
    parser.add_argument("--batches", default="21",
                        help="timed batches per yardstick and repeat (1 .. 10000, default 21)")
    parser.add_argument("--scale", default="1.0",
                        help="multiplies the operations per batch (0.01 .. 100, default 1)")
    parser.add_argument("--cpu", default=None,
                        help="CPU to pin to (default: the first CPU this process may use)")


def execute(args: argparse.Namespace) -> Result:
    from threadcost.experiments import yardsticks

    return yardsticks.run(repeats=args.repeats, batches=args.batches, scale=args.scale,
                          cpu=args.cpu)


def format_text(result: Result) -> str:
    from threadcost.textout import table

    rows = [[name, f"{d['p50']:,.1f}", f"{d['min']:,.1f}", f"{d['max']:,.1f}", d["n"], d["what"]]
            for name, d in result.summary["yardsticks"].items()]
    return table(["yardstick", "median (ns)", "min (ns)", "max (ns)", "repeats", "one operation"],
                 rows)
