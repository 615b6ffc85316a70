"""``python -m threadcost.paper``: run every notebook, then render the paper.

Steps: read a papermill parameter set (``params/default.yaml``); run each
notebook in ``notebooks/`` through papermill (experiment notebooks in name
order, then the ones marked ``"threadcost": {"summary": true}`` in their
metadata, which read the runs the others stored), with a progress bar per
notebook; render each executed notebook to HTML (code folded, figures embedded,
charts drawn by the vendored Vega bundles); write an index page.
Outputs go to ``<out>/notebooks/*.ipynb`` and ``<out>/html/`` (open
``index.html`` from the file system, no network needed); data to data/ and
figures to figures/ (or the ``THREADCOST_*_DIR`` overrides).

A notebook that fails stops the build: the runner names the notebook, the cell
and the error, exits with status 1 and leaves the previous paper in place (the
executed notebook, with its traceback, stays in ``<out>.partial/notebooks/``). A
failure never becomes a line of the paper.

Progress (papermill's bar per notebook, and the experiments' own bars, through
``threadcost.progress``) goes to this process's stderr, never into a page.

Every page gets a provenance line under each figure and table: the CSV files of
the runs the notebook stored (copied to ``html/data/``) and the experiment
modules that produced them (copied to ``html/code/``). ``html/_static/build.json``
records the commit the paper was rendered from and whether the tree was clean
(``make reference`` refuses a dirty one).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import yaml

from threadcost import datastore, machine, notebook_sources, paths, progress
from threadcost.errors import ThreadcostError, one_line
from threadcost.render import (
    Page,
    Provenance,
    copy_vendor,
    nav_html,
    read_page,
    render_index,
    render_notebook,
    write_stylesheet,
)

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
    from threadcost import parameters  # unknown keys and wrong types, named with the file

    try:
        parameters.check_values(params, str(path))
    except ThreadcostError as exc:
        raise SystemExit(str(exc)) from None
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


class NotebookFailed(Exception):
    """A notebook raised during ``make paper``: which one, which cell, what error."""

    def __init__(self, notebook: str, cell: str, message: str) -> None:
        self.notebook, self.cell, self.message = notebook, cell, message
        super().__init__(f"{notebook}, {cell}: {message}")


def _failure(book: Path, exc: BaseException) -> NotebookFailed:
    """Name the notebook, the cell and the message of a papermill failure."""
    ename = getattr(exc, "ename", None)
    if ename is not None:  # papermill.PapermillExecutionError
        index = getattr(exc, "cell_index", None)
        count = getattr(exc, "exec_count", None)
        source = str(getattr(exc, "source", "") or "").strip().splitlines()
        where = f"cell {index}" if index is not None else "a cell"
        if count is not None:
            where += f" (execution count {count})"
        if source:
            where += f", starting {source[0][:80]!r}"
        return NotebookFailed(book.name, where, f"{ename}: {getattr(exc, 'evalue', '')}")
    first = str(exc).strip().splitlines()
    return NotebookFailed(book.name, "before any cell ran",
                          f"{type(exc).__name__}: {first[0] if first else ''}")


# Which experiment module stores which experiment name, found by reading the sources.
EXPERIMENTS_DIR = paths.REPO_ROOT / "threadcost" / "experiments"


def experiment_module(experiment: str, directory: Path = EXPERIMENTS_DIR) -> Path | None:
    """The module of ``threadcost/experiments/`` that produces runs named ``experiment``."""
    direct = directory / f"{experiment}.py"
    if direct.is_file():
        return direct
    quoted = (f'"{experiment}"', f"'{experiment}'")
    for module in sorted(directory.glob("*.py")):
        text = module.read_text(encoding="utf-8")
        if any(q in text for q in quoted):
            return module
    parts = experiment.split("_")
    for n in range(len(parts) - 1, 0, -1):
        candidate = directory / ("_".join(parts[:n]) + ".py")
        if candidate.is_file():
            return candidate
    return None


def _run_folders(data_dir: Path) -> set[Path]:
    return {run.path for run in datastore.list_runs(data_dir=data_dir)}


def provenance_for(runs: list[Path], html_dir: Path) -> Provenance:
    """Copy the runs' CSV files and their experiment modules next to the pages."""
    data: list[tuple[str, str]] = []
    code: list[tuple[str, str]] = []
    names = [run.name.split("-", 1)[-1].rsplit("-", 1)[0] for run in runs]
    for run in sorted(runs):
        label = run.name.split("-", 1)[-1]  # experiment-suffix, e.g. malloc_touch-3a1f7f
        if names.count(label.rsplit("-", 1)[0]) == 1:
            label = label.rsplit("-", 1)[0]
        target = html_dir / "data" / run.parent.name / run.name
        target.mkdir(parents=True, exist_ok=True)
        meta = json.loads((run / datastore.META).read_text(encoding="utf-8"))
        for name in meta.get("tables", []):
            src = next((c for c in (run / f"{name}.csv", run / f"{name}.csv.gz")
                        if c.is_file()), run / f"{name}.csv")
            if src.is_file():
                shutil.copy2(src, target / src.name)
                data.append((f"{label}/{src.name}",
                             f"data/{run.parent.name}/{run.name}/{src.name}"))
        shutil.copy2(run / datastore.META, target / datastore.META)
        module = experiment_module(str(meta.get("experiment", "")))
        if module is not None:
            rel = module.relative_to(paths.REPO_ROOT).as_posix()
            (html_dir / "code" / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(module, html_dir / "code" / rel)
            if ("code/" + rel) not in {h for _, h in code}:
                code.append((rel, "code/" + rel))
    return Provenance(data=data, code=code)


def summary_provenance(html_dir: Path, stored: dict[str, list[Path]],
                       modules: tuple[str, ...]) -> Provenance:
    """A summary page reads the runs the others stored: link their index and its views."""
    rows = ["notebook,experiment,run_id,table,csv"]
    for book, runs in stored.items():
        for run in sorted(runs):
            meta = json.loads((run / datastore.META).read_text(encoding="utf-8"))
            for name in meta.get("tables", []):
                rows.append(f"{book},{meta['experiment']},{run.name},{name},"
                            f"{run.parent.name}/{run.name}/{name}.csv")
    (html_dir / "data").mkdir(parents=True, exist_ok=True)
    (html_dir / "data" / "runs.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    code = []
    for mod in modules:
        src = paths.REPO_ROOT / mod
        if src.is_file():
            (html_dir / "code" / mod).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, html_dir / "code" / mod)
            code.append((mod, "code/" + mod))
    return Provenance(data=[("runs.csv (every run read)", "data/runs.csv")], code=code)


class _ProgressRelay:
    """A pipe the notebooks' kernels write progress bars into, copied to our stderr.

    Kernels open ``path`` (``/proc/<pid>/fd/<n>``, the pipe's write end) by name; a
    thread copies what arrives to ``sys.stderr``, so the bars land in order with the
    runner's own lines whether stderr is a terminal, a pipe or a log file."""

    def __init__(self) -> None:
        import threading

        self._read, self._write = os.pipe()
        self.path = f"/proc/{os.getpid()}/fd/{self._write}"
        self._thread = threading.Thread(target=self._copy, name="progress-relay", daemon=True)
        self._thread.start()

    def _copy(self) -> None:
        while True:
            try:
                chunk = os.read(self._read, 4096)
            except OSError:
                return
            if not chunk:
                return
            sys.stderr.write(chunk.decode("utf-8", "replace"))
            sys.stderr.flush()

    def close(self) -> None:
        os.close(self._write)  # the kernels have exited: the reader sees end of file
        self._thread.join(timeout=5)
        os.close(self._read)


SUMMARY_CODE = ("threadcost/views/summary.py", "threadcost/views/headline.py",
                "threadcost/claims/selectors.py", "threadcost/paper_summary.py")


def build(params_path: str, out: Path, only: list[str] | None = None) -> Path:
    """Run and render; return the html index. Raises NotebookFailed at the first failure."""
    params = load_params(params_path)
    staging = out.with_name(out.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    (staging / "notebooks").mkdir(parents=True)
    html_dir = staging / "html"
    html_dir.mkdir(parents=True)
    copy_vendor(html_dir)
    write_stylesheet(html_dir)

    books = notebook_order()
    if only:
        books = [b for b in books if any(b.name.startswith(p) for p in only)]
    if not books:
        raise SystemExit(f"no notebook matches --only {' '.join(only or [])}")
    data_dir = paths.data_dir()
    stored: dict[str, list[Path]] = {}
    # Experiments' progress bars: this process's stderr (a terminal or a log), not the page.
    relay = _ProgressRelay()
    os.environ[progress.ENV] = relay.path
    try:
        for i, book in enumerate(books, 1):
            print(f"[{i}/{len(books)}] {book.name}", file=sys.stderr, flush=True)
            before = _run_folders(data_dir)
            try:
                source = notebook_sources.write_ipynb(book, staging / "sources")
                run_notebook(source, staging / "notebooks" / source.name, params)
            except Exception as exc:
                raise _failure(book, exc) from exc
            stored[book.stem] = sorted(_run_folders(data_dir) - before)
    finally:
        os.environ.pop(progress.ENV, None)
        relay.close()
    for skipped in datastore.skipped_runs(data_dir):  # the log names every unread run
        print(f"make paper: skipped {skipped.path}: {skipped.reason}", file=sys.stderr)

    ordered = [staging / "notebooks" / f"{b.stem}.ipynb" for b in reading_order(books)]
    stems = [p.stem for p in ordered]
    pages: list[Page] = []
    for i, executed in enumerate(ordered):
        runs = stored.get(executed.stem, [])
        prov = (provenance_for(runs, html_dir) if runs
                else summary_provenance(html_dir, stored, SUMMARY_CODE))
        target = render_notebook(executed, html_dir, nav=nav_html(stems, i), provenance=prov)
        pages.append(read_page(target))
    figures = _copy_headline(html_dir)
    fp = machine.fingerprint(include_git=True)
    git = fp.get("git") or {}
    (html_dir / "_static" / "build.json").write_text(json.dumps(
        {"commit": git.get("commit"), "dirty": git.get("dirty"), "params": str(params_path),
         "machine_id": machine.machine_id(fp)}, indent=2) + "\n", encoding="utf-8")
    render_index(pages, html_dir, params_name=Path(params_path).name,
                 machine_text=machine.describe(machine.fingerprint(include_git=False)),
                 figures=figures, data_dir=data_dir, machine_id=machine.machine_id(fp))
    _swap_into_place(staging, out)
    return out / "html" / "index.html"


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
    try:
        index = build(args.params, Path(args.out).resolve(), args.only)
    except NotebookFailed as exc:
        print(f"\nmake paper stopped: notebook {exc.notebook} failed at {exc.cell}:\n"
              f"  {exc.message}\n"
              f"The executed notebook, with its traceback, is in "
              f"{Path(args.out).resolve().name}.partial/notebooks/; the previous paper "
              "(if any) is unchanged.", file=sys.stderr)
        return 1
    except (OSError, ThreadcostError) as exc:  # a data, disk or permission error: one line
        text, _ = one_line(exc)
        if text is None:
            raise
        print(f"make paper stopped: {text}; the previous paper (if any) is unchanged.",
              file=sys.stderr)
        return 4
    elapsed = time.monotonic() - started
    out = index.parent.parent
    print(f"\nPaper ready in {elapsed:,.0f} s. Open in a browser (works offline):")
    print(f"  {index}")
    print(f"  notebooks: {out / 'notebooks'}")
    print(f"  data:      {paths.data_dir()}")
    print(f"  figures:   {paths.figures_dir()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
