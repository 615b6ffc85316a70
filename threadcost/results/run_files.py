"""A stored run's files read as untrusted input: every file under ``data/`` may come
from someone else (the README invites readers to copy in a machine folder).

- only a regular file of the run folder is read: no symbolic link (wherever it
  points), no named pipe, socket or device; it is checked with ``lstat`` before it is
  opened (so nothing blocks and no device is opened), opened with ``O_NOFOLLOW`` and
  ``O_NONBLOCK``, and checked again with ``fstat``;
- sizes are bounded (a file larger than any run writes is refused unread) and so is
  JSON nesting (checked before parsing: Python's parser recurses);
- table names come from a fixed alphabet (no separator, no "..", nothing absolute).

Every refusal is a :class:`~threadcost.errors.DataError` naming the file and why.
"""

from __future__ import annotations

import errno
import gzip
import io
import json
import os
import re
import stat
from pathlib import Path
from typing import Any

import numpy as np

from threadcost.errors import DataError


def first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:200] if text else type(exc).__name__


# What a stored run may hold, whoever sent it (every file of data/ is untrusted input):
# table names from a fixed alphabet (no separator, no "..", nothing absolute), files of
# bounded size (the largest committed meta.json is about 60 KB, the largest table 0.8 MB),
# JSON nested no deeper than any run's (7 levels).
TABLE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_]{0,63}")
MAX_META_BYTES = 8 * 2**20
MAX_TABLE_FILE_BYTES = 128 * 2**20
MAX_TABLE_TEXT_BYTES = 128 * 2**20
MAX_JSON_DEPTH = 32


def check_table_name(meta_path: Path, name: Any) -> None:
    """Refuse a table name that is not a plain name of :data:`TABLE_NAME`'s alphabet."""
    if not isinstance(name, str) or not TABLE_NAME.fullmatch(name):
        shown = repr(name)[:80]
        raise DataError(f"{meta_path}: table name {shown} is not a plain name "
                        "(letters, digits and _, up to 64)")


_FILE_KINDS = ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISDIR, "a folder"),
               (stat.S_ISFIFO, "a named pipe"), (stat.S_ISSOCK, "a socket"),
               (stat.S_ISCHR, "a device"), (stat.S_ISBLK, "a device"))


def not_regular(mode: int) -> str | None:
    if stat.S_ISREG(mode):
        return None
    return next((what for test, what in _FILE_KINDS if test(mode)), "not a regular file")


def read_file(path: Path, limit: int) -> tuple[bytes, os.stat_result]:
    """(the bytes, the stat) of a file of a run folder, trusting nothing about it.

    Only a regular file is opened (checked before opening, with ``lstat``, so that no
    pipe blocks and no device is opened; a symbolic link is refused, wherever it
    points), without following links and without blocking (``O_NOFOLLOW``,
    ``O_NONBLOCK``), checked again with ``fstat`` once open, and read up to ``limit``
    bytes: a larger file is refused, never loaded whole. Raises DataError (missing:
    FileNotFoundError's message) naming the file and what is wrong."""
    try:
        before = os.lstat(path)
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise DataError(f"{path}: cannot be read ({os_reason(exc)})") from exc
    what = not_regular(before.st_mode)
    if what is not None:
        raise DataError(f"{path}: {what}, not a regular file of the run (refused)")
    if before.st_size > limit:
        raise DataError(f"{path}: {before.st_size:,} bytes, more than the "
                        f"{limit:,} any run's file holds (refused unread)")
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise DataError(f"{path}: cannot be read ({os_reason(exc)})") from exc
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or (st.st_dev, st.st_ino) != (before.st_dev,
                                                                        before.st_ino):
            raise DataError(f"{path}: replaced while being read (refused)")
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as exc:
        raise DataError(f"{path}: cannot be read ({os_reason(exc)})") from exc
    finally:
        os.close(fd)
    if size > limit:
        raise DataError(f"{path}: more than the {limit:,} bytes any run's file holds "
                        "(refused)")
    return b"".join(chunks), st


