"""threadcost share: this machine's runs as one archive to send, with nothing personal in it."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from threadcost.commands._options import output, value

if TYPE_CHECKING:
    from threadcost.results import Result

NAME = "share"
HELP = ("write one .tar.gz of a machine's runs (the newest complete run of each experiment, "
        "or the runs named) to send: checksums and the code's commit in its manifest, no "
        "host name, user name or path in it")
SAVES = False


def add_arguments(parser: argparse.ArgumentParser) -> None:
    value(parser, "--machine", None, "machine folder whose runs to share (default: this "
          "machine)")
    value(parser, "--data-dir", None, "data folder holding the machine folder (default: "
          "runs/ of the checkout, or $THREADCOST_DATA_DIR; else the committed data/)")
    value(parser, "--runs", None, "run ids to share, comma-separated (default: the newest "
          "complete run of each experiment)")
    output(parser, "--out", "archive to write (default: build/share/<machine>-<UTC "
          "time>.tar.gz); an existing file is never replaced")


RUNS = "threadcost.commands.runners.share:pack"


def arguments(args: argparse.Namespace) -> dict[str, Any]:
    return {"machine_id": args.machine, "data_dir": args.data_dir, "runs": args.runs,
            "out": args.out}


def format_text(result: Result) -> str:
    s = result.summary
    lines = [f"{len(s['runs'])} runs of {s['machine_id']} in one archive "
             f"({s['bytes'] / 1024:,.0f} KiB):", f"  {s['archive']}"]
    if s["replaced"]:
        lines.append("Replaced so that nothing in it names you: " + "; ".join(s["replaced"])
                     + ".")
    lines.append("To contribute it: attach it to an issue, or run `threadcost import "
                 "<archive>` in a clone and open a pull request (CONTRIBUTING.md).")
    return "\n".join(lines)


def warnings(result: Result) -> list[str]:
    """Runs that could not be read: not shared, one line each."""
    return [f"not shared, unreadable: {s['path']}: {s['reason']}"
            for s in result.summary.get("skipped", [])]
