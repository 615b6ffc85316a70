"""Notebook 05 under quick parameters: it runs, stores its runs and its figures."""

from __future__ import annotations

import shutil

import pytest

from tests.conftest import quick_params, run_notebook
from threadcost import datastore

pytestmark = pytest.mark.notebook

FIGURES = ["tasks_switch_time", "tasks_memory_per_task", "tasks_sleepers_sweep",
           "tasks_fiber_memory", "tasks_creation"]


def test_notebook_records_fibers_peers_sleepers_and_figures(tmp_path) -> None:
    out, data_dir = run_notebook("05_user_space_tasks.ipynb", tmp_path)
    q = quick_params()
    runs = datastore.list_runs("fibers", data_dir=data_dir)
    assert sorted(r.meta["params"]["impl"] for r in runs) == sorted(q["tasks_fiber_impls"])
    for run in runs:
        assert len(run.table("round_trips")) == q["tasks_switch_iterations"]
        assert list(run.table("per_fiber").touch_kib) == q["tasks_touch_kib"]
    go_run = datastore.latest_run("peers", data_dir=data_dir)
    assert go_run is not None
    if shutil.which("go") is None:
        assert go_run.meta["summary"]["skipped"]
    else:
        assert go_run.meta["summary"]["skipped"] is None
    sweep_run = datastore.latest_run("sleepers_sweep", data_dir=data_dir)
    assert sweep_run is not None
    assert "points" in sweep_run.meta["tables"]  # what C15 and C17 read
    assert sweep_run.meta["params"]["repeats"] == q["tasks_sleep_sweep_repeats"]
    assert datastore.list_runs("sleepers", data_dir=data_dir) == []  # the old single count
    # the kernel-task runs of notebooks 02-04 are used, not stored again here
    assert datastore.list_runs("thread_memory", data_dir=data_dir) == []
    for stem in FIGURES:
        for ext in ("svg", "png"):
            assert (tmp_path / "figures" / f"{stem}.{ext}").is_file(), stem
    assert "Traceback" not in out.read_text()
