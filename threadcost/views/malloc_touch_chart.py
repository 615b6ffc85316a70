"""The malloc-touch explorer as a Vega-Lite chart over a grid measured by this run:
size and allocator choose a run, the slider how much of the buffer has been touched."""

from __future__ import annotations

from typing import Any

import altair as alt

from threadcost.results import Result
from threadcost.views import charts

SERIES = {"vsz_growth_mib": "virtual size (VmSize)", "rss_growth_mib": "resident set (VmRSS)"}


def chart(grid: Result) -> Any:
    """Size and allocator selects, a touched-share slider (steps of the grid's readings)."""
    curves = grid.tables["curves"]
    long = curves.melt(id_vars=["mib", "allocator", "touched_mib", "touched_pct"],
                       value_vars=list(SERIES), var_name="series", value_name="growth_mib")
    long["series"] = long.series.map(SERIES)
    sizes = [int(s) for s in grid.params["sizes_mib"]]
    allocs = list(grid.params["allocators"])
    step = 100 / (int(grid.params["points"]) - 1)
    size = alt.param(name="size_mib", value=sizes[len(sizes) // 2],
                     bind=alt.binding_select(options=sizes,
                                             labels=[f"{s:,} MiB" for s in sizes],
                                             name="size allocated "))
    alloc = alt.param(name="allocator", value=allocs[0],
                      bind=alt.binding_radio(options=allocs, name="allocator "))
    # Start halfway, on a reading: every move of the slider, either way, redraws.
    halfway = round(50 / step) * step
    touched = alt.param(name="touched_pct", value=halfway,
                        bind=alt.binding_range(min=0, max=100, step=step,
                                               name="touched (% of the buffer) "))
    keep = ("datum.mib == size_mib && datum.allocator == allocator "
            "&& datum.touched_pct <= touched_pct + 0.01")
    x = alt.X("touched_mib:Q", title="memory touched so far (MiB)",
              scale=alt.Scale(domain={"expr": "[0, size_mib]"}))
    y = alt.Y("growth_mib:Q", title="growth since before the allocation (MiB)",
              scale=alt.Scale(domain={"expr": "[0, size_mib * 1.05]"}))
    color = alt.Color("series:N", title=None, sort=list(SERIES.values()),
                      legend=alt.Legend(orient="bottom-right"))
    base = alt.Chart(charts.csv_data(long)).transform_filter(keep)
    lines = base.mark_line(strokeWidth=2, point=alt.OverlayMarkDef(size=25)).encode(
        x=x, y=y, color=color,
        tooltip=[alt.Tooltip("series:N"), alt.Tooltip("touched_mib:Q", title="touched MiB",
                                                      format=",.1f"),
                 alt.Tooltip("growth_mib:Q", title="growth MiB", format=",.1f")])
    diagonal = alt.Chart(alt.Data(values=[{"t": 0}, {"t": 1}])).transform_calculate(
        touched_mib="datum.t * size_mib * touched_pct / 100").mark_line(
        strokeDash=[3, 3], color="grey").encode(x=x, y=alt.Y("touched_mib:Q"))
    title = alt.TitleParams(
        text={"expr": "size_mib + ' MiB via ' + allocator + ', ' + touched_pct "
                      "+ '% touched: only touched pages become resident'"},
        subtitle=["grid measured by this run: one run per size and allocator "
                  "(make lab re-measures at any value)",
                  "dotted: one resident MiB per MiB touched"])
    layered = alt.layer(lines, diagonal).add_params(size, alloc, touched)
    return charts.finish(layered.properties(width=charts.WIDTH, height=charts.HEIGHT,
                                            title=title))
