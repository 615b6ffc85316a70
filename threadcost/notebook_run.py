"""Execute a notebook with papermill, with every wait bounded.

nbclient waits for a cell as long as it runs, and for a kernel as long as it
takes to start, unless told otherwise; a widget cell has been seen to block it
for good (papermill issue 723, nbclient issue 312). Here each cell gets an
execution timeout and the kernel a start timeout, and a timeout fails with a
:class:`NotebookTimeout` that names the notebook, the cell (its number, 1-based
as papermill counts, and its first line) and the limit, never silently.

Used by ``make paper`` (:func:`threadcost.paper.run_notebook`) and the tests.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


class NotebookTimeout(TimeoutError):
    """A notebook cell, or the kernel start, did not finish within its timeout."""


def _first_line(source: str) -> str:
    for line in source.splitlines():
        if line.strip():
            return line.strip()[:120]
    return "(empty cell)"


def _running_cell(target: Path) -> tuple[int, int, str] | None:
    """(cell number, cells, first line) of the last cell papermill started,
    read from the output notebook it saves at every cell start."""
    import nbformat

    try:
        nb = nbformat.read(str(target), as_version=4)
    except Exception:  # no output written yet (the kernel never started)
        return None
    started = [i for i, cell in enumerate(nb.cells)
               if cell.get("metadata", {}).get("papermill", {}).get("start_time")]
    if not started:
        return None
    index = started[-1]
    return index + 1, len(nb.cells), _first_line(nb.cells[index].source)


def _is_timeout(exc: BaseException) -> bool:
    from nbclient.exceptions import DeadKernelError

    if isinstance(exc, TimeoutError | DeadKernelError):
        return True
    return isinstance(exc, RuntimeError) and "didn't respond" in str(exc)


def describe_timeout(name: str, target: Path, exc: BaseException, cell_timeout: float,
                     start_timeout: float) -> str:
    where = _running_cell(target)
    if where is None:
        return (f"{name}: the kernel did not start within {start_timeout:g} s "
                f"({type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc) else ''})")
    number, total, first = where
    from nbclient.exceptions import DeadKernelError

    what = "the kernel died while running it" if isinstance(exc, DeadKernelError) else \
        f"did not finish within {cell_timeout:g} s"
    return f"{name}: cell {number} of {total} ({first!r}) {what}"


def execute(source: Path, target: Path, parameters: dict[str, Any], *, cwd: Path,
            cell_timeout: float, start_timeout: float = 120, **options: Any) -> None:
    """``papermill.execute_notebook`` with a per-cell and a kernel-start timeout.

    ``options`` go to papermill (progress_bar, log_output, ...). Raises
    NotebookTimeout naming the notebook and the cell when a timeout fires; any
    other failure (a cell that raised) is papermill's own error.
    """
    import papermill as pm

    try:
        pm.execute_notebook(str(source), str(target), parameters=parameters,
                            kernel_name=options.pop("kernel_name", "python3"), cwd=str(cwd),
                            execution_timeout=cell_timeout, start_timeout=start_timeout,
                            **options)
    except Exception as exc:
        if not _is_timeout(exc):
            raise
        raise NotebookTimeout(describe_timeout(Path(source).name, Path(target), exc,
                                               cell_timeout, start_timeout)) from exc
