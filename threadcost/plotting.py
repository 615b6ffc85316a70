"""Figure conventions: seaborn's paper theme, units on every axis, SVG + PNG."""

from __future__ import annotations

import os
from pathlib import Path

import matplotlib.pyplot as plt  # without a display matplotlib falls back to Agg
import seaborn as sns

from threadcost import paths

PALETTE = "colorblind"


def use_paper_theme() -> None:
    """Readable defaults for every figure of the paper."""
    sns.set_theme(context="paper", style="whitegrid", palette=PALETTE, font_scale=1.2)
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
    directory = Path(figures_dir) if figures_dir is not None else paths.figures_dir()
    directory.mkdir(parents=True, exist_ok=True)
    written = SavedFiles()
    for ext in ("svg", "png"):
        final = directory / f"{stem}.{ext}"
        tmp = directory / f".{stem}.{ext}.tmp"
        fig.savefig(tmp, format=ext)
        os.replace(tmp, final)
        written.append(final)
    return written
