"""threadcost import ARCHIVE: another machine's runs, checked, added under data/<machine-id>/."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from threadcost.results import Result

NAME = "import"
HELP = ("check an archive of runs (threadcost share) with the untrusted-data rules and add "
        "its runs under data/<machine-id>/; nothing is ever overwritten")
SAVES = False


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("archive", metavar="ARCHIVE",
                        help="the .tar.gz that `threadcost share` wrote")
    parser.add_argument("--data-dir", default=None,
                        help="data folder to add the machine folder to (default: the "
                             "checkout's committed data/, else $THREADCOST_DATA_DIR or "
                             "./data)")


RUNS = "threadcost.commands.runners.import_runs:take_in"


def arguments(args: argparse.Namespace) -> dict[str, Any]:
    return {"archive_path": args.archive, "data_dir": args.data_dir}


def format_text(result: Result) -> str:
    s = result.summary
    if not s["added"]:
        return (f"Nothing new: all {len(s['already_there'])} runs of {s['machine_id']} are "
                f"already in {s['folder']}")
    there = f" ({len(s['already_there'])} were already there)" if s["already_there"] else ""
    return (f"Added {len(s['added'])} runs of {s['machine_id']} to {s['folder']}{there}.\n"
            f"Its paper: threadcost paper --machine {s['machine_id']}; every machine side by "
            "side: make gallery")
