"""Every notebook execution is bounded, and a timeout names what hung.

The one pass of each notebook under params/quick.yaml is tests/test_notebook_*.py;
here a stuck cell is shown to fail with the notebook, the cell number and its
first line, and (on demand, ``pytest -m repeat``) each notebook runs 20 times in a
row, every run bounded by the same per-cell and kernel-start timeouts.
"""

from __future__ import annotations

import time
from pathlib import Path

import nbformat
import pytest

from tests.conftest import NOTEBOOK_CELL_TIMEOUT_S, NOTEBOOK_TEST_TIMEOUT_S, run_notebook
from threadcost.paper.build import notebook_order
from threadcost.paper.notebook_run import NotebookTimeout, client_stalls, execute

REPEATS = 20


def _notebook(path: Path, *sources: str) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# a stuck notebook"),
                *(nbformat.v4.new_code_cell(s) for s in sources)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nbformat.write(nb, str(path))
    return path


@pytest.mark.timeout(180)
def test_a_stuck_cell_fails_naming_the_notebook_the_cell_and_its_first_line(
        tmp_path: Path) -> None:
    source = _notebook(tmp_path / "stuck.ipynb", "x = 1",
                       "\n# waits forever\nimport time\ntime.sleep(3600)", "y = 2")
    started = time.monotonic()
    with pytest.raises(NotebookTimeout) as info:
        execute(source, tmp_path / "out.ipynb", {}, cwd=tmp_path, cell_timeout=5,
                start_timeout=120, progress_bar=False)
    text = str(info.value)
    assert text.startswith("stuck.ipynb: cell 3 of 4 ('# waits forever')"), text
    assert "5 s" in text
    assert time.monotonic() - started < 120


@pytest.mark.timeout(180)
def test_a_cell_that_raises_is_not_reported_as_a_timeout(tmp_path: Path) -> None:
    import papermill as pm

    source = _notebook(tmp_path / "raises.ipynb", "raise ValueError('no')")
    with pytest.raises(pm.PapermillExecutionError):
        execute(source, tmp_path / "out.ipynb", {}, cwd=tmp_path, cell_timeout=60,
                progress_bar=False)


def test_the_suite_and_the_paper_bound_every_cell() -> None:
    from threadcost.paper import build as paper

    assert 0 < NOTEBOOK_CELL_TIMEOUT_S < NOTEBOOK_TEST_TIMEOUT_S
    assert paper.CELL_TIMEOUT_S > 0 and paper.KERNEL_START_TIMEOUT_S > 0


@pytest.mark.repeat
@pytest.mark.notebook
@pytest.mark.timeout(REPEATS * NOTEBOOK_TEST_TIMEOUT_S)
@pytest.mark.parametrize("name", [f"{p.stem}.ipynb" for p in notebook_order()])
def test_each_notebook_runs_twenty_times_without_a_hang(name: str, tmp_path: Path) -> None:
    times = []
    for i in range(REPEATS):
        started = time.monotonic()
        out, _ = run_notebook(name, tmp_path / f"run{i:02d}")
        times.append(time.monotonic() - started)
        # a reply the client saw only at its timeout is a hang the timeout hid
        assert client_stalls(out) == [], f"{name} run {i + 1}: {client_stalls(out)}"
    print(f"{name}: {REPEATS} runs, longest {max(times):.0f} s, "
          f"total {sum(times):.0f} s")
