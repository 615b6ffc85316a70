"""threadcost echo: pipe echo rate, pinned and unpinned (claim C03)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from threadcost.commands import _options as opt
from threadcost.textout import table

if TYPE_CHECKING:
    from threadcost.results import Result

NAME = "echo"
HELP = "echo a short message through two pipes and a second thread: iterations/s (claim C03)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    opt.choice(parser, "--placement", opt.PLACEMENTS, "same-cpu,unpinned",
               "where the two threads run", source=opt.PLACEMENTS_SOURCE, several=True)
    opt.declared(parser, "--iterations", "switch_echo_iterations", "echoes per run")
    opt.declared(parser, "--message-bytes", "switch_echo_message_bytes", "bytes per message")
    opt.declared(parser, "--repeats", "switch_echo_repeats", "runs per placement, alternating")
    opt.declared(parser, "--warmup", "switch_warmup", "untimed echoes per run")
    opt.timeout(parser, "10", "progress")


RUNS = "threadcost.experiments.context_switch.echo:run"


def arguments(args: argparse.Namespace) -> dict[str, Any]:
    return {"placements": args.placement, "iterations": args.iterations,
            "message_bytes": args.message_bytes, "repeats": args.repeats,
            "warmup": args.warmup, "timeout_s": args.timeout}


def format_text(result: Result) -> str:
    rows = []
    for place, d in result.summary["placements"].items():
        r = d["rate_per_s"]
        rows.append([place, f"{r['p50']:,.0f}", f"{r['min']:,.0f}", f"{r['max']:,.0f}",
                     f"{d['ns_per_iteration_median']:,.0f}",
                     f"{d['switches_per_iteration']:.2f}"])
    return table(["placement", "iterations/s (median)", "slowest run", "fastest run",
                  "ns per iteration", "switches per iteration"], rows)
