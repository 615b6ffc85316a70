"""Built peers shared by every clone of this user on this machine.

A fresh clone builds each peer from scratch (Rust: the locked crates in release
mode; Go: the standard library into an empty ``build/peers/gocache``; Java:
``javac``), tens of seconds of CPU. The build's outputs (the files its command
names under ``build/peers/<language>/``) are kept in
``~/.cache/threadcost/peers/<language>/<key>/`` (``$XDG_CACHE_HOME`` if set;
``THREADCOST_PEER_CACHE=<folder>`` moves it, ``THREADCOST_PEER_CACHE=off`` turns
it off), and another clone with the same key copies them instead of building.

The key is the peer's own build fingerprint (every source file, Cargo.lock and
go.mod included, and the toolchain's path and version: what decides the build in
the checkout already) with this machine's OS and architecture. An entry is
written whole into a temporary folder and renamed into place, so a reader never
sees half of one; anything unreadable or missing makes the peer build as before.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import platform
import shutil
import tempfile
from pathlib import Path

ENV = "THREADCOST_PEER_CACHE"
FORMAT = "1"  # bump when an entry's layout changes
BUILD = "{build}"  # stands for the build folder in a cached command


def root() -> Path | None:
    """The cache folder, or None when turned off."""
    given = os.environ.get(ENV, "")
    if given.lower() in ("off", "0", "no"):
        return None
    if given:
        return Path(given)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "threadcost" / "peers"


def key(fingerprint: str) -> str:
    u = platform.uname()
    return hashlib.sha256(json.dumps([FORMAT, fingerprint, u.system, u.machine]).encode()
                          ).hexdigest()[:32]


def _entry(language: str, fingerprint: str) -> Path | None:
    base = root()
    return None if base is None else base / language / key(fingerprint)


def _relative(arg: str, build_dir: Path) -> str | None:
    """arg's path inside build_dir (as posix text), or None when it is not one."""
    if not Path(arg).is_absolute():
        return None
    try:
        return Path(arg).resolve().relative_to(build_dir.resolve()).as_posix()
    except ValueError:
        return None


def _copy(src: Path, dst: Path) -> None:
    """Copy a file or a folder to dst, replacing it whole (a temporary name, then a rename)."""
    tmp = dst.with_name(f".{dst.name}.{os.getpid()}.cache-tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    if src.is_dir():
        shutil.copytree(src, tmp, symlinks=True)
        if dst.is_dir():
            shutil.rmtree(dst)
        os.replace(tmp, dst)
    else:
        shutil.copy2(src, tmp)
        os.replace(tmp, dst)


def restore(language: str, fingerprint: str, build_dir: Path) -> list[str] | None:
    """The command of a cached build, its files copied into build_dir; None on a miss."""
    entry = _entry(language, fingerprint)
    if entry is None or not (entry / "command.json").is_file():
        return None
    try:
        saved = json.loads((entry / "command.json").read_text())
        files = [str(f) for f in saved["files"]]
        if not all((entry / "files" / f).exists() for f in files):
            return None
        build_dir.mkdir(parents=True, exist_ok=True)
        for f in files:
            (build_dir / f).parent.mkdir(parents=True, exist_ok=True)
            _copy(entry / "files" / f, build_dir / f)
        command = [str(a).replace(BUILD, str(build_dir)) for a in saved["command"]]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return command if Path(command[0]).exists() else None


def store(language: str, fingerprint: str, build_dir: Path, command: list[str]) -> None:
    """Keep a fresh build's outputs (the paths its command names inside build_dir).
    A cache that cannot be written is left alone: the build itself has succeeded."""
    entry = _entry(language, fingerprint)
    if entry is None or entry.exists():
        return
    files = sorted({r for a in command if (r := _relative(a, build_dir)) not in (None, ".")})
    if not files or not all((build_dir / f).exists() for f in files):
        return  # a command that names nothing of this build folder is not kept
    saved = [BUILD + "/" + r if (r := _relative(a, build_dir)) not in (None, ".") else a
             for a in command]
    with contextlib.suppress(OSError):
        entry.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".incoming-", dir=entry.parent))
        try:
            for f in files:
                src, dst = build_dir / f, tmp / "files" / f
                dst.parent.mkdir(parents=True, exist_ok=True)
                if src.is_dir():
                    shutil.copytree(src, dst, symlinks=True)
                else:
                    shutil.copy2(src, dst)
            (tmp / "command.json").write_text(json.dumps({"command": saved, "files": files}))
            os.rename(tmp, entry)  # whole, or not at all (another clone may have won)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
