"""``python -m threadcost.paper``: run every notebook, then render the paper.

Steps: read a papermill parameter set (``params/default.yaml``); run each
notebook in ``notebooks/`` through papermill (experiment notebooks in name
order, then the ones marked ``"threadcost": {"summary": true}`` in their
metadata, which read the runs the others stored), with a progress bar per
notebook; render each executed notebook to HTML (code folded, figures embedded,
widget state drawn by the vendored widget manager); write an index page.
Outputs go to ``<out>/notebooks/*.ipynb`` and ``<out>/html/`` (open
``index.html`` from the file system, no network needed); data to data/ and
figures to figures/ (or the ``THREADCOST_*_DIR`` overrides).

A notebook that fails is still rendered (with its error) and named at the end;
the summary notebooks then show its claims as "not run here". The exit status
is 1 when any notebook failed.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import yaml

from threadcost import machine, notebook_sources, paths
from threadcost.render import Page, copy_vendor, nav_html, read_page, render_index, render_notebook

NOTEBOOKS_DIR = notebook_sources.NOTEBOOKS_DIR
HEADLINE_FIGURE = "summary_headline"


def load_params(path: str | Path) -> dict[str, Any]:
    try:
        with open(path) as fh:
            params = yaml.safe_load(fh) or {}
    except OSError as exc:
        raise SystemExit(f"{path}: cannot read the parameter set: {exc.strerror}") from None
    except yaml.YAMLError as exc:
        raise SystemExit(f"{path}: not valid YAML: {exc}") from None
    if not isinstance(params, dict):
        raise SystemExit(f"{path}: expected a mapping of parameter names to values")
    return params


def notebook_order(directory: Path = NOTEBOOKS_DIR) -> list[Path]:
    """Experiment notebooks' sources by name, then summary notebooks' by name."""
    books = notebook_sources.sources(directory)
    summary = {p for p in books if notebook_sources.is_summary(p)}
    return [p for p in books if p not in summary] + [p for p in books if p in summary]


def reading_order(books: list[Path]) -> list[Path]:
    """The order of the paper: by name (00 introduction first, claims last)."""
    return sorted(books, key=lambda p: p.name)


# No cell of the study takes minutes with the shipped parameter sets; a cell that
# does is stuck, and the notebook fails with its error instead of hanging `make paper`.
CELL_TIMEOUT_S = 900
# A kernel starts in seconds; on a loaded machine give it two minutes.
KERNEL_START_TIMEOUT_S = 120


def run_notebook(source: Path, target: Path, params: dict[str, Any]) -> None:
    """Execute one notebook with papermill (a tqdm bar over its cells).

    Every wait is bounded: a cell by CELL_TIMEOUT_S, the kernel's start by
    KERNEL_START_TIMEOUT_S. A timeout raises NotebookTimeout naming the notebook,
    the cell number and its first line.
    """
    import papermill as pm

    from threadcost.notebook_run import execute

    # A parameter set is shared by every notebook; each gets the names it declares.
    declared = set(pm.inspect_notebook(str(source)))
    mine = {k: v for k, v in params.items() if k in declared}
    execute(source, target, mine, cwd=NOTEBOOKS_DIR, cell_timeout=CELL_TIMEOUT_S,
            start_timeout=KERNEL_START_TIMEOUT_S,
            progress_bar={"desc": source.stem, "unit": "cell", "leave": True},
            request_save_on_cell_execute=False, log_output=False)


def _swap_into_place(staging: Path, out: Path) -> None:
    """Replace ``out`` by ``staging``; a failed run before this leaves the old paper."""
    if out.exists():
        old = out.with_name(out.name + ".old")
        shutil.rmtree(old, ignore_errors=True)
        os.rename(out, old)
        os.rename(staging, out)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.rename(staging, out)


def _copy_headline(html_dir: Path) -> list[str]:
    """Put the headline figure beside the index, when the summary produced it."""
    src = paths.figures_dir() / f"{HEADLINE_FIGURE}.png"
    if not src.is_file():
        return []
    (html_dir / "figures").mkdir(exist_ok=True)
    shutil.copy2(src, html_dir / "figures" / src.name)
    return [f"figures/{src.name}"]


def build(params_path: str, out: Path, only: list[str] | None = None) -> tuple[Path, list[str]]:
    """Run and render; return (the html index, names of notebooks that failed)."""
    params = load_params(params_path)
    staging = out.with_name(out.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    (staging / "notebooks").mkdir(parents=True)
    html_dir = staging / "html"
    html_dir.mkdir(parents=True)
    copy_vendor(html_dir)

    books = notebook_order()
    if only:
        books = [b for b in books if any(b.name.startswith(p) for p in only)]
    if not books:
        raise SystemExit(f"no notebook matches --only {' '.join(only or [])}")
    failed: list[str] = []
    for i, book in enumerate(books, 1):
        print(f"[{i}/{len(books)}] {book.name}", file=sys.stderr, flush=True)
        try:
            source = notebook_sources.write_ipynb(book, staging / "sources")
            run_notebook(source, staging / "notebooks" / source.name, params)
        except Exception as exc:  # a failed notebook is rendered with its error
            failed.append(book.name)
            first = str(exc).strip().splitlines()
            print(f"  {book.name} failed: {first[0] if first else type(exc).__name__}",
                  file=sys.stderr, flush=True)

    ordered = [staging / "notebooks" / f"{b.stem}.ipynb" for b in reading_order(books)]
    ordered = [p for p in ordered if p.is_file()]
    stems = [p.stem for p in ordered]
    pages: list[Page] = []
    for i, executed in enumerate(ordered):
        target = render_notebook(executed, html_dir, nav=nav_html(stems, i))
        pages.append(read_page(target, ok=executed.name not in failed))
    figures = _copy_headline(html_dir)
    render_index(pages, html_dir, params_name=str(params_path),
                 machine_text=machine.describe(machine.fingerprint(include_git=False)),
                 figures=figures)
    _swap_into_place(staging, out)
    return out / "html" / "index.html", failed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m threadcost.paper", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--params", default="params/default.yaml",
                        help="papermill parameter set, YAML (default: %(default)s; "
                             "params/quick.yaml runs in about a minute)")
    parser.add_argument("--out", default="build/paper",
                        help="output folder for notebooks/ and html/ (default: %(default)s)")
    parser.add_argument("--only", nargs="*", default=None, metavar="PREFIX",
                        help="run only notebooks whose names start with these prefixes, "
                             "e.g. --only 01 00 06")
    args = parser.parse_args(argv)

    started = time.monotonic()
    index, failed = build(args.params, Path(args.out).resolve(), args.only)
    elapsed = time.monotonic() - started
    out = index.parent.parent
    print(f"\nPaper ready in {elapsed:,.0f} s. Open in a browser (works offline):")
    print(f"  {index}")
    print(f"  notebooks: {out / 'notebooks'}")
    print(f"  data:      {paths.data_dir()}")
    print(f"  figures:   {paths.figures_dir()}")
    if failed:
        print(f"\n{len(failed)} notebook(s) failed and show their error: {', '.join(failed)}",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
