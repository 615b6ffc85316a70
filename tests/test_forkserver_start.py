"""The forkserver's start: bounded by a deadline of its own (not the child's), startable
early without a measurement running beside it, and a death or a stall named."""

from __future__ import annotations

import multiprocessing as mp
import os
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from threadcost.errors import KernelError, RunTimeout
from threadcost.runsafety import isolate
from threadcost.store import stored


def add(a: int, b: int) -> int:
    return a + b


@pytest.fixture
def preload(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[object]:
    """A fresh forkserver whose preloads include a module written by the test, placed just
    before the readiness module (its body runs in the forkserver while it starts)."""

    def use(body: str) -> None:
        (tmp_path / "tc_test_preload.py").write_text(textwrap.dedent(body))
        # the forkserver imports from its working folder ("" on its sys.path; Python 3.11's
        # forkserver does not take the parent's sys.path)
        monkeypatch.chdir(tmp_path)
        modules = [*isolate._PRELOAD[:-1], "tc_test_preload", isolate._PRELOAD[-1]]
        isolate.stop_helper_processes()
        mp.get_context("forkserver").set_forkserver_preload(modules)

    yield use
    isolate.stop_helper_processes()
    isolate._ready.update(pid=None, path=None)
    mp.get_context("forkserver").set_forkserver_preload(isolate._PRELOAD)


@pytest.fixture
def stopped(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The process id of each forkserver stopped while the test runs."""
    pids: list[int] = []
    original = isolate._kill_forkserver

    def kill() -> None:
        pid = isolate._forkserver()._forkserver_pid
        if pid:
            pids.append(pid)
        original()

    monkeypatch.setattr(isolate, "_kill_forkserver", kill)
    return pids


def _gone(pid: int) -> bool:
    """Reaped: no process, not even a zombie, has the id (ours were never reused so soon)."""
    return not os.path.exists(f"/proc/{pid}")


def test_an_early_start_returns_at_once_and_is_waited_for() -> None:
    isolate.stop_helper_processes()
    started = time.monotonic()
    isolate.start_forkserver_early()
    assert time.monotonic() - started < 1.0  # it imports numpy and pandas meanwhile
    assert isolate._ready["pid"] is not None
    isolate.wait_forkserver_ready("test")
    assert isolate._ready["pid"] is None
    assert isolate.run_isolated(add, {"a": 2, "b": 3}) == 5


def test_a_slow_start_is_not_cut_by_the_childs_deadline(
        preload: object, monkeypatch: pytest.MonkeyPatch) -> None:
    preload("import time\ntime.sleep(1.5)\n")  # type: ignore[operator]
    monkeypatch.setattr(isolate, "START_WAIT_S", 0.5)
    assert isolate.run_isolated(add, {"a": 1, "b": 1}) == 2


def test_a_start_past_its_deadline_is_stopped_and_named(
        preload: object, stopped: list[int], monkeypatch: pytest.MonkeyPatch) -> None:
    preload("import time\ntime.sleep(30)\n")  # type: ignore[operator]
    monkeypatch.setattr(isolate, "READY_WAIT_S", 0.5)
    started = time.monotonic()
    with pytest.raises(RunTimeout, match="add: the forkserver did not finish importing"):
        isolate.run_isolated(add, {"a": 1, "b": 1})
    assert time.monotonic() - started < 10
    assert isolate._forkserver()._forkserver_pid is None
    assert stopped and all(_gone(pid) for pid in stopped)  # (an earlier test's one too)


def test_a_forkserver_that_dies_while_importing_is_named(preload: object,
                                                         stopped: list[int]) -> None:
    preload("import os\nos._exit(3)\n")  # type: ignore[operator]
    with pytest.raises(KernelError, match="ended while importing"):
        isolate.run_isolated(add, {"a": 1, "b": 1})
    assert isolate._forkserver()._forkserver_pid is None
    assert stopped and all(_gone(pid) for pid in stopped)  # (an earlier test's one too)


def test_a_measurement_waits_for_an_early_start(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    waited: list[str] = []
    monkeypatch.setattr(isolate, "wait_forkserver_ready", waited.append)
    store = stored.Store(measure=True, save=False, data_dir=tmp_path)
    assert store.get("thread_memory", lambda: None) is None
    assert waited == ["thread_memory"]
