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
and the error in one line, exits with status 1 (4 when the error is a full disk or a
folder it may not write; 2 for bad input) and leaves the previous paper in place (the
executed notebook, with its traceback, stays in ``<out>.partial/notebooks/``). A
failure never becomes a line of the paper. Ctrl-C or SIGTERM stops it within a moment,
in one line, with 130 or 143, leaving nothing behind (:mod:`threadcost.runsafety.interrupts`).

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
import contextlib
import json
import os
import shutil
import sys
import tempfile
import time
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

from threadcost.runsafety import interrupts, isolate

STOPPED_NOTE = "; the previous paper (if any) is unchanged"
if __name__ == "__main__":  # an interrupt during the imports below (seconds) is one line too
    interrupts.install("make paper", STOPPED_NOTE)

# jsonschema (under nbformat) imports rfc3987_syntax when it is installed, only for its
# "iri" format checks, and that import compiles some forty grammars: seconds of every
# build. nbformat never checks formats; without the module jsonschema skips those two.
sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[arg-type]

from threadcost import paths, progress  # noqa: E402
from threadcost.errors import (  # noqa: E402
    LimitReached,
    ParameterError,
    ThreadcostError,
    disk_errno,
    one_line,
    short,
)
from threadcost.experiments import parameters  # noqa: E402
from threadcost.findings import folder_cache  # noqa: E402
from threadcost.host import machine  # noqa: E402
from threadcost.notebook import stored  # noqa: E402
from threadcost.paper import notebook_run, notebook_sources  # noqa: E402
from threadcost.paper import pages as paper_pages  # noqa: E402
from threadcost.paper.pages import (  # noqa: E402
    SUMMARY_CODE,
    Links,
    experiment_module,  # noqa: F401 (the paper's name for it, read by tests)
    provenance_for,
    summary_provenance,
)
from threadcost.paper.render import (  # noqa: E402
    STATIC,
    Page,
    copy_vendor,
    nav_html,
    read_page,
    render_index,
    render_notebook,
    write_stylesheet,
)
from threadcost.store import datastore  # noqa: E402

NOTEBOOKS_DIR = notebook_sources.NOTEBOOKS_DIR


def load_params(path: str | Path) -> dict[str, Any]:
    """The parameter set, read within bounds and checked (ParameterError, one line:
    the file, the key, the value and what is allowed)."""
    return parameters.check_file(path)


def _prog() -> str:
    """How the user started this: ``make paper`` (make sets MAKELEVEL) or the module."""
    return "make paper" if os.environ.get("MAKELEVEL") else "python -m threadcost.paper"


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


FIGURES_ENV = "THREADCOST_FIGURES_DIR"  # where notebooks save figures (threadcost.paths)


def run_notebook(source: Path, target: Path, params: dict[str, Any],
                 progress_bar: bool = True) -> None:
    """Execute one notebook with papermill (a tqdm bar over its cells).

    Every wait is bounded: a cell by CELL_TIMEOUT_S, the kernel's start by
    KERNEL_START_TIMEOUT_S. A timeout raises NotebookTimeout naming the notebook,
    the cell number and its first line.
    """
    import papermill as pm

    # A parameter set is shared by every notebook; each gets the names it declares.
    declared = set(pm.inspect_notebook(str(source)))
    mine = {k: v for k, v in params.items() if k in declared}
    notebook_run.execute(source, target, mine, cwd=NOTEBOOKS_DIR, cell_timeout=CELL_TIMEOUT_S,
            start_timeout=KERNEL_START_TIMEOUT_S,
            progress_bar={"desc": source.stem, "unit": "cell", "leave": True}
            if progress_bar else False,
            request_save_on_cell_execute=False, log_output=False)


def _swap_into_place(staging: Path, out: Path) -> None:
    """Replace ``out`` by ``staging``; a failed run before this leaves the old paper, and
    an interrupt during it is acted on once the new paper is in place."""
    with interrupts.held():
        _swap(staging, out)


def _swap(staging: Path, out: Path) -> None:
    if staging.stat().st_dev != out.parent.stat().st_dev:  # another file system
        tmp = out.with_name(f".{out.name}.{os.getpid()}.incoming")
        shutil.copytree(staging, tmp)
        shutil.rmtree(staging)
        staging = tmp
    if out.exists():
        old = out.with_name(out.name + ".old")
        shutil.rmtree(old, ignore_errors=True)
        os.rename(out, old)
        os.rename(staging, out)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.rename(staging, out)


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


