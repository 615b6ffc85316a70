"""Notebook 07 under quick parameters: it runs, stores its run and its figures."""

from __future__ import annotations

import json
import shutil

import pytest

from tests.conftest import quick_params, run_notebook
from threadcost import datastore

pytestmark = pytest.mark.notebook

FIGURES = ["brigade_per_hop", "brigade_memory_per_task"]


def test_notebook_records_the_brigade_and_its_figures(tmp_path) -> None:
    out, data_dir = run_notebook("07_io_brigade.ipynb", tmp_path)
    q = quick_params()
    run = datastore.latest_run("brigade", data_dir=data_dir)
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
            assert (tmp_path / "figures" / f"{stem}.{ext}").is_file(), stem
    shown = _outputs(out)
    assert "Traceback" not in shown
    for debris in ("NaN", "None", "nan ", "e+0", str(tmp_path)):
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
