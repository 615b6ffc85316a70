"""Results on disk: ``data/<machine-id>/<run-id>/`` with tidy CSVs and meta.json.

Guarantees:
- a run folder is built under a hidden ``.<run-id>.partial`` name, every file
  fsynced, ``meta.json`` written last, then the folder is renamed into place in
  one step: a run killed midway leaves nothing that looks complete;
- run ids are unique (UTC time + experiment + random suffix) and an existing
  folder is never overwritten;
- ``load_run`` validates what it reads and names the bad file.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd

from threadcost import machine, paths
from threadcost.results import Result, _json_safe

SCHEMA_VERSION = 1
META = "meta.json"


class DataError(Exception):
    """A data file is missing, unreadable or does not match the schema."""


@dataclass(frozen=True)
class Run:
    path: Path
    meta: dict[str, Any]

    @property
    def experiment(self) -> str:
        return str(self.meta["experiment"])

    def table(self, name: str) -> pd.DataFrame:
        path = self.path / f"{name}.csv"
        if name not in self.meta.get("tables", []):
            raise DataError(f"{self.path}: no table {name!r} (has {self.meta.get('tables')})")
        try:
            frame = pd.read_csv(path)
        except (OSError, ValueError) as exc:
            raise DataError(f"{path}: cannot read CSV: {exc}") from exc
        schema = self.meta.get("table_schema", {}).get(name)
        if schema is not None:  # runs saved before table_schema existed have none
            columns = [str(c) for c in frame.columns]
            if columns != schema["columns"] or len(frame) != schema["rows"]:
                raise DataError(f"{path}: {len(frame)} rows, columns {columns}; meta.json "
                                f"says {schema['rows']} rows, columns {schema['columns']} "
                                "(truncated or edited?)")
        return frame


def _fsync_write(path: Path, data: bytes) -> None:
    with open(path, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def new_run_id(experiment: str) -> str:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    return f"{stamp}-{experiment}-{secrets.token_hex(3)}"


def save_run(result: Result, data_dir: str | Path | None = None,
             fingerprint: dict[str, Any] | None = None) -> Path:
    """Write one result as a new run folder and return its path."""
    root = Path(data_dir) if data_dir is not None else paths.data_dir()
    fp = fingerprint or machine.fingerprint()
    machine_dir = root / machine.machine_id(fp)
    machine_dir.mkdir(parents=True, exist_ok=True)
    run_id = new_run_id(result.experiment)
    final = machine_dir / run_id
    staging = machine_dir / f".{run_id}.partial"
    staging.mkdir()
    try:
        names = []
        for name, frame in result.tables.items():
            _fsync_write(staging / f"{name}.csv", frame.to_csv(index=False).encode())
            names.append(name)
        meta = {
            "schema_version": SCHEMA_VERSION,
            "experiment": result.experiment,
            "run_id": run_id,
            "machine_id": machine_dir.name,
            "created_utc": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "params": result.params,
            "summary": result.summary,
            "limit_hit": result.limit_hit,
            "tables": names,
            "table_schema": {name: {"rows": len(frame),
                                    "columns": [str(c) for c in frame.columns]}
                             for name, frame in result.tables.items()},
            "machine": fp,
            "complete": True,
        }
        text = json.dumps(_json_safe(meta), indent=2, allow_nan=False)
        _fsync_write(staging / META, text.encode())
        _fsync_dir(staging)
        if final.exists():  # practically impossible (random suffix), never overwrite
            raise FileExistsError(final)
        os.rename(staging, final)
        _fsync_dir(machine_dir)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return final


def load_run(path: str | Path) -> Run:
    """Read and validate one run folder."""
    path = Path(path)
    meta_path = path / META
    try:
        meta = json.loads(meta_path.read_text())
    except FileNotFoundError as exc:
        raise DataError(f"{meta_path}: missing (an incomplete run?)") from exc
    except (OSError, ValueError) as exc:
        raise DataError(f"{meta_path}: not valid JSON: {exc}") from exc
    for key in ("schema_version", "experiment", "run_id", "params", "summary", "tables",
                "machine", "complete"):
        if key not in meta:
            raise DataError(f"{meta_path}: missing key {key!r}")
    if meta["schema_version"] != SCHEMA_VERSION:
        raise DataError(f"{meta_path}: schema_version {meta['schema_version']!r}, "
                        f"expected {SCHEMA_VERSION}")
    if meta["complete"] is not True:
        raise DataError(f"{meta_path}: run is not marked complete")
    for name in meta["tables"]:
        if not (path / f"{name}.csv").is_file():
            raise DataError(f"{path / (name + '.csv')}: listed in meta.json but missing")
    return Run(path=path, meta=meta)


def list_runs(experiment: str | None = None, data_dir: str | Path | None = None,
              machine_id: str | None = None) -> list[Run]:
    """Complete runs, oldest first; hidden (partial) and invalid folders are skipped."""
    root = Path(data_dir) if data_dir is not None else paths.data_dir()
    runs: list[Run] = []
    if not root.is_dir():
        return runs
    for mdir in sorted(p for p in root.iterdir() if p.is_dir()):
        if mdir.name.startswith(".") or mdir.name == "published":
            continue
        if machine_id is not None and mdir.name != machine_id:
            continue
        for rdir in sorted(p for p in mdir.iterdir() if p.is_dir()):
            if rdir.name.startswith("."):
                continue
            try:
                run = load_run(rdir)
            except DataError:
                continue
            if experiment is None or run.experiment == experiment:
                runs.append(run)
    runs.sort(key=lambda r: (r.meta.get("created_utc", ""), r.meta["run_id"]))
    return runs


def latest_run(experiment: str, data_dir: str | Path | None = None,
               machine_id: str | None = None) -> Run | None:
    runs = list_runs(experiment, data_dir, machine_id)
    return runs[-1] if runs else None
