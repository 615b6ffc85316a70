"""Results on disk: ``data/<machine-id>/<run-id>/`` with tidy CSVs and meta.json.

Guarantees:
- a run folder is built under a hidden ``.<run-id>.partial`` name, every file
  fsynced, ``meta.json`` written last, then the folder is renamed into place in
  one step: a run killed midway leaves nothing that looks complete;
- run ids are unique (UTC time + experiment + random suffix) and an existing
  folder is never overwritten;
- ``load_run`` validates what it reads and names the bad file;
- large tables (raw samples: more than ``threadcost.results.GZIP_ABOVE_BYTES`` as
  CSV) are stored gzip-compressed as ``<table>.csv.gz``, which pandas reads as it
  reads a ``.csv``; reading accepts either, so older runs load unchanged.

Across runs and machines: :func:`load_table` gives one long DataFrame of a table
from every run that has it, with ``machine_id``, ``run_id``, ``experiment`` and
``created_utc`` columns; :func:`runs_frame` gives one row per run with its
machine fingerprint flattened into columns.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import secrets
import shutil
import stat
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd

from threadcost import paths
from threadcost.errors import DataError, ParameterError
from threadcost.experiments import specs
from threadcost.host import machine
from threadcost.results import META, SCHEMA_VERSION, Result
from threadcost.store import run_cache, run_files, table_checks
from threadcost.store.run_files import Skipped

# A run folder's files are the Result's stored form (threadcost.results: META and
# SCHEMA_VERSION are its names); the store decides where, writes them and reads them.
TABLE_SUFFIXES = (".csv", ".csv.gz")


# A hidden ``.<run>.partial`` folder older than this was left by a killed save.
STALE_PARTIAL_S = 24 * 3600
REQUIRED_META = {"schema_version": int, "experiment": str, "run_id": str, "params": dict,
                 "summary": dict, "tables": list, "machine": dict, "complete": bool}


@dataclass(frozen=True)
class Run:
    path: Path
    meta: dict[str, Any]

    @property
    def experiment(self) -> str:
        return str(self.meta["experiment"])

    def table(self, name: str) -> pd.DataFrame:
        if name not in self.meta.get("tables", []):
            raise DataError(f"{self.path}: no table {name!r} (has {self.meta.get('tables')})")
        return read_table(self.path, name, self.meta.get("table_schema", {}).get(name),
                          self.experiment)

    def result(self) -> Result:
        """The run read back as the :class:`Result` it was saved from
        (:meth:`Result.from_stored`), every table checked against its stored schema and
        the kinds its family declares, as the views take it."""
        return Result.from_stored(self.meta, {name: self.table(name)
                                              for name in self.meta["tables"]})

    @property
    def commit(self) -> str | None:
        """The commit of the code that measured this run (None when not recorded)."""
        git = (self.meta.get("machine") or {}).get("git") or {}
        return git.get("commit")


class _Remembered(Run):
    """A run read whole before and unchanged since (:mod:`run_cache`): its meta.json is
    copied (a dict of its own) only when read; its experiment and order are known."""

    def __init__(self, path: Path, meta: dict[str, Any] | None = None,
                 seen: run_cache.Seen | None = None) -> None:
        object.__setattr__(self, "path", path)
        object.__setattr__(self, "_seen", seen)
        if meta is not None or seen is None:
            object.__setattr__(self, "_meta", meta or {})

    @property  # type: ignore[override]
    def meta(self) -> dict[str, Any]:
        if "_meta" not in self.__dict__:
            object.__setattr__(self, "_meta", self._seen.fresh_meta())  # type: ignore[union-attr]
        meta: dict[str, Any] = self.__dict__["_meta"]
        return meta

    @property
    def experiment(self) -> str:
        if "_meta" in self.__dict__:
            return str(self.meta["experiment"])
        return self._seen.experiment  # type: ignore[union-attr,no-any-return]


def _order(run: Run) -> tuple[str, str]:  # oldest first: by time stored, then by id
    if isinstance(run, _Remembered) and "_meta" not in run.__dict__:
        return run._seen.order  # type: ignore[union-attr]
    return (str(run.meta.get("created_utc", "")), str(run.meta["run_id"]))


# Tables read and checked in this process (a page reads each many times), by the file's
# identity (run_cache.identity) and schema: (frame, None when the file had settled when
# read, else its bytes' digest: it could change again in the same clock tick keeping its
# times, so it is read again and compared; only parsing and checks are saved).
_TABLES: dict[tuple[Any, ...], tuple[pd.DataFrame, bytes | None]] = {}
_TABLES_MAX = 2048


def read_table(run_dir: Path, name: str, schema: Any,
               experiment: Any = None) -> pd.DataFrame:
    """Table ``name`` of a run, checked against its schema: row count, columns, the
    kind of each column (numbers stay numbers; no cell went missing), and every number
    within what its quantity can be (:mod:`threadcost.store.table_checks`; the kinds the
    family's spec declares for the tables of ``experiment``). The file is read
    as any file of a run is (:func:`read_file`): a regular file of the run folder, of
    bounded size."""
    run_files.check_table_name(run_dir / META, name)
    path = table_path(run_dir, name)
    shape = json.dumps(schema, sort_keys=True, default=str)

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
    declared = specs.column_kinds(experiment, name) if isinstance(experiment, str) else {}
    frame = _read_checked_table(run_dir, path, raw, name, schema, declared)
    if len(_TABLES) >= _TABLES_MAX:
        _TABLES.pop(next(iter(_TABLES)))
    settled = st.st_ctime_ns < started - run_cache.SETTLED_NS
    _TABLES[key] = (frame.copy(), None if settled else digest)
    return frame


def _read_checked_table(run_dir: Path, path: Path, raw: bytes, name: str,
                        schema: Any, declared: dict[str, str]) -> pd.DataFrame:
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


# A build that wants to know which runs its notebooks wrote and read (threadcost.paper.build)
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
    existing one; ``name.csv`` when neither exists, for the error message). A name
    outside :data:`~threadcost.store.run_files.TABLE_NAME` is refused: it could reach outside
    the run folder."""
    run_files.check_table_name(run_dir / META, name)
    found = [run_dir / f"{name}{suffix}" for suffix in TABLE_SUFFIXES]
    for path in found:  # a regular file first; else what is there, which reading refuses
        if stat.S_ISREG(run_files.lstat_mode(path)):
            return path
    return next((path for path in found if run_files.lstat_mode(path)), found[0])


def _fsync_write(path: Path, data: bytes) -> None:
    with open(path, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())


def fsync_dir(path: Path) -> None:  # a run renamed into place, made durable
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def new_run_id(experiment: str) -> str:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    return f"{stamp}-{experiment}-{secrets.token_hex(3)}"


def _refuse_reference(root: Path) -> None:
    """The committed reference (``data/`` of a checkout) is never written by a run: only
    ``make reference`` adds to it (:mod:`threadcost.store.reference`)."""
    ref = paths.reference_dir()
    try:
        inside = ref is not None and root.resolve().is_relative_to(ref.resolve())
    except OSError:
        inside = False
    if inside:
        raise ParameterError("data_dir", str(root), "not the committed reference folder "
                             "(data/), which only `make reference` writes; leave it unset "
                             "to store runs under runs/, or name another folder")


def save_run(result: Result, data_dir: str | Path | None = None,
             fingerprint: dict[str, Any] | None = None, label: str | None = None) -> Path:
    """Write one result as a new run folder (its files: :meth:`Result.stored_files`) and
    return its path.

    ``label`` names the run within its notebook (``threadcost.notebook.stored``), so a
    rendering from stored runs finds it again; it is kept in meta.json."""
    root = Path(data_dir) if data_dir is not None else paths.data_dir()
    _refuse_reference(root)
    fp = fingerprint or machine.fingerprint()
    machine_dir = root / machine.machine_id(fp)
    machine_dir.mkdir(parents=True, exist_ok=True)
    remove_stale_partials(machine_dir)
    run_id = new_run_id(result.experiment)
    final = machine_dir / run_id
    staging = machine_dir / f".{run_id}.{_writer()}.partial"
    staging.mkdir()
    try:
        files = result.stored_files(
            run_id=run_id, machine_id=machine_dir.name,
            created_utc=datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"), machine=fp,
            label=label)
        for name, data in files.items():  # the tables, then meta.json
            _fsync_write(staging / name, data)
        fsync_dir(staging)
        if final.exists():  # practically impossible (random suffix), never overwrite
            raise FileExistsError(final)
        os.rename(staging, final)
        fsync_dir(machine_dir)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    log_run("wrote", final)
    return final


def _writer() -> str:
    """Who is saving: ``<host>-<pid>``, in the staging folder's name, so that a save
    whose process is gone (killed mid-save) is known as dead at once, on this host."""
    host = re.sub(r"[^A-Za-z0-9_]", "_", os.uname().nodename)[:64] or "host"
    return f"{host}-{os.getpid()}"


def _writer_gone(name: str) -> bool:
    """Is the staging folder ``name`` (``.<run>.<host>-<pid>.partial``) one whose writer
    ran on this host and no longer runs? (Older names carry no writer: never.)"""
    host, _, pid = name[1:-len(".partial")].partition(".")[2].rpartition("-")
    if not pid.isdigit() or host != _writer().rpartition("-")[0]:
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except OSError:  # alive, another user's
        return False
    return False


def remove_stale_partials(machine_dir: Path, older_than_s: float = STALE_PARTIAL_S) -> list[Path]:
    """Remove hidden ``.<run>.partial`` folders left by a save that was killed (SIGKILL,
    power loss): at once when its writer was a process of this host that is gone, else
    once older than ``older_than_s`` (a younger one may be a save under way)."""
    removed = []
    now = time.time()
    for entry in machine_dir.glob(".*.partial"):
        try:
            if entry.is_dir() and not entry.is_symlink() and (
                    _writer_gone(entry.name) or now - entry.stat().st_mtime > older_than_s):
                shutil.rmtree(entry)
                removed.append(entry)
        except OSError:
            continue  # another process removed it, or it is not ours to remove
    return removed


def remove_dead_partials(data_dir: str | Path | None = None) -> None:
    """:func:`remove_stale_partials` in every machine folder (a build that was stopped
    killed the kernels that were saving)."""
    for mdir in _subfolders(Path(data_dir) if data_dir is not None else paths.data_dir()):
        if not mdir.is_symlink():
            remove_stale_partials(mdir)


def load_run(path: str | Path) -> Run:
    """Read and validate one run folder (every file of it untrusted: see
    :func:`read_file` and :func:`parse_json`); raises DataError naming the file."""
    path = Path(path)
    started = time.time_ns()
    known = run_cache.lookup(path)
    if known is not None:  # read whole before, and no file of it changed since
        return _Remembered(path, seen=known)
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
        meta = json.loads(raw.decode("utf-8"))  # (a fresh dict: callers may change theirs)
    else:
        meta = _valid_meta(meta_path, raw)
        if len(_META_VALID) >= _TABLES_MAX:
            _META_VALID.pop(next(iter(_META_VALID)))
        _META_VALID[digest] = None
    for name in meta["tables"]:
        if not run_files.lstat_mode(table_path(path, name)):
            raise DataError(f"{path / (name + '.csv')}: listed in meta.json but missing "
                            "(nor is there a .csv.gz)")
    _check_tables(path, meta)
    run_cache.remember(path, meta, started)
    return Run(path=path, meta=meta)


# Digests of meta.json texts that parsed and passed every check of :func:`_valid_meta`:
# each is a function of the text alone, so the same text passes again (a page scans every
# run of a folder dozens of times; the depth scan and the checks were a fifth of a
# stored rendering's CPU). The files next to it are checked at every load.
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
    _check_meta_numbers(meta_path, meta, raw)
    return meta


# Digests of meta.json texts whose numbers were all found in range: the same text is
# the same numbers (every scan reads every run again; checking each number of each
# meta.json was half the CPU of the claims page's "across machines" section).
_META_CLEAN: dict[bytes, None] = {}


def _check_meta_numbers(meta_path: Path, meta: dict[str, Any], raw: bytes) -> None:
    digest = hashlib.blake2b(raw, digest_size=20).digest()
    if digest in _META_CLEAN:
        return
    table_checks.check_meta_numbers(meta_path, meta)  # raises naming the file
    if len(_META_CLEAN) >= _TABLES_MAX:
        _META_CLEAN.pop(next(iter(_META_CLEAN)))
    _META_CLEAN[digest] = None


def _check_tables(path: Path, meta: dict[str, Any]) -> None:
    """Read every table of a run (each file parsed once while unchanged: :func:`read_table`),
    so a damaged table is found when the run is listed, not halfway through a verdict."""
    for name in meta["tables"]:
        read_table(path, name, meta.get("table_schema", {}).get(name), meta.get("experiment"))


def scan(data_dir: str | Path | None = None, machine_id: str | None = None,
         experiment: str | None = None) -> tuple[list[Run], list[Skipped]]:
    """(complete runs oldest first, run folders that could not be read with why).

    Hidden ``.<run>.partial`` folders (a save under way or killed) are neither.
    Without ``data_dir``: one machine's runs from :func:`paths.data_dir_for` (yours if
    you have measured it, else the committed reference's), every machine's from
    yours and the committed folders."""
    if data_dir is None:
        roots = [paths.data_dir_for(machine_id)] if machine_id is not None else \
            paths.data_dirs()
        if len(roots) > 1:
            parts = [scan(r, None, experiment) for r in roots]
            both = [run for part in parts for run in part[0]]
            both.sort(key=_order)
            return both, [s for part in parts for s in part[1]]
        data_dir = roots[0]
    root = Path(data_dir)
    runs: list[Run] = []
    skipped: list[Skipped] = []
    if not root.is_dir():
        return runs, skipped
    for mdir in _subfolders(root):
        if mdir.name.startswith(".") or mdir.name == "published":
            continue
        if machine_id is not None and mdir.name != machine_id:
            continue
        if mdir.is_symlink():
            skipped.append(Skipped(mdir, "a symbolic link, not a machine folder (refused: "
                                         "copy the folder in)"))
            continue
        for rdir in _subfolders(mdir):
            if rdir.name.startswith("."):
                continue
            try:
                run = load_run(rdir)
            except DataError as exc:
                skipped.append(Skipped(rdir, str(exc), run_files.what_it_says(rdir / META)))
                continue
            except (OSError, ValueError, RecursionError, MemoryError) as exc:
                skipped.append(Skipped(rdir, f"cannot be read ({run_files.first_line(exc)})"))
                continue
            if experiment is None or run.experiment == experiment:
                runs.append(run)
    runs.sort(key=_order)
    if experiment is not None:
        skipped = [s for s in skipped if s.experiment in (experiment, "")]
    return runs, skipped


_subfolders = run_cache.subfolders
folder_state = run_cache.folder_state


def list_runs(experiment: str | None = None, data_dir: str | Path | None = None,
              machine_id: str | None = None) -> list[Run]:
    """Complete runs, oldest first. Hidden (partial) folders are left out, and so are
    runs that cannot be read: :func:`skipped_runs` lists those with the reason."""
    return scan(data_dir, machine_id, experiment)[0]


def skipped_runs(data_dir: str | Path | None = None,
                 machine_id: str | None = None) -> list[Skipped]:
    """Run folders that could not be read, with the file and the reason."""
    return scan(data_dir, machine_id)[1]


def machines_with_runs(data_dir: str | Path | None = None) -> list[str]:
    """Machine folders holding at least one run folder (readable or not): a folder
    named as a run id is, or one holding a meta.json. Without ``data_dir``: yours and
    the committed ones."""
    roots = [Path(data_dir)] if data_dir is not None else paths.data_dirs()
    return sorted({m.name for root in roots for m in _subfolders(root)
                   if not m.name.startswith(".") and m.name != "published"
                   and any(_looks_like_run(r) for r in _subfolders(m))})


def machines_readable() -> list[str]:
    """Machine folders (yours and the committed ones) with at least one run that reads
    back: what a reader can render, named when a ``--machine`` is not found. (Each
    folder's runs are read newest first, up to the first that reads back.)"""
    found = set()
    for root in paths.data_dirs():
        for mdir in _subfolders(root):
            if mdir.name.startswith(".") or mdir.name == "published" or mdir.is_symlink():
                continue
            for rdir in reversed(_subfolders(mdir)):
                if rdir.name.startswith("."):
                    continue
                try:
                    load_run(rdir)
                except (DataError, OSError, ValueError, RecursionError, MemoryError):
                    continue
                found.add(mdir.name)
                break
    return sorted(found)


RUN_ID_PATTERN = re.compile(r"\d{8}T\d{6}Z-.+-[0-9a-f]{6}")


def _looks_like_run(folder: Path) -> bool:
    if folder.name.startswith("."):
        return False
    if RUN_ID_PATTERN.fullmatch(folder.name):
        return True
    try:
        return (folder / META).is_file()
    except OSError:
        return False


def skipped_text(skipped: list[Skipped]) -> str:
    """One line per unreadable run: its folder and why (for logs and stderr)."""
    return "\n".join(f"skipped {s.as_dict()['path']}: {s.as_dict()['reason']}"
                     for s in skipped)


def latest_run(experiment: str, data_dir: str | Path | None = None,
               machine_id: str | None = None) -> Run | None:
    runs = list_runs(experiment, data_dir, machine_id)
    return runs[-1] if runs else None
