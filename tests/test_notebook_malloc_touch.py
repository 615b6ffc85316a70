"""Notebook 01 under quick parameters: it runs, stores its runs and its figure."""

from __future__ import annotations

import pytest

from tests.conftest import quick_params, run_notebook
from threadcost import datastore

pytestmark = pytest.mark.notebook


def test_notebook_records_both_allocators(tmp_path) -> None:
    _, data_dir = run_notebook("01_malloc_touch.ipynb", tmp_path)
    runs = datastore.list_runs("malloc_touch", data_dir=data_dir)
    assert sorted(r.meta["params"]["allocator"] for r in runs) == sorted(
        quick_params()["malloc_allocators"])
    for run in runs:
        stages = run.table("stages")
        assert list(stages.stage) == ["before", "after_alloc", "after_touch", "after_free"]
        curve = run.table("touch_curve")
        assert len(curve) == quick_params()["malloc_points"]
    assert (tmp_path / "figures" / "malloc_touch_curve.svg").is_file()
    assert (tmp_path / "figures" / "malloc_touch_curve.png").is_file()
