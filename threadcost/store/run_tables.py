"""Tables of many stored runs at once, for analysis: ``load_table`` stacks one table of
every complete run (with columns saying where each row comes from), ``runs_frame`` lists
the runs with their machine fingerprint as columns. Each run is read through
:mod:`threadcost.store.datastore`, with all its checks."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pandas as pd

from threadcost import paths
from threadcost.errors import DataError
from threadcost.store.datastore import Run, list_runs


def _machine_filter(machines: str | Iterable[str] | None) -> set[str] | None:
    if machines is None:
        return None
    return {machines} if isinstance(machines, str) else set(machines)


def _runs(experiment: str | None, machines: str | Iterable[str] | None,
          data_dir: str | Path | None) -> list[Run]:
    wanted = _machine_filter(machines)
    return [r for r in list_runs(experiment, data_dir)
            if wanted is None or r.path.parent.name in wanted]


def load_table(name: str, experiment: str | None = None,
               machines: str | Iterable[str] | None = None,
               data_dir: str | Path | None = None) -> pd.DataFrame:
    """Table ``name`` of every complete run that has it, as one long DataFrame.

    ``experiment`` keeps the runs of one experiment; ``machines`` (a machine id
    or several) the runs of those machines; ``data_dir`` defaults to data/ (or
    ``THREADCOST_DATA_DIR``). The first columns say where each row comes from:
    ``machine_id``, ``run_id``, ``experiment`` and ``created_utc`` (oldest run
    first). A run whose file is damaged raises :class:`DataError` naming it.

    >>> load_table("round_trips", experiment="context_switch")  # doctest: +SKIP
    """
    runs = [r for r in _runs(experiment, machines, data_dir) if name in r.meta["tables"]]
    if not runs:
        have = sorted({t for r in _runs(experiment, machines, data_dir)
                       for t in r.meta["tables"]})
        where = Path(data_dir) if data_dir is not None else paths.data_dir()
        raise DataError(f"no run in {where} has a table {name!r}"
                        + (f" for experiment {experiment!r}" if experiment else "")
                        + (f" on machines {sorted(_machine_filter(machines) or [])}"
                           if machines is not None else "")
                        + f" (tables there: {', '.join(have) or 'none'})")
    frames = []
    for run in runs:
        frame = run.table(name)
        origin = {"machine_id": run.path.parent.name, "run_id": run.meta["run_id"],
                  "experiment": run.experiment, "created_utc": run.meta.get("created_utc")}
        for i, (column, value) in enumerate(origin.items()):
            frame.insert(i, column, value)
        frames.append(frame)
    out = pd.concat(frames, ignore_index=True)
    out["created_utc"] = pd.to_datetime(out["created_utc"], utc=True)
    return out


def runs_frame(experiment: str | None = None, machines: str | Iterable[str] | None = None,
               data_dir: str | Path | None = None) -> pd.DataFrame:
    """One row per complete run: where and when it ran, its tables, and the
    machine fingerprint flattened (``kernel``, ``cpu_model``, ``limits.nofile_soft``,
    ``git.commit`` ...; lists become comma-separated text)."""
    rows = []
    for run in _runs(experiment, machines, data_dir):
        row: dict[str, Any] = {"machine_id": run.path.parent.name,
                               "run_id": run.meta["run_id"], "experiment": run.experiment,
                               "created_utc": run.meta.get("created_utc"),
                               "tables": ",".join(run.meta["tables"]),
                               "partial": run.meta.get("limit_hit") is not None,
                               "path": str(run.path)}
        for key, value in _flatten(run.meta.get("machine", {})).items():
            row.setdefault(key, value)
        rows.append(row)
    frame = pd.DataFrame(rows, columns=None if rows else
                         ["machine_id", "run_id", "experiment", "created_utc", "tables",
                          "partial", "path"])
    frame["created_utc"] = pd.to_datetime(frame["created_utc"], utc=True)
    return frame


def _flatten(value: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, item in value.items():
        name = f"{prefix}{key}"
        if isinstance(item, dict):
            out.update(_flatten(item, f"{name}."))
        elif isinstance(item, list | tuple):
            out[name] = ",".join(str(v) for v in item)
        else:
            out[name] = item
    return out
