"""Figure conventions: seaborn's paper theme, units on every axis, SVG + PNG."""

from __future__ import annotations

import base64
import functools
import io
import itertools
import math
import os
import struct
import tempfile
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt  # without a display matplotlib falls back to Agg
from cycler import cycler
from matplotlib import ticker
from matplotlib.layout_engine import PlaceHolderLayoutEngine
from matplotlib.transforms import Bbox
from PIL import Image

from threadcost import paths
from threadcost.textout import plain_number
from threadcost.views import tables

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
        # an SVG's ids from its content, not a random salt: the same figure, the same bytes
        "svg.hashsalt": "threadcost",
    })
    tables.install()  # every table the notebook displays: readable headers and numbers
    show_figures_drawn_once()


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
        picture = io.BytesIO()
        # no date written into an SVG: a figure drawn again from the same runs is the
        # same file (a PNG carries none)
        print_tight(fig, picture, format=ext,
                    **({"metadata": {"Date": None}} if ext == "svg" else {}))
        # A name of its own per save: two builds drawing the same figure at once
        # never write into each other's temporary file (the last rename wins whole).
        fd, name = tempfile.mkstemp(prefix=f".{stem}.", suffix=f".{ext}.tmp", dir=directory)
        tmp = Path(name)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(picture.getvalue())
            os.chmod(tmp, 0o644)
            os.replace(tmp, final)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        written.append(final)
    # Saving drew it, and nothing changed since: the inline backend need not draw it
    # again when the cell ends (it shows the PNG just saved, by show_figures_drawn_once).
    fig.stale = False
    # (the bytes drawn here: the file may meanwhile be another build's picture of it)
    fig._threadcost_saved_png = (picture.getvalue(), _savefig_dpi(fig))  # type: ignore[attr-defined]
    show_figures_drawn_once()
    return written


# --- drawing each figure as few times as it takes -----------------------------------------
# ``savefig`` with a tight box draws a figure twice: once, rendering nothing, to lay it out
# and measure the box, then again to render it. A notebook's inline backend then draws an
# open figure twice more to show it (and once more if it is stale when the cell ends).
# Here each picture is drawn once: the box is measured by the very renderer savefig would
# lay the figure out with, at that first layout's place, without drawing
# (Figure.get_tightbbox lays out what it measures: ticks, tick labels, titles, legends),
# and the notebook's PNG of a figure is made the same way.


def _lays_out_as_drawn(fig: plt.Figure) -> bool:
    """True when a layout engine moves the axes each time the figure is drawn (a
    placeholder, left by ``fig.tight_layout()``, moves nothing)."""
    engine = fig.get_layout_engine()
    return engine is not None and not isinstance(engine, PlaceHolderLayoutEngine)


class _Measured(Exception):
    """Stops a save at its first draw, carrying the tight box measured there."""

    def __init__(self, box: Bbox) -> None:
        super().__init__()
        self.box = box


def tight_box(fig: plt.Figure, **savefig_kwargs: Any) -> Bbox | None:
    """The box (inches) ``fig.savefig(..., bbox_inches="tight", **savefig_kwargs)`` would
    crop to, measured without drawing; None for a figure whose layout engine lays it out
    as it draws (constrained layout), which only a draw can measure."""
    if _lays_out_as_drawn(fig):
        return None

    def measure(renderer: Any) -> None:  # savefig's layout pass: measure, and stop there
        raise _Measured(fig.get_tightbbox(renderer))

    fig.draw = measure  # type: ignore[method-assign]
    try:
        fig.savefig(io.BytesIO(), **{**savefig_kwargs, "bbox_inches": "tight"})
    except _Measured as measured:
        return measured.box.padded(plt.rcParams["savefig.pad_inches"])
    finally:
        del fig.draw
    return None  # pragma: no cover (savefig always lays a figure out first)


def print_tight(fig: plt.Figure, target: Any, **savefig_kwargs: Any) -> None:
    """``fig.savefig(target, bbox_inches="tight", **savefig_kwargs)``, drawing the figure
    once, not twice: the same box, the same bytes."""
    box = tight_box(fig, **savefig_kwargs)
    if box is None:
        fig.savefig(target, **{**savefig_kwargs, "bbox_inches": "tight"})
        return
    # A placeholder engine (left by fig.tight_layout()) lays out nothing, but savefig
    # lays out once before rendering for any engine: none while this renders.
    placeholder = fig.get_layout_engine()
    if placeholder is not None:
        with plt.rc_context({"figure.autolayout": False,
                             "figure.constrained_layout.use": False}):
            fig.set_layout_engine(None)
    try:
        fig.savefig(target, **{**savefig_kwargs, "bbox_inches": box})
    finally:
        if placeholder is not None:
            fig.set_layout_engine(placeholder)


