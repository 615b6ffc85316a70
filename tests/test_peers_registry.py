"""The peer interface (threadcost.peers): one contract for every language.

Each peer whose toolchain is here is built (cached) and every program it has
runs once on quick parameters on each runtime, its JSON checked against the
contract. With the toolchain hidden (PATH, JAVA_HOME, THREADCOST_JVM_DIRS), its
rows read "not run here" with what is missing, and the notebook 05 code path
still produces its tables."""

from __future__ import annotations

import math
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from threadcost import paths, peers
from threadcost.errors import ParameterError
from threadcost.experiments.user_space_tasks import million, runtimes, sleepers
from threadcost.views import runtimes as runtimes_view

QUICK = {
    "sleepers": {"count": 20, "period_ms": 5, "duration_ms": 20, "stagger_ms": 5},
    "million": {"count": 50, "sleep_ms": 10, "gate": True},
    "pingpong": {"iterations": 200, "warmup": 20},
    "launch": {"iterations": 50, "warmup": 5},
    "memory": {"count": 30, "points": 3},
    "brigade": {"tasks": 5, "iterations": 20, "warmup": 2},
}


def _path_without(*commands: str) -> str:
    keep = [d for d in os.environ.get("PATH", "").split(os.pathsep)
            if d and not any((Path(d) / c).exists() for c in commands)]
    return os.pathsep.join(keep)


