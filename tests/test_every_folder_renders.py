"""Every machine folder under data/ renders, and a section a folder cannot feed says why.

- Every notebook is executed against every machine folder of data/ (and a folder that
  holds one run only), drawn from its stored runs as ``make paper-from-data
  MACHINE=<id>`` draws it, in one IPython shell (one Python process for all folders,
  about 55 s of CPU for five: a kernel per notebook, nbconvert and the figures' PNG/SVG
  files are what a full rendering adds, 90-100 s of CPU a folder, and none of them
  depends on the folder). A cell that raises, or an output a formatter could not make,
  fails naming the folder, the notebook and the cell; figures are laid out (drawn
  without rasterizing) but not written.
- That process runs with the C kernels hidden (#36 item 4, as
  tests/test_paper_without_kernels.py hides them: an import hook refuses
  ``threadcost._kernels``): drawing from stored runs never calls a kernel, so every
  cell of every page of every folder runs, and no output (printed, or displayed as
  text, Markdown or HTML) mentions the kernels.
- No output (HTML or Markdown) of any cell and no typed prose of any page shows a raw
  identifier where words belong (``threadcost.paper.hygiene``: a stored identifier, a
  declared parameter's or experiment's name in prose or in code font it is not typed
  in; #49 item 6).
- The cell guard: a cell that reads a run the folder lacks shows "Not measured on this
  machine: <why>"; so does every later cell that reads what it could not make.
- A skipped run (a missing toolchain) reads back cleanly, also as older code stored it
  (a table with no columns), and its readers say "not run here", never 0.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO, drawing_priority
from tests.test_paper_without_kernels import CLEAR as KERNELS_SAID
from tests.test_paper_without_kernels import _hidden_env as hidden_kernels_env

DATA = REPO / "data"
SIXTEEN = "x86_64-intel-xeon-16cpu-126g-vm-3754101c"
FOLDERS_TIMEOUT_S = 1200


def machine_folders() -> list[str]:
    from threadcost.store import datastore

    return datastore.machines_with_runs(data_dir=DATA)


# ------------------------------------------------------------------ every folder

def drive(folders: list[str], figures: str, report: str) -> None:
    """Run every notebook's cells against each folder (``<data dir>=<machine id>``) in one
    IPython shell; write {entry: {"failures": [...], "not_measured": n}} to ``report``."""
    import contextlib
    import gc
    import io
    import traceback

    import matplotlib
    import mistune

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from IPython.core.interactiveshell import InteractiveShell

    from threadcost import findings
    from threadcost.notebook import plotting, stored
    from threadcost.paper import build as paper
    from threadcost.paper import hygiene, notebook_sources

    def lay_out(fig: Any, stem: str, figures_dir: Any = None) -> plotting.SavedFiles:
        plotting.tidy_figure(fig)
        fig.draw_without_rendering()
        return plotting.SavedFiles()

    plotting.save_figure = lay_out  # type: ignore[assignment]

    class KeepEveryMachine(dict):  # type: ignore[type-arg]
        def clear(self) -> None:
            """findings keeps one machine's findings at a time (a page needs no more);
            the claims page's across-machines section, drawn for every folder, reads
            every folder's: here each is computed once (the folders are only read, and
            each entry is keyed by its folder and its runs)."""

    findings._CACHE = KeepEveryMachine()  # type: ignore[assignment]
    # and each folder's claims are judged once (the same section again), never a
    # notebook's own unsaved results
    from threadcost import claims

    judged: dict[tuple[Any, ...], list[Any]] = {}
    judge = claims.judge

    def judge_once(machine_id: Any = None, data_dir: Any = None, results: Any = None) -> Any:
        if results:
            return judge(machine_id, data_dir, results)
        key = (machine_id, str(data_dir), os.environ.get("THREADCOST_DATA_DIR"))
        if key not in judged:
            judged[key] = judge(machine_id, data_dir)
        return list(judged[key])

    claims.judge = judge_once  # type: ignore[assignment]
    shell = InteractiveShell.instance()
    failures: list[str] = []
    where = [""]

    def showtraceback(exc_tuple: Any = None, *args: Any, **kwargs: Any) -> None:
        etype, value, tb = exc_tuple or sys.exc_info()
        last = traceback.extract_tb(tb)[-1:] if tb is not None else []
        at = f" ({Path(last[0].filename).name}:{last[0].lineno})" if last else ""
        failures.append(f"{where[0]}: {getattr(etype, '__name__', etype)}: {value}{at}")

    shell.showtraceback = showtraceback  # type: ignore[method-assign]
    # every output of a cell, printed or displayed (text, Markdown, HTML), is read for
    # a mention of the kernels (hidden: a page that needed them would say so)
    said: list[str] = []
    # and every HTML or Markdown output, for a raw identifier where words belong (#49)
    pages: list[str] = []
    publish = shell.display_pub.publish

    def publish_and_keep(data: Any, *args: Any, **kwargs: Any) -> None:
        said.extend(v for k, v in data.items() if k.startswith("text/") and isinstance(v, str))
        if isinstance(data.get("text/html"), str):
            pages.append(data["text/html"])
        elif isinstance(data.get("text/markdown"), str):
            pages.append(mistune.html(data["text/markdown"]))
        publish(data, *args, **kwargs)

    shell.display_pub.publish = publish_and_keep  # type: ignore[method-assign]
    shown: list[str] = []
    original_show = stored.Store._show
    stored.Store._show = staticmethod(lambda fragment: (shown.append(fragment),  # type: ignore[method-assign]
                                                        original_show(fragment))[1])
    params = paper.load_params(REPO / "params" / "default.yaml")
    os.chdir(REPO / "notebooks")
    out: dict[str, Any] = {}
    # what is imported so far lives as long as the process: out of the collector's scans
    # (the shell's reset before each notebook collects: a tenth of the CPU otherwise);
    # and the reset's own full collection is left to the collector's generations (the
    # figures are closed after every cell)
    gc.collect()
    gc.freeze()
    full_collection = gc.collect

    def reset() -> None:
        gc.collect = lambda _generation=2: 0  # type: ignore[assignment]
        try:
            shell.reset(new_session=False)
        finally:
            gc.collect = full_collection
    for entry in folders:
        data_dir, folder = entry.rsplit("=", 1)
        os.environ["THREADCOST_DATA_DIR"] = data_dir
        failures.clear()
        shown.clear()
        cells: dict[str, int] = {}
        kernels: list[str] = []
        identifiers: list[str] = []
        for source in notebook_sources.sources():
            reset()
            given = {**params, **paper.stored_params(folder), "figures_dir": figures}
            cells[source.stem] = 0
            for i, cell in enumerate(notebook_sources.read(source).cells):
                if cell.cell_type != "code":  # typed prose: the page's own words
                    pages.append(mistune.html(cell.source))
                    continue
                where[0] = f"{folder} {source.stem} cell {i}"
                said.clear()
                printed = io.StringIO()
                with contextlib.redirect_stdout(printed):
                    shell.run_cell(cell.source, store_history=False)
                    if "parameters" in cell.metadata.get("tags", []):
                        shell.user_ns.update(given)
                cells[source.stem] += 1
                if any(KERNELS_SAID in text or "KernelsNotBuilt" in text
                       for text in [printed.getvalue(), *said]):
                    kernels.append(where[0])
                identifiers += [f"{where[0]}: {found}" for page in pages
                                for found in hygiene.problems(page) if "identifier" in found]
                pages.clear()
                plt.close("all")
        out[entry] = {"failures": list(failures), "cells": cells, "kernels": kernels,
                       "identifiers": identifiers,
                       "not_measured": sum(stored.NOT_MEASURED in s for s in shown)}
    Path(report).write_text(json.dumps(out))


@pytest.mark.notebook
@pytest.mark.timeout(FOLDERS_TIMEOUT_S)
def test_every_machine_folder_renders(tmp_path: Path) -> None:
    """Every notebook, drawn from every machine folder under data/: no cell fails;
    the 16-CPU folder (measured without Go, Rust or a JDK, by older code) says what
    it lacks."""
    folders = machine_folders()
    assert SIXTEEN in folders and len(folders) >= 4, folders
    # and a folder holding one run only: every section but one is not measured
    sparse = tmp_path / "sparse"
    one = sorted((DATA / SIXTEEN).glob("*-yardsticks-*"))[0]
    shutil.copytree(one, sparse / SIXTEEN / one.name)
    entries = [f"{DATA}={f}" for f in folders] + [f"{sparse}={SIXTEEN}"]
    report = tmp_path / "report.json"
    env = {**hidden_kernels_env(tmp_path, "missing"), "THREADCOST_DATA_DIR": str(DATA),
           "THREADCOST_FIGURES_DIR": str(tmp_path / "figures"), "MPLBACKEND": "Agg"}
    before = os.times()
    proc = subprocess.run(
        [sys.executable, "-c", "import sys; from tests.test_every_folder_renders import "
         "drive; drive(sys.argv[1].split(','), sys.argv[2], sys.argv[3])",
         ",".join(entries), str(tmp_path / "figures"), str(report)],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=FOLDERS_TIMEOUT_S,
        stdin=subprocess.DEVNULL, check=False, preexec_fn=drawing_priority)
    after = os.times()
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(report.read_text())
    assert sorted(got) == sorted(entries)
    failed = {f: r["failures"] for f, r in got.items() if r["failures"]}
    assert not failed, json.dumps(failed, indent=1)[:6000]
    # every page's cells ran with the kernels hidden, and none said it needed them
    pages = {p.stem for p in (REPO / "notebooks").glob("[0-9][0-9]_*.py")}
    for entry, drawn in got.items():
        assert set(drawn["cells"]) == pages, (entry, drawn["cells"])
        assert all(n >= 5 for n in drawn["cells"].values()), (entry, drawn["cells"])
        assert drawn["kernels"] == [], (entry, drawn["kernels"])
        # no output and no typed prose shows a raw identifier where words belong (#49)
        assert drawn["identifiers"] == [], (entry, drawn["identifiers"][:20])
    assert got[f"{DATA}={SIXTEEN}"]["not_measured"] >= 1  # e.g. S12: newer than its runs
    assert got[f"{sparse}={SIXTEEN}"]["not_measured"] > got[f"{DATA}={SIXTEEN}"][
        "not_measured"]
    cpu = (after.children_user + after.children_system
           - before.children_user - before.children_system)
    print(f"{len(entries)} folders drawn in {cpu:.0f} s of CPU")
    assert not (tmp_path / "figures").exists() or not any((tmp_path / "figures").iterdir())


# ------------------------------------------------------------------ the cell guard

class _Shell:
    """An IPython shell with the cell guard, and what the guard showed."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        from IPython.core.interactiveshell import InteractiveShell

        from threadcost.notebook import stored

        self.shown: list[str] = []
        self.errors: list[BaseException] = []
        monkeypatch.setattr(stored.Store, "_show", staticmethod(self.shown.append))
        # IPython's shell puts its own module (no __spec__) in sys.modules["__main__"]:
        # put the test process's back afterwards, or every later run this worker starts
        # through multiprocessing's forkserver fails to prepare its child
        monkeypatch.setitem(sys.modules, "__main__", sys.modules["__main__"])
        self.shell = InteractiveShell.instance()
        self.shell.reset(new_session=False)
        stored.install_cell_guard()

    def run(self, source: str) -> None:
        result = self.shell.run_cell(source, store_history=False)
        if result.error_in_exec is not None:
            self.errors.append(result.error_in_exec)


