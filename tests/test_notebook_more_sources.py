"""Notebook 08 under quick parameters: it runs, stores its six runs and its figures,
shows the switch-count column for every mechanism, and its prose holds no debris
(read from the session's one quick rendering, tests/conftest.py)."""

from __future__ import annotations

import json
import shutil

import pytest

from tests.conftest import QuickPaper, quick_params

pytestmark = pytest.mark.notebook

EXPERIMENTS = ["launch_spawn_growth", "fiber_gap", "go_lockosthread", "switch_counts",
               "indirect_cost", "thread_waves"]
FIGURES = ["sources_spawn_growth", "sources_fiber_gap", "sources_switch_counts",
           "sources_indirect_cost", "sources_thread_waves"]


def test_notebook_records_six_sources(quick_paper: QuickPaper) -> None:
    out = quick_paper.executed("08_more_sources")
    q = quick_params()
    for experiment in EXPERIMENTS:
        assert quick_paper.runs("08_more_sources", experiment), experiment
    waves = quick_paper.runs("08_more_sources", "thread_waves")[-1]
    assert int(waves.table("repeats").threads.sum()) == q["sources_threads"]
    gap = quick_paper.runs("08_more_sources", "fiber_gap")[-1]
    assert len(gap.table("ratios")) == q["sources_repeats"]
    for stem in FIGURES:
        for ext in ("svg", "png"):
            assert (quick_paper.figures / f"{stem}.{ext}").is_file(), stem
    shown = _outputs(out)
    assert "Traceback" not in shown
    assert "switches per round trip (kernel)" in shown
    mechanisms = ["pipe", "futex", "eventfd", "condvar", "tsuna", "fiber"]
    if shutil.which("go") is not None:
        mechanisms.append("goroutines locked to OS threads")
    for mechanism in mechanisms:
        assert mechanism in shown, mechanism
    for claim in ("C30", "C31", "C32", "C33", "C34", "C35"):
        assert claim in shown, claim
    for debris in ("NaN", "None", "nan ", "e+0", str(quick_paper.base)):
        assert debris not in shown, debris


def _outputs(path) -> str:
    nb = json.loads(path.read_text())
    parts = []
    for cell in nb["cells"]:
        for output in cell.get("outputs", []):
            parts.append("".join(output.get("text", "")))
            for kind in ("text/markdown", "text/html"):
                parts.append("".join(output.get("data", {}).get(kind, "")))
    return "\n".join(parts)
