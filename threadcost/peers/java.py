"""The Java peer (native/peers/java/Peers.java): platform and virtual threads.

One source file compiled with ``javac --release 21`` (no Maven). The JDK is the
first of release 21 or later found through ``JAVA_HOME``, ``PATH`` and the usual
install folders (``THREADCOST_JVM_DIRS``, ``:``-separated, replaces that list)."""

from __future__ import annotations

import functools
import os
import re
from pathlib import Path

from threadcost.peers.base import NATIVE_ROOT, Peer, build_step, tool_version
from threadcost.peers.kinds import Runtime, SleepersVariant

INSTALL = ("install a JDK 21 or later (e.g. apt-get install openjdk-21-jdk-headless, or "
           "Temurin from https://adoptium.net) and set JAVA_HOME or put its javac on PATH")
MIN_RELEASE = 21
JVM_DIRS = ("/usr/lib/jvm", "/usr/local/lib/jvm", "/opt/java", "/opt/jdk",
            "/Library/Java/JavaVirtualMachines")


def _release(javac: str) -> int | None:
    """The JDK release of ``javac`` (``javac -version`` starts a JVM: a fraction of a
    second, asked before every peer run), asked once per file and modification time."""
    st = os.stat(javac)
    return _release_of(javac, str(Path(javac).resolve()), st.st_mtime_ns, st.st_size)


@functools.lru_cache(maxsize=32)
def _release_of(javac: str, real: str, mtime_ns: int, size: int) -> int | None:
    del real, mtime_ns, size  # the cache key: a replaced javac is asked again
    m = re.search(r"javac (\d+)", tool_version([javac, "-version"]))
    return int(m.group(1)) if m else None


def _candidates() -> list[Path]:
    out: list[Path] = []
    if os.environ.get("JAVA_HOME"):
        out.append(Path(os.environ["JAVA_HOME"]) / "bin")
    out += [Path(d) for d in os.environ.get("PATH", "").split(os.pathsep) if d]
    dirs = os.environ.get("THREADCOST_JVM_DIRS")
    for root in (dirs.split(os.pathsep) if dirs is not None else JVM_DIRS):
        try:  # a folder this user may not read is passed over, as PATH lookups do
            homes = sorted(Path(root).iterdir(), reverse=True) if root else []
        except OSError:
            continue
        out += [p / "bin" for p in homes]
        out += [p / "Contents" / "Home" / "bin" for p in homes]
    return out


def _jdk_in(folder: Path) -> tuple[Path, Path] | None:
    """(javac, java) of ``folder`` when both are there and javac runs; a folder this
    user cannot search (a PermissionError) has none."""
    javac, java = folder / "javac", folder / "java"
    try:
        if javac.is_file() and java.is_file() and os.access(javac, os.X_OK):
            return javac.resolve(), java
    except OSError:
        pass
    return None


def _find() -> tuple[dict[str, str] | None, str | None]:
    older: list[str] = []
    seen: set[Path] = set()
    for d in _candidates():
        found = _jdk_in(d)
        if found is None:
            continue
        real, java = found
        javac = d / "javac"
        if real in seen:
            continue
        seen.add(real)
        try:
            release = _release(str(javac))
        except OSError:  # gone or unreadable since: passed over
            continue
        if release is not None and release >= MIN_RELEASE:
            return {"javac": str(javac), "java": str(java),
                    "version": f"JDK {release}"}, None
        older.append(f"JDK {release}")
    found = f" (found only {', '.join(sorted(set(older)))})" if older else ""
    return None, f"not run here: no JDK {MIN_RELEASE} or later is installed{found}; {INSTALL}"


def _build(tool: dict[str, str], out: Path, timeout: float) -> list[str]:
    classes = out / "classes"
    classes.mkdir(parents=True, exist_ok=True)
    # Warnings are shown, never errors, on a reader's JDK (a newer javac may warn where
    # ours does not); only the project's own check (tests/test_build_flags.py) turns
    # javac's warnings into errors.
    build_step([tool["javac"], "--release", str(MIN_RELEASE), "-Xlint:all",
                "-d", str(classes), str(JAVA.source_dir / "Peers.java")],
               JAVA.source_dir, timeout, "java peer build")
    return [tool["java"], "-cp", str(classes), "Peers"]


JAVA = Peer(language="java", source_dir=NATIVE_ROOT / "java", source_globs=("*.java",),
            find=_find, build=_build, programs=("sleepers", "million", "launch", "memory"),
            kinds=(
                Runtime(key="java-platform", label="Java platform thread", colour="#ca9161",
                        flag="platform", kernel_task=True, need_kib=128,
                        sleepers=(SleepersVariant("java_platform"),),
                        memory_how="platform threads blocked on a latch"),
                Runtime(key="java-virtual", label="Java virtual thread", colour="#949494",
                        flag="virtual", kernel_task=False, need_kib=8,
                        sleepers=(SleepersVariant("java_virtual"),),
                        memory_how="virtual threads blocked on a latch"),
            ))
