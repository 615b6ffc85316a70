"""Notebook 07 under quick parameters: it ran, stores its run and its figures.
(read from the session's one quick rendering, tests/conftest.py)."""

from __future__ import annotations

import json
import shutil

import pytest

from tests.conftest import QuickPaper, quick_params

pytestmark = pytest.mark.notebook

FIGURES = ["brigade_per_hop", "brigade_memory_per_task"]


def test_notebook_records_the_brigade_and_its_figures(quick_paper: QuickPaper) -> None:
    out = quick_paper.executed("07_io_brigade")
    q = quick_params()
    run = (quick_paper.runs("07_io_brigade", "brigade") or [None])[-1]
    assert run is not None
    per_hop = run.table("per_hop")
    expected = len(q["brigade_tasks"]) * len(q["brigade_kinds"]) * len(q["brigade_placements"])
    assert len(per_hop) == expected
    measured = per_hop[per_hop.not_run.isna() | (per_hop.not_run.astype(str) == "")]
    if shutil.which("go") is None:
        assert set(per_hop[per_hop.kind == "goroutine"].not_run.dropna()) != set()
    else:
        assert "goroutine" in set(measured.kind)
    assert (measured.trips == q["brigade_iterations"] * q["brigade_repeats"]).all()
    for stem in FIGURES:
        for ext in ("svg", "png"):
            assert (quick_paper.figures / f"{stem}.{ext}").is_file(), stem
    shown = _outputs(out)
    assert "Traceback" not in shown
    for debris in ("NaN", "None", "nan ", "e+0", str(quick_paper.base)):
        assert debris not in shown, debris


def _outputs(path) -> str:
    """Everything the executed notebook shows (markdown, HTML tables, text)."""
    nb = json.loads(path.read_text())
    parts = []
    for cell in nb["cells"]:
        for output in cell.get("outputs", []):
            parts.append("".join(output.get("text", "")))
            for kind in ("text/markdown", "text/html"):
                parts.append("".join(output.get("data", {}).get(kind, "")))
    return "\n".join(parts)
