"""Compare any two tasks of notebook 5's table, as a Vega-Lite chart: pick task A and
task B; each quantity shows A / B on a log axis, with both values as text. The values
are the table's rows (measured by this run)."""

from __future__ import annotations

from typing import Any

import altair as alt
import pandas as pd

from threadcost.views import charts

PLOT_WIDTH = 360

# (row key, label, unit, factor from the stored unit)
QUANTITIES = [
    ("switch_ns", "one switch (half a batch's round trip)", "µs", 1e-3),
    ("round_trip_p50_ns", "round trip p50", "µs", 1e-3),
    ("round_trip_p99_ns", "round trip p99", "µs", 1e-3),
    ("create_ns", "create alone, p50", "µs", 1e-3),
    ("life_ns", "whole life, p50", "µs", 1e-3),
    ("rss_per_task_kib", "RSS per task", "KiB", 1.0),
    ("vsz_per_task_kib", "VSZ per task", "KiB", 1.0),
    ("kernel_per_task_kib", "kernel memory per task", "KiB", 1.0),
]


def frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """task, quantity, unit, order, value (in the unit), one row per measured value."""
    out = []
    for row in rows:
        for order, (key, label, unit, factor) in enumerate(QUANTITIES):
            value = row.get(key)
            if value is None or value != value:
                continue
            out.append({"task": row["task"], "quantity": label, "unit": unit,
                        "order": order, "value": float(value) * factor})
    return pd.DataFrame(out, columns=["task", "quantity", "unit", "order", "value"])


def chart(rows: list[dict[str, Any]]) -> Any:
    """Two drop-downs (task A, task B); bars of A / B per quantity."""
    data = frame(rows)
    names = [r["task"] for r in rows if r["task"] in set(data.task)]
    a = alt.param(name="task_a", value=names[0],
                  bind=alt.binding_select(options=names, name="task A "))
    b = alt.param(name="task_b", value=names[-1],
                  bind=alt.binding_select(options=names, name="task B "))
    base = (alt.Chart(charts.csv_data(data))
            .transform_calculate(va="datum.task == task_a ? datum.value : null",
                                 vb="datum.task == task_b ? datum.value : null")
            .transform_aggregate(a="max(va)", b="max(vb)", groupby=["quantity", "unit", "order"])
            .transform_calculate(
                ratio="isValid(datum.a) && isValid(datum.b) && datum.b > 0 "
                      "? datum.a / datum.b : null",
                label="(isValid(datum.a) ? 'A ' + format(datum.a, ',.3~r') + ' ' + datum.unit"
                      " : 'A not measured') + ',  ' + (isValid(datum.b) ? 'B ' "
                      "+ format(datum.b, ',.3~r') + ' ' + datum.unit : 'B not measured')"))
    y = alt.Y("quantity:N", sort=alt.EncodingSortField("order"), title=None,
              axis=alt.Axis(labelLimit=220))
    bars = base.transform_filter("isValid(datum.ratio)").mark_bar(height=18).encode(
        x=alt.X("ratio:Q", scale=alt.Scale(type="log"),
                title="A / B (log scale; 1: equal, right of 1: A is larger)"),
        x2=alt.datum(1), y=y,
        color=alt.condition("datum.ratio >= 1", alt.value("#c0504d"), alt.value("#1f5fa8")),
        tooltip=[alt.Tooltip("quantity:N"), alt.Tooltip("ratio:Q", title="A / B",
                                                        format=",.3~r")])
    one = alt.Chart().mark_rule(color="#555").encode(x=alt.datum(1))
    text = base.mark_text(align="left", dx=6, fontSize=12, color="#333").encode(
        x=alt.value(PLOT_WIDTH + 10), y=y, text="label:N")
    title = alt.TitleParams(text={"expr": "'A: ' + task_a + '   B: ' + task_b"},
                            subtitle="values measured by this run (the table above); "
                                     "bars: A / B")
    layered = alt.layer(bars, one, text).add_params(a, b)
    return charts.finish(layered.properties(width=PLOT_WIDTH, height=240, title=title))
