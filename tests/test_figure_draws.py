"""Each picture of a figure is drawn once: the SVG and the PNG, which the notebook shows.

savefig with a tight box lays a figure out (a draw that renders nothing) and then draws it
again; the inline backend drew each open figure twice more to show it, and once more when
the cell ended. The pictures must be the very bytes those draws made; a saved figure is
shown as the PNG saved, at the size of the figure's own dpi.
"""

from __future__ import annotations

import base64
import io
import struct
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt  # without a display: Agg
import pytest
from matplotlib.figure import Figure

from threadcost.notebook import plotting


def _figure(kind: str) -> Figure:
    """Small figures of the kinds the views make."""
    fig, _ = plt.subplots(1, 2, figsize=(6, 3)) if kind == "tight_layout" \
        else plt.subplots(figsize=(5, 3), layout="constrained" if kind == "constrained" else None)
    for ax in fig.axes:
        x = [1, 2, 5, 10, 20, 50, 100]
        ax.plot(x, [v * 1.5 for v in x], marker="o", label="a long label for the legend")
        ax.plot(x, [v * 0.5 + 3 for v in x], label="b")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("threads")
        ax.set_ylabel("time (µs)")
        ax.set_title(f"{kind}: a title")
        ax.legend(loc="upper left")  # over the data: tidy_figure moves it off the plot
    if kind == "tight_layout":
        fig.suptitle("Two panels")
        fig.tight_layout()
    return fig


def _as_before(fig: Figure, **savefig_kwargs: Any) -> bytes:
    """The picture as save_figure made it before: laid out, tidied, savefig's own tight box."""
    fig.draw_without_rendering()
    plotting.tidy_figure(fig)
    buf = io.BytesIO()
    fig.savefig(buf, **savefig_kwargs)
    return buf.getvalue()


@pytest.fixture
def draws(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The renderer of each Figure.draw call made while the test runs."""
    seen: list[str] = []
    original = Figure.draw

    def counted(self: Figure, renderer: Any) -> None:
        seen.append(type(renderer).__name__)
        original(self, renderer)

    monkeypatch.setattr(Figure, "draw", counted)
    with plt.rc_context():
        plotting.use_paper_theme()
        yield seen
    plt.close("all")


@pytest.mark.parametrize("kind", ["plain", "tight_layout"])
def test_save_figure_draws_each_file_once_and_writes_the_same_pictures(
        kind: str, draws: list[str], tmp_path: Path) -> None:
    fig = _figure(kind)
    draws.clear()
    written = plotting.save_figure(fig, "f", tmp_path)
    assert draws == ["MixedModeRenderer", "RendererAgg"]  # the SVG, the PNG: nothing more
    assert fig.stale is False  # so a notebook does not draw it again when the cell ends
    assert plotting._legend_hides_data(fig.axes[0]) is False  # tidied: the legend moved
    png = (tmp_path / "f.png").read_bytes()
    assert [p.name for p in written] == ["f.svg", "f.png"]
    assert png == _as_before(_figure(kind), format="png")


def test_a_figure_laid_out_as_it_draws_keeps_savefigs_own_box(
        draws: list[str], tmp_path: Path) -> None:
    """Constrained layout moves the axes at every draw: only a draw can measure it."""
    fig = _figure("constrained")
    plotting.save_figure(fig, "f", tmp_path)
    assert (tmp_path / "f.png").read_bytes() == _as_before(_figure("constrained"),
                                                           format="png")


def test_print_tight_is_savefig_with_a_tight_box(draws: list[str]) -> None:
    """The notebook's picture (the figure's dpi, its own face colour) included."""
    for kwargs in ({"format": "png"}, {"format": "png", "dpi": 110, "facecolor": "white"},
                   {"format": "svg", "metadata": {"Date": None}}):
        fig = _figure("plain")
        plotting.tidy_figure(fig)
        draws.clear()
        ours = io.BytesIO()
        plotting.print_tight(fig, ours, **kwargs)
        assert len(draws) == 1
        if kwargs["format"] == "png":  # (an SVG's clip-path ids change from save to save)
            assert ours.getvalue() == _as_before(_figure("plain"), **kwargs)


SHELL = """
import io, sys
import matplotlib
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output
from matplotlib.figure import Figure

