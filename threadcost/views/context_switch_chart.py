"""The context-switch explorer as a Vega-Lite chart: mechanism, placement, threads
or processes. It draws the sweep this run measured (stored quantiles of each
configuration's round trips); configurations the machine could not provide say why."""

from __future__ import annotations

from typing import Any

import altair as alt
import numpy as np
import pandas as pd

from threadcost import vocabulary
from threadcost.experiments.context_switch import checks as cs
from threadcost.results import Result
from threadcost.views import charts

US = 1e-3
KEY = ["mechanism", "placement", "tasks"]


def curves(sweep_result: Result) -> pd.DataFrame:
    """Round-trip ECDF points (µs) per configuration, up to the 99th percentile,
    thinned to every 2% below the 95th."""
    q = sweep_result.tables["quantiles"]
    if "working_set_kib" in q:
        q = q[q.working_set_kib == q.working_set_kib.min()]
    quant = q["quantile"].to_numpy(dtype=float)
    on_grid = np.isclose((quant * 50) % 1, 0, atol=1e-6) | np.isclose((quant * 50) % 1, 1,
                                                                        atol=1e-6)
    keep = (quant <= 0.99 + 1e-9) & (on_grid | (quant >= 0.95))
    out = q.loc[keep, [*KEY, "quantile"]].copy()
    out["us"] = q.loc[keep, "round_trip_ns"].astype(float) * US
    return out.reset_index(drop=True)


def labels(sweep_result: Result) -> pd.DataFrame:
    """One line of text per configuration: its percentiles, or why it was skipped."""
    rows = []
    for _, c in sweep_result.tables["configs"].iterrows():
        if "working_set_kib" in c and c.working_set_kib != 0:
            continue
        rows.append({**{k: c[k] for k in KEY}, "text": (
            f"round trip p50 {charts.positional(c.round_trip_p50_ns * US, 3)} µs, "
            f"p99 {charts.positional(c.round_trip_p99_ns * US, 3)} µs, "
            f"max {charts.positional(c.round_trip_max_ns * US, 3)} µs; "
            f"{c.switches_per_round_trip:.2f} switches per round trip "
            f"(per counted switch p50 {charts.positional(c.switch_p50_ns * US, 3)} µs)")})
    skipped = sweep_result.tables.get("skipped")
    if skipped is not None:
        for _, s in skipped.iterrows():
            reason = str(s.reason)
            reason = reason if len(reason) <= 90 else reason[:87] + "..."
            rows.append({**{k: s[k] for k in KEY}, "text": f"not measured here: {reason}"})
    return pd.DataFrame(rows, columns=[*KEY, "text"])


def chart(sweep_result: Result) -> Any:
    """Selects for mechanism and placement, a radio for threads or processes."""
    data = curves(sweep_result)
    text = labels(sweep_result)
    p = sweep_result.params
    mechs = [m for m in cs.MECHANISMS if m in set(p.get("mechanisms", data.mechanism))]
    places = [x for x in cs.PLACEMENTS if x in set(p.get("placements", data.placement))]
    kinds = [t for t in cs.TASKS if t in set(p.get("tasks", data.tasks))]
    mech = alt.param(name="mechanism", value=mechs[0],
                     bind=alt.binding_select(options=mechs, name="mechanism "))
    place = alt.param(name="placement", value=places[0],
                      bind=alt.binding_select(options=places,
                                              labels=[vocabulary.words(x) for x in places],
                                              name="placement "))
    kind = alt.param(name="tasks", value=kinds[0],
                     bind=alt.binding_radio(options=kinds, name="tasks "))
    chosen = ("datum.mechanism == mechanism && datum.placement == placement "
              "&& datum.tasks == tasks")
    lo = max(float(data.us.min()) * 0.8, 1e-3) if len(data) else 0.1
    hi = float(data.us.max()) * 1.25 if len(data) else 100.0
    x = alt.X("us:Q", scale=alt.Scale(type="log", domain=[lo, hi], clamp=True),
              title="round trip, two hops (µs, log scale)")
    y = alt.Y("quantile:Q", title="share of round trips at or below",
              scale=alt.Scale(domain=[0, 1]))
    base = alt.Chart(charts.csv_data(data))
    others = base.mark_line(color="#c8c8c8", strokeWidth=1).encode(
        x=x, y=y, detail=alt.Detail(["mechanism:N", "placement:N", "tasks:N"]))
    picked = base.transform_filter(chosen).mark_line(
        color="#1f5fa8", strokeWidth=2.5, interpolate="step-after").encode(
        x=x, y=y, tooltip=[alt.Tooltip("us:Q", title="round trip (µs)", format=",.2f"),
                           alt.Tooltip("quantile:Q", title="share at or below",
                                       format=".1%")])
    note = alt.Chart(charts.csv_data(text)).transform_filter(chosen).mark_text(
        align="left", baseline="top", fontSize=12, color="#333").encode(
        x=alt.value(4), y=alt.value(-14), text="text:N")
    title = alt.TitleParams(
        text={"expr": "mechanism + ', ' + ("
              + charts.lookup("placement", {x: vocabulary.words(x) for x in places})
              + ") + ', ' + tasks"},
        subtitle="blue: the configuration chosen; grey: every other one this run measured "
                 "(curves up to the 99th percentile)",
        offset=22)
    layered = alt.layer(others, picked, note).add_params(mech, place, kind)
    return charts.finish(layered.properties(width=charts.WIDTH, height=charts.HEIGHT,
                                            title=title))

