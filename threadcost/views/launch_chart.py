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

ECDF_POINTS = 30
HIST_BINS = 20
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
                e["plot"] = "e"
                h = charts.log_histogram(us, edges).rename(columns={"start": "x", "end": "x2",
                                                                    "share": "y"})
                h["plot"] = "h"
                for part in (e, h):
                    part["kind"], part["mib"], part["metric"] = kind, int(mib), metric
                    rows.append(part)
    cols = ["kind", "mib", "metric", "plot", "x", "x2", "y"]
    out = pd.concat(rows, ignore_index=True) if rows else pd.DataFrame(columns=cols)
    return out.reindex(columns=cols)


def _code(i: int) -> str:
    """A one-letter code (kinds and metrics travel as letters: the data stays small)."""
    return chr(ord("a") + i)


def chart(result: Result) -> Any:
    """Checkboxes per kind, parent memory and time selects, ECDF/histogram radio."""
    data = frame(result)
    kinds = [k for k in result.params["kinds"] if k in set(data.kind)]
    mibs = [int(m) for m in result.params["parent_touch_mib"]]
    metrics = [m for m in METRIC_LABELS if m in set(data.metric)]
    kind_code = {k: _code(i) for i, k in enumerate(kinds)}
    metric_code = {m: _code(i) for i, m in enumerate(metrics)}
    data["kind"] = data.kind.map(kind_code)
    data["metric"] = data.metric.map(metric_code)
    shown = [alt.param(name=f"show_{kind_code[k]}", value=True,
                       bind=alt.binding_checkbox(name=f"{KIND_LABELS.get(k, k)} "))
             for k in kinds]
    mib = alt.param(name="parent_mib", value=mibs[0],
                    bind=alt.binding_select(options=mibs, labels=[f"{m:,} MiB" for m in mibs],
                                            name="parent memory "))
    metric = alt.param(name="metric", value=metric_code.get("lifecycle_ns", "a"),
                       bind=alt.binding_select(options=[metric_code[m] for m in metrics],
                                               labels=[METRIC_LABELS[m] for m in metrics],
                                               name="time "))
    plot = alt.param(name="plot", value="ECDF",
                     bind=alt.binding_radio(options=["ECDF", "histogram"], name="plot "))
    kind_ok = " || ".join(f"(datum.kind == '{c}' && show_{c})" for c in kind_code.values())
    keep = f"datum.mib == parent_mib && datum.metric == metric && ({kind_ok or 'false'})"
    names = {c: KIND_LABELS.get(k, k) for k, c in kind_code.items()}
    color = alt.Color("kind:N", title="launched", sort=list(names),
                      scale=alt.Scale(domain=list(names)),
                      legend=alt.Legend(labelExpr=charts.lookup("datum.label", names)))
    x = alt.X("x:Q", scale=alt.Scale(type="log"),
              title="time per launch (µs, log scale)")
    base = (alt.Chart(charts.csv_data(data, digits=3)).transform_filter(keep)
            .transform_calculate(launched=charts.lookup("datum.kind", names)))
    ecdf = base.transform_filter("datum.plot == 'e' && plot == 'ECDF'").mark_line(
        interpolate="step-after", strokeWidth=2).encode(
        x=x, y=alt.Y("y:Q", title="share of launches (ECDF: at or below; histogram: per bin)",
                     scale=alt.Scale(domain=[0, 1])),
        color=color, detail="kind:N",
        tooltip=[alt.Tooltip("launched:N"), alt.Tooltip("x:Q", title="µs", format=",.2f"),
                 alt.Tooltip("y:Q", title="share at or below", format=".0%")])
    hist = base.transform_filter("datum.plot == 'h' && plot == 'histogram'").mark_rect(
        opacity=0.55).encode(
        x=x, x2="x2:Q", y=alt.Y("y:Q"), y2=alt.datum(0), color=color,
        tooltip=[alt.Tooltip("launched:N"), alt.Tooltip("x:Q", title="from µs", format=",.2f"),
                 alt.Tooltip("x2:Q", title="to µs", format=",.2f"),
                 alt.Tooltip("y:Q", title="share in bin", format=".1%")])
    label = alt.param(name="metric_label",
                      expr=charts.lookup("metric", {metric_code[m]: METRIC_SHORT[m]
                                                    for m in metrics}))
    title = alt.TitleParams(
        text={"expr": "'Launch time (' + metric_label + '), parent holding ' "
                      "+ parent_mib + ' MiB'"},
        subtitle="steady-state launches measured by this run; the controls choose what to show")
    layered = alt.layer(ecdf, hist).add_params(*shown, mib, metric, plot, label)
    return charts.finish(layered.properties(width=charts.WIDTH, height=charts.HEIGHT,
                                            title=title))

