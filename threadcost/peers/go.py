"""The Go peer (native/peers/go): goroutines, standard library only.

Built offline: no toolchain download, no module proxy, caches under build/."""

from __future__ import annotations

import os
from pathlib import Path

from threadcost.peers.base import BUILD_ROOT, NATIVE_ROOT, Peer, build_step, tool_version, which_in
from threadcost.peers.kinds import Runtime, SleepersVariant

INSTALL = "install Go 1.22 or later (https://go.dev/dl, or conda-forge go) and put go on PATH"


def go_env() -> dict[str, str]:
    env = os.environ.copy()
    env.update({"GOTOOLCHAIN": "local", "GOFLAGS": "-mod=mod", "CGO_ENABLED": "0",
                "GOPROXY": "off", "GOWORK": "off"})
    env.setdefault("GOCACHE", str(BUILD_ROOT / "gocache"))
    env.setdefault("GOPATH", str(BUILD_ROOT / "gopath"))
    return env


def _find() -> tuple[dict[str, str] | None, str | None]:
    go = which_in("go")
    if go is None:
        return None, f"not run here: the Go toolchain is not installed (go not on PATH); {INSTALL}"
    return {"go": go, "version": tool_version([go, "version"], go_env())}, None


def _build(tool: dict[str, str], out: Path, timeout: float) -> list[str]:
    tmp = out / ".tcpeers.tmp"
    build_step([tool["go"], "build", "-trimpath", "-o", str(tmp), "."], GO.source_dir, timeout,
               "go peer build", go_env())
    binary = out / "tcpeers"
    os.replace(tmp, binary)  # atomic: a concurrent run sees the old or the new one
    return [str(binary)]


GO = Peer(language="go", source_dir=NATIVE_ROOT / "go", source_globs=("*.go", "go.mod"),
          find=_find, build=_build,
          programs=("sleepers", "million", "pingpong", "launch", "memory", "brigade"),
          kinds=(
              # page 5 measures goroutines with experiments of their own (threadcost.
              # experiments.peers); a sleeping one needs a 2 KiB stack plus the runtime's
              # bookkeeping, rounded up
              Runtime(key="goroutine", label="goroutine", colour="#cc78bc",
                      flag="", kernel_task=False, need_kib=4, page5=False,
                      sleepers=(SleepersVariant("goroutines"),)),
          ))
