"""The launch explorer as a Vega-Lite chart: kinds, parent memory, time, ECDF or histogram.

Everything drawn was measured by the launch run passed in (its steady-state samples);
the controls only choose which of them to show.
"""

from __future__ import annotations

from typing import Any

import altair as alt
import pandas as pd

from threadcost.results import Result
from threadcost.views import charts
from threadcost.views.launch import KIND_LABELS, METRIC_LABELS

ECDF_POINTS = 40
HIST_BINS = 24
METRIC_SHORT = {"lifecycle_ns": "create + join", "create_ns": "create call",
                "first_run_ns": "to child's first instruction", "join_ns": "join / waitpid"}


def frame(result: Result) -> pd.DataFrame:
    """ECDF points and pre-binned histograms (µs) for every kind x parent memory x metric."""
    samples = result.tables["samples"]
    steady = samples[samples.phase == "steady"]
    kinds = list(result.params["kinds"])
    rows = []
    for mib in result.params["parent_touch_mib"]:
        at = steady[steady.parent_touch_mib == mib]
        for metric in METRIC_LABELS:
            if metric not in at:
                continue
            edges = charts.log_edges(at[metric].dropna() / 1000, HIST_BINS)
            for kind in kinds:
                us = at[at.kind == kind][metric].dropna().astype(float) / 1000
                us = us[us > 0]
                if us.empty:
                    continue
                e = charts.ecdf_points(us, ECDF_POINTS).rename(columns={"value": "x",
                                                                          "share": "y"})
                e["plot"] = "ECDF"
                h = charts.log_histogram(us, edges).rename(columns={"start": "x", "end": "x2",
                                                                    "share": "y"})
                h["plot"] = "histogram"
                for part in (e, h):
                    part["kind"], part["mib"], part["metric"] = kind, int(mib), metric
                    rows.append(part)
    cols = ["kind", "mib", "metric", "plot", "x", "x2", "y"]
    out = pd.concat(rows, ignore_index=True) if rows else pd.DataFrame(columns=cols)
    return out.reindex(columns=cols)


def chart(result: Result) -> Any:
    """Checkboxes per kind, parent memory and time selects, ECDF/histogram radio."""
    data = frame(result)
    kinds = [k for k in result.params["kinds"] if k in set(data.kind)]
    mibs = [int(m) for m in result.params["parent_touch_mib"]]
    metrics = [m for m in METRIC_LABELS if m in set(data.metric)]
    shown = {k: alt.param(name=f"show_{k}", value=True,
                          bind=alt.binding_checkbox(name=f"{KIND_LABELS.get(k, k)} "))
             for k in kinds}
    mib = alt.param(name="parent_mib", value=mibs[0],
                    bind=alt.binding_select(options=mibs, labels=[f"{m:,} MiB" for m in mibs],
                                            name="parent memory "))
    metric = alt.param(name="metric", value="lifecycle_ns",
                       bind=alt.binding_select(options=metrics,
                                               labels=[METRIC_LABELS[m] for m in metrics],
                                               name="time "))
    plot = alt.param(name="plot", value="ECDF",
                     bind=alt.binding_radio(options=["ECDF", "histogram"], name="plot "))
    kind_ok = " || ".join(f"(datum.kind == '{k}' && show_{k})" for k in kinds) or "false"
    keep = f"datum.mib == parent_mib && datum.metric == metric && ({kind_ok})"
    color = alt.Color("kind:N", title="launched", sort=kinds,
                      scale=alt.Scale(domain=kinds),
                      legend=alt.Legend(labelExpr=_label_expr()))
    x = alt.X("x:Q", scale=alt.Scale(type="log"),
              title="time per launch (µs, log scale)")
    base = alt.Chart(charts.csv_data(data)).transform_filter(keep)
    ecdf = base.transform_filter("datum.plot == 'ECDF' && plot == 'ECDF'").mark_line(
        interpolate="step-after", strokeWidth=2).encode(
        x=x, y=alt.Y("y:Q", title="share of launches (ECDF: at or below; histogram: per bin)",
                     scale=alt.Scale(domain=[0, 1])),
        color=color, detail="kind:N",
        tooltip=[alt.Tooltip("kind:N"), alt.Tooltip("x:Q", title="µs", format=",.2f"),
                 alt.Tooltip("y:Q", title="share at or below", format=".0%")])
    hist = base.transform_filter("datum.plot == 'histogram' && plot == 'histogram'").mark_rect(
        opacity=0.55).encode(
        x=x, x2="x2:Q", y=alt.Y("y:Q"), y2=alt.datum(0), color=color,
        tooltip=[alt.Tooltip("kind:N"), alt.Tooltip("x:Q", title="from µs", format=",.2f"),
                 alt.Tooltip("x2:Q", title="to µs", format=",.2f"),
                 alt.Tooltip("y:Q", title="share in bin", format=".1%")])
    title = alt.TitleParams(
        text={"expr": "'Launch time (' + metric_label + '), parent holding ' "
                      "+ parent_mib + ' MiB'"},
        subtitle="steady-state launches measured by this run; the controls choose what to show")
    label = alt.param(name="metric_label", expr=_metric_label_expr())
    layered = alt.layer(ecdf, hist).add_params(*shown.values(), mib, metric, plot, label)
    return charts.finish(layered.properties(width=charts.WIDTH, height=charts.HEIGHT,
                                            title=title))


def _metric_label_expr() -> str:
    expr = "metric"
    for m, text in METRIC_SHORT.items():
        expr = f"metric == {charts.js(m)} ? {charts.js(text)} : ({expr})"
    return expr


def _label_expr() -> str:
    expr = "datum.label"
    for k, text in KIND_LABELS.items():
        expr = f"datum.label == {charts.js(k)} ? {charts.js(text)} : ({expr})"
    return expr
