"""threadcost share: a machine's runs as one archive to send, with nothing personal in it."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from threadcost import paths
from threadcost.commands.share import NAME
from threadcost.errors import ParameterError
from threadcost.host import machine
from threadcost.results import Result
from threadcost.store import archive, datastore


def pack(machine_id: str | None, data_dir: str | None, runs: str | None,
         out: str | None) -> Result:
    """The newest complete run of each experiment of ``machine_id`` (default: this
    machine), or the ``runs`` named (comma-separated ids), packed into ``out``."""
    mid = machine_id or machine.machine_id()
    folder = Path(data_dir) if data_dir else paths.data_dir_for(mid)
    if data_dir and not folder.is_dir():
        raise ParameterError("--data-dir", data_dir, "an existing folder")
    complete, skipped = datastore.scan(folder, mid)
    if not complete:
        known = datastore.machines_with_runs(folder)
        raise ParameterError("--machine", mid, f"a machine folder with complete runs under "
                                               f"{folder.name}/: {', '.join(known) or 'none'}")
    if runs:
        wanted = [r.strip() for r in runs.split(",") if r.strip()]
        by_id = {r.path.name: r for r in complete}
        missing = [r for r in wanted if r not in by_id]
        if missing:
            raise ParameterError("--runs", missing[0], f"a complete run of {mid} (it has "
                                                       f"{len(by_id)}; see {folder / mid})")
        chosen = [by_id[r] for r in dict.fromkeys(wanted)]
    else:
        chosen = archive.newest_runs(complete)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    target = Path(out) if out else paths.build_dir() / "share" / \
        f"{mid}-{stamp}{archive.SUFFIX}"
    packed = archive.pack(chosen, mid, target.resolve())
    return Result(NAME, {"machine": mid, "runs": runs or "newest"},
                  {"archive": str(packed.path), "machine_id": mid,
                   "runs": list(packed.runs), "bytes": packed.bytes,
                   "replaced": list(packed.replaced),
                   "skipped": [s.as_dict() for s in skipped]})
