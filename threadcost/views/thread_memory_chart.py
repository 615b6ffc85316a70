"""The thread-memory explorer as a Vega-Lite chart over a grid measured by this run:
stack size and touch depth choose a set of runs, the slider a thread count."""

from __future__ import annotations

import itertools
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
    # Start inside the range (every move, either way, redraws); the slider's value is
    # read as the measured count nearest to it (counts need not be evenly spaced).
    n = alt.param(name="threads", value=counts[max(len(counts) // 2 - 1, 0)],
                  bind=alt.binding_range(min=counts[0], max=counts[-1], step=step,
                                         name="threads "))
    nearest = str(counts[-1])
    for low, high in reversed(list(itertools.pairwise(counts))):
        nearest = f"(threads < {(low + high) / 2} ? {low} : {nearest})"
    at_count = alt.param(name="threads_at", expr=nearest)
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
    rule = (alt.Chart(alt.Data(values=[{"t": 0}])).transform_calculate(chosen="threads_at")
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
    chosen = base.transform_filter("datum.threads == threads_at")
    values = chosen.mark_text(align="left", dx=4, fontSize=12).encode(
        y=per_y, x=per_x, text=alt.Text("per_thread_kib:Q", format=",.1f"))
    per = chosen.mark_bar().encode(
        y=per_y, x=per_x, x2=alt.datum(1),
        color=alt.Color("series:N", sort=list(SERIES.values()), legend=None),
        tooltip=[alt.Tooltip("series:N"),
                 alt.Tooltip("per_thread_kib:Q", title="KiB per thread", format=",.1f")])
    right = alt.layer(per, values).properties(width=240, height=120,
                           title={"text": {"expr": "'Per thread at ' + threads_at + ' threads'"}})
    top = alt.hconcat(left, right).add_params(n, at_count, stack, touch).properties(
        title=alt.TitleParams(
            "Thread memory on a grid measured by this run",
            subtitle="four thread counts for each stack size and touch depth, one fresh "
                     "process each (make lab re-measures at any value)"))
    return charts.finish(top)


GRID_SERIES = {"vsz_kib_per_thread": "virtual (VSZ)", "rss_kib_per_thread": "resident (RSS)",
               "kernel_kib_per_thread": "kernel (stacks, page tables, slab)"}


def grids_frame(stacks: Result, touch: Result) -> pd.DataFrame:
    """The stored stack-size and touch-depth grids, per thread (KiB), long format."""
    parts = []
    s = stacks.tables["per_stack_size"]
    parts.append(pd.DataFrame({
        "grid": "stack size", "order": s.stack_used_kib.astype(float),
        "setting": [f"{int(u):,} KiB" + (" (default)" if a == 0 else "")
                    for a, u in zip(s.stack_kib_asked, s.stack_used_kib, strict=True)],
        **{k: s[k] for k in GRID_SERIES}}))
    t = touch.tables["per_touch_depth"]
    parts.append(pd.DataFrame({
        "grid": "touch depth", "order": t.touch_kib_asked.astype(float),
        "setting": [f"{int(d):,} KiB" for d in t.touch_kib_asked],
        **{k: t[k] for k in GRID_SERIES}}))
    wide = pd.concat(parts, ignore_index=True)
    long = wide.melt(id_vars=["grid", "order", "setting"], value_vars=list(GRID_SERIES),
                     var_name="series", value_name="kib")
    long["series"] = long.series.map(GRID_SERIES)
    return long.dropna(subset=["kib"])


def grids_chart(stacks: Result, touch: Result) -> Any:
    """A radio for the grid (stack size or touch depth), a select for what to show."""
    data = grids_frame(stacks, touch)
    names = list(GRID_SERIES.values())
    grid = alt.param(name="grid", value="stack size",
                     bind=alt.binding_radio(options=["stack size", "touch depth"],
                                            name="grid "))
    series = alt.param(name="series", value="all",
                       bind=alt.binding_select(options=["all", *names], name="memory "))
    keep = "datum.grid == grid && (series == 'all' || datum.series == series)"
    chart = alt.Chart(charts.csv_data(data)).transform_filter(keep).mark_line(
        point=alt.OverlayMarkDef(size=40), strokeWidth=2).encode(
        x=alt.X("setting:N", sort=alt.EncodingSortField("order"),
                title=None, axis=alt.Axis(labelAngle=0)),
        y=alt.Y("kib:Q", scale=alt.Scale(type="log"), title="KiB per thread (log scale)"),
        color=alt.Color("series:N", sort=names, scale=alt.Scale(domain=names), title=None,
                        legend=alt.Legend(orient="bottom", columns=3)),
        tooltip=[alt.Tooltip("setting:N"), alt.Tooltip("series:N"),
                 alt.Tooltip("kib:Q", title="KiB per thread", format=",.1f")])
    n = int(stacks.params.get("threads", 0) or 0)
    title = alt.TitleParams(
        text={"expr": "'Per-thread memory across the ' + grid + ' grid'"},
        subtitle=f"the grids measured above ({n:,} threads per run; x: the stack size each "
                 "thread got, or the KiB of its stack each thread wrote)")
    return charts.finish(chart.add_params(grid, series).properties(
        width=charts.WIDTH, height=260, title=title))
