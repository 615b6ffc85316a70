"""The thread-memory explorer as a Vega-Lite chart over a grid measured by this run:
stack size and touch depth choose a set of runs, the slider a thread count."""

from __future__ import annotations

from typing import Any

import altair as alt
import pandas as pd

from threadcost.results import Result
from threadcost.views import charts

SERIES = {"vsz_kib": "virtual (VSZ)", "rss_kib": "resident (RSS)",
          "kernel_kib": "kernel (stacks, page tables, slab)"}


def _stack_label(kib: int) -> str:
    return "default (ulimit -s)" if kib == 0 else f"{kib:,} KiB"


def frame(grid: Result) -> pd.DataFrame:
    """threads, stack, touch, series, MiB (growth of the process), KiB per thread."""
    pts = grid.tables["points"]
    long = pts.melt(id_vars=["threads", "stack_kib", "touch_kib"], value_vars=list(SERIES),
                    var_name="series", value_name="kib")
    long["series"] = long.series.map(SERIES)
    long["mib"] = long.kib / 1024
    long["per_thread_kib"] = long.kib / long.threads
    return long.drop(columns="kib")


def chart(grid: Result) -> Any:
    """Stack and touch selects, a thread-count slider; totals (left) and per thread (right)."""
    data = frame(grid)
    counts = [int(c) for c in grid.params["threads"]]
    stacks = [int(s) for s in grid.params["stacks_kib"]]
    touches = [int(t) for t in grid.params["touches_kib"]]
    step = counts[1] - counts[0] if len(counts) > 1 else 1
    n = alt.param(name="threads", value=counts[-1],
                  bind=alt.binding_range(min=counts[0], max=counts[-1], step=step,
                                         name="threads "))
    stack = alt.param(name="stack_kib", value=stacks[-1],
                      bind=alt.binding_select(options=stacks,
                                              labels=[_stack_label(s) for s in stacks],
                                              name="stack size "))
    touch = alt.param(name="touch_kib", value=touches[0],
                      bind=alt.binding_select(options=touches,
                                              labels=[f"{t:,} KiB" for t in touches],
                                              name="stack touched per thread "))
    at = "datum.stack_kib == stack_kib && datum.touch_kib == touch_kib"
    color = alt.Color("series:N", title=None, sort=list(SERIES.values()),
                      legend=alt.Legend(orient="bottom", columns=3))
    base = alt.Chart(charts.csv_data(data)).transform_filter(at)
    totals = base.mark_line(point=True, strokeWidth=2).encode(
        x=alt.X("threads:Q", title="threads alive at once",
                scale=alt.Scale(domain=[0, counts[-1]])),
        y=alt.Y("mib:Q", scale=alt.Scale(type="log"),
                title="growth of the process (MiB, log scale)"),
        color=color,
        tooltip=[alt.Tooltip("series:N"), alt.Tooltip("threads:Q", format=","),
                 alt.Tooltip("mib:Q", title="MiB", format=",.1f")])
    rule = (alt.Chart(alt.Data(values=[{"t": 0}])).transform_calculate(chosen="threads")
            .mark_rule(color="#555", strokeDash=[4, 3]).encode(x="chosen:Q"))
    missing = "''"
    for s in grid.summary.get("skipped", []):
        missing = (f"(stack_kib == {int(s['stack_kib'])} && touch_kib == {int(s['touch_kib'])})"
                   f" ? {charts.js('not measured: ' + s['reason'])} : ({missing})")
    note = (alt.Chart(alt.Data(values=[{"t": 0}])).transform_calculate(note=missing)
            .transform_filter("datum.note != ''")
            .mark_text(color="#b00020", fontSize=12, align="center")
            .encode(text="note:N", x=alt.value(150), y=alt.value(120)))
    left = alt.layer(totals, rule, note).properties(
        width=300, height=240,
        title={"text": {"expr": "'Totals, stack ' + "
                                "(stack_kib == 0 ? 'default' : stack_kib + ' KiB')"
                                " + ', ' + touch_kib + ' KiB touched'"}})
    per_y = alt.Y("series:N", title=None, sort=list(SERIES.values()))
    per_x = alt.X("per_thread_kib:Q", scale=alt.Scale(type="log", domain=[1, 20000]),
                  title="KiB per thread (growth / threads, log scale)")
    chosen = base.transform_filter("datum.threads == threads")
    values = chosen.mark_text(align="left", dx=4, fontSize=12).encode(
        y=per_y, x=per_x, text=alt.Text("per_thread_kib:Q", format=",.1f"))
    per = chosen.mark_bar().encode(
        y=per_y, x=per_x, x2=alt.datum(1),
        color=alt.Color("series:N", sort=list(SERIES.values()), legend=None),
        tooltip=[alt.Tooltip("series:N"),
                 alt.Tooltip("per_thread_kib:Q", title="KiB per thread", format=",.1f")])
    right = alt.layer(per, values).properties(width=240, height=120,
                           title={"text": {"expr": "'Per thread at ' + threads + ' threads'"}})
    top = alt.hconcat(left, right).add_params(n, stack, touch).properties(
        title=alt.TitleParams(
            "Thread memory on a grid measured by this run",
            subtitle="four thread counts for each stack size and touch depth, one fresh "
                     "process each (make lab re-measures at any value)"))
    return charts.finish(top)
