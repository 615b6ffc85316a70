"""The reader's bare machine: the paper with no Go, Rust or JDK, no perf or pmap, no peer
cache, and the paper on one usable CPU.

The toolchains are hidden as a machine that lacks them lacks them: in a mount
namespace (``unshare -m``), an empty folder is bound over each toolchain's folder
(``/usr/local/go``, ``~/.cargo``, ``/usr/lib/jvm`` ...) and an empty, non-executable
file over a tool that lives in a shared folder (``/usr/bin/perf``). Where no mount
namespace can be made (not root, no user namespaces) the build runs with a PATH of
its own that holds every other program of PATH but not these, and says so.

Each lane measures (params/quick.yaml, shrunk further where a notebook's own
parameters allow) only the notebooks the lane changes, with the summary pages drawn
from what they stored: what is not run reads "not run here: <why>", every page
renders, every stored run reads back, and the build's last lines name what was not
run. Nothing asserts on a measured value.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

HIDDEN_TOOLS = ("go", "gofmt", "cargo", "rustc", "rustup", "java", "javac", "perf", "pmap")
JVM_DIRS = ("/usr/lib/jvm", "/usr/local/lib/jvm", "/opt/java", "/opt/jdk")
SYSTEM_PREFIXES = (Path("/"), Path("/usr"), Path("/usr/local"))
# The notebooks the peers feed (05, 07, 08) are measured with them hidden; perf's and
# pmap's absence is asked of their experiments directly (PROBE: notebooks 02 and 04
# would cost a minute of CPU more, and their pages without perf or pmap are drawn from
# the 16-CPU host's folder by tests/test_every_folder_renders.py). The one-CPU lane
# measures notebook 04, whose cross-CPU placements need a second CPU.
BARE_NOTEBOOKS = ("05", "07", "08")
ONE_CPU_NOTEBOOKS = ("04",)
PROBE = """
import json, os
from threadcost.experiments.context_switch import run as context_switch
from threadcost.experiments.thread_memory import run as thread_memory
from threadcost.peers import PEERS
print(json.dumps({"perf": context_switch.perf_bench_pipe(10, -1),
                  "pmap": thread_memory.pmap_rss_kib(os.getpid()),
                  "peers": {k: p.absent_reason() for k, p in PEERS.items()}}))
"""
LANE_TIMEOUT_S = 900
# params/quick.yaml shrunk further for the lanes: fewer iterations, fewer or smaller
# points, never fewer kinds or placements (every section still runs, or says why not).
# The lanes check what is run and what is said, not the numbers; the quick rendering
# (tests/conftest.py) measures these notebooks with the quick parameters themselves.
LANE_PARAMS = {
    # 04 (one CPU)
    "switch_iterations": 200, "switch_warmup": 20, "switch_ws_seconds_per_point": 0.01,
    "switch_ws_iterations": 100, "switch_echo_iterations": 300,
    "switch_placement_iterations": 300, "switch_perf_iterations": 500,
    "cpu_bound_limit": 300, "cpu_bound_ws_limit": 5, "cpu_bound_ws_ints": 16384,
    # 05 (bare)
    "tasks_switch_iterations": 1000, "tasks_warmup": 100, "tasks_fiber_count": 100,
    "tasks_kernel_switch_iterations": 500,
    "tasks_sleep_sweep_duration_ms": 40,
    # 07 (bare)
    "brigade_tasks": [2, 20], "brigade_iterations": 30, "brigade_warmup": 5,
    "brigade_reference_iterations": 100,
    # 08 (bare)
    "sources_spawn_mib": [0, 4], "sources_spawn_iterations": 3,
    "sources_fiber_iterations": 1000, "sources_switch_iterations": 200,
    "sources_target_accesses": 50000, "sources_threads": 500, "sources_wave": 100,
}


def lane_params(folder: Path) -> Path:
    """params/quick.yaml with LANE_PARAMS over it, written into ``folder``."""
    import yaml

    from tests.conftest import quick_params

    path = folder / "lane.yaml"
    path.write_text(yaml.safe_dump({**quick_params(), **LANE_PARAMS}))
    return path


def hiding_plan(path: str | None = None) -> tuple[list[Path], list[Path]]:
    """(folders to cover with an empty folder, files to cover with an empty file) that
    hide HIDDEN_TOOLS found on ``path`` (default: PATH) and the JDKs' usual homes."""
    folders: set[Path] = set()
    files: set[Path] = set()
    for tool in HIDDEN_TOOLS:
        found = shutil.which(tool, path=path)
        if found is None:
            continue
        real = Path(found).resolve()
        root = real.parent.parent if real.parent.name == "bin" else real.parent
        if root in SYSTEM_PREFIXES:  # a tool of the system's own bin folder
            files.add(Path(found))
            if real != Path(found):
                files.add(real)
            continue
        # a JDK lives in <jvm folder>/<jdk>/bin: the whole jvm folder goes
        folders.add(root.parent if root.parent.name == "jvm" else root)
    folders |= {Path(d) for d in JVM_DIRS if Path(d).is_dir()}
    rustup = Path.home() / ".rustup"
    if rustup.is_dir():
        folders.add(rustup)
    return sorted(folders), sorted(files - {f for f in files
                                            if any(d in f.parents for d in folders)})


