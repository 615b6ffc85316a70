"""Notebook 03 under quick parameters: it ran, stores its distributions and figures.
(read from the session's one quick rendering, tests/conftest.py)."""

from __future__ import annotations

import pytest

from tests.conftest import QuickPaper, quick_params

pytestmark = pytest.mark.notebook

FIGURES = ("launch_distributions", "launch_create_distributions", "launch_vs_parent_memory",
           "launch_burst", "launch_c09")


def test_notebook_records_its_distributions(quick_paper: QuickPaper) -> None:
    q = quick_params()
    runs = quick_paper.runs("03_launch", "launch")
    assert len(runs) == 1  # the Python-parent contrast is shown, not stored
    run = runs[0]
    dist = run.table("distributions")
    steady = dist[dist.phase == "steady"]
    expected = {(k, m) for k in q["launch_kinds"] for m in q["launch_parent_touch_mib"]}
    assert set(zip(steady.kind, steady.parent_touch_mib, strict=True)) == expected
    assert set(steady.metric) == {"lifecycle_ns", "create_ns", "first_run_ns", "join_ns"}
    assert (steady.n == q["launch_iterations"]).all()
    assert (steady["min"] <= steady.p50).all() and (steady.p50 <= steady["max"]).all()
    samples = run.table("samples")
    assert len(samples) == len(expected) * (q["launch_iterations"] + q["launch_warmup"])
    burst = run.table("burst")
    assert sorted(set(burst.n)) == sorted(q["launch_burst_sizes"])
    assert {"distributions", "memcpy"} <= set(run.meta["tables"])  # what C09 reads
    (growth,) = quick_paper.runs("03_launch", "launch_growth")  # C09's repeats
    rep = growth.table("repeats")
    assert set(zip(rep.kind, rep.parent_touch_mib, strict=True)) == {
        (k, m) for k in ("thread", "fork") for m in (0, 8)}
    assert rep.repeat.nunique() == q["launch_growth_repeats"]
    for stem in FIGURES:
        assert (quick_paper.figures / f"{stem}.svg").is_file(), stem
        assert (quick_paper.figures / f"{stem}.png").is_file(), stem
