"""Notebook 04 under quick parameters: it ran and records its distributions and figures.
(read from the session's one quick rendering, tests/conftest.py)."""

from __future__ import annotations

import pytest

from tests.conftest import QuickPaper, quick_params

pytestmark = pytest.mark.notebook

FIGURES = ("switch_distributions", "switch_unpinned_split", "switch_working_set",
           "switch_echo_rate", "switch_claims", "cpu_bound_totals")


def test_notebook_records_its_distributions(quick_paper: QuickPaper) -> None:
    q = quick_params()
    (sweep,) = quick_paper.runs("04_context_switch", "context_switch")
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
    (cpu,) = quick_paper.runs("04_context_switch", "cpu_bound")
    runs = cpu.table("runs")
    assert len(runs) == q["cpu_bound_repeats"] * 2 * 2
    assert (runs.tasks_stopped == runs.tasks_started).all()
    assert (runs.tasks_started == q["cpu_bound_tasks"]).all()
    for experiment in ("context_switch_working_set", "echo", "context_switch_perf_check",
                       "context_switch_timing_check", "yardsticks"):
        assert len(quick_paper.runs("04_context_switch", experiment)) == 1, experiment
    (ws,) = quick_paper.runs("04_context_switch", "context_switch_working_set")
    assert sorted(set(ws.table("points").working_set_kib)) == sorted(
        q["switch_working_sets_kib"])
    for stem in FIGURES:
        for ext in ("svg", "png"):
            assert (quick_paper.figures / f"{stem}.{ext}").is_file(), stem