def _can_unshare() -> bool:
    if shutil.which("unshare") is None or os.geteuid() != 0:
        return False
    return subprocess.run(["unshare", "-m", "true"], capture_output=True,
                          check=False).returncode == 0


def _bare_path(folder: Path) -> str:
    """A PATH (one folder of links) with every program of PATH but HIDDEN_TOOLS."""
    folder.mkdir()
    for d in os.environ.get("PATH", "").split(os.pathsep):
        try:
            names = sorted(os.listdir(d)) if d else []
        except OSError:
            continue
        for name in names:
            target = Path(d) / name
            if name in HIDDEN_TOOLS or (folder / name).exists():
                continue
            if os.access(target, os.X_OK) and target.is_file():
                (folder / name).symlink_to(target)
    return str(folder)


def bare_command(argv: list[str], scratch: Path) -> tuple[list[str], dict[str, str], str]:
    """(command, environment, how) that runs ``argv`` with the toolchains hidden."""
    env = {**os.environ, "THREADCOST_PEER_CACHE": "off",
           "XDG_CACHE_HOME": str(scratch / "cache"), "HOME": os.environ.get("HOME", "/root")}
    env.pop("JAVA_HOME", None)
    (scratch / "cache").mkdir(parents=True)
    if _can_unshare():
        empty_dir, empty_file = scratch / "empty", scratch / "empty-file"
        empty_dir.mkdir()
        empty_file.write_bytes(b"")
        empty_file.chmod(0o644)
        folders, files = hiding_plan()
        mounts = [f"mount --bind {empty_dir} {d}" for d in folders]
        mounts += [f"mount --bind {empty_file} {f}" for f in files]
        script = " && ".join(["mount --make-rprivate /", *mounts, 'exec "$@"'])
        return (["unshare", "-m", "sh", "-c", script, "sh", *argv], env,
                "mount namespace over " + ", ".join(str(p) for p in folders + files))
    env["PATH"] = _bare_path(scratch / "bin")
    env["THREADCOST_JVM_DIRS"] = ""
    return argv, env, "no mount namespace here: a PATH without the toolchains"


