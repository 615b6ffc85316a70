"""Saving is atomic: a run killed midway leaves nothing that looks complete,
and earlier runs stay byte-for-byte intact.

A subprocess saves a run and is SIGKILLed at a chosen moment (a test hook
pauses it there: after the first table, in the middle of writing a file, after
meta.json, just before the rename) or at a random moment of a large write. Then
the parent checks: the earlier run is unchanged and loads, list_runs sees only
complete runs, every visible run folder passes load_run, and saving again works.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from tests.conftest import REPO
from threadcost.host import machine
from threadcost.results import Result
from threadcost.store import datastore

# The child: saves one run; THREADCOST_KILL_AT names where it stops and waits
# to be killed (it prints PAUSED first). "none" lets it run to the end.
CHILD = textwrap.dedent("""
    import json, os, sys, time
    import pandas as pd
    from threadcost.store import datastore
    from threadcost.results import Result, writing

    where, data_dir, fp_file, rows = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    fp = json.load(open(fp_file))

    def pause(tag):
        if tag == where:
            print("PAUSED", flush=True)
            time.sleep(600)

    real_write, real_rename = writing.fsync_write, os.rename
    writes = []

    def write(path, data):
        if where == "mid_write" and path.name.endswith(".csv"):
            with open(path, "wb") as fh:  # half the bytes reach the disk, then stop
                fh.write(data[: len(data) // 2])
                fh.flush()
                os.fsync(fh.fileno())
            pause("mid_write")
        real_write(path, data)
        writes.append(path.name)
        if len(writes) == 1:
            pause("after_first_table")
        if path.name == "meta.json":
            pause("after_meta")

    def rename(src, dst):
        pause("before_rename")
        real_rename(src, dst)

    writing.fsync_write = write
    writing.os.rename = rename
    tables = {"a": pd.DataFrame({"x": range(rows), "y": [0.5] * rows}),
              "b": pd.DataFrame({"z": range(rows)})}
    print("STARTED", flush=True)
    path = datastore.save_run(Result("demo", {"rows": rows}, {"ok": True}, tables),
                              data_dir=data_dir, fingerprint=fp)
    print("SAVED", path, flush=True)
""")

KILL_POINTS = ["after_first_table", "mid_write", "after_meta", "before_rename"]


@pytest.fixture(scope="module")
def fingerprint(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], Path]:
    fp = machine.fingerprint(include_git=False)
    path = tmp_path_factory.mktemp("fp") / "fp.json"
    path.write_text(json.dumps(fp))
    return fp, path


def _earlier_run(data_dir: Path, fp: dict[str, Any]) -> Path:
    result = Result("demo", {"n": 1}, {"value": 42.0},
                    {"points": pd.DataFrame({"x": [1, 2, 3], "y": [0.1, 0.2, 0.3]})})
    return datastore.save_run(result, data_dir=data_dir, fingerprint=fp)


def _digest(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.iterdir())}


def _start(where: str, data_dir: Path, fp_file: Path, rows: int) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", CHILD, where, str(data_dir), str(fp_file),
                             str(rows)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL, text=True, cwd=REPO)


def _wait_for(proc: subprocess.Popen[str], word: str, timeout: float = 120) -> None:
    assert proc.stdout is not None
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if line.startswith(word):
            return
        if not line and proc.poll() is not None:
            break
    proc.kill()
    raise AssertionError(f"child never printed {word}: {proc.stderr.read() if proc.stderr else ''}")


def _kill(proc: subprocess.Popen[str]) -> None:
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(30)
    for stream in (proc.stdout, proc.stderr):
        if stream:
            stream.close()


def _check_after_kill(data_dir: Path, earlier: Path, digest: dict[str, str],
                      fp: dict[str, Any]) -> None:
    # the earlier run: unchanged, and still loads
    assert _digest(earlier) == digest
    assert datastore.load_run(earlier).meta["summary"] == {"value": 42.0}
    # nothing half-written looks complete
    machine_dir = earlier.parent
    visible = [p for p in machine_dir.iterdir() if not p.name.startswith(".")]
    for folder in visible:
        run = datastore.load_run(folder)  # raises DataError if incomplete
        for name in run.meta["tables"]:
            run.table(name)
    for hidden in (p for p in machine_dir.iterdir() if p.name.startswith(".")):
        assert hidden.name.endswith(".partial"), hidden
    assert all(r.path in visible for r in datastore.list_runs(data_dir=data_dir))
    # and saving again works next to the debris
    again = _earlier_run(data_dir, fp)
    assert datastore.load_run(again).meta["complete"] is True


@pytest.mark.parametrize("where", KILL_POINTS)
def test_killed_at_each_step_leaves_nothing_complete(where: str, tmp_path: Path,
                                                    fingerprint: tuple[dict[str, Any], Path]
                                                    ) -> None:
    fp, fp_file = fingerprint
    data_dir = tmp_path / "data"
    earlier = _earlier_run(data_dir, fp)
    digest = _digest(earlier)
    proc = _start(where, data_dir, fp_file, rows=1000)
    _wait_for(proc, "PAUSED")
    _kill(proc)
    runs = datastore.list_runs(data_dir=data_dir)
    assert [r.path for r in runs] == [earlier], "a killed save shows up as a run"
    _check_after_kill(data_dir, earlier, digest, fp)


def test_killed_at_random_moments_of_a_large_write(tmp_path: Path,
                                                   fingerprint: tuple[dict[str, Any], Path]
                                                   ) -> None:
    fp, fp_file = fingerprint
    data_dir = tmp_path / "data"
    earlier = _earlier_run(data_dir, fp)
    digest = _digest(earlier)
    rng = random.Random(8)
    for _ in range(3):
        proc = _start("none", data_dir, fp_file, rows=400_000)
        _wait_for(proc, "STARTED")
        time.sleep(rng.uniform(0.0, 0.6))
        _kill(proc)
        # killed before or after the rename: either no new run, or a complete one
        _check_after_kill(data_dir, earlier, digest, fp)


def test_a_save_that_completes_is_found(tmp_path: Path,
                                        fingerprint: tuple[dict[str, Any], Path]) -> None:
    """The hook itself does not break saving (control for the tests above)."""
    _, fp_file = fingerprint
    data_dir = tmp_path / "data"
    proc = _start("none", data_dir, fp_file, rows=10)
    _wait_for(proc, "SAVED")
    proc.wait(30)
    for stream in (proc.stdout, proc.stderr):
        if stream:
            stream.close()
    runs = datastore.list_runs(data_dir=data_dir)
    assert len(runs) == 1 and len(runs[0].table("a")) == 10


# ---------------------------------------------------- reading names the bad file

def test_truncated_table_is_named(tmp_path: Path,
                                  fingerprint: tuple[dict[str, Any], Path]) -> None:
    fp, _ = fingerprint
    result = Result("demo", {}, {}, {"t": pd.DataFrame({"x": range(100)})})
    path = datastore.save_run(result, data_dir=tmp_path, fingerprint=fp)
    csv = path / "t.csv"
    csv.write_bytes(csv.read_bytes()[: len(csv.read_bytes()) // 2])
    with pytest.raises(datastore.DataError, match=r"t\.csv"):
        datastore.load_run(path).table("t")


@pytest.mark.parametrize("damage, word", [
    (lambda m: m.pop("experiment"), "experiment"),
    (lambda m: m.update(schema_version=99), "schema_version"),
    (lambda m: m.update(complete=False), "complete"),
])
def test_bad_meta_is_named(damage: Any, word: str, tmp_path: Path,
                           fingerprint: tuple[dict[str, Any], Path]) -> None:
    fp, _ = fingerprint
    path = datastore.save_run(Result("demo", {}, {}, {}), data_dir=tmp_path, fingerprint=fp)
    meta = json.loads((path / "meta.json").read_text())
    damage(meta)
    (path / "meta.json").write_text(json.dumps(meta))
    with pytest.raises(datastore.DataError, match=r"meta\.json") as info:
        datastore.load_run(path)
    assert word in str(info.value)
    assert datastore.list_runs(data_dir=tmp_path) == []


def test_every_experiment_table_survives_the_round_trip(
        tmp_path: Path, fingerprint: tuple[dict[str, Any], Path]) -> None:
    """Tables as the experiments make them pass the schema check on reading."""
    from threadcost.experiments.launch import run as launch
    from threadcost.experiments.malloc_touch import run as malloc_touch
    from threadcost.experiments.thread_memory import run as thread_memory
    from threadcost.experiments.user_space_tasks import fibers

    fp, _ = fingerprint
    results = [
        malloc_touch.run(mib=4, points=3),
        launch.run(kinds="thread,fork", iterations=5, warmup=1, burst_sizes=[2],
                   burst_repeats=1, memcpy_kib=8),
        thread_memory.run(thread_counts=[2, 4], repeats=1),
        fibers.run(switch_iterations=50, count=4, warmup=5, cpu=None, points=3),
    ]
    try:
        from threadcost.experiments.context_switch import run as context_switch

        results.append(context_switch.run(iterations=50, warmup=5, placement="unpinned"))
    except ImportError:
        pass
    for result in results:
        run = datastore.load_run(datastore.save_run(result, data_dir=tmp_path, fingerprint=fp))
        for name, frame in result.tables.items():
            assert len(run.table(name)) == len(frame), (result.experiment, name)