def _run_logged(book: Path, staging: Path, params: dict[str, Any],
                progress_bar: bool) -> tuple[str, str, str] | None:
    """Run one notebook; None, or (notebook, cell, message) of its failure.

    The runs it writes or reads are named in its own run log (``runlogs/<stem>.log``),
    by the notebook itself: another build sharing the data folder never enters it."""
    os.environ[datastore.RUN_LOG_ENV] = str(staging / "runlogs" / f"{book.stem}.log")
    try:
        source = notebook_sources.write_ipynb(book, staging / "sources")
        run_notebook(source, staging / "notebooks" / source.name, params, progress_bar)
    except Exception as exc:
        failed = _failure(book, exc)
        return failed.notebook, failed.cell, failed.message
    finally:
        os.environ.pop(datastore.RUN_LOG_ENV, None)
    return None


# Notebooks drawn at once when nothing is measured (each is mostly a kernel's start).
DRAWING_WORKERS = 3


def _run_drawing(books: list[Path], staging: Path, params: dict[str, Any]) -> None:
    """Run notebooks that only draw from stored runs, several at a time, each in a
    process of its own (its own run log); the summary notebooks after the others."""
    summary = [b for b in books if notebook_sources.is_summary(b)]
    _run_waves([[b for b in books if b not in summary], summary], staging, params)


def _run_waves(waves: list[list[Path]], staging: Path, params: dict[str, Any],
               workers: int = DRAWING_WORKERS) -> None:
    """Each wave's notebooks at once (none of them measures), each in a process of its
    own (its own run log), a wave after the one before."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    books = [b for wave in waves for b in wave]
    try:
        with ProcessPoolExecutor(max_workers=workers, initializer=interrupts.ignore_in_children,
                                 mp_context=multiprocessing.get_context("spawn")) as pool:
            for wave in waves:
                for book in wave:
                    print(f"drawing {book.name}", file=sys.stderr, flush=True)
                with interrupts.spawning():
                    futures = [pool.submit(_run_logged, b, staging, params, False)
                               for b in wave]
                for future in futures:
                    failed = future.result()
                    if failed is not None:
                        raise NotebookFailed(*failed)
    except BrokenProcessPool:  # no worker could start (e.g. run from an interactive prompt)
        print("drawing the notebooks one at a time", file=sys.stderr, flush=True)
        for book in books:
            failed = _run_logged(book, staging, params, False)
            if failed is not None:
                raise NotebookFailed(*failed) from None


def _run_summaries(books: list[Path], staging: Path, params: dict[str, Any]) -> None:
    """The summary notebooks at once: the last (the claims, the longest) in this
    process, the others in worker processes (whose start overlaps it)."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    *others, last = books
    for book in books:
        print(f"drawing {book.name}", file=sys.stderr, flush=True)
    if not others:
        failed = _run_logged(last, staging, params, False)
        if failed is not None:
            raise NotebookFailed(*failed)
        return
    with ProcessPoolExecutor(max_workers=len(others), initializer=interrupts.ignore_in_children,
                             mp_context=multiprocessing.get_context("spawn")) as pool:
        with interrupts.spawning():
            futures = [pool.submit(_run_logged, b, staging, params, False) for b in others]
        outcomes = [_run_logged(last, staging, params, False)]
        for book, future in zip(others, futures, strict=True):
            try:
                outcomes.insert(-1, future.result())
            except BrokenProcessPool:  # no worker could start: run it here
                outcomes.insert(-1, _run_logged(book, staging, params, False))
    for failed in outcomes:
        if failed is not None:
            raise NotebookFailed(*failed)


class BuildError(Exception):
    """The build cannot start (bad --machine, no runs): one line, exit status 2."""


# What a rendering from stored runs tells every notebook (those that declare the name).
def stored_params(machine_id: str) -> dict[str, Any]:
    return {"measure": False, "machine_id": machine_id, "intro_machine_id": machine_id,
            "claims_machine_id": machine_id, "interactive": False}


