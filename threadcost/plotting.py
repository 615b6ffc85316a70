"""Figure conventions: seaborn's paper theme, units on every axis, SVG + PNG."""

from __future__ import annotations

import itertools
import math
import os
import tempfile
from pathlib import Path

import matplotlib.pyplot as plt  # without a display matplotlib falls back to Agg
from cycler import cycler
from matplotlib import ticker

from threadcost import paths

PALETTE = "colorblind"
# seaborn's "colorblind" palette: its ten colours, as 0-255 RGB.
COLORBLIND = ((1, 115, 178), (222, 143, 5), (2, 158, 115), (213, 94, 0), (204, 120, 188),
              (202, 145, 97), (251, 175, 228), (148, 148, 148), (236, 225, 51),
              (86, 180, 233))
# What seaborn's ``set_theme(context="paper", style="whitegrid", palette=PALETTE,
# font_scale=1.2)`` sets, written out: importing seaborn (and scipy.stats with it) to
# set these took most of a second in every notebook kernel. tests/test_plotting.py
# checks that they still equal what seaborn sets.
PAPER_THEME: dict[str, object] = {
    "axes.axisbelow": True, "axes.edgecolor": ".8", "axes.grid": True,
    "axes.labelcolor": ".15", "axes.labelsize": 11.52, "axes.linewidth": 1.0,
    "axes.prop_cycle": cycler("color", [tuple(c / 255 for c in rgb) for rgb in COLORBLIND]),
    "axes.titlesize": 11.52,
    "font.sans-serif": ["Arial", "DejaVu Sans", "Liberation Sans", "Bitstream Vera Sans",
                        "sans-serif"],
    "font.size": 11.52, "grid.color": ".8", "legend.fontsize": 10.56,
    "legend.title_fontsize": 11.52, "lines.linewidth": 1.2, "lines.markersize": 4.8,
    "lines.solid_capstyle": "round", "patch.edgecolor": "w", "patch.force_edgecolor": True,
    "patch.linewidth": 0.8, "text.color": ".15", "xtick.bottom": False, "xtick.color": ".15",
    "xtick.labelsize": 10.56, "xtick.major.size": 4.8, "xtick.major.width": 1.0,
    "xtick.minor.size": 3.2, "xtick.minor.width": 0.8, "ytick.color": ".15",
    "ytick.labelsize": 10.56, "ytick.left": False, "ytick.major.size": 4.8,
    "ytick.major.width": 1.0, "ytick.minor.size": 3.2, "ytick.minor.width": 0.8,
}


def use_paper_theme() -> None:
    """Readable defaults for every figure of the paper."""
    plt.rcParams.update(PAPER_THEME)
    plt.rcParams.update({
        "figure.figsize": (7.0, 4.2),
        "figure.dpi": 110,
        "savefig.dpi": 150,
        "savefig.bbox": "tight",
        "axes.titleweight": "bold",
        "svg.fonttype": "none",
    })
    from threadcost.views import tables

    tables.install()  # every table the notebook displays: readable headers and numbers


class SavedFiles(list[Path]):
    """The files a figure was saved to. Shows nothing when a cell ends with it
    (the figure itself is the output; a list of paths is not for the reader)."""

    def _ipython_display_(self) -> None:
        return None


def save_figure(fig: plt.Figure, stem: str,
                figures_dir: str | Path | None = None) -> SavedFiles:
    """Save ``fig`` as ``<stem>.svg`` and ``<stem>.png`` (atomically) and return the paths.

    Stems are stable names (``malloc_touch_curve``) that the README can link to.
    """
    tidy_figure(fig)
    directory = paths.output_folder(figures_dir) if figures_dir is not None \
        else paths.figures_dir()
    directory.mkdir(parents=True, exist_ok=True)
    written = SavedFiles()
    for ext in ("svg", "png"):
        final = directory / f"{stem}.{ext}"
        # A name of its own per save: two builds drawing the same figure at once
        # never write into each other's temporary file (the last rename wins whole).
        fd, name = tempfile.mkstemp(prefix=f".{stem}.", suffix=f".{ext}.tmp", dir=directory)
        tmp = Path(name)
        try:
            with os.fdopen(fd, "wb") as fh:
                fig.savefig(fh, format=ext)
            os.chmod(tmp, 0o644)
            os.replace(tmp, final)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        written.append(final)
    return written


# --- readable figures: applied to every figure the paper saves ---------------------------

