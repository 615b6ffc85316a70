"""A run folder read back as untrusted data (every folder under ``data/`` may come from
someone else): ``meta.json`` and each table, every file read as
:func:`~threadcost.results.run_files.read_file` reads one (a regular file of the run
folder, of bounded size), checked before anything of it is used, every refusal a
:class:`~threadcost.errors.DataError` naming the file and why.

- ``meta.json`` (:func:`read_meta`): JSON nested no deeper than any run's, an object
  with the keys and types every run has, this :data:`SCHEMA_VERSION`, marked complete,
  plain names, every number in range (:func:`threadcost.results.table_checks.
  check_meta_numbers`), and every table it lists present;
- each table (:func:`read_table`): against the schema meta.json recorded of it, rows,
  columns, the kind of each column (numbers stay numbers; no cell went missing), and
  every number within what its quantity can be (:mod:`threadcost.results.table_checks`;
  ``declared``: the kinds its family's spec gives its columns).

What was read and checked is kept in this process while the file is unchanged (a page
reads each run many times): only parsing and checks are saved, never a reading.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import stat
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from threadcost.errors import DataError
from threadcost.results import run_files, table_checks
from threadcost.results.layout import META, SCHEMA_VERSION, TABLE_SUFFIXES

if TYPE_CHECKING:  # pandas loads in ~0.3 s: `import threadcost` and the CLI's --help skip it
    import pandas as pd

# The kinds a family's spec declares for a table's columns: (experiment, table) ->
# {column: kind} (threadcost.experiments.specs.column_kinds; empty: judged by name).
ColumnKinds = Callable[[str, str], Mapping[str, str]]

REQUIRED_META = {"schema_version": int, "experiment": str, "run_id": str, "params": dict,
                 "summary": dict, "tables": list, "machine": dict, "complete": bool}
# A file changed less than this before it was read could change again within the same
# clock tick and keep its times: what was read of it is kept with its bytes' digest.
SETTLED_NS = 1_000_000_000
_MEMO_MAX = 2048


def table_path(run_dir: Path, name: str) -> Path:
    """The file holding table ``name``: ``name.csv`` or ``name.csv.gz`` (the
    existing one; ``name.csv`` when neither exists, for the error message). A name
    outside :data:`~threadcost.results.run_files.TABLE_NAME` is refused: it could reach
    outside the run folder."""
    run_files.check_table_name(run_dir / META, name)
    found = [run_dir / f"{name}{suffix}" for suffix in TABLE_SUFFIXES]
    for path in found:  # a regular file first; else what is there, which reading refuses
        if stat.S_ISREG(run_files.lstat_mode(path)):
            return path
    return next((path for path in found if run_files.lstat_mode(path)), found[0])


def read_meta(path: Path) -> dict[str, Any]:
    """The meta.json of run folder ``path``, checked (see the module's text), with every
    table it lists present; raises DataError naming the file."""
    meta_path = path / META
    try:
        folder = os.lstat(path)
    except OSError as exc:
        raise DataError(f"{path}: cannot be read ({run_files.os_reason(exc)})") from exc
    if not stat.S_ISDIR(folder.st_mode):
        raise DataError(f"{path}: {run_files.not_regular(folder.st_mode) or 'a file'}, not a run "
                        "folder (refused)")
    try:
        raw, _ = run_files.read_file(meta_path, run_files.MAX_META_BYTES)
    except FileNotFoundError as exc:
        raise DataError(f"{meta_path}: missing (an incomplete run?)") from exc
    digest = hashlib.blake2b(raw, digest_size=20).digest()
    if digest in _META_VALID:  # this very text was parsed and found well-formed before
        meta: dict[str, Any] = json.loads(raw.decode("utf-8"))  # (a fresh dict: callers
        # may change theirs)
    else:
        meta = _valid_meta(meta_path, raw)
        if len(_META_VALID) >= _MEMO_MAX:
            _META_VALID.pop(next(iter(_META_VALID)))
        _META_VALID[digest] = None
    for name in meta["tables"]:
        if not run_files.lstat_mode(table_path(path, name)):
            raise DataError(f"{path / (name + '.csv')}: listed in meta.json but missing "
                            "(nor is there a .csv.gz)")
    return meta


def read_tables(path: Path, meta: Mapping[str, Any],
                column_kinds: ColumnKinds | None = None) -> dict[str, pd.DataFrame]:
    """Every table of the run folder ``path`` whose checked meta.json is ``meta``, each
    read and checked (:func:`read_table`), in the order meta.json lists them."""
    schemas = meta.get("table_schema", {})
    experiment = str(meta["experiment"])
    return {name: read_table(path, name, schemas.get(name),
                             column_kinds(experiment, name) if column_kinds else {})
            for name in meta["tables"]}


# Digests of meta.json texts that parsed and passed every check of :func:`_valid_meta`:
# each is a function of the text alone, so the same text passes again (a page scans every
# run of a folder dozens of times; the depth scan and the checks, its numbers' ranges
# among them, were a fifth of a stored rendering's CPU). The files next to it are
# checked at every load.
_META_VALID: dict[bytes, None] = {}


def _valid_meta(meta_path: Path, raw: bytes) -> dict[str, Any]:
    """meta.json's text parsed and checked (raises DataError naming the file)."""
    meta = run_files.parse_json(meta_path, raw)
    if not isinstance(meta, dict):
        raise DataError(f"{meta_path}: holds {run_files.json_kind(meta)}, not a JSON object")
    for key, kind in REQUIRED_META.items():
        if key not in meta:
            raise DataError(f"{meta_path}: missing key {key!r}")
        if not isinstance(meta[key], kind) or (kind is int and isinstance(meta[key], bool)):
            raise DataError(f"{meta_path}: {key!r} is {run_files.json_kind(meta[key])}, "
                            f"not {run_files.json_kind(kind())}")
    if meta["schema_version"] != SCHEMA_VERSION:
        raise DataError(f"{meta_path}: schema_version {meta['schema_version']!r}, "
                        f"expected {SCHEMA_VERSION}")
    if meta["complete"] is not True:
        raise DataError(f"{meta_path}: run is not marked complete")
    if not run_files.TABLE_NAME.fullmatch(meta["experiment"]):
        raise DataError(f"{meta_path}: experiment {meta['experiment'][:80]!r} is not a "
                        "plain name (letters, digits and _)")
    if not 0 < len(meta["run_id"]) <= 200:
        raise DataError(f"{meta_path}: run_id of {len(meta['run_id']):,} characters")
    if not all(isinstance(t, str) for t in meta["tables"]):
        raise DataError(f"{meta_path}: 'tables' must list table names")
    for name in meta["tables"]:
        run_files.check_table_name(meta_path, name)
    if len(set(meta["tables"])) != len(meta["tables"]):
        raise DataError(f"{meta_path}: 'tables' names a table twice")
    if not isinstance(meta.get("table_schema", {}), dict):
        raise DataError(f"{meta_path}: 'table_schema' is not an object")
    table_checks.check_meta_numbers(meta_path, meta)  # raises naming the file
    return meta


# Tables read and checked in this process (a page reads each many times), by the file's
# identity and what it was checked against: (frame, None when the file had settled when
# read, else its bytes' digest: it could change again in the same clock tick keeping its
# times, so it is read again and compared; only parsing and checks are saved).
_TABLES: dict[tuple[Any, ...], tuple[pd.DataFrame, bytes | None]] = {}


def read_table(run_dir: Path, name: str, schema: Any,
               declared: Mapping[str, str] | None = None) -> pd.DataFrame:
    """Table ``name`` of a run, checked against its schema (see the module's text;
    ``declared``: the kind of each column its family's spec declares)."""
    path = table_path(run_dir, name)  # refuses a name that is not a plain one
    shape = json.dumps([schema, declared or {}], sort_keys=True, default=str)

    def key_of(st: os.stat_result) -> tuple[Any, ...]:
        return (str(path), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, shape)

    try:  # read and checked already, and unchanged since (a regular file still)
        st = os.lstat(path)
        hit = _TABLES.get(key_of(st)) if stat.S_ISREG(st.st_mode) else None
        if hit is not None and hit[1] is None:
            return hit[0].copy()
    except OSError:
        hit = None  # reading it names the problem
    started = time.time_ns()
    raw, st = run_files.read_file(path, run_files.MAX_TABLE_FILE_BYTES)
    key = key_of(st)
    digest = hashlib.blake2b(raw, digest_size=20).digest()
    known = _TABLES.get(key)
    if known is not None and known[1] == digest:  # the very bytes read and checked before
        return known[0].copy()
    frame = _read_checked_table(run_dir, path, raw, name, schema, declared or {})
    if len(_TABLES) >= _MEMO_MAX:
        _TABLES.pop(next(iter(_TABLES)))
    settled = st.st_ctime_ns < started - SETTLED_NS
    _TABLES[key] = (frame.copy(), None if settled else digest)
    return frame


def _read_checked_table(run_dir: Path, path: Path, raw: bytes, name: str,
                        schema: Any, declared: Mapping[str, str]) -> pd.DataFrame:
    import pandas as pd

    if (isinstance(schema, dict) and schema.get("columns") == [] and schema.get("rows") == 0
            and path.suffix == ".csv" and len(raw) <= 2):
        # a table with no columns, as a skipped run of older code stored it: one newline,
        # which no CSV reader parses (meta.json says so; the run is not damaged)
        return pd.DataFrame()
    text = run_files.csv_text(path, raw)
    try:
        frame = pd.read_csv(io.BytesIO(text))
    except (OSError, ValueError, EOFError, UnicodeDecodeError) as exc:
        raise DataError(f"{path}: cannot read CSV ({run_files.first_line(exc)})") from exc
    table_checks.check_table(path, frame, schema, f"{run_dir / META}: table_schema of {name!r}",
                             declared)
    return frame
