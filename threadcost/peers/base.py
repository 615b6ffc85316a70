"""The peer contract and the machinery shared by every language."""

from __future__ import annotations

import functools
import hashlib
import json
import os
import selectors
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from threadcost import paths
from threadcost.errors import KernelError
from threadcost.peers import build_cache
from threadcost.peers.kinds import Runtime

BUILD_ROOT = paths.REPO_ROOT / "build" / "peers"
NATIVE_ROOT = paths.REPO_ROOT / "native" / "peers"

# Every program's JSON carries these fields (besides program and the runtime's
# version), whatever the language. sleepers' page tables (VmPTE of /proc/self/status,
# KiB): ``page_tables_before_kib`` before the first task is started,
# ``peak_page_tables_kib`` the largest reading, once every task exists (at the gate)
# and then every period while they run. Every peer prints them; a run stored before
# they were added lacks them, so whatever reads a stored run takes them as optional
# (C16's reader, threadcost.findings.sleepers, then falls back to the C-thread runs).
CONTRACT: dict[str, tuple[str, ...]] = {
    "sleepers": ("count", "wakeups", "wall_ns", "spawn_ns", "user_us", "sys_us",
                 "rss_before_kib", "peak_rss_kib", "peak_threads",
                 "page_tables_before_kib", "peak_page_tables_kib"),
    "million": ("count", "finished", "spawn_ns", "alive_at_spawn_end", "hwm_kib"),
    "pingpong": ("iterations", "batch_ns", "samples_ns", "timer_overhead_ns"),
    "launch": ("iterations", "batch_ns", "samples_ns"),
    "memory": ("count", "points"),
    "brigade": ("tasks", "samples_ns", "timer_overhead_ns"),
}
# Environment variables a runtime reads whose values the study leaves at their defaults.
# (RUST_MIN_STACK: std::thread's default stack, 2 MiB, as S1, S4 and S5 ran it.)
RUNTIME_ENV = ("GOMAXPROCS", "GOGC", "GODEBUG", "GOMEMLIMIT", "JAVA_TOOL_OPTIONS",
               "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS", "TOKIO_WORKER_THREADS", "RUST_MIN_STACK")


@dataclass
class RunOutput:
    """A peer run: its validated JSON, and (when timed) wait4's view of it."""

    data: dict[str, Any]
    wall_ns: int | None = None
    user_s: float | None = None
    sys_s: float | None = None
    max_rss_kib: int | None = None


