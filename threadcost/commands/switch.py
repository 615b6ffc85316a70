"""threadcost switch: context-switch cost by token ping-pong (claims C01, C02)."""

from __future__ import annotations

import argparse

from threadcost.experiments import context_switch
from threadcost.results import Result
from threadcost.textout import table

NAME = "switch"
HELP = ("ping-pong a token between two threads or processes and time every round trip "
        "(claims C01, C02)")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--mechanism", default="pipe",
                        help="how the token travels: pipe (default), condvar, futex, eventfd")
    parser.add_argument("--placement", default="same-cpu",
                        help="same-cpu (default: both pinned to one CPU), cross-cpu (two "
                             "CPUs; needs 2 in the affinity mask), smt-siblings (two "
                             "hardware threads of one core), unpinned")
    parser.add_argument("--processes", action="store_true",
                        help="a forked child process as the partner instead of a thread")
    parser.add_argument("--working-set-kib", default="0",
                        help="KiB each side writes of its own memory per hop (default 0; "
                             "both sides together must fit in 80%% of MemAvailable)")
    parser.add_argument("--iterations", default="20000",
                        help="timed round trips, 1 .. 10,000,000 (default 20,000)")
    parser.add_argument("--warmup", default="2000",
                        help="untimed round trips before timing (default 2,000)")
    parser.add_argument("--message-bytes", default="1",
                        help="pipe only: bytes per hop, 1 .. 4096 (default 1)")
    parser.add_argument("--timeout", default="10",
                        help="watchdog: seconds without a completed round trip before the "
                             "run is stopped with an error (default 10)")
    parser.add_argument("--no-baselines", action="store_true",
                        help="skip the baselines (timer, empty syscall, lock, hop alone)")


def execute(args: argparse.Namespace) -> Result:
    return context_switch.run(
        mechanism=args.mechanism, placement=args.placement,
        tasks="processes" if args.processes else "threads", iterations=args.iterations,
        warmup=args.warmup, working_set_kib=args.working_set_kib,
        message_bytes=args.message_bytes, timeout_s=args.timeout,
        baselines=not args.no_baselines)


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