ip = InteractiveShell.instance()
matplotlib.use("module://matplotlib_inline.backend_inline")  # as in a Jupyter kernel
import matplotlib.pyplot
sys.path.insert(0, sys.argv[2])
import test_figure_draws as t
draws = []
original = Figure.draw
Figure.draw = lambda self, renderer: (draws.append(1), original(self, renderer))[1]
ip.run_cell("from threadcost.notebook import plotting; plotting.use_paper_theme()")


def cell(code):
    draws.clear()
    with capture_output() as captured:
        ip.run_cell(code, store_history=True)
    return len(draws), [o.data for o in captured.outputs], [o.metadata for o in captured.outputs]


ip.user_ns.update(t=t, tmp=sys.argv[1])
saved = cell("fig = t._figure('plain'); plotting.save_figure(fig, 'f', tmp); print('x')\\n"
             "display({'text/plain': 'after'}, raw=True)")
shown = cell("fig = t._figure('tight_layout')")  # shown, not saved
import threadcost.notebook.plotting
threadcost.notebook.plotting.INLINE_SAVED_PNG_MAX_BYTES = 100  # a saved PNG too large to show as is
large = cell("fig = t._figure('plain'); plotting.save_figure(fig, 'g', tmp)")

from IPython.core.pylabtools import print_figure
from threadcost.notebook import plotting
def before(kind, tidy):  # what the inline backend showed before
    fig = t._figure(kind)
    if tidy:
        fig.draw_without_rendering()
        plotting.tidy_figure(fig)
    return print_figure(fig, "png", base64=True, bbox_inches="tight"), repr(fig)

import base64, pathlib
saved_png = base64.b64encode((pathlib.Path(sys.argv[1]) / "f.png").read_bytes()).decode("ascii")
print(repr((saved, shown, before("plain", True), before("tight_layout", False), saved_png,
            large)))
"""


def test_a_notebook_shows_a_saved_figure_drawn_once_at_the_cell_end(tmp_path: Path) -> None:
    """In IPython with the inline backend: two draws in all (SVG, PNG); the notebook shows
    the saved PNG at the figure's own size (its dpi, 110, against savefig's 150, like
    IPython's retina figures), where it was (when the cell ends, after what the cell
    displayed); a figure shown unsaved is drawn twice, not three times, and looks the same
    as before."""
    proc = subprocess.run([sys.executable, "-c", SHELL, str(tmp_path), str(Path(__file__).parent)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    saved, shown, (png, text), (shown_png, shown_text), saved_png, large = \
        eval(proc.stdout.strip().splitlines()[-1])
    count, outputs, metadata = saved
    assert count == 2
    assert outputs == [{"text/plain": "after"}, {"image/png": saved_png, "text/plain": text}]
    size = metadata[1]["image/png"]
    assert size["alt"] == "Figure: plain: a title"  # the page's text alternative
    pixels = struct.unpack(">II", base64.b64decode(saved_png)[16:24])
    assert (size["width"], size["height"]) == tuple(round(p * 110 / 150) for p in pixels)
    old_pixels = struct.unpack(">II", base64.b64decode(png)[16:24])  # the old inline PNG
    assert all(abs(a - b) <= 2
               for a, b in zip(old_pixels, (size["width"], size["height"]), strict=True))
    count, outputs, _ = shown
    assert count == 2  # the inline backend's own redraw of a new figure, and its PNG
    assert outputs == [{"image/png": shown_png, "text/plain": shown_text}]
    count, outputs, metadata = large
    assert count == 3  # SVG, PNG, and the notebook's own smaller PNG
    assert outputs[0]["image/png"] != saved_png
    assert metadata[0] == {"image/png": {"alt": "Figure: plain: a title"}}  # no size
