"""The value every experiment returns, and its stored form: a run folder holding it,
which :meth:`Result.save` writes whole or not at all (:mod:`.writing`) and
:meth:`Result.load` reads back checked, as untrusted data (:mod:`.reading`, with
:mod:`.run_files` and :mod:`.table_checks`). Where a run folder goes, and which are
listed, is the store's (:mod:`threadcost.store.datastore`)."""

from __future__ import annotations

import gzip
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from threadcost.results import writing
from threadcost.results.layout import GZIP_ABOVE_BYTES, META, SCHEMA_VERSION

if TYPE_CHECKING:  # pandas loads in ~0.3 s: `import threadcost` and the CLI's --help skip it
    import pandas as pd

    from threadcost.results.reading import ColumnKinds

__all__ = ["GZIP_ABOVE_BYTES", "META", "SCHEMA_VERSION", "Result"]


@dataclass
class Result:
    """What one experiment measured.

    ``summary`` is JSON-ready and is what ``threadcost <experiment> --json``
    prints; ``tables`` are tidy DataFrames, one CSV each when the run is saved;
    ``limit_hit`` is set when a system limit cut the run short (the rest is the
    partial result) and names the limit and errno.
    """

    experiment: str
    params: dict[str, Any]
    summary: dict[str, Any]
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    limit_hit: dict[str, Any] | None = None

    @property
    def partial(self) -> bool:
        return self.limit_hit is not None

    def as_json_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"experiment": self.experiment, "params": self.params}
        out.update(self.summary)
        out["limit_hit"] = self.limit_hit
        return _json_safe(out)

    def to_json(self, indent: int | None = None) -> str:
        return json.dumps(self.as_json_dict(), indent=indent, allow_nan=False)

    # ------------------------------------------------------------ stored form

    def table_schema(self) -> dict[str, dict[str, Any]]:
        """What meta.json records of each table, and reading it back checks: its rows,
        its columns, each column's kind (number, bool or text), the missing cells of
        each number column and its infinite ones (listed only where there are some)."""
        return {name: _schema(frame) for name, frame in self.tables.items()}

    def stored_files(self, *, run_id: str, machine_id: str, created_utc: str,
                     machine: dict[str, Any], label: str | None = None) -> dict[str, bytes]:
        """Every file of a run folder holding this result, in the order they are
        written: each table (``<name>.csv``, or ``<name>.csv.gz`` when its CSV text is
        larger than ``GZIP_ABOVE_BYTES``), then ``meta.json`` (its keys in this order;
        ``label`` names the run within its notebook)."""
        files = {}
        for name, frame in self.tables.items():
            suffix, data = _encoded(frame)
            files[f"{name}{suffix}"] = data
        meta: dict[str, Any] = {
            "schema_version": SCHEMA_VERSION,
            "experiment": self.experiment,
            "run_id": run_id,
            "machine_id": machine_id,
            "created_utc": created_utc,
            "params": self.params,
            "summary": self.summary,
            "limit_hit": self.limit_hit,
            "tables": list(self.tables),
            "table_schema": self.table_schema(),
            "machine": machine,
            "complete": True,
        }
        if label is not None:
            meta["label"] = label
        files[META] = json.dumps(_json_safe(meta), indent=2, allow_nan=False).encode()
        return files

    def save(self, folder: str | Path, *, machine: dict[str, Any],
             created_utc: str | None = None, label: str | None = None) -> Path:
        """Write this result as the new run folder ``folder`` (its files:
        :meth:`stored_files`; its run id is the folder's name, its machine id its
        parent's, whose folders are made if missing), whole or not at all: staged,
        fsynced, renamed into place (:func:`.writing.write_folder`). An existing folder
        is never overwritten (FileExistsError). ``machine``: the machine's fingerprint;
        ``created_utc``: when (default now); returns the folder."""
        folder = Path(folder)
        files = self.stored_files(
            run_id=folder.name, machine_id=folder.parent.name, machine=machine, label=label,
            created_utc=created_utc or datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"))
        folder.parent.mkdir(parents=True, exist_ok=True)
        return writing.write_folder(folder, files)

    @classmethod
    def load(cls, folder: str | Path, column_kinds: ColumnKinds | None = None, *,
             meta: Mapping[str, Any] | None = None) -> Result:
        """The result the run folder ``folder`` holds, every file of it read as
        untrusted data and checked (:mod:`.reading`: meta.json, then each table
        against the schema stored of it and ``column_kinds``, the kinds a family's
        spec declares for a table's columns); raises DataError naming the file. The
        same experiment, parameters, summary, tables and limit as the result saved.
        ``meta``: the folder's meta.json as :func:`.reading.read_meta` gave it, when
        the caller holds it already (it is not read again)."""
        from threadcost.results import reading  # loads pandas, which `import threadcost` skips

        folder = Path(folder)
        if meta is None:
            meta = reading.read_meta(folder)
        tables = reading.read_tables(folder, meta, column_kinds)
        return cls(experiment=str(meta["experiment"]), params=dict(meta["params"]),
                   summary=meta["summary"], tables=tables, limit_hit=meta.get("limit_hit"))


def _encoded(frame: pd.DataFrame) -> tuple[str, bytes]:
    """(file suffix, bytes) of a table: CSV text, gzip-compressed when large. The gzip
    stream carries no time stamp, so the same table gives the same bytes."""
    text = frame.to_csv(index=False).encode()
    if len(text) > GZIP_ABOVE_BYTES:
        return ".csv.gz", gzip.compress(text, compresslevel=9, mtime=0)
    return ".csv", text


def _schema(frame: pd.DataFrame) -> dict[str, Any]:
    kinds = {str(c): _kind(frame[c]) for c in frame.columns}
    numbers = [c for c in frame.columns if kinds[str(c)] == "number"]
    return {"rows": len(frame),
            "columns": [str(c) for c in frame.columns],
            "kinds": kinds,
            "missing": {str(c): int(frame[c].isna().sum()) for c in numbers},
            "infinite": {str(c): n for c in numbers if (n := _infinite(frame[c]))}}


def _kind(column: pd.Series) -> str:
    import pandas as pd

    if pd.api.types.is_bool_dtype(column):
        return "bool"
    if pd.api.types.is_numeric_dtype(column):
        return "number"
    return "text"


def _infinite(column: pd.Series) -> int:
    """How many cells of a number column are infinite (recorded only when some are)."""
    import numpy as np

    return int(np.isinf(column.to_numpy(dtype=float)).sum())


def _json_safe(value: Any) -> Any:
    """Replace NaN/inf by None and numpy scalars by Python ones, recursively."""
    if isinstance(value, dict):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_safe(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, str | bytes):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value
