"""Under load: concurrent writers store distinct, complete runs; a writer killed
at any moment among others leaves nothing that looks complete; a run on a busy
machine finishes or times out with a clear message; a stuck forkserver cannot
make a run wait forever.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import REPO
from threadcost.errors import RunTimeout
from threadcost.runsafety import isolate
from threadcost.store import datastore

SAVER = """
import sys
import pandas as pd
from threadcost.store import datastore
from threadcost.results import Result
rows, tag = int(sys.argv[1]), sys.argv[2]
tables = {"a": pd.DataFrame({"x": range(rows), "tag": [tag] * rows}),
          "b": pd.DataFrame({"y": range(rows)})}
print("STARTED", flush=True)
print(datastore.save_run(Result("demo", {"tag": tag}, {"tag": tag}, tables)), flush=True)
"""


def _cli(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "threadcost", *args], cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            stdin=subprocess.DEVNULL, env=os.environ.copy())


def _finish(proc: subprocess.Popen[str], timeout: float = 240) -> tuple[int, str, str]:
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        raise AssertionError(f"{proc.args} did not finish within {timeout} s: {err[-1000:]}")\
            from None
    return proc.returncode, out, err


def _check_all_complete(data_dir: Path) -> list[datastore.Run]:
    runs = datastore.list_runs(data_dir=data_dir)
    for machine_dir in {r.path.parent for r in runs}:
        for folder in machine_dir.iterdir():
            if folder.name.startswith("."):
                assert folder.name.endswith(".partial"), folder
                continue
            run = datastore.load_run(folder)  # raises if incomplete
            for name in run.meta["tables"]:
                run.table(name)
    return runs


def test_two_experiments_saving_at_once_store_distinct_complete_runs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data_dir = tmp_path / "data"
    monkeypatch.setenv("THREADCOST_DATA_DIR", str(data_dir))
    procs = [_cli("memory", "--threads", "20,40", "--repeats", "1", "--save"),
             _cli("memory", "--threads", "30,60", "--repeats", "1", "--save"),
             subprocess.Popen([sys.executable, "-c", SAVER, "50000", "third"], cwd=REPO,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              stdin=subprocess.DEVNULL, env=os.environ.copy())]
    results = [_finish(p) for p in procs]
    for code, _, err in results:
        assert code == 0, err[-2000:]
    runs = _check_all_complete(data_dir)
    memory = [r for r in runs if r.experiment == "thread_memory"]
    assert len(memory) == 2 and len({r.path for r in runs}) == 3
    assert sorted(tuple(r.meta["params"]["thread_counts"]) for r in memory) == \
        [(20, 40), (30, 60)]
    assert len(next(r for r in runs if r.experiment == "demo").table("a")) == 50_000


def test_a_writer_killed_among_concurrent_writers_leaves_nothing_that_looks_complete(
        tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    env = {**os.environ, "THREADCOST_DATA_DIR": str(data_dir)}
    rng = random.Random(17)
    survivors = 0
    for round_ in range(2):  # the victim and the moment drawn anew each round
        procs = [subprocess.Popen([sys.executable, "-c", SAVER, "300000", f"r{round_}w{i}"],
                                  cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True, stdin=subprocess.DEVNULL, env=env)
                 for i in range(3)]
        victim = procs[rng.randrange(3)]
        assert victim.stdout is not None
        victim.stdout.readline()  # STARTED
        time.sleep(rng.uniform(0.0, 0.8))
        os.kill(victim.pid, signal.SIGKILL)
        for proc in procs:
            code, _, err = _finish(proc, timeout=120)
            if proc is not victim:
                assert code == 0, err[-2000:]
                survivors += 1
        runs = _check_all_complete(data_dir)
        tags = [r.meta["params"]["tag"] for r in runs]
        assert len(tags) == len(set(tags))  # distinct runs, none written twice
    assert len(datastore.list_runs(data_dir=data_dir)) >= survivors


def _spin(seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass


def test_a_run_on_a_busy_machine_still_finishes(tmp_path: Path) -> None:
    """Two CPU hogs (one per core here) while an isolated experiment runs."""
    hogs = [subprocess.Popen([sys.executable, "-c",
                              "import time\nend = time.monotonic() + 60\n"
                              "while time.monotonic() < end: pass"],
                             stdin=subprocess.DEVNULL) for _ in range(os.cpu_count() or 2)]
    try:
        proc = _cli("memory", "--threads", "50,100", "--repeats", "1", "--json")
        code, out, err = _finish(proc, timeout=240)
        assert code == 0, err[-2000:]
        assert json.loads(out)["threads_started"] == 100
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait(10)


def test_a_run_that_cannot_finish_times_out_with_a_clear_message() -> None:
    started = time.monotonic()
    with pytest.raises(RunTimeout, match=r"_spin did not finish within 1 s"):
        isolate.run_isolated(_spin, {"seconds": 60}, timeout=1)
    assert time.monotonic() - started < 1 + isolate.EXIT_GRACE_S + 10


def test_a_stuck_forkserver_cannot_make_a_run_wait_forever(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Process.start() reads the child's pid from the forkserver with no deadline:
    a forkserver that does not answer (here: stopped) used to block the run for
    good. Now the start is bounded, the forkserver replaced, and the next run works."""
    assert isolate.run_isolated(_spin, {"seconds": 0}) is None  # the forkserver is up
    pid = isolate._forkserver()._forkserver_pid
    usual_wait = isolate.START_WAIT_S
    monkeypatch.setattr(isolate, "START_WAIT_S", 3.0)
    os.kill(pid, signal.SIGSTOP)
    started = time.monotonic()
    try:
        with pytest.raises(RunTimeout, match="forkserver did not start"):
            isolate.run_isolated(_spin, {"seconds": 0}, timeout=5)
    finally:
        with contextlib.suppress(ProcessLookupError):  # killed and reaped by now
            os.kill(pid, signal.SIGCONT)
    assert time.monotonic() - started < 20
    # the new forkserver gets the usual time to start (3 s is short on a busy machine)
    monkeypatch.setattr(isolate, "START_WAIT_S", usual_wait)
    assert isolate.run_isolated(_spin, {"seconds": 0}) is None  # a new forkserver
    assert isolate._forkserver()._forkserver_pid != pid


def test_the_cli_reports_a_timeout_in_one_line(monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    from threadcost import cli
    from threadcost.experiments.thread_memory import run as memory

    def stuck(**kwargs: object) -> None:
        raise RunTimeout("measure_point did not finish within 5 s and was stopped")

    monkeypatch.setattr(memory, "run", stuck)
    assert cli.main(["memory", "--threads", "10"]) == cli.EXIT_ERROR
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["threadcost memory: error: measure_point did not finish within 5 s and "
                   "was stopped"]
