"""The paper's static explorers: grids measured for real (tiny), charts whose every
control is a bound parameter the marks use, data kept small and free of NaN text."""

from __future__ import annotations

import json
from typing import Any

import pytest

from threadcost.errors import ParameterError
from threadcost.experiments.malloc_touch import grid as malloc_grid
from threadcost.experiments.thread_memory import grid as thread_grid
from threadcost.views import charts, malloc_touch_chart, tasks_chart, thread_memory_chart

SPEC_BYTES_MAX = 200_000


def _bound_params(spec: dict[str, Any]) -> list[str]:
    found: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for p in node.get("params", []):
                if isinstance(p, dict) and "bind" in p:
                    found.append(p["name"])
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(spec)
    return found


def _check(chart: Any, expected: int) -> dict[str, Any]:
    spec = chart.to_dict()  # validates against the Vega-Lite schema
    text = json.dumps(spec)
    names = _bound_params(spec)
    assert len(names) >= expected, names
    body = text
    for name in names:  # every control is used by an expression or a filter
        assert body.count(name) >= 2, f"parameter {name} bound but never used"
    assert len(text) < SPEC_BYTES_MAX, f"{len(text):,} bytes of spec"
    for bad in ("NaN", "None", "e+0", "e-0"):
        assert bad not in text, f"{bad!r} in the chart data"
    html = charts.to_html(chart)
    assert 'class="tc-vega"' in html and "vegaEmbed(" in html
    assert "https://" not in html and "http://" not in html
    return spec


def test_malloc_touch_grid_and_chart() -> None:
    grid = malloc_grid.malloc_touch_grid(sizes_mib=[4, 8], allocators=["malloc"], points=5)
    curves = grid.tables["curves"]
    for mib, g in curves.groupby("mib"):
        assert list(g.touched_pct) == [0, 25, 50, 75, 100]
        assert g.touched_mib.max() == pytest.approx(mib)
        assert g.rss_growth_mib.is_monotonic_increasing or g.rss_growth_mib.diff().min() > -1
    _check(malloc_touch_chart.chart(grid), expected=3)


def test_thread_memory_grid_names_what_does_not_fit() -> None:
    grid = thread_grid.thread_memory_grid(threads=8, stacks_kib=[64, 0],
                                             touches_kib=[0, 200])
    skipped = grid.summary["skipped"]
    assert [(s["stack_kib"], s["touch_kib"]) for s in skipped] == [(64, 200)]
    pts = grid.tables["points"]
    assert sorted(set(pts.threads)) == [2, 4, 6, 8]
    assert len(pts) == 4 * 3
    assert (pts.vsz_kib > 0).all()
    _check(thread_memory_chart.chart(grid), expected=3)


def test_grids_refuse_bad_input_by_name() -> None:
    with pytest.raises(ParameterError, match="allocators"):
        malloc_grid.malloc_touch_grid(allocators=["calloc"])
    with pytest.raises(ParameterError, match="threads"):
        thread_grid.thread_memory_grid(threads=10**9)


def test_task_comparison_chart() -> None:
    rows = [{"task": "a", "round_trip_p50_ns": 1000.0, "rss_per_task_kib": 8.0,
             "create_ns": None},
            {"task": "b", "round_trip_p50_ns": 40.0, "rss_per_task_kib": float("nan")}]
    data = tasks_chart.frame(rows)
    assert set(data.quantity) == {"round trip p50", "RSS per task"}
    assert not data.value.isna().any()
    _check(tasks_chart.chart(rows), expected=2)


def test_positional_never_uses_scientific_notation() -> None:
    for x in (1e-7, 0.000123456, 1.5, 123456789.0, 1e15):
        text = charts.positional(x)
        assert "e" not in text.lower(), text
    assert charts.positional(float("nan")) == ""


def test_ecdf_points_keep_min_max_and_size() -> None:
    values = list(range(1, 1001))
    e = charts.ecdf_points(values, points=50)
    assert e.value.iloc[0] == 1 and e.value.iloc[-1] == 1000
    assert e.share.iloc[-1] == 1.0
    assert len(e) <= 51 + len(charts.TAIL_SHARES)
    assert e.share.is_monotonic_increasing and e.value.is_monotonic_increasing


def test_stack_and_touch_grids_chart() -> None:
    from threadcost.experiments.thread_memory import run as thread_memory

    stacks = thread_memory.stack_grid(stack_sizes_kib=[64, 0], threads=8, repeats=1)
    touch = thread_memory.touch_grid(touch_depths_kib=[0, 16], threads=8, repeats=1)
    data = thread_memory_chart.grids_frame(stacks, touch)
    assert set(data.grid) == {"stack size", "touch depth"}
    assert len(data) == 2 * 3 * 2  # two grids x three memories x two settings
    assert (data[data.series == "virtual (VSZ)"].kib > 0).all()
    _check(thread_memory_chart.grids_chart(stacks, touch), expected=2)
