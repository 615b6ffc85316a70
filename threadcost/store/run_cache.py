"""Run folders read whole in this process, remembered while none of their files changes.

A page scans the same machine folder hundreds of times (every finding, claim and machine
column lists its runs): each run folder is read, parsed and checked once
(:func:`threadcost.store.datastore.load_run`), then known by the identity of its files.

An entry stands while every file a run is read from (the folder, ``meta.json``, each
table's ``.csv`` and ``.csv.gz``) has the identity it had when read: device, inode, type,
size, modification and change times. The change time moves at every write, rename,
permission or time change and cannot be set back, so any change to a file is seen. A
file changed less than :data:`SETTLED_NS` before it was read could change again within
the same clock tick and keep its times: such a run is not remembered, only read (a run
just saved is read afresh for a second).
"""

from __future__ import annotations

import os
import pickle
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from threadcost import paths
from threadcost.results.layout import META, TABLE_SUFFIXES
from threadcost.results.reading import SETTLED_NS

MAX_RUNS = 4096

Identity = tuple[int, ...] | None


@dataclass(frozen=True)
class Seen:
    files: tuple[Identity, ...]
    tables: tuple[str, ...]
    meta: bytes  # meta.json as parsed, pickled: each reader gets a fresh dict
    experiment: str
    order: tuple[str, str]  # (created_utc, run_id): the order runs are listed in

    def fresh_meta(self) -> dict[str, Any]:
        meta: dict[str, Any] = pickle.loads(self.meta)
        return meta


_READ: dict[str, Seen] = {}


def identity(path: str) -> Identity:
    """(type, device, inode, size, modification time, change time) of ``path``, not
    following a link; None when it is not there."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return (st.st_mode, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def settled(found: Identity, started_ns: int) -> bool:
    """Was this file last changed at least SETTLED_NS before ``started_ns``?"""
    return found is not None and found[5] < started_ns - SETTLED_NS


def files(run_dir: Path, tables: tuple[str, ...] | list[str]) -> tuple[Identity, ...]:
    """The identity of each file a run is read from (None: not there)."""
    base = str(run_dir)
    found = [identity(base), identity(f"{base}/{META}")]
    for name in tables:
        found += [identity(f"{base}/{name}{suffix}") for suffix in TABLE_SUFFIXES]
    return tuple(found)


def lookup(run_dir: Path) -> Seen | None:
    """What was read of a run read whole before and unchanged since, else None."""
    seen = _READ.get(str(run_dir))
    if seen is None or files(run_dir, seen.tables) != seen.files:
        return None
    return seen


def remember(run_dir: Path, meta: dict[str, Any], started_ns: int) -> None:
    """Keep a run read whole (its reading began at ``started_ns``) if every file of it
    had settled by then."""
    tables = tuple(meta["tables"])
    found = files(run_dir, tables)
    if not all(settled(f, started_ns) for f in found[:2]) or any(
            f is not None and not settled(f, started_ns) for f in found[2:]):
        _READ.pop(str(run_dir), None)
        return
    if len(_READ) >= MAX_RUNS:
        _READ.pop(next(iter(_READ)))
    _READ[str(run_dir)] = Seen(found, tables, pickle.dumps(meta, pickle.HIGHEST_PROTOCOL),
                               str(meta["experiment"]),
                               (str(meta.get("created_utc", "")), str(meta["run_id"])))


def state(run_dirs: list[Path]) -> tuple[Any, ...] | None:
    """The identity of every file of these run folders, as a key for what is computed
    from them; None when one of them is not remembered and unchanged (unreadable, or
    written a moment ago): then nothing computed from it should be kept."""
    out = []
    for run_dir in run_dirs:
        seen = _READ.get(str(run_dir))
        if seen is None:
            return None
        found = files(run_dir, seen.tables)
        if found != seen.files:
            return None
        out.append((str(run_dir), found))
    return tuple(out)


def subfolders(folder: Path) -> list[Path]:
    """Sub-folders (and links to folders, which the reader refuses by name)."""
    try:
        return sorted(p for p in folder.iterdir() if p.is_dir())
    except OSError:
        return []


def folder_state(data_dir: str | Path | None = None,
                 machine_id: str | None = None) -> tuple[Any, ...] | None:
    """What :func:`threadcost.store.datastore.scan` reads with these arguments, as a key
    for what is computed from it: the folders scanned and every file of every run in
    them (:func:`state`); None when a run folder there is not one read whole and
    unchanged since, or a machine folder is a link: then nothing computed from them
    should be kept."""
    roots = [Path(data_dir)] if data_dir is not None else (
        [paths.data_dir_for(machine_id)] if machine_id is not None else paths.data_dirs())
    key: list[Any] = []
    for root in roots:
        run_dirs = []
        for mdir in subfolders(root):
            if mdir.name.startswith(".") or mdir.name == "published" or (
                    machine_id is not None and mdir.name != machine_id):
                continue
            if mdir.is_symlink():
                return None
            run_dirs += [r for r in subfolders(mdir) if not r.name.startswith(".")]
        runs = state(run_dirs)
        if runs is None:
            return None
        key.append((str(root.resolve()), runs))
    return tuple(key)


def clear() -> None:
    _READ.clear()
