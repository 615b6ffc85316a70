"""threadcost limits: every limit on the number of threads, and which binds first (C08)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from threadcost.commands import _options as opt
from threadcost.textout import table

if TYPE_CHECKING:
    from threadcost.results import Result

NAME = "limits"
HELP = "show every limit on the number of threads one process can start, and which binds first"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    opt.declared(parser, "--stack-kib", "memory_stack_kib_requested",
                 "stack size to compute the limits for (0 = the system default)")
    opt.declared(parser, "--touch-kib", "memory_touch_kib",
                 "KiB of stack each thread would write (adds to its memory cost)")
    opt.value(parser, "--target-threads", "1000000",
              "thread count to advise sysctls for (claim C10)")


RUNS = "threadcost.experiments.thread_memory.limits:run"


def arguments(args: argparse.Namespace) -> dict[str, Any]:
    return {"stack_kib": args.stack_kib, "touch_kib": args.touch_kib,
            "target_threads": args.target_threads}


def _fmt(value: object) -> str:
    if value is None or value != value:  # None or NaN
        return "-"
    return f"{value:,}" if isinstance(value, int) else str(value)


def format_text(result: Result) -> str:
    s = result.summary
    rows = [[r["limit"], _fmt(r["value"]), r["unit"],
             _fmt(None if r["threads_allowed"] is None else int(r["threads_allowed"])),
             "yes" if r["applies"] else "no", r["note"]] for r in s["limits"]]
    out = table(["limit", "value", "unit", "threads allowed", "applies", "note"], rows)
    b = s["binding"]
    if b:
        out += (f"\n\nbinds first with {s['stack_kib']:,} KiB stacks: {b['limit']} "
                f"(about {b['threads_allowed']:,} more threads)")
    need = [a for a in s["advice"] if a["command"]]
    target = result.params["target_threads"]
    if need:
        out += f"\nfor {target:,} threads: " + "; ".join(a["command"] for a in need)
    return out