def _check_machine(machine_id: str, data_dir: Path) -> list[datastore.Run]:
    runs, skipped = datastore.scan(data_dir, machine_id)
    if not runs and skipped:  # a folder whose every run is unreadable: a data error
        raise datastore.DataError(unreadable_folder(machine_id, skipped))
    if not runs:
        known = datastore.machines_readable()
        raise BuildError(f"--machine {machine_id}: no stored run in runs/{machine_id} or "
                         f"data/{machine_id} (machine folders with runs: "
                         f"{', '.join(known) or 'none'})")
    return runs


def unreadable_folder(machine_id: str, skipped: list[datastore.Skipped]) -> str:
    first = skipped[0]
    return (f"--machine {machine_id}: none of its {len(skipped)} run folder(s) could be "
            f"read ({first.reason})")


def build(params_path: str, out: Path, only: list[str] | None = None,
          machine_id: str | None = None, html_out: Path | None = None,
          link_repo: bool = False) -> Path:
    """Run and render; return the html index. Raises NotebookFailed at the first failure.

    ``machine_id``: render that machine folder's stored runs without measuring.
    ``html_out``: where the pages go (default ``<out>/html``); ``link_repo``: link
    to the repository's data, code and vendored bundles instead of copying them.
    """
    with folder_cache.kept_results():  # what each process computes, for the others
        return _build(params_path, out, only, machine_id, html_out, link_repo)


