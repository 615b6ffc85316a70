"""threadcost memory: what N blocked threads cost in virtual, resident and kernel memory."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from threadcost.commands import _options as opt
from threadcost.experiments.thread_memory.spec import HEADLINE, SERIES
from threadcost.textout import table

if TYPE_CHECKING:
    from threadcost.results import Result

NAME = "memory"
HELP = ("start N threads that sleep, and measure per-thread virtual, resident and "
        "kernel memory (claims C05, C12, C16)")
PROGRESS = True  # execute() passes args.progress on: the experiment draws its own bar


def add_arguments(parser: argparse.ArgumentParser) -> None:
    opt.declared(parser, "--threads", "memory_thread_counts",
                 "thread counts to measure, comma-separated; the per-thread cost is the slope "
                 "across them")
    opt.declared(parser, "--stack-kib", "memory_stack_kib_requested", opt.STACK_KIB_HELP)
    opt.declared(parser, "--touch-kib", "memory_touch_kib",
                 "KiB of its own stack each thread writes (32 KiB below the stack at most)")
    opt.pin(parser, "the threads (round-robin)")
    opt.declared(parser, "--repeats", "memory_repeats",
                 "runs per thread count, each in a fresh process")
    opt.value(parser, "--address-space-mib", None,
              "cap the measuring process's address space (RLIMIT_AS) this many MiB above "
              "its baseline, e.g. 3072 to replay a 32-bit machine (default: no cap)")
    opt.switch(parser, "--pmap", "also read each run's RSS from outside with pmap -x (slower)")
    opt.switch(parser, "--exhaust",
               "go to the system-wide limits themselves (kernel.pid_max, threads-max, "
               "MemAvailable); by default a run stops at a reserve it leaves the rest of the "
               "machine and names the limit that reserve protects (exit 3)")


RUNS = "threadcost.experiments.thread_memory.run:run"


def arguments(args: argparse.Namespace) -> dict[str, Any]:
    return {"thread_counts": args.threads, "stack_kib": args.stack_kib,
            "touch_kib": args.touch_kib, "pin": args.pin, "repeats": args.repeats,
            "address_space_mib": args.address_space_mib, "pmap": args.pmap,
            "progress": args.progress, "exhaust": args.exhaust}


def _num(value: object, digits: int = 2) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def format_text(result: Result) -> str:
    s = result.summary
    fits = s["per_thread"]["fit"]
    rows = []
    for name in HEADLINE:
        if name not in fits:
            continue
        f = fits[name]
        ci = ("-" if f["ci95_low"] is None
              else f"{f['ci95_low']:,.2f} .. {f['ci95_high']:,.2f}")
        rows.append([name.removesuffix("_kib"), _num(f["per_thread"]), ci,
                     _num(f["r2"], 4), SERIES[name]])
    head = (f"{s['runs']} runs, up to {s['max_threads_measured']:,} threads, "
            f"stacks of {s['stack_kib']:,} KiB + {s['guard_kib']} KiB guard\n")
    return head + table(["per thread (KiB)", "value", "95% CI", "R^2", "counter"], rows)
