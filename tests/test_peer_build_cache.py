"""Built peers shared between clones (threadcost.peers.build_cache): a second clone
with the same sources and toolchain copies the build instead of building; a changed
source or toolchain builds again; the cache turned off, or unreadable, builds."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

import pytest

from threadcost.peers import base, build_cache


def _peer(src: Path, builds: list[Path], version: str = "1.0") -> base.Peer:
    """A peer whose build writes a shell script (and a folder) into its build folder."""
    def build(tool: dict[str, str], out: Path, timeout: float) -> list[str]:
        builds.append(out)
        script = out / "bin" / "peer.sh"
        script.parent.mkdir(parents=True, exist_ok=True)
        built = json.dumps({"built": (src / "main.src").read_text()})
        script.write_text(f"#!/bin/sh\necho '{built}'\n")
        script.chmod(script.stat().st_mode | stat.S_IXUSR)
        (out / "lib").mkdir(exist_ok=True)
        (out / "lib" / "data.txt").write_text("data")
        (out / "scratch").mkdir(exist_ok=True)  # intermediate output, named by no command
        return [str(script), "-lib", str(out / "lib"), "run"]

    return base.Peer(language="fake", source_dir=src, source_globs=("*.src",),
                     find=lambda: ({"tool": "/usr/bin/faketool", "version": version}, None),
                     build=build, programs=("run",), kinds=())


@pytest.fixture()
def clones(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    monkeypatch.setenv(build_cache.ENV, str(tmp_path / "cache"))
    src = tmp_path / "src"
    src.mkdir()
    (src / "main.src").write_text("v1")
    return src, tmp_path


def _in_clone(monkeypatch: pytest.MonkeyPatch, root: Path, name: str) -> Path:
    monkeypatch.setattr(base, "BUILD_ROOT", root / name / "build" / "peers")
    return root / name / "build" / "peers" / "fake"


def test_a_second_clone_copies_the_build(clones: tuple[Path, Path],
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    src, root = clones
    builds: list[Path] = []
    first = _in_clone(monkeypatch, root, "a")
    command_a = _peer(src, builds).ensure_built()
    assert builds == [first]
    second = _in_clone(monkeypatch, root, "b")
    command_b = _peer(src, builds).ensure_built()
    assert builds == [first]  # not built again
    assert command_b == [str(second / "bin" / "peer.sh"), "-lib", str(second / "lib"), "run"]
    assert command_a[0] != command_b[0] and (second / "lib" / "data.txt").read_text() == "data"
    assert not (second / "scratch").exists()  # only what the command names is kept
    out = subprocess.run(command_b[:1], capture_output=True, text=True, timeout=30, check=True)
    assert json.loads(out.stdout) == {"built": "v1"}
    # the clone's own stamp: a third call reads it, copies nothing
    assert _peer(src, builds).ensure_built() == command_b and builds == [first]


def test_a_changed_source_or_toolchain_builds_again(clones: tuple[Path, Path],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    src, root = clones
    builds: list[Path] = []
    _in_clone(monkeypatch, root, "a")
    _peer(src, builds).ensure_built()
    (src / "main.src").write_text("v2")
    b = _in_clone(monkeypatch, root, "b")
    command = _peer(src, builds).ensure_built()
    assert builds[-1] == b and len(builds) == 2
    out = subprocess.run(command[:1], capture_output=True, text=True, timeout=30, check=True)
    assert json.loads(out.stdout) == {"built": "v2"}
    c = _in_clone(monkeypatch, root, "c")
    _peer(src, builds, version="2.0").ensure_built()
    assert builds[-1] == c and len(builds) == 3


def test_off_or_damaged_cache_builds(clones: tuple[Path, Path],
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    src, root = clones
    builds: list[Path] = []
    _in_clone(monkeypatch, root, "a")
    _peer(src, builds).ensure_built()
    for entry in (root / "cache" / "fake").iterdir():  # an entry missing its files
        for f in (entry / "files" / "bin").iterdir():
            os.remove(f)
    _in_clone(monkeypatch, root, "b")
    _peer(src, builds).ensure_built()
    assert len(builds) == 2
    monkeypatch.setenv(build_cache.ENV, "off")
    assert build_cache.root() is None
    _in_clone(monkeypatch, root, "c")
    _peer(src, builds).ensure_built()
    assert len(builds) == 3


def test_a_clone_built_before_the_cache_fills_it(clones: tuple[Path, Path],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    src, root = clones
    builds: list[Path] = []
    monkeypatch.setenv(build_cache.ENV, "off")
    _in_clone(monkeypatch, root, "a")
    _peer(src, builds).ensure_built()
    monkeypatch.setenv(build_cache.ENV, str(root / "cache"))
    _peer(src, builds).ensure_built()  # its own stamp: kept in the cache as it is
    _in_clone(monkeypatch, root, "b")
    _peer(src, builds).ensure_built()
    assert len(builds) == 1
