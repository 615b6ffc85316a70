"""Widgets a JupyterLab reader meets (issue 38, item 7): notebook 05's comparison opens on
a pair with numbers, says why a value or a ratio is missing, and draws its chart."""

from __future__ import annotations

import math

import pandas as pd

from threadcost.views import task_compare as view

NAN = math.nan
ROWS = [  # a table as notebook 05 builds it: some rows measured on few quantities
    {"task": "Java virtual thread", "round_trip_p50_ns": 900.0, "round_trip_p99_ns": NAN,
     "rss_per_task_kib": NAN, "vsz_per_task_kib": NAN, "kernel_per_task_kib": NAN,
     "create_ns": NAN},
    {"task": "thread", "round_trip_p50_ns": 4000.0, "round_trip_p99_ns": 9000.0,
     "rss_per_task_kib": 12.0, "vsz_per_task_kib": 8200.0, "kernel_per_task_kib": 16.0,
     "create_ns": 20000.0},
    {"task": "goroutine", "round_trip_p50_ns": 300.0, "round_trip_p99_ns": 700.0,
     "rss_per_task_kib": 2.5, "vsz_per_task_kib": 8.0, "kernel_per_task_kib": 0.0,
     "create_ns": 400.0},
    {"task": "Tokio task", "round_trip_p50_ns": 500.0, "round_trip_p99_ns": NAN,
     "rss_per_task_kib": NAN, "vsz_per_task_kib": NAN, "kernel_per_task_kib": NAN,
     "create_ns": NAN},
]


def test_the_comparison_opens_on_the_best_measured_pair() -> None:
    frame = pd.DataFrame(ROWS).set_index("task")
    assert view.compare_pair(frame) == ("thread", "goroutine")


def test_a_missing_value_or_ratio_says_why() -> None:
    frame = pd.DataFrame(ROWS).set_index("task")
    table = view.compare_rows(frame, "thread", "goroutine")
    rss = table.loc["RSS per task (KiB)"]
    assert rss["A / B"] == "—" and "below 4 KiB per task" in rss["why a value is missing"]
    assert table.loc["round trip p50 (ns)", "A / B"] == "13.33"
    gaps = view.compare_rows(frame, "Java virtual thread", "thread")
    assert gaps.loc["create alone p50 (ns)", "why a value is missing"] == \
        "not measured for Java virtual thread"
    assert not gaps.isna().any().any()  # every cell is text a reader can read
