"""What a shared run must not carry: the host's name, a user's name, an absolute path.

A run stores the machine it ran on (``meta.json``'s ``machine``) and, here and there,
a path of the checkout that measured it (the launch run names the program posix_spawn
started: ``/home/<user>/threadcost/build/native/spawn_target``). None of it sets a
number, so a shared run carries each replaced by what it is:

- the host's name (``machine.hostname``, and wherever else it stands as a word) by
  :data:`HOST`;
- a user's name (the account that shares, ``$USER``, ``$LOGNAME``) by :data:`USER`,
  system accounts (``root``) excepted: they name no one;
- an absolute path by what it is: this checkout :data:`CHECKOUT` (also another
  checkout's, told by its ``build/``, ``native/``, ``runs/``, ``data/``, ``notebooks/``,
  ``params/`` or ``.venv/`` part), a home folder :data:`HOME`, any other folder
  :data:`ELSEWHERE` (its last part kept). The system's own paths (``/proc/config.gz``,
  ``/bin/true``, ``/usr/...``) name no one and stay.

The fingerprint's other fields are system facts (kernel, CPU, mitigations, limits) and
are only freed of paths, never of words, so a machine's id (computed from them) never
changes. Replacing is idempotent: a scrubbed run scrubbed again is the same bytes.
"""

from __future__ import annotations

import contextlib
import csv
import getpass
import gzip
import io
import os
import platform
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from threadcost import paths

HOST = "<host>"
USER = "<user>"
CHECKOUT = "<checkout>"
HOME = "<home>"
ELSEWHERE = "<a folder of the measuring machine>"
# each placeholder -> what it replaced, in words (the manifest lists those it used)
PLACEHOLDERS = {HOST: f"the host's name by {HOST}", USER: f"a user's name by {USER}",
                CHECKOUT: f"the checkout's path by {CHECKOUT}",
                HOME: f"a home folder's path by {HOME}",
                ELSEWHERE: f"another folder's path by {ELSEWHERE}"}

# Accounts that name no one (a run made as root records no person).
SYSTEM_USERS = frozenset({"root", "nobody", "daemon"})
# Paths of the system itself: kept as they are.
SYSTEM_ROOTS = ("/proc/", "/sys/", "/dev/", "/usr/", "/bin/", "/sbin/", "/lib/", "/lib32/",
                "/lib64/", "/libx32/", "/etc/", "/boot/", "/opt/", "/nix/store/", "/snap/")
# The parts of a threadcost checkout a stored path may run through.
CHECKOUT_PARTS = ("build", "native", "runs", "data", "notebooks", "params", ".venv")
_HOMES = re.compile(r"/(?:home|Users)/[^/]+|/root(?=/|$)")
# An absolute path inside text: a "/" that starts no URL part, fraction or unit
# ("https://go.dev/dl", "KiB/s", "1/2" are not paths), up to a delimiter.
_PATH = re.compile(r"(?<![\w.~:/<>-])/[^\s\"'`,;:()<>\[\]{}|]+")
_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?(?:inf|nan)",
                     re.IGNORECASE)


@dataclass(frozen=True)
class Personal:
    """What is personal on the machine that measured or shares: host names, user names,
    and folders with what each is (longest first)."""

    hosts: frozenset[str]
    users: frozenset[str]
    folders: tuple[tuple[str, str], ...]

    def words(self) -> list[tuple[re.Pattern[str], str]]:
        """Each name as a word (never inside a longer name: "vm" is not replaced in
        "vmscape", "kvm" or "vm.max_map_count"), with what it is replaced by."""
        named = [(h, HOST) for h in self.hosts] + [(u, USER) for u in self.users]
        return [(re.compile(r"(?<![A-Za-z0-9_.-])" + re.escape(name)
                            + r"(?![A-Za-z0-9_-]|\.[A-Za-z0-9_-])"), what)
                for name, what in sorted(named, key=lambda n: -len(n[0]))]

    def adding(self, hosts: Iterable[str] = (), folders: Iterable[tuple[str, str]] = ()
               ) -> Personal:
        more = tuple(f for f in folders if f[0] not in dict(self.folders))
        return Personal(self.hosts | {h for h in hosts if _a_name(h) and h != HOST},
                        self.users,
                        tuple(sorted(self.folders + more, key=lambda f: -len(f[0]))))


def _a_name(text: str) -> bool:
    return len(text) >= 2 and any(c.isalpha() for c in text) and "<" not in text


