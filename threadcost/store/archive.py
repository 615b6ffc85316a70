"""A machine's runs as one archive, to send (``threadcost share``) and to take in
(``threadcost import``).

The archive is a ``.tar.gz`` holding one folder, ``threadcost-share/``: a manifest
(``MANIFEST.json``: the format, the machine id, the commit of the code that shared it,
each run with the commit that measured it, each file's SHA-256 and size, and what was
replaced to keep it impersonal) and ``<machine-id>/<run-id>/`` with each run's
``meta.json`` and tables, as the datastore writes them, freed of what is personal
(:mod:`threadcost.store.privacy`). Its members carry no owner, no user or group name and
no time; the gzip stream no file name and no time: the same runs give the same bytes.

An archive someone sends is untrusted input. :func:`take_in` reads it as a stream,
within bounds, before anything reaches the data folder:

- only regular files and folders (no link of either kind, no device or pipe), names
  from fixed alphabets at fixed depths (the manifest; ``<machine-id>/<run-id>/<file>``;
  nothing absolute, no ``..``), one machine, at most :data:`MAX_FILES` files, each file
  within the bounds a run's file keeps (:mod:`threadcost.results.run_files`), the whole
  within :data:`MAX_ARCHIVE_BYTES` packed and :data:`MAX_TOTAL_BYTES` unpacked;
- every file listed in the manifest with its checksum and size, and no other;
- every run read as a run of a machine folder is (:func:`datastore.load_run`: the same
  untrusted-data rules, tables and numbers checked), its folder named by its own
  ``run_id``, and its fingerprint giving the machine id it is filed under;
- what is personal replaced again (an archive made by hand may carry it).

Then each run that is not in ``<data>/<machine-id>/`` yet is moved there in one rename;
a run already there with the same bytes is left as it is (importing twice changes
nothing); one there with other bytes stops the import before any run moves (nothing is
ever overwritten).
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import re
import secrets
import shutil
import stat
import tarfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, BinaryIO

from threadcost.errors import DataError, ParameterError
from threadcost.host import machine
from threadcost.results import reading, run_files, writing
from threadcost.store import datastore, privacy

FORMAT = 1
TOP = "threadcost-share"
MANIFEST = "MANIFEST.json"
SUFFIX = ".tar.gz"
# A machine's complete `make paper` is about 50 runs, 150 files and 4 MB: the bounds
# leave room for many papers' runs, and none for a bomb.
MAX_RUNS = 2000
MAX_FILES = 10_000
MAX_ARCHIVE_BYTES = 256 * 2**20
MAX_TOTAL_BYTES = 1024 * 2**20
MAX_MANIFEST_BYTES = 8 * 2**20
MACHINE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,199}")
RUN_ID = re.compile(r"\d{8}T\d{6}Z-[A-Za-z0-9][A-Za-z0-9_]{0,63}-[0-9a-f]{6}")
FILE_NAME = re.compile(r"meta\.json|[A-Za-z0-9][A-Za-z0-9_]{0,63}\.csv(?:\.gz)?")


class ArchiveRefused(ParameterError):
    """An archive that breaks a rule: one line naming the archive and the rule (the
    CLI's exit status 2, bad input)."""

    def __init__(self, archive: str | Path, why: str) -> None:
        super().__init__("ARCHIVE", str(archive), f"refused: {why}")


# --- sharing --------------------------------------------------------------------------

def _key(run: datastore.Run) -> str:
    """What a newer run of the same kind replaces: its experiment and label (the name a
    notebook finds it by), or for a run stored before labels its parameters."""
    label = run.meta.get("label")
    if isinstance(label, str):
        return f"{run.experiment}/{label}"
    return f"{run.experiment}/" + json.dumps(run.meta.get("params"), sort_keys=True,
                                             default=str)


def newest_runs(runs: list[datastore.Run]) -> list[datastore.Run]:
    """The newest complete run of each experiment (and label), oldest first."""
    newest: dict[str, datastore.Run] = {}
    for run in runs:  # oldest first: a later one replaces an earlier one
        newest[_key(run)] = run
    return [r for r in runs if newest.get(_key(r)) is r]


@dataclass(frozen=True)
class Packed:
    """The archive written, and what it holds."""

    path: Path
    machine_id: str
    runs: tuple[str, ...]
    bytes: int
    replaced: tuple[str, ...]


def _run_files(run: datastore.Run) -> Iterator[tuple[str, bytes]]:
    """(name, bytes) of each file of a run that the datastore reads: meta.json and its
    listed tables (nothing else in the folder is sent)."""
    for name in run.meta["tables"]:
        path = reading.table_path(run.path, name)
        raw, _ = run_files.read_file(path, run_files.MAX_TABLE_FILE_BYTES)
        yield path.name, raw


def _impersonal(run: datastore.Run, personal: privacy.Personal
                ) -> tuple[dict[str, bytes], list[str]]:
    """The run's files freed of what is personal, and what was replaced (in words)."""
    raw, _ = run_files.read_file(run.path / datastore.META, run_files.MAX_META_BYTES)
    meta = run_files.parse_json(run.path / datastore.META, raw)
    clean = privacy.meta(meta, personal)
    files = {datastore.META: json.dumps(clean, indent=2, allow_nan=False).encode()
             if clean != meta else raw}
    before = {datastore.META: raw}
    for name, data in _run_files(run):
        files[name] = privacy.table(data, name.endswith(".gz"), personal)
        before[name] = data
    replaced = [what for name, data in files.items() if data != before[name]
                for what in privacy.PLACEHOLDERS
                if what.encode() in _plain(name, data) and what.encode() not in
                _plain(name, before[name])]
    return files, replaced


def _plain(name: str, data: bytes) -> bytes:
    return gzip.decompress(data) if name.endswith(".gz") else data


def _tar_member(tar: tarfile.TarFile, name: str, data: bytes | None) -> None:
    info = tarfile.TarInfo(name)
    info.mtime, info.uid, info.gid, info.uname, info.gname = 0, 0, 0, "", ""
    if data is None:
        info.type, info.mode = tarfile.DIRTYPE, 0o755
        tar.addfile(info)
        return
    info.size, info.mode = len(data), 0o644
    tar.addfile(info, io.BytesIO(data))


def pack(runs: list[datastore.Run], machine_id: str, out: Path,
         personal: privacy.Personal | None = None) -> Packed:
    """Write ``runs`` (of machine ``machine_id``) as one archive at ``out`` (atomically:
    a hidden temporary file, then one rename; an existing file is never replaced)."""
    if not runs:
        raise ParameterError("--runs", "", "at least one complete run to share")
    personal = (personal or privacy.this_machine()).adding(
        hosts=[str((r.meta.get("machine") or {}).get("hostname") or "") for r in runs],
        folders=[(str(r.path.parent.parent.resolve()), privacy.ELSEWHERE) for r in runs])
    files: dict[str, bytes] = {}
    entries, replaced = [], set()
    for run in runs:
        got, changed = _impersonal(run, personal)
        for name, data in got.items():
            files[f"{machine_id}/{run.path.name}/{name}"] = data
            left = privacy.leaks(_plain(name, data), personal)
            if left:
                raise DataError(f"{run.path / name}: still holds {', '.join(left)} once "
                                "replaced (not shared)")
        replaced |= set(changed)
        entries.append({"run_id": run.path.name, "experiment": run.experiment,
                        "measured_by": run.commit})
    git = machine.git_commit()
    manifest = {
        "format": FORMAT,
        "what": "threadcost runs of one machine (threadcost share); take them in with "
                "`threadcost import <this archive>`",
        "machine_id": machine_id,
        "commit": git.get("commit"), "dirty": git.get("dirty"),
        "runs": entries,
        "replaced": [privacy.PLACEHOLDERS[what] for what in privacy.PLACEHOLDERS
                     if what in replaced],
        "files": {name: {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}
                  for name, data in sorted(files.items())},
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    if out.exists():
        raise FileExistsError(17, "exists (not replaced): name another --out", str(out))
    tmp = out.with_name(f".{out.name}.{secrets.token_hex(4)}.partial")
    try:
        with open(tmp, "xb") as fh:
            with gzip.GzipFile(filename="", mode="wb", fileobj=fh, mtime=0,
                               compresslevel=9) as gz, \
                    tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar:
                _tar_member(tar, TOP, None)
                _tar_member(tar, f"{TOP}/{MANIFEST}",
                            (json.dumps(manifest, indent=2) + "\n").encode())
                made = set()
                for name, data in sorted(files.items()):
                    for folder in (name.split("/")[0], "/".join(name.split("/")[:2])):
                        if folder not in made:
                            made.add(folder)
                            _tar_member(tar, f"{TOP}/{folder}", None)
                    _tar_member(tar, f"{TOP}/{name}", data)
            fh.flush()
            os.fsync(fh.fileno())
        if out.exists():
            raise FileExistsError(17, "exists (not replaced): name another --out", str(out))
        os.rename(tmp, out)
    finally:
        tmp.unlink(missing_ok=True)
    return Packed(out, machine_id, tuple(e["run_id"] for e in entries), out.stat().st_size,
                  tuple(manifest["replaced"]))


# --- taking in ------------------------------------------------------------------------

class _Bounded(io.RawIOBase):
    """A stream that refuses to give more than ``limit`` bytes (a gzip bomb)."""

    def __init__(self, raw: BinaryIO, limit: int, archive: Path) -> None:
        self._raw, self._left, self._archive = raw, limit, archive

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        data = self._raw.read(min(len(buffer), self._left + 1))
        if len(data) > self._left:
            raise ArchiveRefused(self._archive, f"unpacks to more than the "
                                                f"{MAX_TOTAL_BYTES:,} bytes an archive may")
        self._left -= len(data)
        buffer[:len(data)] = data
        return len(data)


@dataclass
class _Read:
    manifest: dict[str, Any] | None = None
    files: dict[str, bytes] = field(default_factory=dict)  # "<mid>/<run>/<file>" -> bytes


def _member_name(archive: Path, name: str) -> tuple[str, ...]:
    """The parts of a member's name below ``threadcost-share/``, checked."""
    path = PurePosixPath(name)
    if path.is_absolute() or ".." in path.parts or "\\" in name:
        raise ArchiveRefused(archive, f"member {run_files.printable(name)[:120]!r} points "
                                      "out of the archive's folder")
    parts = tuple(p for p in path.parts if p != ".")
    if not parts or parts[0] != TOP:
        raise ArchiveRefused(archive, f"member {run_files.printable(name)[:120]!r} is "
                                      f"outside {TOP}/ (not a threadcost share archive)")
    return parts[1:]


def _check_parts(archive: Path, parts: tuple[str, ...], is_dir: bool) -> None:
    rules = (MACHINE_ID, RUN_ID, FILE_NAME)
    if not is_dir and parts == (MANIFEST,):
        return
    if len(parts) > 3 or (not is_dir and len(parts) != 3):
        raise ArchiveRefused(archive, f"member {'/'.join(parts)[:120]!r} is not "
                                      "<machine-id>/<run-id>/<file> of a run")
    for part, rule in zip(parts, rules, strict=False):
        if not rule.fullmatch(part):
            raise ArchiveRefused(archive, f"name {run_files.printable(part)[:80]!r} in "
                                          f"{run_files.printable('/'.join(parts))[:120]!r} "
                                          "is not a machine id, run id or run file name")


def _read(archive: Path) -> _Read:
    """Every member of the archive, checked, into memory (within the bounds)."""
    try:
        st = os.lstat(archive)
    except FileNotFoundError:
        raise ParameterError("ARCHIVE", str(archive), "an archive file that exists "
                                                      "(threadcost share writes one)") from None
    if not stat.S_ISREG(st.st_mode):
        raise ArchiveRefused(archive, f"{run_files.not_regular(st.st_mode)}, not a file")
    if st.st_size > MAX_ARCHIVE_BYTES:
        raise ArchiveRefused(archive, f"{st.st_size:,} bytes, more than the "
                                      f"{MAX_ARCHIVE_BYTES:,} an archive may hold")
    fd = os.open(archive, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    got = _Read()
    total = 0
    with os.fdopen(fd, "rb") as fh:
        if fh.read(2) != b"\x1f\x8b":
            raise ArchiveRefused(archive, "not a .tar.gz archive (threadcost share writes "
                                          "one)")
        fh.seek(0)
        stream = io.BufferedReader(_Bounded(gzip.GzipFile(fileobj=fh, mode="rb"),  # type: ignore[arg-type]
                                            MAX_TOTAL_BYTES, archive))
        try:
            with tarfile.open(fileobj=stream, mode="r|") as tar:
                for count, member in enumerate(tar, 1):
                    if count > MAX_FILES + MAX_RUNS + 2:
                        raise ArchiveRefused(archive, f"more than {MAX_FILES:,} files")
                    parts = _member_name(archive, member.name)
                    if member.isdir():
                        _check_parts(archive, parts, True)
                        continue
                    if not member.isreg():
                        what = ("a link" if member.issym() or member.islnk() else
                                "a device or pipe")
                        raise ArchiveRefused(archive, f"member {member.name[:120]!r} is "
                                                      f"{what}, not a file")
                    _check_parts(archive, parts, False)
                    limit = (MAX_MANIFEST_BYTES if parts == (MANIFEST,) else
                             run_files.MAX_META_BYTES if parts[-1] == datastore.META else
                             run_files.MAX_TABLE_FILE_BYTES)
                    if member.size > limit:
                        raise ArchiveRefused(archive, f"{'/'.join(parts)} holds "
                                                      f"{member.size:,} bytes, more than "
                                                      f"the {limit:,} such a file may")
                    total += member.size
                    if total > MAX_TOTAL_BYTES:
                        raise ArchiveRefused(archive, f"unpacks to more than the "
                                                      f"{MAX_TOTAL_BYTES:,} bytes an "
                                                      "archive may")
                    name = "/".join(parts)
                    if name in got.files or (name == MANIFEST and got.manifest is not None):
                        raise ArchiveRefused(archive, f"{name} is in it twice")
                    reader = tar.extractfile(member)
                    data = reader.read() if reader is not None else b""
                    if name == MANIFEST:
                        parsed = run_files.parse_json(archive / MANIFEST, data)
                        if not isinstance(parsed, dict):
                            raise ArchiveRefused(archive, "its manifest is not a JSON object")
                        got.manifest = parsed
                    else:
                        got.files[name] = data
        except (tarfile.TarError, EOFError, gzip.BadGzipFile, zlib.error) as exc:
            raise ArchiveRefused(archive, f"not a readable .tar.gz "
                                          f"({run_files.first_line(exc)})") from None
        except DataError as exc:
            raise ArchiveRefused(archive, str(exc).removeprefix(f"{archive / MANIFEST}: ")
                                 ) from None
    return got


def _check_manifest(archive: Path, got: _Read) -> str:
    """The machine id, once the manifest lists exactly the files read, with their
    checksums and sizes."""
    manifest = got.manifest
    if manifest is None:
        raise ArchiveRefused(archive, f"no {TOP}/{MANIFEST} (not a threadcost share archive)")
    if manifest.get("format") != FORMAT:
        raise ArchiveRefused(archive, f"manifest format {str(manifest.get('format'))[:20]!r}, "
                                      f"this threadcost reads {FORMAT}")
    mid = manifest.get("machine_id")
    if not isinstance(mid, str) or not MACHINE_ID.fullmatch(mid):
        raise ArchiveRefused(archive, "its manifest names no machine id")
    listed = manifest.get("files")
    if not isinstance(listed, dict):
        raise ArchiveRefused(archive, "its manifest lists no files")
    if not got.files:
        raise ArchiveRefused(archive, "it holds no run")
    for name in sorted(set(listed) | set(got.files)):
        if name not in got.files:
            raise ArchiveRefused(archive, f"{str(name)[:120]!r} is in its manifest but not "
                                          "in the archive")
        entry = listed.get(name)
        if not isinstance(entry, dict):
            raise ArchiveRefused(archive, f"{name} is not in its manifest")
        data = got.files[name]
        if entry.get("bytes") != len(data) or \
                entry.get("sha256") != hashlib.sha256(data).hexdigest():
            raise ArchiveRefused(archive, f"{name} does not match its checksum in the "
                                          "manifest (damaged or changed)")
        if name.split("/")[0] != mid:
            raise ArchiveRefused(archive, f"{name} is not under its machine's folder {mid}/")
    runs = {name.split("/")[1] for name in got.files}
    if len(runs) > MAX_RUNS:
        raise ArchiveRefused(archive, f"{len(runs):,} runs, more than {MAX_RUNS:,}")
    return mid


@dataclass(frozen=True)
class TakenIn:
    """What an import did: the machine folder, the runs added and those already there."""

    machine_id: str
    folder: Path
    added: tuple[str, ...]
    present: tuple[str, ...]


def _write(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                 0o644)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())


def _same(folder: Path, files: dict[str, bytes]) -> bool:
    """Does run folder ``folder`` hold exactly ``files``?"""
    try:
        names = {p.name for p in folder.iterdir()}
    except OSError:
        return False
    if names != set(files):
        return False
    for name, data in files.items():
        try:
            held, _ = run_files.read_file(folder / name, max(len(data), 1))
        except (OSError, DataError):
            return False
        if held != data:
            return False
    return True


def _checked_run(archive: Path, mid: str, run_dir: Path) -> datastore.Run:
    """A run unpacked in the staging folder, read as any run of a machine folder is."""
    try:
        run = datastore.load_run(run_dir)
    except DataError as exc:
        shown = str(exc).replace(str(run_dir.parent), mid)
        raise ArchiveRefused(archive, f"run {shown}") from None
    if run.meta.get("run_id") != run_dir.name:
        raise ArchiveRefused(archive, f"run {run_dir.name}: its meta.json names run "
                                      f"{str(run.meta.get('run_id'))[:80]!r}")
    try:
        computed = machine.machine_id(run.meta["machine"])
    except (KeyError, TypeError, ValueError, AttributeError):
        raise ArchiveRefused(archive, f"run {run_dir.name}: its fingerprint does not name "
                                      "a machine") from None
    if computed != mid:
        raise ArchiveRefused(archive, f"run {run_dir.name} was measured on {computed}, not "
                                      f"on {mid}, the machine it is filed under")
    return run


def take_in(archive: str | Path, data_dir: Path) -> TakenIn:
    """Check ``archive`` and add its runs under ``data_dir/<machine-id>/`` (see the
    module's text); raises :class:`ArchiveRefused` (nothing written) when it breaks a
    rule or would overwrite a run."""
    archive = Path(archive)
    got = _read(archive)
    mid = _check_manifest(archive, got)
    runs: dict[str, dict[str, bytes]] = {}
    for name, data in got.files.items():
        _, run_id, file_name = name.split("/")
        runs.setdefault(run_id, {})[file_name] = data
    data_dir.mkdir(parents=True, exist_ok=True)
    staging = data_dir / f".import-{secrets.token_hex(4)}.partial"
    staging.mkdir()
    try:
        personal = privacy.this_machine()
        for run_id, files in runs.items():
            (staging / run_id).mkdir()
            for file_name, data in files.items():
                _write(staging / run_id / file_name, data)
            run = _checked_run(archive, mid, staging / run_id)
            host = str((run.meta.get("machine") or {}).get("hostname") or "")
            clean = _rescrubbed(staging / run_id, personal.adding(hosts=[host]))
            if clean:
                run = _checked_run(archive, mid, staging / run_id)
            runs[run_id] = {p.name: run_files.read_file(p, run_files.MAX_TABLE_FILE_BYTES)[0]
                            for p in sorted((staging / run_id).iterdir())}
        target = data_dir / mid
        present, added = [], []
        for run_id, files in sorted(runs.items()):
            if (target / run_id).exists() or (target / run_id).is_symlink():
                if not _same(target / run_id, files):
                    raise ArchiveRefused(archive, f"run {run_id} is already in "
                                                  f"{target.name}/ with other contents; "
                                                  "nothing was imported or overwritten")
                present.append(run_id)
        target.mkdir(exist_ok=True)
        for run_id in sorted(runs):
            if run_id in present:
                continue
            os.rename(staging / run_id, target / run_id)  # an existing run is never replaced
            added.append(run_id)
        if added:
            writing.fsync_dir(target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return TakenIn(mid, target, tuple(added), tuple(present))


def _rescrubbed(run_dir: Path, personal: privacy.Personal) -> bool:
    """Replace again what is personal in an unpacked run's files (an archive made by
    hand, or by an older threadcost, may carry it); True when a file changed."""
    changed = False
    for path in sorted(run_dir.iterdir()):
        raw, _ = run_files.read_file(path, run_files.MAX_TABLE_FILE_BYTES)
        if path.name == datastore.META:
            meta = run_files.parse_json(path, raw)
            clean = privacy.meta(meta, personal)
            new = json.dumps(clean, indent=2, allow_nan=False).encode() \
                if clean != meta else raw
        else:
            new = privacy.table(raw, path.name.endswith(".gz"), personal)
        if new != raw:
            path.unlink()
            _write(path, new)
            changed = True
    return changed