def _build(scratch: Path, only: tuple[str, ...], wrap: bool,
           cpus: set[int] | None = None) -> tuple[subprocess.CompletedProcess[str], Path, str]:
    data, out = scratch / "data", scratch / "paper"
    scratch.mkdir(parents=True, exist_ok=True)
    argv = [sys.executable, "-m", "threadcost.paper", "--params", str(lane_params(scratch)),
            "--out", str(out), "--only", *only]
    env = {**os.environ, "THREADCOST_DATA_DIR": str(data),
           "THREADCOST_FIGURES_DIR": str(scratch / "figures")}
    how = "toolchains present"
    if wrap:
        argv, env, how = bare_command(argv, scratch)
        env.update(THREADCOST_DATA_DIR=str(data), THREADCOST_FIGURES_DIR=str(scratch / "figures"))

    def affinity() -> None:
        if cpus is not None:
            os.sched_setaffinity(0, cpus)

    proc = subprocess.run(argv, cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=LANE_TIMEOUT_S, stdin=subprocess.DEVNULL, check=False,
                          preexec_fn=affinity if cpus is not None else None)
    return proc, out / "html", how


def _pages_render(proc: subprocess.CompletedProcess[str], html: Path,
                  only: tuple[str, ...], data: Path) -> dict[str, str]:
    from threadcost.paper import hygiene
    from threadcost.store import datastore

    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-4000:]
    stems = [p.stem for p in sorted((REPO / "notebooks").glob("[0-9][0-9]_*.py"))
             if p.name.startswith(only)]
    pages = {s: (html / f"{s}.html").read_text(encoding="utf-8") for s in stems}
    for stem, page in pages.items():
        assert "Traceback" not in page and "Error: " not in page, stem
        assert not [p for p in hygiene.problems(page) if p.startswith("traceback")], stem
    assert datastore.skipped_runs(data_dir=data) == []  # every stored run reads back
    return pages


@pytest.mark.notebook
def test_bare_machine_paper_says_what_it_did_not_run(tmp_path: Path) -> None:
    """No Go, Rust, JDK, perf or pmap and no peer cache: the build exits 0, every page
    it draws renders, the peers' rows read "not run here: ... not installed", and the
    build ends with one line per thing it did not run."""
    proc, html, how = _build(tmp_path, BARE_NOTEBOOKS, wrap=True)
    print(how)
    pages = _pages_render(proc, html, BARE_NOTEBOOKS, tmp_path / "data")
    page05 = pages["05_user_space_tasks"]
    for what in ("the Go toolchain is not installed", "the Rust toolchain is not installed",
                 "no JDK 21 or later is installed"):
        assert f"not run here: {what}" in page05, what
    assert "not run here: the Go toolchain is not installed" in pages["07_io_brigade"]
    assert "the Go toolchain is not installed" in pages["08_more_sources"]
    # a reason a sentence embeds is said once: never "not run: not run here: ..."
    for stem, page in pages.items():
        text = re.sub(r"<[^>]+>", " ", page)
        twice = re.findall(r"not run[^.<]{0,40}?:\s+not run here\b.{0,60}", text)
        assert not twice, (stem, twice[:3])
    tail = proc.stdout[proc.stdout.index("Not run here ("):]
    for what in ("Go toolchain", "Rust toolchain", "JDK"):
        assert what in tail, tail
    argv, env, _ = bare_command([sys.executable, "-c", PROBE], tmp_path / "probe")
    probe = subprocess.run(argv, cwd=REPO, env=env, capture_output=True, text=True,
                           timeout=120, stdin=subprocess.DEVNULL, check=False)
    assert probe.returncode == 0, probe.stderr[-2000:]
    found = json.loads(probe.stdout)
    assert found["perf"] == {"ok": False, "reason": "perf is not installed"}
    assert found["pmap"] is None
    assert all(why and why.startswith("not run here") for why in found["peers"].values())


