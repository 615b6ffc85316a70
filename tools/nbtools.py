"""Helpers for writing the project's source notebooks from Python.

Notebooks are committed without outputs. ``write_notebook`` builds one from a
list of ("md" | "code" | "params", text) cells; ``strip_outputs`` clears a
notebook edited in JupyterLab before it is committed (``make strip``).
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook


def write_notebook(path: str | Path, cells: list[tuple[str, str]], *,
                   summary: bool = False) -> None:
    nb = new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    nb.metadata["threadcost"] = {"summary": summary}
    for kind, text in cells:
        text = text.strip("\n")
        if kind == "md":
            nb.cells.append(new_markdown_cell(text))
        elif kind == "params":
            nb.cells.append(new_code_cell(text, metadata={"tags": ["parameters"]}))
        elif kind == "code":
            nb.cells.append(new_code_cell(text))
        elif kind == "show":  # code whose input stays visible in the rendered paper
            nb.cells.append(new_code_cell(text, metadata={"tags": ["show-input"]}))
        else:
            raise ValueError(kind)
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"cell-{i:02d}"
    nbformat.validate(nb)
    nbformat.write(nb, str(path))


def strip_outputs(path: str | Path) -> bool:
    """Remove outputs and execution counts; return True if the file changed."""
    nb = nbformat.read(str(path), as_version=4)
    changed = False
    for cell in nb.cells:
        if cell.cell_type == "code" and (cell.outputs or cell.execution_count):
            cell.outputs, cell.execution_count = [], None
            changed = True
        for key in ("execution", "papermill"):
            if key in cell.metadata:
                del cell.metadata[key]
                changed = True
    for key in ("papermill", "widgets"):
        if key in nb.metadata:
            del nb.metadata[key]
            changed = True
    if changed:
        nbformat.write(nb, str(path))
    return changed


if __name__ == "__main__":
    for arg in sys.argv[1:]:
        if strip_outputs(arg):
            print(f"stripped {arg}")
