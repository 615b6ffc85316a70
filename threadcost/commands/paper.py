"""threadcost paper --machine ID: one machine folder's stored runs as a paper, measuring nothing."""

from __future__ import annotations

import argparse

from threadcost.commands._options import output, value
from threadcost.results import Result

NAME = "paper"
HELP = ("render the paper of a machine folder under data/ from its stored runs "
        "(no measuring; `make paper` measures)")
SAVES = False


def add_arguments(parser: argparse.ArgumentParser) -> None:
    value(parser, "--machine", None, "machine folder under the data folder to render "
          "(default: this machine)")
    output(parser, "--out", "output folder for notebooks/ and html/ "
          "(default: build/paper-<machine>)")
    value(parser, "--params", "params/default.yaml",
          "parameter set the notebooks read (what to draw, never what to measure)")


def execute(args: argparse.Namespace) -> Result:
    from threadcost.runsafety import interrupts

    # Ctrl-C or SIGTERM: one line, 130 or 143, within a moment, no traceback from any
    # process (kernels included), no <out>.partial, the previous paper unchanged
    with interrupts.guard(f"threadcost {NAME}", "; the previous paper (if any) is unchanged"):
        return _execute(args)


def _execute(args: argparse.Namespace) -> Result:
    import os
    from pathlib import Path

    from threadcost import paths
    from threadcost.errors import ParameterError, ThreadcostError, disk_errno
    from threadcost.host import machine
    from threadcost.store import datastore

    try:
        from threadcost.paper import build as paper
    except ImportError as exc:  # the [notebooks] extra is not installed
        raise ThreadcostError(f"threadcost paper needs the notebooks extra "
                              f"(pip install 'threadcost[notebooks]'): {exc}") from None

    mid = args.machine or machine.machine_id()
    folder = paths.data_dir_for(mid)  # yours, or the committed reference's
    runs, skipped = datastore.scan(folder, mid)
    if not runs and skipped:  # every run of it unreadable: named, exit 4
        raise datastore.DataError(paper.unreadable_folder(mid, skipped))
    if not runs:
        known = datastore.machines_readable()
        raise ParameterError("--machine", mid, "a machine folder with runs (yours under "
                                               "runs/, or the committed ones under data/): "
                                               f"{', '.join(known) or 'none stored'}")
    out = Path(args.out) if args.out else Path("build") / f"paper-{mid}"
    try:
        index = paper.build(args.params, out.resolve(), machine_id=mid)
    except paper.BuildError as exc:
        raise ParameterError("--machine", mid, str(exc)) from None
    except paper.NotebookFailed as exc:
        err = disk_errno(exc.message)
        if err:  # a full disk or a folder it may not write: exit 4, with what to do
            raise OSError(err, os.strerror(err), f"notebook {exc.notebook}") from None
        raise ThreadcostError(f"notebook {exc.notebook} failed at {exc.cell}: "
                              f"{' '.join(exc.message.split())}") from None
    except SystemExit as exc:  # a parameter file that cannot be read
        raise ParameterError("--params", args.params, str(exc.code)) from None
    return Result(NAME, {"machine": mid, "params": args.params},
                  {"index": str(index), "out": str(out.resolve())})


def format_text(result: Result) -> str:
    return (f"Paper of {result.params['machine']}, drawn from its stored runs "
            f"(works offline):\n  {result.summary['index']}")
