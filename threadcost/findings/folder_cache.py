"""What is computed from one machine folder's stored runs, kept across processes.

A paper build judges the same folder in many processes: each page's kernel (its claims
table), page 00 (the headline), page 06 (the claims, and every committed folder across
machines) and the build itself (the abstract); a test suite builds the paper a dozen
times from the same committed folders. :func:`memo` keeps such a result in a file under
the folder named by ``$THREADCOST_CACHE_DIR`` (the paper build sets it to
``build/cache/``; unset or empty: nothing is kept, everything is computed).

A kept result is keyed by

- the machine folder's contents: every byte of every file under it, with the names
  (:func:`folder_digest`; a folder holding a link, a device or more than
  :data:`MAX_BYTES` is never kept), and the folder's resolved path;
- the code that computes it: every source file of the ``threadcost`` package, the
  published tables (``data/published/``) and the versions of Python, numpy, pandas and
  scipy (:func:`code_digest`);
- what is computed (``kind``).

Any change to any of them is another key: the result is computed afresh. A result is
stored only when the folder's contents were the same before and after it was
computed.

The files are JSON, read by a decoder that builds only plain values and the dataclasses
the caller names (never pickle: a file in ``build/`` is not trusted more than any other
file). A file that cannot be read, does not parse or does not decode to its key is
ignored and overwritten; nothing about it reaches a page or stderr. A result is stored
only when it decodes back to an equal value of the same types (:func:`encode` refuses
any other type), so a hit returns exactly what the computation would.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import json
import math
import os
import stat
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path, PurePath
from typing import Any, TypeVar

from threadcost import paths

ENV = "THREADCOST_CACHE_DIR"
FORMAT = 1
MAX_BYTES = 256 * 1024 * 1024  # a folder larger than this is not digested (nor kept)
MAX_FILES = 20_000
MAX_DEPTH = 4
MAX_CACHE_FILE = 64 * 1024 * 1024  # a kept file larger than this is not read
KEEP_FILES = 256  # kept files beyond this many: the oldest are removed

T = TypeVar("T")


def directory() -> Path | None:
    """Where results are kept (``$THREADCOST_CACHE_DIR``), or None: nothing is kept."""
    named = os.environ.get(ENV, "")
    return Path(named) if named else None


# --- keys -----------------------------------------------------------------------------------

Entry = tuple[str, str, int, int, int, int, int]  # path, kind, size, mtime, ctime, inode, dev


def _entries(folder: str, depth: int, budget: list[int], out: list[Entry]) -> bool:
    """Every name under ``folder`` with its kind and identity (lstat), in order; False: not
    digestible (a link, a device, too deep, too many files or bytes)."""
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return False
    for name in names:
        if depth == 0 and name.startswith("."):  # a save under way: never a run (scan)
            continue
        path = os.path.join(folder, name)
        try:
            st = os.lstat(path)
        except OSError:
            return False
        budget[1] -= 1
        if budget[1] < 0:
            return False
        identity = (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev)
        if stat.S_ISDIR(st.st_mode):
            out.append((path, "d", *identity))
            if depth >= MAX_DEPTH or not _entries(path, depth + 1, budget, out):
                return False
            out.append((path, "e", 0, 0, 0, 0, 0))
        elif stat.S_ISREG(st.st_mode):
            budget[0] -= st.st_size
            if budget[0] < 0:
                return False
            out.append((path, "f", *identity))
        else:  # a link (the readers refuse it by name), a fifo, a device
            return False
    return True


# Digests computed in this process, by folder: reused while every file under it keeps
# its identity (size, modification and change times, inode) and had settled (changed
# over a second before it was read: a rewrite within one clock tick can keep its times).
_DIGESTS: dict[str, tuple[tuple[Entry, ...], str]] = {}
SETTLED_NS = 1_000_000_000


def folder_digest(folder: str | Path) -> str | None:
    """A digest of everything under a machine folder (names and bytes; hidden run folders,
    saves under way, left out), or None when it cannot be kept: missing, a link, or
    holding a link, a device, more than MAX_FILES files or MAX_BYTES bytes."""
    path = os.fspath(folder)
    try:
        st = os.lstat(path)
    except OSError:
        return None
    if not stat.S_ISDIR(st.st_mode):
        return None
    entries: list[Entry] = []
    if not _entries(path, 0, [MAX_BYTES, MAX_FILES], entries):
        return None
    seen = tuple(entries)
    known = _DIGESTS.get(path)
    if known is not None and known[0] == seen:
        return known[1]
    started = time.time_ns()
    h = hashlib.blake2b(digest_size=20)
    for name, kind, size, *_ in seen:
        encoded = os.path.relpath(name, path).encode("utf-8", "surrogateescape")
        h.update(kind.encode() + len(encoded).to_bytes(4, "little") + encoded)
        if kind != "f":
            continue
        try:
            with open(name, "rb") as fh:
                data = fh.read(size + 1)
        except OSError:
            return None
        if len(data) != size:  # changed while read
            return None
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    digest = h.hexdigest()
    if all(e[4] < started - SETTLED_NS for e in seen if e[1] != "e"):
        if len(_DIGESTS) >= 64:
            _DIGESTS.pop(next(iter(_DIGESTS)))
        _DIGESTS[path] = (seen, digest)
    return digest


@functools.cache
def code_digest() -> str:
    """A digest of the code that computes what is kept: every ``.py`` file of the
    threadcost package, the published tables, and the versions of Python and of the
    numerical libraries (read once per process)."""
    import numpy
    import pandas
    import scipy


    h = hashlib.blake2b(digest_size=20)
    h.update(f"{sys.version}|{numpy.__version__}|{pandas.__version__}|"
             f"{scipy.__version__}|{FORMAT}".encode())
    package = Path(__file__).resolve().parent.parent
    for source in sorted(package.rglob("*.py")):
        name = source.relative_to(package).as_posix().encode()
        data = source.read_bytes()
        h.update(len(name).to_bytes(4, "little") + name + len(data).to_bytes(8, "little"))
        h.update(data)
    published = paths.published_dir()
    h.update(b"published" + (folder_digest(published) or "none").encode())
    return h.hexdigest()


def key(kind: str, root: str | Path, machine_id: str) -> str | None:
    """The key of ``kind`` computed from ``root/machine_id`` as it is now, or None when
    that folder cannot be kept."""
    folder = Path(root) / machine_id
    digest = folder_digest(folder)
    if digest is None:
        return None
    h = hashlib.blake2b(digest_size=20)
    for part in (kind, code_digest(), str(Path(root).resolve()), machine_id, digest):
        data = part.encode("utf-8", "surrogateescape")
        h.update(len(data).to_bytes(4, "little") + data)
    return h.hexdigest()


# --- JSON with the types kept ---------------------------------------------------------------

_TAGS = ("$t", "$d", "$f", "$c", "$p", "$n")


def encode(value: Any, types: dict[str, type]) -> Any:
    """``value`` as JSON-able data that :func:`decode` turns back into the same types:
    None, bool, int, float (NaN and infinities too), str, list, tuple, dict, Path, numpy
    scalars and the dataclasses in ``types`` (name -> class). Anything else: TypeError."""
    kind = type(value)
    if value is None or kind in (bool, int, str):
        return value
    if kind is float:
        return value if math.isfinite(value) else {"$f": repr(value)}
    if kind is list:
        return [encode(v, types) for v in value]
    if kind is tuple:
        return {"$t": [encode(v, types) for v in value]}
    if kind is dict:
        if all(type(k) is str and not k.startswith("$") for k in value):
            return {k: encode(v, types) for k, v in value.items()}
        return {"$d": [[encode(k, types), encode(v, types)] for k, v in value.items()]}
    if isinstance(value, PurePath) and kind is type(Path()):
        return {"$p": os.fspath(value)}
    if kind.__module__ == "numpy" and getattr(value, "ndim", None) == 0 and \
            getattr(getattr(value, "dtype", None), "kind", "") in "biuf":
        return {"$n": value.dtype.str, "v": encode(value.item(), types)}
    if dataclasses.is_dataclass(value) and types.get(kind.__name__) is kind:
        fields = dataclasses.fields(value)
        if any(not f.init for f in fields):
            raise TypeError(f"{kind.__name__} has a field set after init")
        return {"$c": kind.__name__,
                "f": {f.name: encode(getattr(value, f.name), types) for f in fields}}
    raise TypeError(f"cannot keep a {kind.__module__}.{kind.__qualname__}")


def decode(data: Any, types: dict[str, type]) -> Any:
    """What :func:`encode` made, back (ValueError, TypeError or KeyError on anything else)."""
    if data is None or type(data) in (bool, int, float, str):
        return data
    if type(data) is list:
        return [decode(v, types) for v in data]
    if type(data) is not dict:
        raise TypeError("not a kept value")
    tag = next((t for t in _TAGS if t in data), None)
    if tag is None:
        return {k: decode(v, types) for k, v in data.items()}
    if tag == "$t":
        return tuple(decode(v, types) for v in data["$t"])
    if tag == "$d":
        return {decode(k, types): decode(v, types) for k, v in data["$d"]}
    if tag == "$f":
        if data["$f"] not in ("nan", "inf", "-inf"):
            raise ValueError("not a kept float")
        return float(data["$f"])
    if tag == "$p":
        return Path(str(data["$p"]))
    if tag == "$n":
        import numpy as np

        dtype = np.dtype(str(data["$n"]))
        if dtype.kind not in "biuf":
            raise ValueError("not a kept number")
        return dtype.type(decode(data["v"], types))
    cls = types[str(data["$c"])]
    fields = {f.name for f in dataclasses.fields(cls)}
    values = {str(k): decode(v, types) for k, v in dict(data["f"]).items()}
    if set(values) != fields:
        raise ValueError(f"{cls.__name__}: not its fields")
    return cls(**values)


def same(a: Any, b: Any) -> bool:
    """Equal and of the same types all the way down (NaN equals NaN; -0.0 is not 0.0)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float) or (type(a).__module__ == "numpy" and
                                getattr(a, "dtype", None) is not None):
        x, y = float(a), float(b)
        return (math.isnan(x) and math.isnan(y)) or (
            x == y and math.copysign(1.0, x) == math.copysign(1.0, y))
    if type(a) in (list, tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if type(a) is dict:
        return list(a) == list(b) and all(same(k, j) and same(a[k], b[j])
                                          for k, j in zip(a, b, strict=True))
    if dataclasses.is_dataclass(a):
        return all(same(getattr(a, f.name), getattr(b, f.name))
                   for f in dataclasses.fields(a))
    return bool(a == b)


# --- the files ------------------------------------------------------------------------------

def _path(folder: Path, kind: str, digest: str) -> Path:
    return folder / f"{kind}-{digest}.json"


def load(kind: str, digest: str, types: dict[str, type]) -> tuple[bool, Any]:
    """(True, the kept value) or (False, None): nothing kept, or a file that does not
    read back whole (ignored: it is overwritten by the next store)."""
    folder = directory()
    if folder is None:
        return False, None
    try:
        path = _path(folder, kind, digest)
        with open(path, "rb") as fh:
            raw = fh.read(MAX_CACHE_FILE + 1)
        if len(raw) > MAX_CACHE_FILE:
            return False, None
        data = json.loads(raw.decode("utf-8"))
        if data.get("format") != FORMAT or data.get("kind") != kind or \
                data.get("key") != digest:
            return False, None
        return True, decode(data["value"], types)
    except (OSError, ValueError, TypeError, KeyError, AttributeError, RecursionError,
            MemoryError):
        return False, None


def store(kind: str, digest: str, value: Any, types: dict[str, type]) -> bool:
    """Keep ``value`` under its key; False (nothing written) when it cannot be kept whole:
    a type the decoder would not rebuild exactly, or a folder it cannot write."""
    folder = directory()
    if folder is None:
        return False
    try:
        encoded = encode(value, types)
        text = json.dumps({"format": FORMAT, "kind": kind, "key": digest, "value": encoded},
                          ensure_ascii=False, allow_nan=False, separators=(",", ":"))
        if not same(decode(json.loads(text)["value"], types), value):
            return False
        folder.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(prefix=f".{kind}-", suffix=".tmp", dir=folder)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(text)
            os.replace(name, _path(folder, kind, digest))
        except BaseException:
            Path(name).unlink(missing_ok=True)
            raise
        _prune(folder)
        return True
    except (OSError, TypeError, ValueError, RecursionError, MemoryError):
        return False


def _prune(folder: Path) -> None:
    """The oldest kept files beyond KEEP_FILES removed (and temporary files of writers
    that died, after a day)."""
    entries = []
    for entry in os.scandir(folder):
        try:
            mtime = entry.stat(follow_symlinks=False).st_mtime
        except OSError:
            continue
        if entry.name.endswith(".json"):
            entries.append((mtime, entry.path))
        elif entry.name.endswith(".tmp") and mtime < _now() - 86400:
            Path(entry.path).unlink(missing_ok=True)
    entries.sort()
    for _, path in entries[:max(0, len(entries) - KEEP_FILES)]:
        Path(path).unlink(missing_ok=True)


def _now() -> float:
    return time.time()


def memo(kind: str, root: str | Path, machine_id: str, compute: Callable[[], T],
         types: tuple[type, ...] = ()) -> T:
    """``compute()``, a pure function of the runs under ``root/machine_id``: kept across
    processes under ``$THREADCOST_CACHE_DIR`` (see the module's text); computed every
    time when that is unset or the folder cannot be kept. ``types``: the dataclasses
    the result holds."""
    if directory() is None:
        return compute()
    names = {t.__name__: t for t in types}
    digest = key(kind, root, machine_id)
    if digest is None:
        return compute()
    found, value = load(kind, digest, names)
    if found:
        return value  # type: ignore[no-any-return]
    value = compute()
    if key(kind, root, machine_id) == digest:  # the folder did not change meanwhile
        store(kind, digest, value, names)
    return value


@contextlib.contextmanager
def kept_results() -> Iterator[None]:
    """While a build runs, what its processes compute from a machine folder (verdicts,
    findings, the across-machines columns, unreadable runs) is kept in ``build/cache/``
    for the others and the next build (this module), unless
    ``$THREADCOST_CACHE_DIR`` names another folder (empty: none). The notebooks' kernels
    inherit it; the caller's environment is as it was afterwards."""
    before = os.environ.get(ENV)
    if before is None:
        os.environ[ENV] = str(paths.build_dir() / "cache")
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(ENV, None)