@dataclass
class Peer:
    """One language's peer. ``find`` returns (toolchain, None) or (None, reason);
    ``build`` builds into a folder and returns the command that runs the peer;
    ``kinds`` declares each runtime it runs, once (:class:`~threadcost.peers.kinds.
    Runtime`: everything the study reads of it)."""

    language: str
    source_dir: Path
    source_globs: tuple[str, ...]
    find: Callable[[], tuple[dict[str, str] | None, str | None]]
    build: Callable[[dict[str, str], Path, float], list[str]]
    programs: tuple[str, ...]
    kinds: tuple[Runtime, ...]

    @property
    def runtimes(self) -> tuple[str, ...]:
        """The ``-runtime`` names its programs take, one per runtime."""
        return tuple(dict.fromkeys(k.flag for k in self.kinds))

    @property
    def build_dir(self) -> Path:
        return BUILD_ROOT / self.language

    def sources(self) -> list[Path]:
        return sorted({p for g in self.source_globs for p in self.source_dir.glob(g)
                       if p.is_file()})

    def fingerprint(self, tool: dict[str, str]) -> str:
        h = hashlib.sha256(json.dumps(tool, sort_keys=True).encode())
        for p in self.sources():
            h.update(str(p.relative_to(self.source_dir)).encode())
            h.update(p.read_bytes())
        return h.hexdigest()

    def toolchain(self) -> dict[str, str] | None:
        return self.find()[0]

    def absent_reason(self) -> str | None:
        """None when the peer can be built and run here, else what is missing
        and how to install it."""
        return self.find()[1]

    def version(self) -> str | None:
        tool = self.toolchain()
        return tool.get("version") if tool else None

    def ensure_built(self, timeout: float = 600.0) -> list[str]:
        """Build once (cached by a fingerprint of the sources and the toolchain);
        return the command that runs the peer. Raises KernelError when the
        toolchain is absent or the build fails. A build another clone made from the
        same sources with the same toolchain is copied instead (build_cache)."""
        tool, reason = self.find()
        if tool is None:
            raise KernelError(f"{self.language} peer build", 4, 0, reason or "no toolchain")
        stamp = self.build_dir / "fingerprint"
        command_file = self.build_dir / "command.json"
        print_ = self.fingerprint(tool)
        if stamp.is_file() and command_file.is_file() and stamp.read_text() == print_:
            command = [str(c) for c in json.loads(command_file.read_text())]
            if Path(command[0]).exists():
                build_cache.store(self.language, print_, self.build_dir, command)  # once
                return command
        self.build_dir.mkdir(parents=True, exist_ok=True)
        command = build_cache.restore(self.language, print_, self.build_dir)
        if command is None:
            command = self.build(tool, self.build_dir, timeout)
            build_cache.store(self.language, print_, self.build_dir, command)
        command_file.write_text(json.dumps(command))
        stamp.write_text(print_)
        return command

    def argv(self, program: str, runtime: str, args: dict[str, Any]) -> list[str]:
        if program not in self.programs:
            raise KernelError(f"{self.language} peer", 4, 0,
                              f"has no program {program!r} ({', '.join(self.programs)})")
        out = [*self.ensure_built(), program]
        if runtime:
            out += ["-runtime", runtime]
        for name, value in args.items():
            flag = "-" + name.replace("_", "-")
            if value is True:
                out.append(flag)
            elif value is not False and value is not None:
                out += [flag, str(value)]
        return out

    def run(self, program: str, runtime: str, args: dict[str, Any], timeout: float,
            cpu: int | None = None, timed: bool = False) -> RunOutput:
        """Run one program; its JSON is checked against :data:`CONTRACT`."""
        argv = self.argv(program, runtime, args)
        out = run_command(argv, timeout, f"{self.language} peer {program}", cpu=cpu)
        data = parse_json(out["stdout"], f"{self.language} peer {program}")
        missing = [f for f in CONTRACT.get(program, ()) if f not in data]
        if missing:
            raise KernelError(f"{self.language} peer {program}", 4, 0,
                              f"JSON lacks {', '.join(missing)}")
        if not timed:
            return RunOutput(data)
        return RunOutput(data, out["wall_ns"], out["user_s"], out["sys_s"], out["max_rss_kib"])