def test_cells_after_a_section_not_measured_survive(monkeypatch: pytest.MonkeyPatch) -> None:
    from threadcost.notebook import stored

    shell = _Shell(monkeypatch)
    shell.shell.user_ns["run"] = stored.MissingRun("peers", "its peers run was made by older "
                                                 "code")
    shell.run("rows = list(run.summary)\ntable = len(rows)")   # stops at run.summary
    shell.run("n = len(rows)\nprint(n)")                    # rows was never made
    shell.run("def f(x):\n    return x\nf(table)")           # nor table
    shell.run("other = 3\nother")                            # untouched cells still run
    shell.run("def g(rows):\n    return [r for r in rows]\nok = g([1])")  # its own rows
    assert shell.errors == []
    assert len(shell.shown) == 3 and shell.shell.user_ns["ok"] == [1]
    assert all("Not measured on this machine" in s and "older code" in s
               for s in shell.shown)
    assert shell.shell.user_ns["other"] == 3


def test_a_missing_run_as_a_cells_last_value_shows_the_line_not_a_repr(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from threadcost.notebook import stored

    shell = _Shell(monkeypatch)
    shell.shell.user_ns["run"] = stored.MissingRun("fibers", "no fibers run")
    shell.run("run")
    assert shell.errors == [] and len(shell.shown) == 1 and "no fibers run" in shell.shown[0]


# ------------------------------------------------------------------ skipped runs

def _fingerprint() -> dict[str, Any]:
    from threadcost.host import machine

    return {**machine.fingerprint(include_git=False),
            "git": {"commit": "b" * 40, "dirty": False}}


def test_a_skipped_s11_run_reads_back_and_says_why(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Without Go, S11 stores a run that reads back; the store hands it on (not as
    damage, not as "older than its tables") and its view says "did not run"."""
    from threadcost.experiments.more_sources import run as more_sources
    from threadcost.experiments.user_space_tasks import goroutines as peers
    from threadcost.host import machine
    from threadcost.notebook import stored
    from threadcost.store import datastore
    from threadcost.views import more_sources as view

    why = "not run here: the Go toolchain is not installed (go not on PATH)"
    monkeypatch.setattr(peers, "go_absent_reason", lambda: why)
    result = more_sources.go_lockosthread(repeats=1, iterations=10, warmup=0)
    fp = _fingerprint()
    path = datastore.save_run(result, data_dir=tmp_path, fingerprint=fp,
                              label="go_lockosthread")
    assert datastore.load_run(path).meta["summary"]["skipped"] == why
    assert datastore.skipped_runs(data_dir=tmp_path) == []
    store = stored.Store(measure=False, data_dir=tmp_path, machine_id=machine.machine_id(fp))
    back = store.get("go_lockosthread", lambda: pytest.fail("measured"), announce=False)
    assert not isinstance(back, stored.MissingRun) and stored.skipped(back.summary) == why
    assert "the Go toolchain is not installed" in view.go_text(back)


def test_a_table_with_no_columns_from_older_code_reads_back(tmp_path: Path) -> None:
    """The 16-CPU folder's S11 run, as the code of its day stored it: runs.csv holds
    one newline and meta.json says it has no columns and no rows."""
    from threadcost.store import datastore

    run = DATA / SIXTEEN / "20261126T162859Z-go_lockosthread-d2dce1"
    assert (run / "runs.csv").read_bytes() == b"\n"
    loaded = datastore.load_run(run)
    assert loaded.table("runs").empty and loaded.meta["summary"]["skipped"]
    assert not [s for s in datastore.skipped_runs(data_dir=DATA)
                if s.path.parent.name == SIXTEEN]


def test_not_run_lines_name_each_thing_and_why() -> None:
    from threadcost.notebook import stored
    from threadcost.store import datastore

    runs = datastore.list_runs(data_dir=DATA, machine_id=SIXTEEN)
    lines = stored.not_run_lines(runs)
    text = "\n".join(lines)
    assert "go_lockosthread: the Go toolchain is not installed (go not on PATH)" in text
    assert "peer_runtimes (rust-thread, tokio-task, tokio-task-mt): the Rust toolchain" in text
    assert "cpu_bound (dtlb_misses): not available here" in text
    assert "perf is not installed" in text
    assert len(lines) == len(set(lines))


def test_a_tokio_task_not_run_reads_not_run_here_never_0() -> None:
    """C22 on the 16-CPU folder (no Rust there): the Tokio side is "not run here" with
    the peer's reason, not the C brigade's epoll loop read as 0 KiB."""
    from threadcost.findings import runtimes
    from threadcost.measured.measurement import Missing
    from threadcost.measured.runs import Runs

    runs = Runs.load(SIXTEEN, data_dir=DATA)
    got = runtimes.c22_tokio_rss(runs)
    assert isinstance(got, Missing), got
    assert "Rust toolchain is not installed" in got.reason


def test_the_sixteen_cpu_folder_is_the_shared_one_unchanged() -> None:
    """Copied unchanged: every run folder of the 16-CPU host, none migrated."""
    metas = sorted((DATA / SIXTEEN).glob("*/meta.json"))
    assert len(metas) == 46
    assert all(json.loads(m.read_text())["machine_id"] == SIXTEEN for m in metas)


def test_a_missing_run_printed_or_counted_shows_the_line(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from threadcost.notebook import stored

    shell = _Shell(monkeypatch)
    shell.shell.user_ns["run"] = stored.MissingRun("echo", "no echo run")
    for cell in ("text = f'{run} here'", "n = len(run)", "print(run)"):
        shell.run(cell)
    assert shell.errors == [] and len(shell.shown) == 3
    assert "text" in shell.shell.user_ns and isinstance(shell.shell.user_ns["text"],
                                                        stored.Unmade)
