"""The forkserver's start: bounded by a deadline of its own (not the child's), startable
early without a measurement running beside it, and a death or a stall named."""

from __future__ import annotations

import multiprocessing as mp
import os
import textwrap
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from threadcost.errors import KernelError, RunTimeout
from threadcost.notebook import stored
from threadcost.runsafety import isolate


def add(a: int, b: int) -> int:
    return a + b


@pytest.fixture
def preload(tmp_path: Path,
            monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[str], Path]]:
    """A fresh forkserver whose preloads include a module written by the test, placed just
    before the readiness module (its body runs in the forkserver while it starts). It
    returns the file the module creates before its body runs: the forkserver ignores a
    preload it cannot import, so a test whose preload changes nothing sees it was run."""

    def use(body: str) -> Path:
        imported = tmp_path / "tc_test_preload.imported"
        (tmp_path / "tc_test_preload.py").write_text(
            f"open({str(imported)!r}, 'a').close()\n" + textwrap.dedent(body))
        # The forkserver must find it on its own sys.path, which depends on the Python:
        # 3.12.8+ and 3.13.1+ (CPython gh-117378) replace it with the parent's (its "" made
        # absolute when multiprocessing was imported, not the working folder of now), so
        # the folder goes on the parent's sys.path; 3.11 (and 3.12.7, 3.13.0) keep the
        # forkserver's own, which PYTHONPATH extends.
        monkeypatch.syspath_prepend(str(tmp_path))
        monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
            filter(None, [str(tmp_path), os.environ.get("PYTHONPATH")])))
        modules = [*isolate._PRELOAD[:-1], "tc_test_preload", isolate._PRELOAD[-1]]
        isolate.stop_helper_processes()
        mp.get_context("forkserver").set_forkserver_preload(modules)
        return imported

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
        preload: Callable[[str], Path], monkeypatch: pytest.MonkeyPatch) -> None:
    imported = preload("import time\ntime.sleep(1.5)\n")
    monkeypatch.setattr(isolate, "START_WAIT_S", 0.5)
    assert isolate.run_isolated(add, {"a": 1, "b": 1}) == 2
    assert imported.exists()  # the 1.5 s were slept in the forkserver


def test_a_start_past_its_deadline_is_stopped_and_named(
        preload: Callable[[str], Path], stopped: list[int],
        monkeypatch: pytest.MonkeyPatch) -> None:
    preload("import time\ntime.sleep(30)\n")
    monkeypatch.setattr(isolate, "READY_WAIT_S", 0.5)
    started = time.monotonic()
    with pytest.raises(RunTimeout, match="add: the forkserver did not finish importing"):
        isolate.run_isolated(add, {"a": 1, "b": 1})
    assert time.monotonic() - started < 10
    assert isolate._forkserver()._forkserver_pid is None
    assert stopped and all(_gone(pid) for pid in stopped)  # (an earlier test's one too)


def test_a_forkserver_that_dies_while_importing_is_named(preload: Callable[[str], Path],
                                                         stopped: list[int]) -> None:
    preload("import os\nos._exit(3)\n")
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
