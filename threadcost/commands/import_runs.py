"""threadcost import ARCHIVE: another machine's runs, checked, added under data/<machine-id>/."""

from __future__ import annotations

import argparse

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


def execute(args: argparse.Namespace) -> Result:
    from pathlib import Path

    from threadcost import paths
    from threadcost.store import archive

    target = Path(args.data_dir) if args.data_dir else (paths.reference_dir()
                                                        or paths.data_dir())
    done = archive.take_in(args.archive, target)
    return Result(NAME, {"archive": str(args.archive), "data_dir": str(target)},
                  {"machine_id": done.machine_id, "folder": str(done.folder),
                   "added": list(done.added), "already_there": list(done.present)})


def format_text(result: Result) -> str:
    s = result.summary
    if not s["added"]:
        return (f"Nothing new: all {len(s['already_there'])} runs of {s['machine_id']} are "
                f"already in {s['folder']}")
    there = f" ({len(s['already_there'])} were already there)" if s["already_there"] else ""
    return (f"Added {len(s['added'])} runs of {s['machine_id']} to {s['folder']}{there}.\n"
            f"Its paper: threadcost paper --machine {s['machine_id']}; every machine side by "
            "side: make gallery")
