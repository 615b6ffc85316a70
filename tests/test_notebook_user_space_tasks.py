"""Notebook 05 under quick parameters: it ran, stores its runs and its figures.
(read from the session's one quick rendering, tests/conftest.py)."""

from __future__ import annotations

import shutil

import pytest

from tests.conftest import QuickPaper, quick_params

pytestmark = pytest.mark.notebook

FIGURES = ["tasks_switch_time", "tasks_memory_per_task", "tasks_sleepers_sweep",
           "tasks_fiber_memory", "tasks_creation"]


def test_notebook_records_fibers_peers_sleepers_and_figures(quick_paper: QuickPaper) -> None:
    out = quick_paper.executed("05_user_space_tasks")
    q = quick_params()
    runs = quick_paper.runs("05_user_space_tasks", "fibers")
    assert sorted(r.meta["params"]["impl"] for r in runs) == sorted(q["tasks_fiber_impls"])
    for run in runs:
        assert len(run.table("round_trips")) == q["tasks_switch_iterations"]
        assert list(run.table("per_fiber").touch_kib) == q["tasks_touch_kib"]
    go_run = (quick_paper.runs("05_user_space_tasks", "peers") or [None])[-1]
    assert go_run is not None
    if shutil.which("go") is None:
        assert go_run.meta["summary"]["skipped"]
    else:
        assert go_run.meta["summary"]["skipped"] is None
    sweep_run = (quick_paper.runs("05_user_space_tasks", "sleepers_sweep") or [None])[-1]
    assert sweep_run is not None
    assert "points" in sweep_run.meta["tables"]  # the figure's (no claim reads it)
    assert sweep_run.meta["params"]["repeats"] == q["tasks_sleep_sweep_repeats"]
    # S4's program runs on the peers (Rust threads, Tokio, goroutines), repeated: what
    # C15 and C17 read; the C threads are the sweep's
    from threadcost.experiments.user_space_tasks import sleepers

    s4_runs = quick_paper.runs("05_user_space_tasks", "sleepers")
    assert s4_runs
    for run in s4_runs:
        assert set(run.meta["params"]["variants"]) <= set(sleepers.PEER_VARIANTS)
        assert run.meta["params"]["repeats"] == q["tasks_s4_repeats"]
        rows = run.table("repeats")
        assert len(rows) == q["tasks_s4_repeats"] * len(run.meta["params"]["variants"])
    # the kernel-task rows' switch is stored by its experiment, with its bare batches; the
    # thread's memory and launch are notebooks 02's and 03's runs, not measured again here
    from threadcost.experiments.user_space_tasks import kernel_task_switch

    for experiment in kernel_task_switch.EXPERIMENTS.values():
        (switch,) = quick_paper.runs("05_user_space_tasks", experiment)
        assert switch.meta["params"]["iterations"] == q["tasks_kernel_switch_iterations"]
        assert len(switch.meta["summary"]["batch_round_trip_ns_runs"]) == \
            kernel_task_switch.BARE_BATCHES
    # (the runs page 05 lists: those it stored and those it read; notebooks 02's and 03's
    # runs appear as read, the same runs those pages list, never a run of its own)
    listed = quick_paper.stored_by("05_user_space_tasks")
    assert not [r for r in listed if r.experiment in ("tasks_thread_memory", "tasks_launch")]
    theirs = {r.meta["run_id"] for stem in ("02_thread_memory", "03_launch")
              for r in quick_paper.stored_by(stem)}
    read = {r.meta["run_id"] for r in listed if r.experiment in ("thread_memory", "launch")}
    assert read and read <= theirs
    for stem in FIGURES:
        for ext in ("svg", "png"):
            assert (quick_paper.figures / f"{stem}.{ext}").is_file(), stem
    assert "Traceback" not in out.read_text()
