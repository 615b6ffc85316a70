"""Vega-Lite charts (Altair) that stay interactive without a kernel.

The explorers of notebooks 01-05 have two forms. In JupyterLab they are live
ipywidgets that re-measure. In the rendered paper (and under papermill, which must
create no widgets) they are Vega-Lite charts whose controls (``alt.param`` bound to
selects, radios, checkboxes and ranges) filter data this run measured and stored.

:func:`show` displays a chart as HTML that calls ``vegaEmbed``; the rendered page
loads the vendored bundles from ``_static/vega`` (``threadcost.views.vega_assets``). In a
live JupyterLab kernel, which cannot reach ``vendor/``, the first chart inlines the
bundles instead. The charts carry small, aggregated data (ECDF points at fixed
quantiles, histograms pre-binned) so a page stays well under a megabyte.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable
from typing import Any

import altair as alt
import numpy as np
import pandas as pd

from threadcost import progress
from threadcost.views import vega_assets

WIDTH = 560
HEIGHT = 300
# The spec's "$schema" (a URL) is dropped, so the mode is given here.
EMBED_OPTIONS = {"mode": "vega-lite", "renderer": "svg", "actions": False}
TAIL_SHARES = (0.9, 0.95, 0.98, 0.99, 0.995, 0.999)
_ids = itertools.count(1)
_inlined = False  # bundles already sent to this kernel's front end


def positional(x: float, digits: int = 4) -> str:
    """``x`` with ``digits`` significant digits, never in scientific notation."""
    if x is None or not np.isfinite(x):
        return ""
    return np.format_float_positional(float(x), precision=digits, unique=False,
                                      fractional=False, trim="-")


def js(text: str) -> str:
    """A string literal for a Vega expression (any quote in ``text`` escaped)."""
    return json.dumps(text)


def lookup(expr: str, mapping: dict[str, str]) -> str:
    """A Vega expression mapping the value of ``expr`` through ``mapping`` (an identifier
    a run stores -> the words a control or a title shows)."""
    out = expr
    for key, text in mapping.items():
        out = f"{expr} == {js(key)} ? {js(text)} : ({out})"
    return out


def csv_data(frame: pd.DataFrame, digits: int = 4) -> alt.InlineData:
    """A frame as inline CSV (far smaller than JSON rows); numeric columns are
    parsed as numbers, floats kept to ``digits`` significant digits."""
    out = frame.copy()
    parse: dict[str, str] = {}
    for col in out.columns:
        if pd.api.types.is_bool_dtype(out[col]):
            out[col] = out[col].map(lambda v: "true" if v else "false")
            parse[col] = "boolean"
        elif pd.api.types.is_numeric_dtype(out[col]):
            out[col] = out[col].map(lambda v: positional(v, digits))
            parse[col] = "number"
    return alt.InlineData(values=out.to_csv(index=False, lineterminator="\n"),
                          format=alt.DataFormat(type="csv", parse=parse))


def ecdf_points(values: Iterable[float], points: int = 60) -> pd.DataFrame:
    """An ECDF reduced to ``points`` evenly spaced quantiles plus the tail (p90 to
    p99.9), min and max included: the curve's shape at a fixed size whatever n was."""
    v = np.sort(np.asarray(list(values), dtype=float))
    v = v[np.isfinite(v)]
    if v.size == 0:
        return pd.DataFrame({"value": [], "share": []})
    shares = np.union1d(np.linspace(0.0, 1.0, min(points, v.size) + 1)[1:], TAIL_SHARES)
    idx = np.clip(np.ceil(shares * v.size).astype(int) - 1, 0, v.size - 1)
    values = np.concatenate([v[:1], v[idx]])  # the minimum first, then each quantile
    share = np.concatenate([[1 / v.size], (idx + 1) / v.size])
    _, first = np.unique(share, return_index=True)  # each share once, its first row
    keep = np.sort(first)
    return pd.DataFrame({"value": values[keep], "share": share[keep]})


def log_histogram(values: Iterable[float], edges: np.ndarray) -> pd.DataFrame:
    """Share of ``values`` in each bin of ``edges`` (bin start, end, share)."""
    v = np.asarray(list(values), dtype=float)
    v = v[np.isfinite(v) & (v > 0)]
    counts, _ = np.histogram(v, bins=edges)
    share = counts / v.size if v.size else counts.astype(float)
    frame = pd.DataFrame({"start": edges[:-1], "end": edges[1:], "share": share})
    return frame[frame.share > 0]


def log_edges(values: Iterable[float], bins: int = 30) -> np.ndarray:
    """``bins`` log-spaced bin edges spanning the positive ``values``."""
    v = np.asarray(list(values), dtype=float)
    v = v[np.isfinite(v) & (v > 0)]
    if v.size == 0:
        return np.array([1.0, 10.0])
    lo, hi = v.min(), v.max()
    if hi <= lo:
        hi = lo * 1.01
    return np.logspace(np.log10(lo), np.log10(hi) + 1e-9, bins + 1)


def finish(chart: Any) -> Any:
    """The paper's look: readable axis and legend text, no border around the plot."""
    return (chart.configure_axis(labelFontSize=12, titleFontSize=13, titleFontWeight="normal")
            .configure_legend(labelFontSize=12, titleFontSize=12, labelLimit=320)
            .configure_title(fontSize=14, anchor="start")
            .configure_view(stroke=None))


def to_html(chart: Any, inline_bundles: bool = False) -> str:
    """The chart as a ``<div>`` and the script that embeds it (Vega-Lite spec inline).

    The spec is not checked against the Vega-Lite schema here (the same dict either way;
    checking took most of a second of each page's chart cell): tests/test_static_charts.py
    checks every chart's spec."""
    spec_dict = chart.to_dict(validate=False)
    spec_dict.pop("$schema", None)
    spec = json.dumps(spec_dict, separators=(",", ":")).replace("</", "<\\/")
    cid = f"tc-vega-{next(_ids)}"
    options = json.dumps(EMBED_OPTIONS)
    script = (
        "<script>(function () {\n"
        f"  var el = document.getElementById('{cid}');\n"
        "  if (typeof vegaEmbed === 'undefined') {\n"
        "    el.textContent = 'This chart needs the Vega bundles (vendor/vega), '\n"
        "      + 'which did not load.';\n"
        "    return;\n"
        "  }\n"
        f"  vegaEmbed(el, {spec}, {options}).catch(function (err) {{\n"
        "    el.textContent = 'The chart could not be drawn: ' + err;\n"
        "  });\n"
        "})();</script>")
    prefix = vega_assets.inline_html() if inline_bundles else ""
    return f'{prefix}<div class="{vega_assets.CHART_CLASS}" id="{cid}"></div>\n{script}'


def show(chart: Any, inline_bundles: bool | None = None) -> None:
    """Display a chart: in a live JupyterLab kernel the first one also inlines the
    vendored bundles; under papermill the rendered page loads them from ``_static``."""
    from IPython.display import display

    global _inlined
    if inline_bundles is None:
        inline_bundles = progress.live_kernel() and not _inlined
    if inline_bundles:
        _inlined = True
    display({"text/html": to_html(chart, inline_bundles=inline_bundles)}, raw=True)