@pytest.mark.notebook
def test_one_usable_cpu_paper_says_the_cross_cpu_parts_need_two(tmp_path: Path) -> None:
    """With one CPU in the affinity mask (as ``taskset -c <cpu>``), notebook 04
    measures what one CPU allows and its cross-CPU placements read "not run here"."""
    cpu = min(os.sched_getaffinity(0))
    proc, html, _ = _build(tmp_path, ONE_CPU_NOTEBOOKS, wrap=False, cpus={cpu})
    page = _pages_render(proc, html, ONE_CPU_NOTEBOOKS, tmp_path / "data")["04_context_switch"]
    text = re.sub(r"<[^>]+>", " ", page)
    # the placements that need a second CPU say why they did not run (the wording is
    # the CPU choice's: "not run here: ..." or "Skipped: ... needs 2 CPUs ...")
    assert re.search(r"(?:not run here|skipped)\W[^.]{0,200}\b(?:2|two) CPUs\b", text,
                     re.I), "no line says the cross-CPU placements need a second CPU"


def test_hiding_plan_covers_every_toolchain_found_here() -> None:
    """The plan hides what this machine has: after it, none of the tools is on PATH."""
    folders, files = hiding_plan()
    for tool in HIDDEN_TOOLS:
        found = shutil.which(tool)
        if found is None:
            continue
        real = Path(found).resolve()
        hidden = any(d == p or d in p.parents for d in folders for p in (real, Path(found)))
        assert hidden or Path(found) in files or real in files, (tool, found)


def test_toolchain_search_passes_over_a_folder_this_user_cannot_read(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Issue 37: a folder on PATH (or JAVA_HOME, or a JDK folder) that this user may not
    search raised PermissionError from the peers' toolchain search. (Root reads every
    folder: the denial is made by stat and listdir themselves.)"""
    from threadcost.peers import PEERS

    locked = tmp_path / "locked"
    (locked / "bin").mkdir(parents=True)
    real_stat, real_listdir = os.stat, os.listdir

    def denied(path: object) -> bool:
        return str(path).startswith(str(locked))

    def stat(path: object, *args: object, **kwargs: object) -> os.stat_result:
        if denied(path):
            raise PermissionError(13, "Permission denied", str(path))
        return real_stat(path, *args, **kwargs)  # type: ignore[arg-type]

    def listdir(path: object = ".") -> list[str]:
        if denied(path):
            raise PermissionError(13, "Permission denied", str(path))
        return real_listdir(path)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "stat", stat)
    monkeypatch.setattr(os, "listdir", listdir)
    monkeypatch.setenv("PATH", os.pathsep.join([str(locked / "bin"),
                                                os.environ.get("PATH", "")]))
    monkeypatch.setenv("JAVA_HOME", str(locked))
    monkeypatch.setenv("THREADCOST_JVM_DIRS", str(locked))
    for peer in PEERS.values():
        reason = peer.absent_reason()  # no PermissionError
        assert reason is None or reason.startswith("not run here"), reason


def test_a_cross_check_that_cannot_be_built_reads_not_run_here(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The brigade's reference program failing to build (a compiler that refuses it)
    is a cross-check not run, said in its section; it stops nothing."""
    from threadcost.errors import KernelError
    from threadcost.experiments.brigade import run as brigade
    from threadcost.notebook import stored
    from threadcost.views import brigade as view

    def refuse() -> None:
        raise KernelError("brigade_ref build", 4, 0, "brigade_ref.c:38: error: ignoring "
                          "return value of 'write'")

    monkeypatch.setattr(brigade, "build_reference", refuse)
    check = brigade.reference_check(tasks=10, iterations=20, warmup=2, rounds=1)
    assert check["skipped"].startswith("not run here") and "write" in check["skipped"]
    stored_check = stored.to_dict(stored.from_dict("brigade_reference", check))
    assert "not run here" in view.reference_text(stored_check)
    assert "not run here" in view.reference_table(stored_check).to_html()
    from threadcost import cbuild

    monkeypatch.undo()  # the real build_reference, now with no compiler at all
    monkeypatch.setattr(brigade, "REFERENCE_BINARY", tmp_path / "brigade_ref")
    monkeypatch.setattr(cbuild, "compiler_command", lambda: None)
    assert "no C compiler" in brigade.reference_check(tasks=10, iterations=20, warmup=2,
                                                      rounds=1)["skipped"]