def os_reason(exc: OSError) -> str:
    if exc.errno == errno.EACCES:
        return "permission denied"
    return f"{os.strerror(exc.errno)}" if exc.errno else first_line(exc)


def _reject_constant(name: str) -> float:
    raise ValueError(f"{name} is not a number JSON allows")


def parse_json(path: Path, raw: bytes, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """JSON text of a run, parsed only once its nesting is known to be at most
    ``max_depth`` (Python's parser recurses: 1,000 levels would raise RecursionError);
    NaN and Infinity, which no run writes, are refused."""
    depth = json_depth(raw)
    if depth > max_depth:
        raise DataError(f"{path}: JSON nested {depth:,} levels deep, more than the "
                        f"{max_depth} any run's meta.json has (refused)")
    try:
        return json.loads(raw.decode("utf-8"), parse_constant=_reject_constant)
    except RecursionError as exc:  # not reached after the bound above; never a traceback
        raise DataError(f"{path}: JSON nested too deep (refused)") from exc
    except (ValueError, UnicodeDecodeError) as exc:
        raise DataError(f"{path}: not valid JSON ({first_line(exc)})") from exc


_JSON_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)


def json_depth(raw: bytes) -> int:
    """The deepest nesting of arrays and objects in JSON text (strings left out), in
    one vectorised pass: the text is bounded in size, never in depth."""
    bare = np.frombuffer(_JSON_STRING.sub(b'""', raw), dtype=np.uint8)
    step = (np.isin(bare, (ord("["), ord("{"))).astype(np.int64)
            - np.isin(bare, (ord("]"), ord("}"))).astype(np.int64))
    return int(np.cumsum(step).max(initial=0))


def csv_text(path: Path, raw: bytes) -> bytes:
    """The CSV text of a table file, a ``.csv.gz`` decompressed up to
    ``MAX_TABLE_TEXT_BYTES`` (a small file that inflates without end is refused)."""
    if path.name.endswith(".gz"):
        try:
            with gzip.GzipFile(fileobj=io.BytesIO(raw)) as fh:
                raw = fh.read(MAX_TABLE_TEXT_BYTES + 1)
        except (OSError, EOFError, ValueError) as exc:  # EOF: truncated .gz
            raise DataError(f"{path}: cannot read CSV ({first_line(exc)})") from exc
    if len(raw) > MAX_TABLE_TEXT_BYTES:
        raise DataError(f"{path}: more than {MAX_TABLE_TEXT_BYTES // 2**20} MiB of CSV text, "
                        "more than any run stores")
    return raw


def json_kind(value: Any) -> str:
    """The JSON name of a parsed value's type."""
    for kind, name in ((bool, "a boolean"), (int, "a number"), (float, "a number"),
                       (str, "a string"), (list, "an array"), (dict, "an object")):
        if isinstance(value, kind):
            return name
    return "null"


def what_it_says(meta_path: Path) -> dict[str, Any] | None:
    """What a run that failed its checks says of itself, when its meta.json parses:
    its experiment, parameters and label (so a reading that would have read it can
    say so)."""
    try:
        raw, _ = read_file(meta_path, MAX_META_BYTES)
        meta = parse_json(meta_path, raw)
    except (OSError, DataError):
        return None
    if not isinstance(meta, dict):
        return None
    experiment, params = meta.get("experiment"), meta.get("params")
    if not isinstance(experiment, str) or not TABLE_NAME.fullmatch(experiment):
        return None
    label = meta.get("label")
    return {"experiment": experiment, "params": params if isinstance(params, dict) else None,
            "label": label if isinstance(label, str) else None}


def printable(text: str) -> str:
    """``text`` on one line: a control character (a newline in a folder's name) is shown
    escaped, so that a name from someone else's folder cannot start a line of its own."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def lstat_mode(path: Path) -> int:
    """The mode of ``path`` itself (a link is not followed); 0 when there is nothing."""
    try:
        return os.lstat(path).st_mode
    except OSError:
        return 0
