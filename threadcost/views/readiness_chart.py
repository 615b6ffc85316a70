"""The tokens-in-flight explorer as a Vega-Lite chart: one line per model against the
tokens in flight, for the cost per event or any count per event the run made.

Everything drawn was measured by the readiness run passed in (its ``cost`` table: per
model, placement and K, medians over the repeats); the controls only choose which of
them to show.
"""

from __future__ import annotations

from typing import Any

import altair as alt
import pandas as pd

from threadcost.findings import readiness as found
from threadcost.results import Result
from threadcost.views import charts

# code -> (what a select shows, the cost table's column, its factor to the unit shown)
METRICS = {
    "w": ("wall time per event (µs)", "ns_per_event_p50", 1e-3),
    "c": ("CPU time per event (µs)", "cpu_ns_per_event_p50", 1e-3),
    "s": ("system calls per event", "syscalls_per_event", 1.0),
    "x": ("context switches per event", "switches_per_event", 1.0),
    "u": ("cross-CPU wake-ups per event", "cross_cpu_per_event", 1.0),
    "e": ("readiness events per wait", "events_per_wait", 1.0),
}
# the y axis keeps one width whatever is drawn (so the title never moves off the left)
Y_AXIS_PX = 72
COLUMNS = ["model", "placement", "tokens", "metric", "value", "low", "high"]


def frame(result: Result) -> pd.DataFrame:
    """One row per model, placement, K and metric: the median over the repeats (and, for
    the wall time, the fastest and slowest repeat); a count a model does not make (no
    waits, cross-CPU not counted) has no row."""
    cost = result.tables.get("cost")
    if cost is None or cost.empty:
        return pd.DataFrame(columns=COLUMNS)
    rows = []
    for code, (_, column, factor) in METRICS.items():
        part = cost[["model", "placement", "tokens_in_flight"]].copy()
        part["metric"] = code
        part["value"] = cost[column].astype(float) * factor
        if code == "w":
            part["low"] = cost.ns_per_event_min.astype(float) * factor
            part["high"] = cost.ns_per_event_max.astype(float) * factor
        else:
            part["low"] = part["high"] = part["value"]
        keep = part.value.notna() & ((part.value > 0) if code == "e" else True)
        rows.append(part[keep])
    out = pd.concat(rows, ignore_index=True).rename(columns={"tokens_in_flight": "tokens"})
    return out.reindex(columns=COLUMNS)


def chart(result: Result) -> Any:
    """A select for what is drawn (and one for the placement when the run has several);
    the bars of the wall time span the fastest to the slowest repeat."""
    data = frame(result)
    models = [m for m in found.MODELS if m in set(data.model)]
    codes = {m: chr(ord("a") + i) for i, m in enumerate(models)}
    names = {codes[m]: found.NAMES[m] for m in models}
    data["model"] = data.model.map(codes)
    metrics = [c for c in METRICS if c in set(data.metric)] or ["w"]
    metric = alt.param(name="metric", value=metrics[0],
                       bind=alt.binding_select(options=metrics,
                                               labels=[METRICS[c][0] for c in metrics],
                                               name="per event "))
    params = [metric]
    keep = "datum.metric == metric"
    places = list(dict.fromkeys(data.placement)) or ["unpinned"]
    if len(places) > 1:
        place = alt.param(name="placement", value=places[0],
                          bind=alt.binding_select(options=places, name="placement "))
        params.append(place)
        keep += " && datum.placement == placement"
    label = alt.param(name="metric_label",
                      expr=charts.lookup("metric", {c: METRICS[c][0] for c in metrics}))
    params.append(label)
    color = alt.Color("model:N", title="model", sort=list(names),
                      scale=alt.Scale(domain=list(names)),
                      legend=alt.Legend(labelExpr=charts.lookup("datum.label", names)))
    x = alt.X("tokens:Q", scale=alt.Scale(type="log"), title="tokens in flight K (log scale)")
    base = (alt.Chart(charts.csv_data(data, digits=4)).transform_filter(keep)
            .transform_calculate(shown=charts.lookup("datum.model", names)))
    lines = base.mark_line(point=True).encode(
        x=x, y=alt.Y("value:Q", title="per event, median over the repeats",
                       axis=alt.Axis(minExtent=Y_AXIS_PX)), color=color,
        tooltip=[alt.Tooltip("shown:N", title="model"),
                 alt.Tooltip("tokens:Q", title="tokens in flight", format=","),
                 alt.Tooltip("value:Q", title="median over the repeats", format=",.4~g")])
    bars = base.mark_rule().encode(x=x, y="low:Q", y2="high:Q", color=color)
    title = alt.TitleParams(
        text={"expr": "'Tokens in flight: ' + metric_label"},
        subtitle="medians over the repeats measured by this run (wall time: bars from the "
                 "fastest repeat to the slowest); the control chooses what to show")
    layered = alt.layer(bars, lines).add_params(*params)
    return charts.finish(layered.properties(width=charts.WIDTH, height=charts.HEIGHT,
                                            title=title))
