"""Figures and the interactive explorer of the malloc-touch experiment (C07)."""

from __future__ import annotations

from typing import Any

import matplotlib.pyplot as plt
import pandas as pd

from threadcost import claims
from threadcost.experiments.malloc_touch import checks as malloc_touch
from threadcost.experiments.malloc_touch.spec import STAGES
from threadcost.results import Result


def curve_figure(result: Result) -> plt.Figure:
    """VSZ and RSS (MiB, relative to before the allocation) as touching progresses."""
    curve = result.tables["touch_curve"]
    base = result.summary["before"]
    fig, ax = plt.subplots()
    x = curve.touched_kib / 1024
    ax.plot(x, (curve.vsz_kib - base["vsz_kib"]) / 1024, label="virtual size (VmSize)", lw=2)
    ax.plot(x, (curve.rss_kib - base["rss_kib"]) / 1024, label="resident set (VmRSS)", lw=4,
            marker="o", ms=4, alpha=0.75, zorder=2)
    # The 1:1 line lies on the RSS curve when every touched page becomes resident: drawn
    # on top, dark and dashed, so both stay visible.
    ax.plot([0, x.max()], [0, x.max()], ls=(0, (4, 3)), color="black", lw=1.2, zorder=3,
            label="1 MiB resident per MiB touched")
    p = result.params
    ax.set(xlabel="memory touched so far (MiB)",
           ylabel="growth since before allocation (MiB)",
           title=f"{p['mib']} MiB via {p['allocator']}: only touched pages become resident")
    ax.legend(loc="lower right")
    return fig


def stages_table(result: Result) -> pd.DataFrame:
    """The four readings (MiB, or KiB under one MiB), with the change since 'before'."""
    s = result.summary
    def size(kib: float) -> str:  # MiB to one decimal; under 1 MiB, whole KiB
        return f"{kib / 1024:,.1f} MiB" if abs(kib) >= 1024 else f"{kib:,.0f} KiB"

    rows = []
    for stage in STAGES:
        rows.append({
            "stage": stage.replace("_", " "),
            "VSZ": size(s[stage]["vsz_kib"]),
            "RSS": size(s[stage]["rss_kib"]),
            "VSZ change": size(s[stage]["vsz_kib"] - s["before"]["vsz_kib"]),
            "RSS change": size(s[stage]["rss_kib"] - s["before"]["rss_kib"]),
        })
    return pd.DataFrame(rows).set_index("stage")


def c07_comparison(result: Result) -> pd.DataFrame:
    """C07's published changes beside this run's (this run scaled to C07's size).

    C07 allocated 400 MiB. Changes are compared as a share of the allocation, so a
    run of another size can still be set beside it.
    """
    pub = claims.values_for("C07").set_index("quantity")["value"]
    mib_pub = pub["mib"]
    s = result.summary
    mib_here = result.params["mib"]
    here_touch_mib = s["touched_mib"] or float("nan")

    def share(delta_kib: float, mib: float) -> float:
        return delta_kib / 1024 / mib

    rows = [
        ("VSZ growth after malloc / size allocated",
         share(pub["vsz_after_alloc_kib"] - pub["vsz_before_kib"], mib_pub),
         share(s["deltas_kib"]["after_alloc"]["vsz"], mib_here)),
        ("RSS growth after malloc (untouched) / size allocated",
         float("nan"),  # C07 gives RSS after malloc but not before it
         share(s["deltas_kib"]["after_alloc"]["rss"], mib_here)),
        ("RSS growth from touching / size touched",
         share(pub["rss_after_touch_kib"] - pub["rss_after_alloc_kib"], mib_pub),
         share(s["after_touch"]["rss_kib"] - s["after_alloc"]["rss_kib"], here_touch_mib)),
    ]
    # Whole-process ratios (RSS/VSZ) are left out: C07's process was a small C
    # program, ours is a Python interpreter with numpy loaded.
    def shown(x: float) -> str:  # a share: two decimals, a sliver as "< 0.01"
        if x != x:
            return "— (C07 gives no reading before malloc)"
        return "0" if x == 0 else "< 0.01" if abs(x) < 0.005 else f"{x:.2f}"

    table = pd.DataFrame([(q, shown(a), shown(b)) for q, a, b in rows],
                         columns=["quantity", "published (C07, S0)", "this machine"])
    return table.set_index("quantity")


def explorer(default_mib: int = 64) -> Any:
    """Sliders for size, allocator and touched fraction; reruns the kernel and redraws."""
    import ipywidgets as w
    from IPython.display import display

    # The explorer measures on a reader's request: only then are the kernels loaded.
    from threadcost.experiments.malloc_touch.run import run

    mib = w.IntSlider(value=default_mib, min=8, max=1024, step=8, description="size (MiB)",
                      continuous_update=False)
    frac = w.FloatSlider(value=1.0, min=0.0, max=1.0, step=0.05, description="touched",
                         continuous_update=False, readout_format=".0%")
    alloc = w.Dropdown(options=list(malloc_touch.ALLOCATORS), value="malloc",
                       description="allocator")

    def draw(mib: int, allocator: str, touched: float) -> None:
        result = run(mib=mib, allocator=allocator, points=malloc_touch.POINTS.default,
                                  touch_fraction=touched)
        fig = curve_figure(result)
        plt.show()
        plt.close(fig)
        display(stages_table(result).round(1))

    return w.interactive(draw, mib=mib, allocator=alloc, touched=frac)