def _hide_java(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", _path_without("java", "javac"))
    monkeypatch.setenv("THREADCOST_JVM_DIRS", str(tmp_path))


@pytest.mark.parametrize("language", ["go", "rust", "java"])
def test_each_peer_builds_and_keeps_the_contract(language: str) -> None:
    peer = peers.peer(language)
    reason = peer.absent_reason()
    if reason is not None:
        pytest.skip(reason)
    command = peer.ensure_built()
    assert peer.ensure_built() == command  # cached: the second call does not rebuild
    for runtime in peer.runtimes:
        for program in peer.programs:
            if language == "go" and program in ("sleepers", "million", "brigade"):
                continue  # the Go peer's own tests run these (test_peers.py, test_brigade.py)
            if program == "readiness":
                continue  # Tokio's runtimes only: tests/test_readiness.py runs it
            args = dict(QUICK[program])
            if language == "go" and program == "million":
                args.pop("gate")
            out = peer.run(program, runtime, args, timeout=120)
            for field in peers.CONTRACT[program]:
                assert field in out.data, (language, runtime, program, field)
            if program == "million":
                assert out.data["finished"] == out.data["count"]
            if program == "memory":
                assert [p["tasks"] if "tasks" in p else p["goroutines"]
                        for p in out.data["points"]][-1] == 30
            if program == "sleepers":
                assert out.data["wakeups"] == 20 * 4
                # the program's page tables (VmPTE, KiB): before the first task, and
                # the largest reading from the moment every task exists
                before = out.data["page_tables_before_kib"]
                peak = out.data["peak_page_tables_kib"]
                assert 0 < before <= peak, (language, runtime)
                if runtime in ("thread", "platform"):  # 20 new stacks mapped and written
                    assert peak - before >= 4, (language, runtime)


def test_each_runtime_is_declared_once_and_whole() -> None:
    """Every runtime of every peer (threadcost/peers/<language>.py): a kind no other
    declares, a -runtime flag its peer takes once, words that list (no comma), a colour
    of its own, a sleepers variant no other kind or C variant uses; page 5's table lists
    only kinds whose peer has the programs it runs (launch, memory)."""
    kinds = [k for p in peers.PEERS.values() for k in p.kinds]
    assert len({k.key for k in kinds}) == len(kinds) == len(peers.KINDS)
    for language, peer in peers.PEERS.items():
        assert len(peer.runtimes) == len(peer.kinds), language
        assert all(peers.LANGUAGES[k.key] == language for k in peer.kinds)
    assert all("," not in k.label and k.label for k in kinds)
    assert len({k.colour for k in kinds}) == len(kinds)
    variants = [v.name for k in kinds for v in k.sleepers]
    assert len(set(variants)) == len(variants)
    c_variants = set(sleepers.ALL_VARIANTS) - set(sleepers.PEER_VARIANTS)
    assert c_variants == {"threads", "threads_pinned"} and not set(variants) & c_variants
    assert all(k.need_kib > 0 for k in kinds)
    for name in peers.PAGE5_KINDS:
        assert {"launch", "memory"} <= set(peers.peer_of(name).programs), name
        assert bool(runtimes_view.SWITCH_HOW.get(name)) == (
            "pingpong" in peers.peer_of(name).programs), name


@pytest.mark.parametrize("params", ["quick.yaml", "large.yaml"])
def test_the_shipped_sets_run_every_page_5_runtime(params: str) -> None:
    """quick.yaml and large.yaml name no runtime: "all" runs each that page 5 runs by
    default, as the registry declares them (a new runtime needs no parameter changed)."""
    from threadcost.experiments import parameters

    values = parameters.check_file(paths.REPO_ROOT / "params" / params)
    assert values["tasks_peer_kinds"] == [peers.ALL]
    chosen = runtimes.check_params(kinds=values["tasks_peer_kinds"], cpu=0)["kinds"]
    assert chosen == list(peers.PAGE5_KINDS) == parameters.declared("tasks_peer_kinds").default


def test_a_peer_rejects_a_program_it_does_not_have() -> None:
    java = peers.peer("java")
    if java.absent_reason() is not None:
        pytest.skip(java.absent_reason())
    with pytest.raises(Exception, match="no program 'pingpong'"):
        java.run("pingpong", "virtual", {}, timeout=30)


def test_bad_flags_give_a_clear_error() -> None:
    rust = peers.peer("rust")
    if rust.absent_reason() is not None:
        pytest.skip(rust.absent_reason())
    with pytest.raises(Exception, match="-count 0: must be at least 1"):
        rust.run("memory", "thread", {"count": 0}, timeout=30)


def test_without_cargo_rust_rows_read_not_run_here(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", _path_without("cargo"))
    reason = peers.kind_reason("tokio-task")
    assert reason is not None and "not run here" in reason and "cargo" in reason
    assert "rustup" in reason  # how to install it
    r = runtimes.run(kinds=["rust-thread", "tokio-task"], iterations=10, launch_iterations=10,
                     task_count=3, thread_count=3, points=3)
    assert all(s["not_run"] == reason for s in r.summary["kinds"].values())
    rows = runtimes_view.peer_rows(r)
    assert [row["missing"] for row in rows] == [reason, reason]


def test_without_a_jdk21_java_rows_read_not_run_here(monkeypatch: pytest.MonkeyPatch,
                                                     tmp_path: Path) -> None:
    _hide_java(monkeypatch, tmp_path)
    reason = peers.kind_reason("java-virtual")
    assert reason is not None and "JDK 21 or later" in reason and "JAVA_HOME" in reason


def test_notebook_05_peer_cells_succeed_without_cargo_or_jdk(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _hide_java(monkeypatch, tmp_path)
    monkeypatch.setenv("PATH", _path_without("cargo", "java", "javac"))
    r = runtimes.run(iterations=10, launch_iterations=10, task_count=3, thread_count=3,
                     points=3)
    table = runtimes_view.peer_rows(r)
    assert all(row["missing"].startswith("not run here") for row in table)
    s4 = sleepers.run(count=5, period_ms=5, duration_ms=10, stagger_ms=0,
                      variants=["rust_threads", "rust_threads_pinned", "tokio"], repeats=2)
    shown = runtimes_view.sleepers_table(s4)
    assert shown["not run because"].str.contains("cargo").all()
    assert s4.tables["repeats"].not_run.str.contains("cargo").all()
    peak = million.peer_tasks(kinds=["rust-thread", "tokio-task", "java-platform",
                                     "java-virtual"], count=10, sleep_ms=1,
                              experiment=million.PEAK_EXPERIMENT)
    shown = runtimes_view.million_table(peak)
    assert shown["not run because"].str.startswith("not run here").all()
    from threadcost.views import headline

    cells = headline.cells(tmp_path, "no-such-machine")
    peer_rows = cells[cells.task.isin(["rust-thread", "tokio-task", "java-platform",
                                       "java-virtual"])]
    assert len(peer_rows) == 12 and peer_rows["value"].isna().all()
    assert peer_rows["not_run"].str.len().gt(0).all()


def test_peer_rows_when_measured() -> None:
    if peers.kind_reason("tokio-task") is not None:
        pytest.skip(peers.kind_reason("tokio-task"))
    r = runtimes.run(kinds=["rust-thread", "tokio-task"], iterations=200, warmup=20,
                     launch_iterations=50, task_count=300, thread_count=30, points=3,
                     repeats=2)
    for kind in ("rust-thread", "tokio-task"):  # each repeat a fresh ping-pong process
        each = r.summary["kinds"][kind]["switch_ns_batch_repeats"]
        assert len(each) == 2 and all(x > 0 for x in each)
    rows = {row["task"]: row for row in runtimes_view.peer_rows(r)}
    for name in ("Rust thread", "Tokio task"):
        row = rows[name]
        assert row["missing"] is None
        if name == "Rust thread":  # a kernel thread: its switch is the OS thread's
            assert row["switch_ns"] is None and row["kernel_thread"]
        else:
            assert math.isfinite(row["switch_ns"]) and row["switch_ns"] > 0
        assert row["create_ns"] is None and row["life_ns"] > 0  # the peers time whole lives
        assert math.isfinite(row["rss_per_task_kib"])


def test_s1_thread_kinds_scale_and_say_so() -> None:
    if peers.kind_reason("rust-thread") is not None:
        pytest.skip(peers.kind_reason("rust-thread"))
    r = million.peer_tasks(kinds=["rust-thread"], count=200, sleep_ms=10, thread_cap=50)
    row = r.summary["kinds"]["rust-thread"]
    assert row["measured_count"] == 50 and row["finished"] == 50
    assert row["at_count_label"].startswith("computed")
    assert row["max_rss_kib_at_count"] == pytest.approx(row["max_rss_kib"] * 4)


def test_sleepers_rust_variants_when_cargo_exists() -> None:
    if peers.kind_reason("rust-thread") is not None:
        pytest.skip(peers.kind_reason("rust-thread"))
    r = sleepers.run(count=20, period_ms=5, duration_ms=20, stagger_ms=5,
                     variants=["rust_threads_pinned", "tokio"], repeats=2)
    for variant in ("rust_threads_pinned", "tokio"):
        row = r.summary["variants"][variant]
        assert row["not_run"] is None and row["wakeups"] == 20 * 4 and row["repeats"] == 2
    rows = r.tables["repeats"]  # each a fresh peer process, the order reversed per repeat
    assert list(zip(rows.repeat, rows.variant, strict=True)) == [
        (0, "rust_threads_pinned"), (0, "tokio"), (1, "tokio"), (1, "rust_threads_pinned")]
    assert (rows.wakeups == 20 * 4).all() and (rows.peak_rss_kib > 0).all()
    threads = rows[rows.variant == "rust_threads_pinned"]  # C16: page tables per thread
    assert (threads.page_tables_per_task_kib > 0).all()
    assert (threads.page_tables_growth_kib == threads.peak_page_tables_kib
            - threads.page_tables_before_kib).all()
    assert r.summary["variants"]["rust_threads_pinned"]["page_tables_per_task_kib"] > 0


def test_brigade_on_rust_threads_and_tokio() -> None:
    if peers.kind_reason("tokio-task") is not None:
        r = runtimes.brigade(tasks=[5], iterations=5, warmup=1, repeats=1)
        assert "not run here" in r.summary["skipped"]
        return
    r = runtimes.brigade(tasks=[5], iterations=20, warmup=2, repeats=2,
                         placements=["same-cpu", "unpinned"], transports=["socketpair", "pipe"])
    runs = r.tables["runs"]
    # S5's one-thread-brigade (the I/O alone) runs beside the two kinds, on S5's socket
    # pairs and on pipes (a variant, asked for: the default is S5's socket pairs alone):
    # 3 kinds x 2 placements x 2 transports x 2 repeats
    assert set(runs.kind) == {"rust-thread", "tokio-task-mt", "one-thread"} and len(runs) == 24
    assert (runs.groupby("transport").size() == 12).all()
    assert set(runs.transport) == {"socketpair", "pipe"}  # as the peer reports it
    assert (runs.trips == 20).all() and (runs.bytes_wrong == 0).all()
    # S5's Tokio: the default multi-thread runtime, one worker per usable CPU (pinned: 1)
    tokio = runs[runs.kind == "tokio-task-mt"]
    assert (tokio[tokio.placement == "same-cpu"].workers == 1).all()
    assert (tokio[tokio.placement == "unpinned"].workers == len(os.sched_getaffinity(0))).all()
    assert (runs.per_hop_ns_p50 > 0).all() and (runs.per_task_ns_mean > 0).all()
    assert list(runs.per_task_ns_mean * 5) == pytest.approx(list(runs.trip_mean_ns))  # S5
    table = runtimes_view.brigade_table(r)
    assert not table.isna().any().any()


def test_brigade_transport_and_runtime_reach_the_peer() -> None:
    """The current_thread runtime on pipes alone: one worker, every row on pipes; the
    Rust thread stack flag reaches the threads (a 64 KiB stack still passes the byte)."""
    if peers.kind_reason("tokio-task") is not None:
        pytest.skip("not run here: the Rust peer is not available")
    r = runtimes.brigade(tasks=[4], kinds=["tokio-task", "rust-thread"], iterations=5,
                         warmup=1, repeats=1, placements=["unpinned"], transports=["pipe"],
                         stack_kib=64)
    runs = r.tables["runs"]
    assert set(runs.transport) == {"pipe"} and (runs.bytes_wrong == 0).all()
    assert list(runs[runs.kind == "tokio-task"].workers) == [1]


def test_the_rust_peer_refuses_an_unknown_transport() -> None:
    if peers.kind_reason("rust-thread") is not None:
        pytest.skip("not run here: the Rust peer is not available")
    argv = peers.PEERS["rust"].argv("brigade", "thread", {"tasks": 2, "transport": "carrier"})
    out = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    assert out.returncode == 2 and "-transport" in out.stderr and "socketpair" in out.stderr


@pytest.mark.parametrize("bad", [
    {"transports": ["carrier-pigeon"]}, {"transports": []}, {"stack_kib": 8},
    {"stack_kib": -1}, {"iterations": 2}, {"warmup": -1}, {"kinds": ["tokio-task-xl"]}])
def test_the_peer_brigade_refuses_bad_values_before_running(bad: dict[str, Any]) -> None:
    args: dict[str, Any] = {"tasks": [5], "kinds": ["rust-thread"], "placements": ["unpinned"],
                            "iterations": 5, "warmup": 1, "repeats": 1, "cpu": "auto", **bad}
    with pytest.raises(ParameterError):
        runtimes.check_brigade(**args)