def plain_number(value: float, _pos: object = None) -> str:
    """A tick label without powers of ten, to three significant digits with trailing
    zeros dropped: 0.01, 0.25, 1.2, 2, 30, 1,000, 2,000,000. Each tick is formatted
    alone, so the label keeps every digit that tells it from its neighbours (1.2 and
    1.5 stay "1.2" and "1.5", never "1" and "2")."""
    if value == 0 or not math.isfinite(value):
        return "0" if value == 0 else ""
    digits = max(0, 2 - math.floor(math.log10(abs(value)) + 1e-9))
    text = f"{value:,.{digits}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def _plain_log_ticks(axis: object, lo: float, hi: float) -> None:
    axis.set_major_formatter(ticker.FuncFormatter(plain_number))  # type: ignore[attr-defined]
    decades = math.log10(hi / lo) if lo > 0 and hi > 0 else 99
    if decades < 1.6:  # few major ticks: label 2 and 5 of each decade as well
        axis.set_minor_locator(ticker.LogLocator(base=10, subs=(2.0, 5.0)))  # type: ignore[attr-defined]
        axis.set_minor_formatter(ticker.FuncFormatter(plain_number))  # type: ignore[attr-defined]
    else:
        axis.set_minor_formatter(ticker.NullFormatter())  # type: ignore[attr-defined]


def _legend_hides_data(ax: plt.Axes) -> bool:
    """True when the axes' legend box covers a drawn point of a line or scatter."""
    import numpy as np

    legend = ax.get_legend()
    if legend is None or not legend.get_visible():
        return False
    renderer = ax.figure.canvas.get_renderer()  # type: ignore[attr-defined]
    box = legend.get_window_extent(renderer).expanded(1.02, 1.05)
    points = []
    for line in ax.get_lines():
        xy = np.asarray(line.get_xydata(), dtype=float)
        if not len(xy):
            continue
        xy = line.get_transform().transform(xy)  # display space (log axes included)
        if len(xy) > 1 and line.get_linestyle() not in ("None", ""):
            # a line hides under the box between its vertices too: sample along it
            t = np.linspace(0, 1, 20)[:, None]
            xy = np.concatenate([a + t * (b - a) for a, b in itertools.pairwise(xy)])
        points.append(xy)
    for coll in ax.collections:
        offsets = np.asarray(coll.get_offsets(), dtype=float)
        if offsets.size:
            points.append(coll.get_offset_transform().transform(offsets))
    for xy in points:
        xy = xy[np.isfinite(xy).all(axis=1)]
        inside = ((xy[:, 0] >= box.x0) & (xy[:, 0] <= box.x1)
                  & (xy[:, 1] >= box.y0) & (xy[:, 1] <= box.y1))
        if inside.any():
            return True
    return False


def _rightmost(ax: plt.Axes) -> bool:
    x1 = ax.get_position().x1
    return all(other.get_position().x0 < x1 - 1e-6 or other is ax
               or not other.get_visible() for other in ax.figure.axes)


def tidy_figure(fig: plt.Figure) -> plt.Figure:
    """Make a figure readable before it is saved and shown.

    - Log axes get plain tick labels (``20``, ``0.5``), not ``2x10^1``.
    - A legend that covers drawn data moves off the plot: to the right of the
      rightmost axes, under any other.
    """
    # laid out as drawing lays it out (ticks, text extents, legend boxes) without
    # rasterizing: saving and showing the figure draw it again anyway
    fig.draw_without_rendering()
    for ax in fig.axes:
        if not ax.get_visible():
            continue
        if ax.get_xscale() == "log":
            _plain_log_ticks(ax.xaxis, *sorted(ax.get_xlim()))
        if ax.get_yscale() == "log":
            _plain_log_ticks(ax.yaxis, *sorted(ax.get_ylim()))
        if _legend_hides_data(ax):
            legend = ax.get_legend()
            handles = legend.legend_handles
            labels = [t.get_text() for t in legend.get_texts()]
            title = legend.get_title().get_text()
            if _rightmost(ax):  # beside the plot
                ax.legend(handles, labels, title=title or None, loc="upper left",
                          bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, frameon=False)
            else:  # under its own axes, below the axis label
                ax.legend(handles, labels, title=title or None, loc="upper center",
                          bbox_to_anchor=(0.5, -0.2), borderaxespad=0.0, frameon=False,
                          fontsize="small")
    return fig
