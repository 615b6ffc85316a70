"""threadcost switch: context-switch cost by token ping-pong (claims C01, C02)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from threadcost.commands import _options as opt
from threadcost.textout import table

if TYPE_CHECKING:
    from threadcost.results import Result

NAME = "switch"
HELP = ("ping-pong a token between two threads or processes and time every round trip "
        "(claims C01, C02)")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    opt.choice(parser, "--mechanism", opt.declaration("switch_mechanisms").choices, "pipe",
               "how the token travels",
               source="threadcost.experiments.context_switch.run:MECHANISMS")
    opt.choice(parser, "--placement", opt.PLACEMENTS, "same-cpu",
               "same-cpu: both pinned to one CPU; cross-cpu: two CPUs (needs 2 in the "
               "affinity mask); smt-siblings: two hardware threads of one core; unpinned",
               source=opt.PLACEMENTS_SOURCE)
    opt.switch(parser, "--processes",
               "a forked child process as the partner instead of a thread")
    opt.value(parser, "--working-set-kib", "0",
              "KiB each side writes of its own memory per hop (both sides together must fit "
              "in 80%% of MemAvailable)")
    opt.declared(parser, "--iterations", "switch_iterations", "timed round trips")
    opt.declared(parser, "--warmup", "switch_warmup", "untimed round trips before timing")
    opt.message_bytes(parser, "1", "pipe only: bytes per hop")
    opt.timeout(parser, "10", "a completed round trip")
    opt.switch(parser, "--no-baselines",
               "skip the baselines (timer, empty syscall, lock, hop alone)")


RUNS = "threadcost.experiments.context_switch.run:run"


def arguments(args: argparse.Namespace) -> dict[str, Any]:
    return {"mechanism": args.mechanism, "placement": args.placement,
            "tasks": "processes" if args.processes else "threads",
            "iterations": args.iterations, "warmup": args.warmup,
            "working_set_kib": args.working_set_kib, "message_bytes": args.message_bytes,
            "timeout_s": args.timeout, "baselines": not args.no_baselines}


def _ns(v: float | None) -> str:
    return "-" if v is None or v != v else f"{v:,.0f}"


def format_text(result: Result) -> str:
    s, p = result.summary, result.params
    keys = ("min", "p50", "p90", "p99", "p999", "max", "mean")
    rows = [["round trip (ns)", *(_ns(s["round_trip_ns"][k]) for k in keys)],
            ["per switch (ns)", *(_ns(s["switch_ns"][k]) for k in keys)]]
    for name, d in s["baselines"].items():
        rows.append([f"baseline {name} (ns/op)", *(_ns(d[k]) for k in keys)])
    head = (f"{p['mechanism']} ping-pong, {p['tasks']}, {p['placement']} "
            f"(CPUs requested {s['cpus_requested']}, seen {s['cpus_seen']}), "
            f"working set {p['working_set_kib']} KiB per side, {s['completed']:,} round trips")
    tail = (f"switches per round trip (getrusage, both sides): "
            f"{s['switches_per_round_trip']:.3f}; whole-run mean {_ns(s['whole_run_mean_ns'])} ns")
    return head + "\n" + table(["", *keys], rows) + "\n" + tail
