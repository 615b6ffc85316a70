"""A run folder written whole or not at all.

Its files are written into a hidden staging folder beside it,
``.<run>.<host>-<pid>.partial``, each fsynced, ``meta.json`` last; the staging folder
is fsynced, then renamed into place in one step and its parent fsynced: a save killed
midway leaves nothing that looks complete (only the hidden folder, which names its
writer so that the store can tell a dead save from one under way). An existing
folder is never overwritten.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Mapping
from pathlib import Path

PARTIAL = ".partial"  # the end of a staging folder's name


def writer() -> str:
    """Who is saving: ``<host>-<pid>``, in the staging folder's name, so that a save
    whose process is gone (killed mid-save) is known as dead at once, on this host."""
    host = re.sub(r"[^A-Za-z0-9_]", "_", os.uname().nodename)[:64] or "host"
    return f"{host}-{os.getpid()}"


def fsync_write(path: Path, data: bytes) -> None:
    with open(path, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())


def fsync_dir(path: Path) -> None:  # a folder renamed into place, made durable
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_folder(folder: Path, files: Mapping[str, bytes]) -> Path:
    """Write ``files`` (name -> bytes, in the order given) as the new folder ``folder``,
    whole or not at all; raises FileExistsError if ``folder`` exists (it is never
    overwritten). Its parent folder must exist."""
    if folder.exists():
        raise FileExistsError(folder)
    staging = folder.parent / f".{folder.name}.{writer()}{PARTIAL}"
    staging.mkdir()
    try:
        for name, data in files.items():
            fsync_write(staging / name, data)
        fsync_dir(staging)
        if folder.exists():  # made meanwhile by another writer: never overwrite
            raise FileExistsError(folder)
        os.rename(staging, folder)
        fsync_dir(folder.parent)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return folder
