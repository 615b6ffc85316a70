"""threadcost claims: the verdict on every published claim, from one machine's runs or
from every machine's."""

from __future__ import annotations

import sys
from pathlib import Path

from threadcost import claims, paths
from threadcost.claims import machines
from threadcost.commands.claims import ClaimsResult
from threadcost.errors import ParameterError
from threadcost.host import machine
from threadcost.measured.runs import Runs
from threadcost.results import Result
from threadcost.store import datastore


def judge(machine_id: str | None, data_dir: str | None, all_machines: bool,
          as_json: bool) -> Result:
    """The verdicts on the runs of ``machine_id`` (default: this machine) under
    ``data_dir``, or on every machine folder of it (``all_machines``)."""
    if data_dir:
        folder = Path(data_dir)
    elif all_machines:  # the committed folders (where all are)
        folder = paths.reference_dir() or paths.data_dir()
    else:  # yours when you measured that machine, else the committed reference's
        folder = paths.data_dir_for(machine_id or machine.machine_id())
        if not folder.is_dir():  # nothing measured here yet: the committed folders
            folder = paths.reference_dir() or folder
    if not folder.is_dir():
        raise ParameterError("--data-dir", str(folder), "an existing folder")
    present = datastore.machines_with_runs(folder)
    if not present:
        raise ParameterError("--data-dir", str(folder),
                             "a data folder holding <machine-id>/<run-id>/ folders; this "
                             "one has none")
    if machine_id is not None and machine_id not in present:
        raise ParameterError("--machine", machine_id,
                             f"a machine folder with runs under {folder.name}/: "
                             f"{', '.join(present)}")
    if all_machines:
        return _all_machines(folder, present)
    mid = machine_id or machine.machine_id()
    if machine_id is None and mid not in present:
        raise ParameterError("--machine", None,
                             f"this machine has no folder under {folder.name}/; name "
                             f"one of: {', '.join(present)}")
    verdicts = claims.judge(machine_id, folder)
    rows = [v.as_dict() for v in verdicts]
    refused = list(Runs.load(mid, folder).refused)
    if as_json:  # the JSON is the list of verdicts: say it on stderr
        for line in refused:
            print(f"threadcost claims: {line}", file=sys.stderr)
    skipped = [s.as_dict() for s in datastore.skipped_runs(folder, mid)]
    rows = [{**row, "skipped": skipped} for row in rows]
    return ClaimsResult("claims", {"machine": machine_id, "data_dir": str(folder)},
                        {"tally": claims.tally(verdicts),
                         "readings": claims.tally_readings(verdicts),
                         "folklore": claims.folklore(verdicts),
                         "not_pooled": refused, "skipped": skipped}, verdicts=rows)


def _all_machines(folder: Path, present: list[str]) -> Result:
    """Every machine folder judged on its own runs: one row per claim."""
    mids, rows = machines.across(folder, present)
    return ClaimsResult("claims", {"all_machines": True, "data_dir": str(folder)},
                        {"machines": mids, "across": True},
                        verdicts=[r.as_dict() for r in rows])
