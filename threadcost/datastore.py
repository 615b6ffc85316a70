"""Results on disk: ``data/<machine-id>/<run-id>/`` with tidy CSVs and meta.json.

Guarantees:
- a run folder is built under a hidden ``.<run-id>.partial`` name, every file
  fsynced, ``meta.json`` written last, then the folder is renamed into place in
  one step: a run killed midway leaves nothing that looks complete;
- run ids are unique (UTC time + experiment + random suffix) and an existing
  folder is never overwritten;
- ``load_run`` validates what it reads and names the bad file;
- large tables (raw samples: more than ``GZIP_ABOVE_BYTES`` as CSV) are stored
  gzip-compressed as ``<table>.csv.gz``, which pandas reads as it reads a
  ``.csv``; reading accepts either, so older runs load unchanged.

Across runs and machines: :func:`load_table` gives one long DataFrame of a table
from every run that has it, with ``machine_id``, ``run_id``, ``experiment`` and
``created_utc`` columns; :func:`runs_frame` gives one row per run with its
machine fingerprint flattened into columns.
"""

from __future__ import annotations

import gzip
import json
import os
import secrets
import shutil
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd

from threadcost import machine, paths
from threadcost.results import Result, _json_safe

SCHEMA_VERSION = 1
META = "meta.json"
# A table whose CSV text is larger than this is stored as <table>.csv.gz.
GZIP_ABOVE_BYTES = 256 * 1024
TABLE_SUFFIXES = (".csv", ".csv.gz")


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
        path = table_path(self.path, name)
        if name not in self.meta.get("tables", []):
            raise DataError(f"{self.path}: no table {name!r} (has {self.meta.get('tables')})")
        try:
            frame = pd.read_csv(path)
        except (OSError, ValueError, EOFError) as exc:  # EOFError: a truncated .gz
            raise DataError(f"{path}: cannot read CSV: {exc}") from exc
        schema = self.meta.get("table_schema", {}).get(name)
        if schema is not None:  # runs saved before table_schema existed have none
            columns = [str(c) for c in frame.columns]
            if columns != schema["columns"] or len(frame) != schema["rows"]:
                raise DataError(f"{path}: {len(frame)} rows, columns {columns}; meta.json "
                                f"says {schema['rows']} rows, columns {schema['columns']} "
                                "(truncated or edited?)")
        return frame

    def result(self) -> Result:
        """The run read back as the :class:`Result` it was saved from: the same
        experiment, parameters, summary, tables and limit, as the views take it."""
        return Result(experiment=self.experiment, params=dict(self.meta["params"]),
                      summary=self.meta["summary"],
                      tables={name: self.table(name) for name in self.meta["tables"]},
                      limit_hit=self.meta.get("limit_hit"))

    @property
    def commit(self) -> str | None:
        """The commit of the code that measured this run (None when not recorded)."""
        git = (self.meta.get("machine") or {}).get("git") or {}
        return git.get("commit")


# A build that wants to know which runs its notebooks wrote and read (threadcost.paper)
# names a file here; every saved run is appended to it, one "wrote <path>" line each.
RUN_LOG_ENV = "THREADCOST_RUN_LOG"


def log_run(action: str, path: Path) -> None:
    """Append ``<action> <path>`` to the run log of the build, if one is set."""
    target = os.environ.get(RUN_LOG_ENV)
    if target:
        with open(target, "a", encoding="utf-8") as fh:
            fh.write(f"{action} {path}\n")


def table_path(run_dir: Path, name: str) -> Path:
    """The file holding table ``name``: ``name.csv`` or ``name.csv.gz`` (the
    existing one; ``name.csv`` when neither exists, for the error message)."""
    for suffix in TABLE_SUFFIXES:
        path = run_dir / f"{name}{suffix}"
        if path.is_file():
            return path
    return run_dir / f"{name}.csv"


def encode_table(frame: pd.DataFrame) -> tuple[str, bytes]:
    """(file suffix, bytes) of a table: CSV text, gzip-compressed when large.

    The gzip stream carries no time stamp, so the same table gives the same bytes.
    """
    text = frame.to_csv(index=False).encode()
    if len(text) > GZIP_ABOVE_BYTES:
        return ".csv.gz", gzip.compress(text, compresslevel=9, mtime=0)
    return ".csv", text


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
             fingerprint: dict[str, Any] | None = None, label: str | None = None) -> Path:
    """Write one result as a new run folder and return its path.

    ``label`` names the run within its notebook (``threadcost.stored``), so a
    rendering from stored runs finds it again; it is kept in meta.json."""
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
            suffix, data = encode_table(frame)
            _fsync_write(staging / f"{name}{suffix}", data)
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
        if label is not None:
            meta["label"] = label
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
    log_run("wrote", final)
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
        if not table_path(path, name).is_file():
            raise DataError(f"{path / (name + '.csv')}: listed in meta.json but missing "
                            "(nor is there a .csv.gz)")
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
