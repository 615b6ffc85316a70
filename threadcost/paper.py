"""``python -m threadcost.paper``: run every notebook, then render the paper.

Steps: read a papermill parameter set (``params/default.yaml``); run each
notebook in ``notebooks/`` through papermill (experiment notebooks in name
order, then the ones marked ``"threadcost": {"summary": true}`` in their
metadata, which read the runs the others stored); render each executed
notebook to HTML with code hidden by tags; write an index page. Outputs go to
``<out>/notebooks/*.ipynb`` and ``<out>/html/*.html``; data to data/ and
figures to figures/ (or the ``THREADCOST_*_DIR`` overrides).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import nbformat
import yaml

from threadcost import paths
from threadcost.render import render_index, render_notebook

NOTEBOOKS_DIR = paths.REPO_ROOT / "notebooks"


def load_params(path: str | Path) -> dict[str, Any]:
    with open(path) as fh:
        params = yaml.safe_load(fh) or {}
    if not isinstance(params, dict):
        raise SystemExit(f"{path}: expected a mapping of parameter names to values")
    return params


def notebook_order(directory: Path = NOTEBOOKS_DIR) -> list[Path]:
    """Experiment notebooks by name, then summary notebooks by name."""
    books = sorted(directory.glob("[0-9][0-9]_*.ipynb"))

    def is_summary(p: Path) -> bool:
        meta = nbformat.read(str(p), as_version=4).metadata.get("threadcost", {})
        return bool(meta.get("summary"))

    return [p for p in books if not is_summary(p)] + [p for p in books if is_summary(p)]


def run_notebook(source: Path, target: Path, params: dict[str, Any]) -> None:
    import papermill as pm

    pm.execute_notebook(
        str(source), str(target), parameters=params, kernel_name="python3",
        cwd=str(source.parent), progress_bar=True, request_save_on_cell_execute=False,
        log_output=False,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m threadcost.paper", description=__doc__)
    parser.add_argument("--params", default="params/default.yaml",
                        help="papermill parameter set (YAML)")
    parser.add_argument("--out", default="build/paper", help="output folder")
    parser.add_argument("--only", nargs="*", default=None,
                        help="run only notebooks whose names start with these prefixes")
    args = parser.parse_args(argv)

    params = load_params(args.params)
    out = Path(args.out).resolve()
    staging = out.with_name(out.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    (staging / "notebooks").mkdir(parents=True)
    (staging / "html").mkdir(parents=True)

    books = notebook_order()
    if args.only:
        books = [b for b in books if any(b.name.startswith(p) for p in args.only)]
    started = time.monotonic()
    rendered: list[Path] = []
    for i, book in enumerate(books, 1):
        print(f"[{i}/{len(books)}] {book.name}", flush=True)
        executed = staging / "notebooks" / book.name
        run_notebook(book, executed, params)
        rendered.append(render_notebook(executed, staging / "html"))
    render_index(rendered, staging / "html", params_name=args.params)

    # Swap the finished paper into place; a failed run above leaves the old one intact.
    if out.exists():
        old = out.with_name(out.name + ".old")
        shutil.rmtree(old, ignore_errors=True)
        os.rename(out, old)
        os.rename(staging, out)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.rename(staging, out)

    elapsed = time.monotonic() - started
    print(f"\nPaper ready in {elapsed:,.0f} s:")
    print(f"  HTML:      {out / 'html' / 'index.html'}")
    print(f"  notebooks: {out / 'notebooks'}")
    print(f"  data:      {paths.data_dir()}")
    print(f"  figures:   {paths.figures_dir()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
