"""Notebook 02 under quick parameters: it runs, stores every run with its fit, and its figures."""

from __future__ import annotations

import pytest

from tests.conftest import quick_params, run_notebook
from threadcost import claims, datastore

pytestmark = pytest.mark.notebook

FIGURES = ["thread_memory_vs_threads", "thread_memory_breakdown", "thread_memory_stack",
           "thread_memory_touch", "thread_memory_claims", "thread_vs_process_memory"]


def test_notebook_records_the_fit_grids_limits_and_figures(tmp_path) -> None:
    _, data_dir = run_notebook("02_thread_memory.ipynb", tmp_path)
    q = quick_params()
    sweeps = datastore.list_runs("thread_memory", data_dir=data_dir)
    assert len(sweeps) == 1
    meta = sweeps[0].meta
    assert meta["params"]["thread_counts"] == q["memory_thread_counts"]
    fit = meta["summary"]["per_thread"]["fit"]["rss_kib"]
    assert fit["method"] == "slope" and 0.0 <= fit["r2"] <= 1.0
    points = sweeps[0].table("points")
    assert len(points) == len(q["memory_thread_counts"]) * q["memory_repeats"]
    (procs,) = datastore.list_runs("process_memory", data_dir=data_dir)
    pts = procs.table("points")
    assert len(pts) == len(q["memory_process_counts"]) * q["memory_process_repeats"]
    assert (pts.stopped == pts.started).all()
    for experiment in ("thread_memory_stack", "thread_memory_touch", "thread_limits"):
        assert len(datastore.list_runs(experiment, data_dir=data_dir)) == 1
    # the claims layer reads this notebook's runs for the memory claims
    machine_id = sweeps[0].meta["machine_id"]
    by_id = {v.id: v for v in claims.judge(machine_id, data_dir)}
    for claim_id in ("C06", "C08", "C10", "C12"):
        assert any(a.run_id for a in by_id[claim_id].assertions), claim_id
    for stem in FIGURES:
        for ext in ("svg", "png"):
            assert (tmp_path / "figures" / f"{stem}.{ext}").is_file()
