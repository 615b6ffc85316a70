"""threadcost process-memory: what an idle forked process holds, user and kernel side."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from threadcost.commands import _options as opt
from threadcost.experiments.thread_memory.spec import PROCESS_SERIES
from threadcost.textout import table

if TYPE_CHECKING:
    from threadcost.results import Result

NAME = "process-memory"
HELP = ("memory per idle forked process: USS, PSS, page tables, kernel stack and slab, "
        "by slope over child counts")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    opt.declared(parser, "--counts", "memory_process_counts",
                 "comma-separated numbers of idle children per run")
    opt.declared(parser, "--touch-kib", "memory_process_touch_kib",
                 "KiB of fresh memory each child writes before sleeping")
    opt.declared(parser, "--repeats", "memory_process_repeats", "runs per count")


RUNS = "threadcost.experiments.thread_memory.process_memory:run"


def arguments(args: argparse.Namespace) -> dict[str, Any]:
    return {"counts": args.counts, "touch_kib": args.touch_kib, "repeats": args.repeats}


def format_text(result: Result) -> str:
    rows = []
    for name, f in result.summary["fits"].items():
        ci = ("-" if f.get("ci95_low") is None
              else f"{f['ci95_low']:,.1f} to {f['ci95_high']:,.1f}")
        r2 = "-" if f.get("r2") is None else f"{f['r2']:.4f}"
        rows.append([PROCESS_SERIES[name], f"{f['per_process_kib']:,.1f}", ci, r2])
    return table(["counter", "KiB per idle process", "95% interval", "R²"], rows)
