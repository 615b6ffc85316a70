"""Notebook 04 under quick parameters: it runs and records its distributions and figures."""

from __future__ import annotations

import pytest

from tests.conftest import quick_params, run_notebook
from threadcost import datastore

pytestmark = pytest.mark.notebook

FIGURES = ("switch_distributions", "switch_unpinned_split", "switch_working_set",
           "switch_echo_rate", "switch_claims", "cpu_bound_totals")


def test_notebook_records_its_distributions(tmp_path) -> None:
    _, data_dir = run_notebook("04_context_switch.ipynb", tmp_path)
    q = quick_params()
    (sweep,) = datastore.list_runs("context_switch", data_dir=data_dir)
    configs = sweep.table("configs")
    ran = set(zip(configs.mechanism, configs.placement, configs.tasks, strict=True))
    skipped = len(sweep.meta["summary"]["skipped"])
    assert len(ran) + skipped == (len(q["switch_mechanisms"]) * len(q["switch_placements"])
                                  * len(q["switch_tasks"]))
    assert (configs.round_trip_p50_ns <= configs.round_trip_p99_ns).all()
    assert (configs.iterations == q["switch_iterations"]).all()
    quantiles = sweep.table("quantiles")
    assert set(zip(quantiles.mechanism, quantiles.placement, quantiles.tasks,
                   strict=True)) == ran
    (cpu,) = datastore.list_runs("cpu_bound", data_dir=data_dir)
    runs = cpu.table("runs")
    assert len(runs) == q["cpu_bound_repeats"] * 2 * 2
    assert (runs.tasks_stopped == runs.tasks_started).all()
    assert (runs.tasks_started == q["cpu_bound_tasks"]).all()
    for experiment in ("context_switch_working_set", "echo", "context_switch_perf_check",
                       "context_switch_timing_check", "yardsticks"):
        assert len(datastore.list_runs(experiment, data_dir=data_dir)) == 1, experiment
    (ws,) = datastore.list_runs("context_switch_working_set", data_dir=data_dir)
    assert sorted(set(ws.table("points").working_set_kib)) == sorted(
        q["switch_working_sets_kib"])
    for stem in FIGURES:
        for ext in ("svg", "png"):
            assert (tmp_path / "figures" / f"{stem}.{ext}").is_file(), stem
