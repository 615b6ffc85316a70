"""Notebook 03 under quick parameters: it runs, stores its distributions and figures."""

from __future__ import annotations

import pytest

from tests.conftest import quick_params, run_notebook
from threadcost import datastore

pytestmark = pytest.mark.notebook

FIGURES = ("launch_distributions", "launch_create_distributions", "launch_vs_parent_memory",
           "launch_burst", "launch_c09")


def test_notebook_records_its_distributions(tmp_path) -> None:
    _, data_dir = run_notebook("03_launch.ipynb", tmp_path)
    q = quick_params()
    runs = datastore.list_runs("launch", data_dir=data_dir)
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
    (growth,) = datastore.list_runs("launch_growth", data_dir=data_dir)  # C09's repeats
    rep = growth.table("repeats")
    assert set(zip(rep.kind, rep.parent_touch_mib, strict=True)) == {
        (k, m) for k in ("thread", "fork") for m in (0, 8)}
    assert rep.repeat.nunique() == q["launch_growth_repeats"]
    for stem in FIGURES:
        assert (tmp_path / "figures" / f"{stem}.svg").is_file(), stem
        assert (tmp_path / "figures" / f"{stem}.png").is_file(), stem
