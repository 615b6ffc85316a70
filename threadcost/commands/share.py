"""threadcost share: this machine's runs as one archive to send, with nothing personal in it."""

from __future__ import annotations

import argparse

from threadcost.commands._options import output, value
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


def execute(args: argparse.Namespace) -> Result:
    from datetime import UTC, datetime
    from pathlib import Path

    from threadcost import paths
    from threadcost.errors import ParameterError
    from threadcost.host import machine
    from threadcost.store import archive, datastore

    mid = args.machine or machine.machine_id()
    folder = Path(args.data_dir) if args.data_dir else paths.data_dir_for(mid)
    if args.data_dir and not folder.is_dir():
        raise ParameterError("--data-dir", args.data_dir, "an existing folder")
    runs, skipped = datastore.scan(folder, mid)
    if not runs:
        known = datastore.machines_with_runs(folder)
        raise ParameterError("--machine", mid, f"a machine folder with complete runs under "
                                               f"{folder.name}/: {', '.join(known) or 'none'}")
    if args.runs:
        wanted = [r.strip() for r in args.runs.split(",") if r.strip()]
        by_id = {r.path.name: r for r in runs}
        missing = [r for r in wanted if r not in by_id]
        if missing:
            raise ParameterError("--runs", missing[0], f"a complete run of {mid} (it has "
                                                       f"{len(by_id)}; see {folder / mid})")
        chosen = [by_id[r] for r in dict.fromkeys(wanted)]
    else:
        chosen = archive.newest_runs(runs)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    out = Path(args.out) if args.out else paths.build_dir() / "share" / \
        f"{mid}-{stamp}{archive.SUFFIX}"
    packed = archive.pack(chosen, mid, out.resolve())
    return Result(NAME, {"machine": mid, "runs": args.runs or "newest"},
                  {"archive": str(packed.path), "machine_id": mid,
                   "runs": list(packed.runs), "bytes": packed.bytes,
                   "replaced": list(packed.replaced),
                   "skipped": [s.as_dict() for s in skipped]})


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