def this_machine() -> Personal:
    """This host's names, this user's names, this checkout and this home folder."""
    hosts = {platform.node()}  # the kernel's node name (uname -n)
    hosts |= {h.split(".")[0] for h in hosts}
    users = {os.environ.get("USER", ""), os.environ.get("LOGNAME", "")}
    with contextlib.suppress(KeyError, OSError):  # no name for this uid
        users.add(getpass.getuser())
    folders = [(str(paths.REPO_ROOT), CHECKOUT)]
    try:
        home = str(Path.home().resolve())
        if home not in ("/", ""):
            folders.append((home, HOME))
    except (KeyError, RuntimeError, OSError):
        pass
    folders += [(str(Path(f).resolve()), what) for f, what in list(folders)]
    return Personal(frozenset(h for h in hosts if _a_name(h)),
                    frozenset(u for u in users if _a_name(u) and u not in SYSTEM_USERS),
                    tuple(sorted(set(folders), key=lambda f: -len(f[0]))))


def _under(found: str, folder: str) -> bool:
    return found == folder or found.startswith(folder.rstrip("/") + "/")


def _path(found: str, personal: Personal) -> str:
    """What an absolute path is: this checkout's first, then another checkout's (by its
    layout, also inside a home folder), then a known folder's, a home's, the system's."""
    for folder, what in personal.folders:
        if what == CHECKOUT and _under(found, folder):
            return what + found[len(folder.rstrip("/")):]
    parts = found.split("/")
    for i, part in enumerate(parts[2:], start=2):  # another checkout, by its layout
        if part in CHECKOUT_PARTS:
            return CHECKOUT + "/" + "/".join(parts[i:])
    for folder, what in personal.folders:
        if _under(found, folder):
            return what + found[len(folder.rstrip("/")):]
    home = _HOMES.match(found)
    if home is not None:
        return HOME + found[home.end():]
    if found.startswith(SYSTEM_ROOTS) or found in ("/", "/bin", "/usr", "/tmp"):
        return found
    return ELSEWHERE + "/" + parts[-1] if len(parts) > 2 else ELSEWHERE


def text(value: str, personal: Personal, words: bool = True) -> str:
    """``value`` with every absolute path replaced by what it is and (``words``) every
    host or user name by what it is."""
    if "/" in value:
        value = _PATH.sub(lambda m: _path(m.group(0), personal), value)
    if words:
        for pattern, what in personal.words():
            value = pattern.sub(what, value)
    return value


def _walk(value: Any, personal: Personal, words: bool) -> Any:
    if isinstance(value, str):
        return text(value, personal, words)
    if isinstance(value, list):
        return [_walk(v, personal, words) for v in value]
    if isinstance(value, dict):  # keys are the code's names, never personal
        return {k: _walk(v, personal, words) for k, v in value.items()}
    return value


def meta(data: dict[str, Any], personal: Personal) -> dict[str, Any]:
    """A run's meta.json without what is personal: the host's name replaced, the
    fingerprint's other fields freed of paths only (its words are system facts, and
    the machine's id is computed from them), every other string of paths and names."""
    out = {k: _walk(v, personal, words=True) for k, v in data.items() if k != "machine"}
    fp = data.get("machine")
    if isinstance(fp, dict):
        fp = {k: _walk(v, personal, words=False) for k, v in fp.items()}
        if "hostname" in fp:
            fp["hostname"] = HOST
        out["machine"] = fp
    elif "machine" in data:
        out["machine"] = fp
    return {k: out[k] for k in data}  # the keys in their order


def table(raw: bytes, compressed: bool, personal: Personal) -> bytes:
    """A table's file without what is personal: only cells that are not numbers are
    changed; a table with nothing to replace comes back as the same bytes."""
    csv_bytes = gzip.decompress(raw) if compressed else raw
    try:
        content = csv_bytes.decode("utf-8")
    except UnicodeDecodeError:
        return raw  # not a table any reader accepts: its checks refuse it
    if "/" not in content and not any(p.search(content) for p, _ in personal.words()):
        return raw
    rows = list(csv.reader(io.StringIO(content, newline="")))
    changed = False
    for row in rows:
        for i, cell in enumerate(row):
            if cell and not _NUMBER.fullmatch(cell):
                new = text(cell, personal)
                if new != cell:
                    row[i], changed = new, True
    if not changed:
        return raw
    out = io.StringIO(newline="")
    csv.writer(out, lineterminator="\n").writerows(rows)
    data = out.getvalue().encode("utf-8")
    return gzip.compress(data, compresslevel=9, mtime=0) if compressed else data


def leaks(data: bytes, personal: Personal) -> list[str]:
    """What personal is still in ``data`` (a file's bytes, decompressed): "the host's
    name", "a user's name", "a path of <what>"; [] when nothing."""
    content = data.decode("utf-8", "replace")
    found = []
    for pattern, what in personal.words():
        if pattern.search(content):
            found.append("the host's name" if what == HOST else "a user's name")
    for folder, what in personal.folders:
        if folder not in ("", "/") and folder in content:
            found.append(f"a path of {what}")
    return sorted(set(found))
