"""Notebook 02 under quick parameters: it ran, stores every run with its fit, and its figures.
(read from the session's one quick rendering, tests/conftest.py)."""

from __future__ import annotations

import pytest

from tests.conftest import QuickPaper, quick_params
from threadcost import claims

pytestmark = pytest.mark.notebook

FIGURES = ["thread_memory_vs_threads", "thread_memory_breakdown", "thread_memory_stack",
           "thread_memory_touch", "thread_memory_claims", "thread_vs_process_memory"]


def test_notebook_records_the_fit_grids_limits_and_figures(quick_paper: QuickPaper) -> None:
    data_dir = quick_paper.data
    q = quick_params()
    sweeps = quick_paper.runs("02_thread_memory", "thread_memory")
    assert len(sweeps) == 1
    meta = sweeps[0].meta
    assert meta["params"]["thread_counts"] == q["memory_thread_counts"]
    fit = meta["summary"]["per_thread"]["fit"]["rss_kib"]
    assert fit["method"] == "slope" and 0.0 <= fit["r2"] <= 1.0
    points = sweeps[0].table("points")
    assert len(points) == len(q["memory_thread_counts"]) * q["memory_repeats"]
    (procs,) = quick_paper.runs("02_thread_memory", "process_memory")
    pts = procs.table("points")
    assert len(pts) == len(q["memory_process_counts"]) * q["memory_process_repeats"]
    assert (pts.stopped == pts.started).all()
    for experiment in ("thread_memory_stack", "thread_memory_touch", "thread_limits"):
        assert len(quick_paper.runs("02_thread_memory", experiment)) == 1
    # the claims layer reads this notebook's runs for the memory claims
    machine_id = sweeps[0].meta["machine_id"]
    by_id = {v.id: v for v in claims.judge(machine_id, data_dir)}
    for claim_id in ("C06", "C08", "C10", "C12"):
        assert any(a.run_id for a in by_id[claim_id].assertions), claim_id
    for stem in FIGURES:
        for ext in ("svg", "png"):
            assert (quick_paper.figures / f"{stem}.{ext}").is_file()