def parse_json(text: str, what: str) -> dict[str, Any]:
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise KernelError(what, 4, 0, f"output is not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise KernelError(what, 4, 0, "output is not a JSON object")
    return data


def clean_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = os.environ.copy()
    for name in RUNTIME_ENV:
        env.pop(name, None)
    env.update(extra or {})
    return env


def run_command(argv: Sequence[str], timeout: float, what: str, cpu: int | None = None,
                env: dict[str, str] | None = None) -> dict[str, Any]:
    """Start argv (pinned to ``cpu`` when given, with every thread it starts),
    reap it with wait4 and return stdout, wall from start to reap and wait4's
    rusage, as ``/usr/bin/time`` reports them. Stopped after ``timeout`` s."""
    def pin() -> None:
        if cpu is not None:
            os.sched_setaffinity(0, {cpu})

    t0 = time.monotonic_ns()
    proc = subprocess.Popen(list(argv), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL, env=env or clean_env(),
                            preexec_fn=pin if cpu is not None else None)
    # read both pipes and reap with wait4 on this thread (no helper thread: its stack
    # would stay mapped in the caller), stopping the child at the deadline
    deadline = time.monotonic() + timeout
    out_fd, err_fd = proc.stdout.fileno(), proc.stderr.fileno()  # type: ignore[union-attr]
    out: dict[int, list[bytes]] = {out_fd: [], err_fd: []}
    try:
        with selectors.DefaultSelector() as sel:
            for f in (proc.stdout, proc.stderr):
                sel.register(f, selectors.EVENT_READ)  # type: ignore[arg-type]
            while sel.get_map():
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError
                for key, _ in sel.select(left):
                    chunk = os.read(key.fd, 1 << 16)
                    if chunk:
                        out[key.fd].append(chunk)
                    else:
                        sel.unregister(key.fileobj)
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                raise TimeoutError
            time.sleep(0.005)
    except TimeoutError:
        proc.kill()
        os.wait4(proc.pid, 0)
        proc.returncode = -9
        raise KernelError(what, 5, 0,
                          f"did not finish within {timeout:g} s and was stopped") from None
    finally:
        proc.stdout.close()  # type: ignore[union-attr]
        proc.stderr.close()  # type: ignore[union-attr]
    t1 = time.monotonic_ns()
    proc.returncode = os.waitstatus_to_exitcode(status)
    stdout, stderr = b"".join(out[out_fd]), b"".join(out[err_fd])
    if proc.returncode != 0:
        raise KernelError(what, 4, 0, f"exit status {proc.returncode}: "
                                      f"{stderr.decode(errors='replace').strip()[-300:]}")
    return {"stdout": stdout.decode(), "wall_ns": t1 - t0,
            "user_s": usage.ru_utime, "sys_s": usage.ru_stime, "max_rss_kib": usage.ru_maxrss}


def which_in(name: str, path: str | None = None) -> str | None:
    import shutil

    return shutil.which(name, path=path if path is not None else os.environ.get("PATH", ""))


def tool_version(argv: list[str], env: dict[str, str] | None = None) -> str:
    """The first line a tool prints about its version ("" when it cannot be run).

    Every peer run checks its toolchain first, and ``cargo --version`` took 40 ms,
    ``go version`` 11 ms, before each of make paper's ~150 peer runs: the answer is kept
    for the same arguments, environment and tool file (its real path, modification time
    and size) for at most VERSION_KEPT_S (a rustup shim stays the same file when the
    toolchain behind it changes). A replaced tool is asked again at once (javac's
    release is kept the same way, :mod:`threadcost.peers.java`)."""
    items = tuple(sorted((env if env is not None else os.environ).items()))
    try:
        st = os.stat(argv[0])
    except (OSError, IndexError):
        return _tool_version(tuple(argv), items)
    return _tool_version_of(tuple(argv), items, os.path.realpath(argv[0]), st.st_mtime_ns,
                            st.st_size, int(time.monotonic() // VERSION_KEPT_S))


VERSION_KEPT_S = 60.0


@functools.lru_cache(maxsize=64)
def _tool_version_of(argv: tuple[str, ...], env_items: tuple[tuple[str, str], ...],
                     real: str, mtime_ns: int, size: int, period: int) -> str:
    del real, mtime_ns, size, period  # the cache key: a replaced tool is asked again
    return _tool_version(argv, env_items)


def _tool_version(argv: tuple[str, ...], env_items: tuple[tuple[str, str], ...]) -> str:
    env = dict(env_items)
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=60, env=env,
                              stdin=subprocess.DEVNULL, check=False)
    except (OSError, subprocess.SubprocessError):  # not executable by this user, or stuck
        return ""
    return (proc.stdout or proc.stderr).strip().splitlines()[0] if (
        proc.stdout or proc.stderr).strip() else ""


def build_step(argv: list[str], cwd: Path, timeout: float, what: str,
               env: dict[str, str] | None = None) -> None:
    try:
        proc = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=timeout,
                              env=env, stdin=subprocess.DEVNULL, check=False)
    except subprocess.TimeoutExpired:
        raise KernelError(what, 5, 0, f"did not finish within {timeout:g} s") from None
    if proc.returncode != 0:
        raise KernelError(what, 4, 0, (proc.stderr or proc.stdout).strip()[-400:])
