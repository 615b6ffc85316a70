"""Notebook 01 under quick parameters (the session's one quick rendering): it ran, stored
its runs and its figure."""

from __future__ import annotations

import pytest

from tests.conftest import QuickPaper, quick_params

pytestmark = pytest.mark.notebook


def test_notebook_records_both_allocators(quick_paper: QuickPaper) -> None:
    runs = [r for r in quick_paper.stored_by("01_malloc_touch") if r.experiment == "malloc_touch"]
    assert sorted(r.meta["params"]["allocator"] for r in runs) == sorted(
        quick_params()["malloc_allocators"])
    for run in runs:
        stages = run.table("stages")
        assert list(stages.stage) == ["before", "after_alloc", "after_touch", "after_free"]
        curve = run.table("touch_curve")
        assert len(curve) == quick_params()["malloc_points"]
    assert (quick_paper.figures / "malloc_touch_curve.svg").is_file()
    assert (quick_paper.figures / "malloc_touch_curve.png").is_file()


def test_stored_curves_show_only_the_experiment(quick_paper: QuickPaper) -> None:
    # a thread started inside the measured window is a step of VSZ (issue 38)
    from threadcost.experiments.malloc_touch import run as malloc_touch

    runs = [r for r in quick_paper.stored_by("01_malloc_touch") if r.experiment == "malloc_touch"]
    assert runs
    for run in runs:
        assert malloc_touch.steps(run.table("stages"), run.table("touch_curve")) == [], \
            run.path.name
