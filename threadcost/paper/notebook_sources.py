"""The study's notebooks have one source each: ``notebooks/NN_name.py`` (jupytext py:percent).

JupyterLab opens those files as notebooks (jupytext's contents manager) and saves
back to them, so an edit in the lab is an edit of the source; outputs never reach
git. papermill runs ``.ipynb`` files, so ``make paper``, the tests and the browser
suite first write each source as a notebook with :func:`write_ipynb`.
"""

from __future__ import annotations

from pathlib import Path

import nbformat

from threadcost import paths

NOTEBOOKS_DIR = paths.REPO_ROOT / "notebooks"
PATTERN = "[0-9][0-9]_*.py"


def sources(directory: Path = NOTEBOOKS_DIR) -> list[Path]:
    """Every source notebook of the study, by name."""
    return sorted(directory.glob(PATTERN))


def source_for(name: str, directory: Path = NOTEBOOKS_DIR) -> Path:
    """The source of ``"01_malloc_touch"`` (also given as ``.py`` or ``.ipynb``)."""
    stem = Path(name).name.removesuffix(".ipynb").removesuffix(".py")
    path = directory / f"{stem}.py"
    if not path.is_file():
        known = ", ".join(p.stem for p in sources(directory)) or "none"
        raise FileNotFoundError(f"notebook {name!r}: no {path.name} in {directory} "
                                f"(known: {known})")
    return path


def read(source: Path) -> nbformat.NotebookNode:
    """The notebook a py:percent source stands for (cell ids assigned, validated)."""
    import jupytext

    nb = jupytext.read(str(source), fmt="py:percent")
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"cell-{i:02d}"
    nb.metadata.pop("jupytext", None)
    nb.metadata.setdefault("language_info", {"name": "python"})
    nbformat.validate(nb)
    return nb


def write_ipynb(source: Path, folder: Path) -> Path:
    """Write ``source`` as an unexecuted ``folder/<stem>.ipynb``; return its path."""
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / f"{source.stem}.ipynb"
    nbformat.write(read(source), str(target))
    return target


def is_summary(source: Path) -> bool:
    """Summary notebooks (00, 06) read the runs the others stored; they run last.
    (Only the source's header is parsed: its metadata, not its cells.)"""
    import jupytext

    lines = source.read_text(encoding="utf-8").splitlines(keepends=True)
    header = []
    for i, line in enumerate(lines):
        header.append(line)
        if i > 0 and line.strip() == "# ---":  # the end of the YAML header
            break
    nb = jupytext.reads("".join(header), fmt="py:percent")
    return bool(nb.metadata.get("threadcost", {}).get("summary"))