def _build(params_path: str, out: Path, only: list[str] | None, machine_id: str | None,
           html_out: Path | None, link_repo: bool) -> Path:
    params = load_params(params_path)
    data_dir = paths.data_dir() if machine_id is None else paths.data_dir_for(machine_id)
    measure = machine_id is None
    stored_runs = [] if measure else _check_machine(str(machine_id), data_dir)
    books = notebook_order()
    if only:
        books = [b for b in books if any(b.name.startswith(p) for p in only)]
    if not books:
        raise BuildError(f"no notebook matches --only {' '.join(only or [])}")
    if measure:  # every notebook's values judged before the first one measures
        # (the prechecks need the C kernels: a rendering from stored runs does not)
        from threadcost.paper import prechecks

        prechecks.check_all([b.stem for b in books], params)
        prechecks.kernels()  # no kernels: one line, before any notebook starts
    staging = out.with_name(out.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    interrupts.remove_on_stop(staging)  # a stopped build leaves neither it ...
    interrupts.sweep_on_stop(lambda: datastore.remove_dead_partials(data_dir))  # ... nor a save
    (staging / "notebooks").mkdir(parents=True)
    (staging / "runlogs").mkdir()
    html_dir = staging / "html"
    html_dir.mkdir(parents=True)
    final_html = html_out if html_out is not None else out / "html"
    links = Links(html_dir, final_html, link_repo)
    if not measure:
        # Another machine's figures never overwrite this machine's figures/.
        # (through the environment, so that no path of this machine reaches a page)
        params = {**params, **stored_params(str(machine_id))}
        params.pop("figures_dir", None)
    figures_before = os.environ.get(FIGURES_ENV)
    if not measure:
        os.environ[FIGURES_ENV] = str(staging / "figures")

    stored: dict[str, list[Path]] = {}
    stems = [b.stem for b in reading_order(books)]

    def logged(book: Path) -> list[Path]:
        return paper_pages.logged_runs(staging / "runlogs" / f"{book.stem}.log")

    def render(stem: str, runs: list[Path] | None) -> Page:
        """One page: a measuring notebook's ``runs``, or (None) a summary's."""
        prov = (provenance_for(runs, links) if runs
                else summary_provenance(links, stored, SUMMARY_CODE))
        target = render_notebook(staging / "notebooks" / f"{stem}.ipynb", html_dir,
                                 nav=nav_html(stems, stems.index(stem)), provenance=prov,
                                 assets=links.assets)
        return read_page(target)

    # Rendering never overlaps a timing: it starts once the last measuring notebook
    # has run, on one thread, while the summary notebooks (which only read) run, at once.
    renderer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="render")
    rendered: dict[str, Future[Page]] = {}
    prepared: list[Future[Any]] = []

    def start_rendering(done: list[Path]) -> None:
        if prepared:
            return
        if links.assets == STATIC:
            prepared.append(renderer.submit(copy_vendor, html_dir))
        prepared.append(renderer.submit(write_stylesheet, html_dir))
        for book in done:
            stored[book.stem] = logged(book)
            if stored[book.stem]:
                rendered[book.stem] = renderer.submit(render, book.stem, stored[book.stem])
        # the log names every unread run (reading every stored table takes seconds)
        prepared.append(renderer.submit(paper_pages.skipped_runs, data_dir))

    # Experiments' progress bars: this process's stderr (a terminal or a log), not the page.
    relay = _ProgressRelay()
    os.environ[progress.ENV] = relay.path
    kernels = Path(tempfile.mkdtemp(prefix="threadcost-build-"))  # the kernels' sockets
    interrupts.remove_on_stop(kernels)
    os.environ[notebook_run.KERNELS_DIR_ENV] = str(kernels)
    try:
        if measure:  # one at a time: a notebook's timings must not share the CPUs
            summaries = [b for b in books if notebook_sources.is_summary(b)]
            measuring = [b for b in books if b not in summaries]
            for i, book in enumerate(measuring, 1):
                print(f"[{i}/{len(books)}] {book.name}", file=sys.stderr, flush=True)
                with isolate.early_forkserver():  # started while the notebook imports
                    failed = _run_logged(book, staging, params, True)
                if failed is not None:
                    raise NotebookFailed(*failed)
            if summaries:  # every timing is done: these only read and draw
                start_rendering(measuring)
                _run_summaries(summaries, staging, params)
        else:  # drawing only: the experiment notebooks at once, then the summaries
            _run_drawing(books, staging, params)
        start_rendering([])
        for book in books:
            stored[book.stem] = logged(book)
    except BaseException:
        renderer.shutdown(wait=True, cancel_futures=True)
        raise
    finally:
        os.environ.pop(progress.ENV, None)
        os.environ.pop(notebook_run.KERNELS_DIR_ENV, None)
        shutil.rmtree(kernels, ignore_errors=True)
        if figures_before is None:
            os.environ.pop(FIGURES_ENV, None)
        else:
            os.environ[FIGURES_ENV] = figures_before
        relay.close()
    try:
        for job in prepared:
            job.result()
        for skipped in prepared[-1].result():
            said = skipped.as_dict()  # one line each, whatever the folder is named
            print(f"make paper: skipped {said['path']}: {said['reason']}", file=sys.stderr)
        pages = [rendered[stem].result() if stem in rendered else render(stem, stored[stem])
                 for stem in stems]
    finally:
        renderer.shutdown(wait=True, cancel_futures=True)
    figures = paper_pages.copy_headline(html_dir, staging / "figures" if not measure
                             else paths.figures_dir())
    fp_now = machine.fingerprint(include_git=True)
    git = fp_now.get("git") or {}
    every = [datastore.load_run(p) for runs in stored.values() for p in runs]
    measured_by = sorted({(r.commit, bool(((r.meta.get("machine") or {}).get("git") or {})
                                          .get("dirty"))) for r in every if r.commit})
    if measure:
        fp_page = machine.fingerprint(include_git=False)
        mid = machine.machine_id(fp_now)
    else:
        fp_page = dict(stored_runs[-1].meta.get("machine") or {})
        fp_page.pop("git", None)
        mid = str(machine_id)
    (html_dir / "_static").mkdir(exist_ok=True)
    (html_dir / "_static" / "build.json").write_text(json.dumps(
        {"commit": git.get("commit"), "dirty": git.get("dirty"), "params": str(params_path),
         "machine_id": mid, "measured": measure,
         "measured_by": [{"commit": c, "dirty": d} for c, d in measured_by],
         "runs": sorted(p.name for runs in stored.values() for p in runs)},
        indent=2) + "\n", encoding="utf-8")
    render_index(pages, html_dir, params_name=Path(params_path).name,
                 machine_text=machine.describe(fp_page), figures=figures, data_dir=data_dir,
                 machine_id=mid, measured_by=measured_by, from_stored=not measure)
    paper_pages.write_gallery(html_dir, mid)
    shutil.rmtree(staging / "runlogs", ignore_errors=True)
    if html_out is None:
        _swap_into_place(staging, out)
        return out / "html" / "index.html"
    html_out.parent.mkdir(parents=True, exist_ok=True)
    with interrupts.held():  # both in place, or an interrupt waits until they are
        _swap_into_place(html_dir, html_out)
        _swap_into_place(staging, out)
    return html_out / "index.html"


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
    parser.add_argument("--machine", default=None, metavar="ID",
                        help="render the stored runs of data/ID/ without measuring "
                             "(e.g. a machine folder someone else contributed)")
    parser.add_argument("--html", default=None, metavar="DIR",
                        help="write the pages to DIR instead of <out>/html")
    parser.add_argument("--link-repo", action="store_true",
                        help="link to the repository's data/, code and vendor/ by relative "
                             "path instead of copying them next to the pages (the pages "
                             "must stay inside the clone: make reference)")
    args = parser.parse_args(argv)
    # Ctrl-C or SIGTERM: one line, 130 or 143, every process below stopped at once, no
    # <out>.partial left, the previous paper unchanged (threadcost.runsafety.interrupts)
    with interrupts.guard("make paper", STOPPED_NOTE):
        return _main(args)


