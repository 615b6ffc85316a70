"""The Rust peer (native/peers/rust): ``std::thread`` and Tokio tasks.

A Cargo workspace with a committed Cargo.lock. The build fetches the locked
crates from crates.io once (``cargo fetch --locked``; skipped when they are
already in Cargo's cache) and builds offline: ``cargo build --release --locked
--offline``, into build/peers/rust/target."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from threadcost.errors import KernelError
from threadcost.peers.base import NATIVE_ROOT, Peer, build_step, tool_version, which_in
from threadcost.peers.kinds import Runtime, SleepersVariant

INSTALL = "install Rust 1.87 or later with rustup (https://rustup.rs) and put cargo on PATH"
MIN_VERSION = (1, 87)  # std::io::pipe


def _find() -> tuple[dict[str, str] | None, str | None]:
    cargo = which_in("cargo")
    if cargo is None:
        return None, ("not run here: the Rust toolchain is not installed (cargo not on "
                      f"PATH); {INSTALL}")
    version = tool_version([cargo, "--version"])
    try:
        major, minor = (int(x) for x in version.split()[1].split(".")[:2])
    except (IndexError, ValueError):
        return None, f"not run here: cannot read cargo's version ({version!r}); {INSTALL}"
    if (major, minor) < MIN_VERSION:
        return None, (f"not run here: {version} is older than Rust "
                      f"{MIN_VERSION[0]}.{MIN_VERSION[1]}; {INSTALL}")
    return {"cargo": cargo, "version": version}, None


def _build(tool: dict[str, str], out: Path, timeout: float) -> list[str]:
    cargo, src = tool["cargo"], RUST.source_dir
    target = out / "target"
    env = os.environ.copy()
    env["CARGO_TARGET_DIR"] = str(target)
    build = [cargo, "build", "--release", "--locked", "--offline", "--quiet"]
    try:
        build_step(build, src, timeout, "rust peer build", env)
    except KernelError:
        # a fresh machine: the locked crates are not in Cargo's cache yet
        build_step([cargo, "fetch", "--locked", "--quiet"], src, timeout,
                   "rust peer: cargo fetch --locked (needs crates.io once)", env)
        build_step(build, src, timeout, "rust peer build", env)
    binary = out / "tcpeers-rust"
    tmp = out / ".tcpeers-rust.tmp"
    shutil.copy2(target / "release" / "tcpeers-rust", tmp)
    os.replace(tmp, binary)
    return [str(binary)]


RUST = Peer(language="rust", source_dir=NATIVE_ROOT / "rust",
            source_globs=("Cargo.toml", "Cargo.lock", "build.rs", "src/*.rs"),
            find=_find, build=_build,
            programs=("sleepers", "million", "pingpong", "launch", "memory", "brigade",
                      "readiness"),
            kinds=(
                # S4's program ran Rust threads unpinned and pinned round-robin
                Runtime(key="rust-thread", label="Rust thread", colour="#d55e00",
                        runtime="std::thread", flag="thread",
                        kernel_task=True, need_kib=64,
                        sleepers=(SleepersVariant("rust_threads"),
                                  SleepersVariant("rust_threads_pinned",
                                                  (("pin", "round-robin"),),
                                                  "pinned round-robin")),
                        switch_how="std::sync::mpsc rendezvous channels, process pinned "
                                   "to one CPU",
                        memory_how="threads (2 MiB stacks) blocked on a lock"),
                Runtime(key="tokio-task", label="Tokio task", colour="#56b4e9",
                        runtime="current_thread runtime", flag="tokio-ct",
                        kernel_task=False, need_kib=2, sleepers=(SleepersVariant("tokio"),),
                        switch_how="tokio::sync::mpsc channels, current_thread runtime, "
                                   "pinned",
                        memory_how="tasks awaiting a lock"),
                Runtime(key="tokio-task-mt", label="Tokio task (multi-thread runtime)",
                        colour="#fbafe4", headline=False, flag="tokio-mt",
                        kernel_task=False, need_kib=2,
                        sleepers=(SleepersVariant("tokio_mt"),),
                        switch_how="tokio::sync::mpsc channels, multi-thread runtime, pinned",
                        memory_how="tasks awaiting a lock"),
            ))
