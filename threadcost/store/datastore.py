"""Results on disk: ``data/<machine-id>/<run-id>/`` with tidy CSVs and meta.json.

A run folder is the stored form of a :class:`~threadcost.results.Result`, written by
:meth:`Result.save <threadcost.results.Result.save>` (whole or not at all: built under a
hidden ``.<run-id>.<writer>.partial`` name, every file fsynced, ``meta.json`` last, then
renamed into place; never overwriting) and read back by the same package's checked
reader (:mod:`threadcost.results.reading`: every file untrusted, the bad one named).
The store decides the rest:
- where a run goes: ``data/<machine-id>/<run-id>/``, never the committed reference;
  run ids are unique (UTC time + experiment + random suffix);
- the columns' kinds each family declares, which reading checks tables against;
- hidden staging folders left by a killed save, removed;
- which runs there are (:func:`scan`), each run folder read whole once while none of
  its files changes (:mod:`threadcost.store.run_cache`).

Across runs and machines (:mod:`threadcost.store.run_tables`): ``load_table`` gives one
long DataFrame of a table from every run that has it, with ``machine_id``, ``run_id``,
``experiment`` and ``created_utc`` columns; ``runs_frame`` gives one row per run with its
machine fingerprint flattened into columns.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
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
from threadcost.results import META, Result, reading, run_files, writing
from threadcost.store import run_cache

# A hidden ``.<run>.partial`` folder older than this was left by a killed save.
STALE_PARTIAL_S = 24 * 3600


@dataclass(frozen=True)
class Skipped:
    """A run folder that could not be read, and why (listed, never dropped silently).

    ``said``: what the run's meta.json says of it when that much parses (its
    ``experiment`` and ``params``), else None."""

    path: Path
    reason: str
    said: dict[str, Any] | None = None

    @property
    def experiment(self) -> str:
        """The experiment its meta.json names, else its folder name's
        (``<UTC time>-<experiment>-<suffix>``)."""
        if self.said is not None:
            return str(self.said["experiment"])
        parts = self.path.name.split("-")
        return "-".join(parts[1:-1]) if len(parts) >= 3 else ""

    @property
    def params(self) -> dict[str, Any] | None:
        """The run's parameters as its meta.json says (None: not known)."""
        return self.said.get("params") if self.said is not None else None

    def as_dict(self) -> dict[str, str]:
        """Printable on one line each (a folder's name may hold a newline)."""
        return {"path": run_files.printable(str(self.path)),
                "experiment": run_files.printable(self.experiment),
                "reason": run_files.printable(self.reason)}


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
        return reading.read_table(self.path, name, self.meta.get("table_schema", {}).get(name),
                                  specs.column_kinds(self.experiment, name))

    def result(self) -> Result:
        """The run read back as the :class:`Result` it was saved from
        (:meth:`Result.load`), every table checked against its stored schema and the
        kinds its family declares, as the views take it."""
        return Result.load(self.path, specs.column_kinds, meta=self.meta)

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


# A build that wants to know which runs its notebooks wrote and read (threadcost.paper.build)
# names a file here; every saved run is appended to it, one "wrote <path>" line each.
RUN_LOG_ENV = "THREADCOST_RUN_LOG"


def log_run(action: str, path: Path) -> None:
    """Append ``<action> <path>`` to the run log of the build, if one is set."""
    target = os.environ.get(RUN_LOG_ENV)
    if target:
        with open(target, "a", encoding="utf-8") as fh:
            fh.write(f"{action} {path}\n")


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
    """Write one result as a new run folder of its machine's folder under ``data_dir``
    (:meth:`Result.save`) and return its path.

    ``label`` names the run within its notebook (``threadcost.notebook.stored``), so a
    rendering from stored runs finds it again; it is kept in meta.json."""
    root = Path(data_dir) if data_dir is not None else paths.data_dir()
    _refuse_reference(root)
    fp = fingerprint or machine.fingerprint()
    machine_dir = root / machine.machine_id(fp)
    machine_dir.mkdir(parents=True, exist_ok=True)
    remove_stale_partials(machine_dir)
    final = result.save(machine_dir / new_run_id(result.experiment), machine=fp, label=label)
    log_run("wrote", final)
    return final


def _writer_gone(name: str) -> bool:
    """Is the staging folder ``name`` (``.<run>.<host>-<pid>.partial``) one whose writer
    ran on this host and no longer runs? (Older names carry no writer: never.)"""
    host, _, pid = name[1:-len(writing.PARTIAL)].partition(".")[2].rpartition("-")
    if not pid.isdigit() or host != writing.writer().rpartition("-")[0]:
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
    for entry in machine_dir.glob(f".*{writing.PARTIAL}"):
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
    :mod:`threadcost.results.reading`); raises DataError naming the file."""
    path = Path(path)
    started = time.time_ns()
    known = run_cache.lookup(path)
    if known is not None:  # read whole before, and no file of it changed since
        return _Remembered(path, seen=known)
    meta = reading.read_meta(path)
    reading.read_tables(path, meta, specs.column_kinds)  # a damaged table is found when
    # the run is listed, not halfway through a verdict
    run_cache.remember(path, meta, started)
    return Run(path=path, meta=meta)


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