def whole_folders() -> None:
    """A data or figures folder named (``$THREADCOST_DATA_DIR``, ``$THREADCOST_FIGURES_DIR``)
    relative to where the build was started, made whole: the notebooks' kernels run in
    notebooks/, where the same words would name another folder."""
    for name in (paths.DATA_ENV, FIGURES_ENV):
        if os.environ.get(name):
            os.environ[name] = str(Path(os.environ[name]).resolve())


def _main(args: argparse.Namespace) -> int:
    started = time.monotonic()
    whole_folders()
    try:
        index = build(args.params, Path(args.out).resolve(), args.only, machine_id=args.machine,
                      html_out=Path(args.html).resolve() if args.html else None,
                      link_repo=args.link_repo)
    except BuildError as exc:
        print(f"{_prog()}: {exc}", file=sys.stderr)
        return 2
    except SystemExit as exc:  # a parameter set refused (load_params): bad input, one line
        if not isinstance(exc.code, str):
            raise
        print(f"{_prog()}: {exc.code}", file=sys.stderr)
        return 2
    except ParameterError as exc:  # a parameter set or value refused before anything ran
        print(f"{_prog()}: error: {exc}", file=sys.stderr)
        return 2
    except LimitReached as exc:  # a value this machine cannot hold, before anything ran
        print(f"{_prog()}: {exc}", file=sys.stderr)
        return 3
    except NotebookFailed as exc:  # one line: the notebook, its cell, the error, where
        message = " ".join(exc.message.split())
        print(f"\n{_prog()} stopped: notebook {exc.notebook} failed at {exc.cell}: "
              f"{short(message, 400)} (the executed notebook, with its traceback, is in "
              f"{Path(args.out).resolve().name}.partial/notebooks/; the previous paper, "
              "if any, is unchanged)", file=sys.stderr)
        if disk_errno(exc.message):  # a full disk or a folder it may not write: exit 4
            return 4
        kind = exc.message.split(":", 1)[0]  # the exception the notebook ended with
        return 2 if kind in ("ParameterError", "NotebookParameterError") else \
            3 if kind == "LimitReached" else 1
    except (OSError, ThreadcostError) as exc:  # a data, disk or permission error: one line
        text, _ = one_line(exc)
        if text is None:
            raise
        print(f"{_prog()} stopped: {text}; the previous paper (if any) is unchanged.",
              file=sys.stderr)
        return 4
    elapsed = time.monotonic() - started
    out = Path(args.out).resolve()
    how = f"from the stored runs of {args.machine}" if args.machine else "measured"
    print(f"\nPaper ({how}) ready in {elapsed:,.0f} s. Open in a browser (works offline):")
    print(f"  {index}")
    print(f"  notebooks: {out / 'notebooks'}")
    print(f"  data:      {paths.data_dir_for(args.machine) if args.machine else paths.data_dir()}")
    print(f"  figures:   {out / 'figures' if args.machine else paths.figures_dir()}")
    _print_not_run(index)
    return 0


def _print_not_run(index: Path) -> None:
    """The end of the run: what was not run here (read from the runs the build named)."""
    with contextlib.suppress(OSError, ValueError, ThreadcostError):
        build = json.loads((index.parent / "_static" / "build.json").read_text())
        folder = paths.data_dir() / str(build["machine_id"])
        runs = [datastore.load_run(folder / name) for name in build["runs"]
                if (folder / name).is_dir()]
        lines = stored.not_run_lines(runs)
        if lines:
            print(f"Not run here ({len(lines)}; the pages say so too):", *lines, sep="\n")


if __name__ == "__main__":
    sys.exit(main())
