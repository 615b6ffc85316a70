"""threadcost import ARCHIVE: another machine's runs, checked, added to a data folder."""

from __future__ import annotations

from pathlib import Path

from threadcost import paths
from threadcost.commands.import_runs import NAME
from threadcost.results import Result
from threadcost.store import archive


def take_in(archive_path: str, data_dir: str | None) -> Result:
    target = Path(data_dir) if data_dir else (paths.reference_dir() or paths.data_dir())
    done = archive.take_in(archive_path, target)
    return Result(NAME, {"archive": str(archive_path), "data_dir": str(target)},
                  {"machine_id": done.machine_id, "folder": str(done.folder),
                   "added": list(done.added), "already_there": list(done.present)})