# A saved PNG larger than this (a very tall figure: the claims page's) is not shown as it
# is: the notebook draws the figure again at its own dpi, so the page stays light.
INLINE_SAVED_PNG_MAX_BYTES = 400_000
# A picture the page shows larger than this is shown in 256 colours (a chart's flat
# fills and lines need no more; it is then about half the bytes).
INLINE_PALETTE_FROM_BYTES = 150_000


def _savefig_dpi(fig: plt.Figure) -> float:
    dpi = plt.rcParams["savefig.dpi"]
    return float(fig.dpi if dpi == "figure" else dpi)


def _inline_png(fig: plt.Figure) -> str | tuple[str, dict[str, int]] | None:
    """What IPython's default PNG formatter makes of ``fig`` (base64; None for a figure
    without axes or lines, which it shows as text only), drawn once. A figure saved by
    :func:`save_figure` and not changed since is not drawn again: the notebook shows the
    saved PNG (drawn at ``savefig.dpi``), at the size the figure's own dpi gives it, as
    IPython's "retina" figures are shown (the same picture, sharper)."""
    if not fig.axes and not fig.lines:
        return None
    alt = {"alt": description} if (description := figure_description(fig)) else {}
    saved = getattr(fig, "_threadcost_saved_png", None)
    if saved is not None and not fig.stale and len(saved[0]) <= INLINE_SAVED_PNG_MAX_BYTES:
        data, dpi = saved
        if len(data) > INLINE_PALETTE_FROM_BYTES:
            data = _in_palette(data)
        width, height = struct.unpack(">II", data[16:24])  # the PNG's IHDR chunk
        scale = fig.dpi / dpi
        return (base64.b64encode(data).decode("ascii"),
                {"width": max(1, round(width * scale)), "height": max(1, round(height * scale)),
                 **alt})
    png = io.BytesIO()
    print_tight(fig, png, format="png", dpi=fig.dpi, facecolor=fig.get_facecolor(),
                edgecolor=fig.get_edgecolor())
    data = png.getvalue()
    if len(data) > INLINE_PALETTE_FROM_BYTES:
        data = _in_palette(data)
    encoded = base64.b64encode(data).decode("ascii")
    return (encoded, alt) if alt else encoded


def _in_palette(data: bytes) -> bytes:
    """A PNG in 256 colours over white (see :data:`INLINE_PALETTE_FROM_BYTES`)."""
    with Image.open(io.BytesIO(data)) as picture:
        rgba = picture.convert("RGBA")
        opaque = Image.alpha_composite(Image.new("RGBA", rgba.size, "white"), rgba)
        paletted = opaque.convert("RGB").quantize(colors=256,
                                                  method=Image.Quantize.MEDIANCUT)
    out = io.BytesIO()
    paletted.save(out, format="PNG", optimize=True)
    return out.getvalue()


def figure_description(fig: plt.Figure) -> str:
    """The figure's text alternative for the page (its ``alt``): its title and the titles
    of its panels, or "" when it has none."""
    titles = [fig._suptitle.get_text()] if getattr(fig, "_suptitle", None) else []
    titles += [ax.get_title() or ax.get_title("left") for ax in fig.axes]
    parts = [" ".join(t.split()) for t in titles if t and t.strip()]
    return "Figure: " + "; ".join(dict.fromkeys(parts)) if parts else ""


def show_figures_drawn_once() -> None:
    """In a notebook whose inline backend shows figures as PNG with a tight box (its
    default), make each figure it shows drawn once, not twice: the same PNG bytes.

    Only IPython's own default formatter is replaced; a notebook that chose other
    formats (``%config InlineBackend.figure_formats``, retina, SVG) keeps its choice."""
    import sys

    pylabtools = sys.modules.get("IPython.core.pylabtools")
    if pylabtools is None:  # no IPython shell has set up matplotlib in this process
        return
    shell = sys.modules["IPython"].get_ipython()
    if shell is None:
        return
    png = shell.display_formatter.formatters["image/png"]
    try:
        current = png.lookup_by_type(plt.Figure)
    except KeyError:
        return
    if (isinstance(current, functools.partial) and current.func is pylabtools.print_figure
            and not current.args and current.keywords == {
                "fmt": "png", "base64": True, "bbox_inches": "tight"}):
        png.for_type(plt.Figure, _inline_png)


# --- readable figures: applied to every figure the paper saves ---------------------------

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
    # What is read here lays itself out when asked (limits, legend boxes, transforms),
    # so the figure is not drawn for it, unless a layout engine places the axes as the
    # figure draws (constrained layout; fig.tight_layout() has placed them already).
    if _lays_out_as_drawn(fig):
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
