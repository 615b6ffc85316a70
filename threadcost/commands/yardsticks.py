"""threadcost yardsticks: an empty syscall, a lone pipe write+read, a 64 KiB memcpy."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from threadcost.commands import _options as opt
from threadcost.textout import table

if TYPE_CHECKING:
    from threadcost.results import Result

NAME = "yardsticks"
HELP = ("time an empty system call, a lone pipe write+read and a 64 KiB memcpy "
        "(and a pinned pipe switch beside them; claim C01)")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    opt.declared(parser, "--repeats", "switch_echo_repeats",
                 "interleaved repeats of every yardstick (notebook 04: as many as the echo's)")
    opt.value(parser, "--batches", "21", "timed batches per yardstick and repeat, 1 .. 10,000")
    opt.value(parser, "--scale", "1.0", "multiplies the operations per batch, 0.01 .. 100")
    opt.value(parser, "--cpu", None,
              "CPU to pin to (default: the first CPU this process may use)")


RUNS = "threadcost.experiments.context_switch.yardsticks:run"


def arguments(args: argparse.Namespace) -> dict[str, Any]:
    return {"repeats": args.repeats, "batches": args.batches, "scale": args.scale,
            "cpu": args.cpu}


def format_text(result: Result) -> str:
    rows = [[name, f"{d['p50']:,.1f}", f"{d['min']:,.1f}", f"{d['max']:,.1f}", d["n"], d["what"]]
            for name, d in result.summary["yardsticks"].items()]
    return table(["yardstick", "median (ns)", "min (ns)", "max (ns)", "repeats", "one operation"],
                 rows)
