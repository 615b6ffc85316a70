"""threadcost paper --machine ID: one machine folder's stored runs as a paper, measuring
nothing."""

from __future__ import annotations

import os
from pathlib import Path

from threadcost import paths
from threadcost.commands.paper import NAME
from threadcost.errors import ParameterError, ThreadcostError, disk_errno
from threadcost.host import machine
from threadcost.paper import build as paper
from threadcost.results import Result
from threadcost.runsafety import interrupts
from threadcost.store import datastore


def render(machine_id: str | None, out: str | None, params: str) -> Result:
    # Ctrl-C or SIGTERM: one line, 130 or 143, within a moment, no traceback from any
    # process (kernels included), no <out>.partial, the previous paper unchanged
    with interrupts.guard(f"threadcost {NAME}", "; the previous paper (if any) is unchanged"):
        return _render(machine_id, out, params)


def _render(machine_id: str | None, out: str | None, params: str) -> Result:
    mid = machine_id or machine.machine_id()
    folder = paths.data_dir_for(mid)  # yours, or the committed reference's
    runs, skipped = datastore.scan(folder, mid)
    if not runs and skipped:  # every run of it unreadable: named, exit 4
        raise datastore.DataError(paper.unreadable_folder(mid, skipped))
    if not runs:
        known = datastore.machines_readable()
        raise ParameterError("--machine", mid, "a machine folder with runs (yours under "
                                               "runs/, or the committed ones under data/): "
                                               f"{', '.join(known) or 'none stored'}")
    target = Path(out) if out else Path("build") / f"paper-{mid}"
    try:
        index = paper.build(params, target.resolve(), machine_id=mid)
    except paper.BuildError as exc:
        raise ParameterError("--machine", mid, str(exc)) from None
    except paper.NotebookFailed as exc:
        err = disk_errno(exc.message)
        if err:  # a full disk or a folder it may not write: exit 4, with what to do
            raise OSError(err, os.strerror(err), f"notebook {exc.notebook}") from None
        raise ThreadcostError(f"notebook {exc.notebook} failed at {exc.cell}: "
                              f"{' '.join(exc.message.split())}") from None
    except SystemExit as exc:  # a parameter file that cannot be read
        raise ParameterError("--params", params, str(exc.code)) from None
    return Result(NAME, {"machine": mid, "params": params},
                  {"index": str(index), "out": str(target.resolve())})
