"""Measure, then render from what was stored; the specs; builds that run at once.

- The quick paper drawn again from its stored runs (``--machine``, nothing measured)
  prints the same numbers as the measuring build that stored them, on the pages that
  read the most stored runs (REDRAWN: the claims, which read every experiment, and
  page 04).
- The committed Intel folder (older code) renders as a paper, with ``--link-repo`` as
  the reference is: what its runs predate reads "Not measured on this machine"; the
  index names the commit that measured it; the pages hold no copy of data/, code or
  vendor/, every link resolves, and (with Chromium) its charts still draw offline.
- Every experiment a run is stored under, or a ``Result`` is made with, is registered.
- Two builds at once: unique temporary figure names; provenance from each build's own runs.
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import drawing_priority
from threadcost.experiments import specs
from threadcost.host import machine
from threadcost.paper.render import GALLERY
from threadcost.store import datastore

REPO = Path(__file__).resolve().parent.parent
QUICK = REPO / "params" / "quick.yaml"
INTEL = "x86_64-intel-xeon-2cpu-24g-kvm-a0232525"


def _paper(*args: str, data: Path, figures: Path, timeout: float = 600,
           drawing_only: bool = False) -> subprocess.CompletedProcess[str]:
    """``python -m threadcost.paper ARGS``; ``drawing_only`` (a build that measures
    nothing) runs it at the drawing priority (tests/conftest.py)."""
    env = {**os.environ, "THREADCOST_DATA_DIR": str(data), "THREADCOST_FIGURES_DIR": str(figures)}
    return subprocess.run([sys.executable, "-m", "threadcost.paper", *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL, check=False,
                          preexec_fn=drawing_priority if drawing_only else None)


# ------------------------------------------------------------------ printed numbers

NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?")
# Not numbers of the study: the run a cell stored or read (its id, its time), the
# provenance links, the index's origin line, scripts, styles and folded code.
NOT_NUMBERS = [re.compile(p, re.S) for p in (
    r"<script.*?</script>", r"<style.*?</style>", r"<details.*?</details>",
    r'<p class="tc-run">.*?</p>', r'<p class="tc-provenance">.*?</p>',
    r'<p class="sub tc-measured-by">.*?</p>', r"<head>.*?</head>")]


# Notebook 04 judges C01 in its claims section before its own yardsticks run is
# stored (its text says so: "it shows the stored yardsticks run until that cell has
# run"); drawn again, the yardsticks are there. A measuring-order effect, not a
# number changed by drawing: that row is left out of the comparison.
ORDER_EFFECTS = {"04_context_switch.html": re.compile(
    r"<tr\b(?:(?!</tr>).)*?>C01<(?:(?!</tr>).)*</tr>", re.S)}


def printed_numbers(page: Path) -> list[str]:
    text = page.read_text(encoding="utf-8")
    if page.name in ORDER_EFFECTS:
        text = ORDER_EFFECTS[page.name].sub(" ", text)
    for pattern in NOT_NUMBERS:
        text = pattern.sub(" ", text)
    text = re.sub(r"<[^>]+>", " ", text)
    return NUMBER.findall(text)


# The page drawn again (each notebook drawn costs a kernel and its figures, 8-10 s of
# CPU; all nine cost 84 s): page 04, four experiments, whose measuring build shows the
# Results it holds and whose redraw reads them back from the store, with the
# measuring-order effect above. A notebook's drawing from stored runs is the same
# mechanism on every page (threadcost.notebook.stored.Store with measure=False). The summary
# pages read the store in both builds; the claims page is drawn without measuring by
# tests/test_untrusted_data.py.
REDRAWN = ("04",)


@pytest.mark.notebook
def test_stored_rendering_prints_the_numbers_of_the_measuring_one(
        quick_paper_html: Path, tmp_path: Path) -> None:
    """The REDRAWN pages drawn again from the runs the measuring build stored: the same
    numbers as the measuring build printed."""
    data = quick_paper_html.parent.parent / "data"
    mid = machine.machine_id()
    stored_before = len(datastore.list_runs(data_dir=data))
    started = time.monotonic()
    proc = _paper("--machine", mid, "--params", str(QUICK), "--out", str(tmp_path / "again"),
                  "--only", *REDRAWN, data=data, figures=tmp_path / "figures")
    took = time.monotonic() - started
    assert proc.returncode == 0, proc.stderr[-3000:]
    again = tmp_path / "again" / "html"
    assert len(datastore.list_runs(data_dir=data)) == stored_before  # nothing measured
    pages = sorted(p.name for p in quick_paper_html.glob("*.html")
                   if p.name.startswith(REDRAWN))
    assert len(pages) == len(REDRAWN)
    assert pages == sorted(p.name for p in again.glob("*.html") if p.name != "index.html")
    for name in pages:
        first, second = printed_numbers(quick_paper_html / name), printed_numbers(again / name)
        assert first == second, (name, [(a, b) for a, b in zip(first, second, strict=False)
                                         if a != b][:10], len(first), len(second))
    text = (again / "index.html").read_text(encoding="utf-8")
    assert "without measuring" in text
    build = json.loads((again / "_static" / "build.json").read_text())
    assert build["measured"] is False and build["machine_id"] == mid
    print(f"redrawn from stored runs in {took:.0f} s")


@pytest.mark.notebook
def test_intel_folder_renders_linked_from_stored_runs(tmp_path: Path) -> None:
    """The committed Intel runs (measured by older code) render (page 04, four
    experiments): the sections its runs predate say so in one line, the index names the
    machine and the commit that measured it. Rendered as the reference is
    (``--link-repo``): the pages hold no copy of data/, code or vendor/, every link
    resolves, and the charts draw offline."""
    commits = {r.commit for r in datastore.list_runs(data_dir=REPO / "data",
                                                     machine_id=INTEL)} - {None}
    assert commits
    out = REPO / "build" / f"test-linked-{os.getpid()}"
    html = out / "pages"
    try:
        proc = _paper("--machine", INTEL, "--out", str(out / "work"), "--html", str(html),
                      "--link-repo", "--only", "04", data=REPO / "data",
                      figures=tmp_path / "figures", drawing_only=True)
        assert proc.returncode == 0, proc.stderr[-3000:]
        index = (html / "index.html").read_text(encoding="utf-8")
        assert any(c[:10] in index for c in commits)
        page = (html / "04_context_switch.html").read_text(encoding="utf-8")
        assert page.count('class="tc-not-measured"') >= 1  # e.g. cpu_bound: newer than the runs
        assert "Traceback" not in page
        assert INTEL in index and INTEL in page
        assert not (tmp_path / "figures").exists()  # another machine's figures stay apart
        _links_resolve_to_the_repository(html, "04_context_switch.html", INTEL,
                                         "threadcost/experiments/context_switch/run.py")
        _charts_draw(html / "04_context_switch.html")
        # every page's "every machine" leads to the gallery, whose row of this machine
        # leads back to this paper
        assert f'href="{GALLERY}"' in page
        gallery_page = (html / GALLERY).read_text(encoding="utf-8")
        assert f'<a href="../index.html">{INTEL}</a>' in gallery_page
    finally:
        import shutil

        shutil.rmtree(out, ignore_errors=True)


def test_unknown_machine_is_one_line_exit_2(tmp_path: Path) -> None:
    proc = _paper("--machine", "no-such-machine", "--out", str(tmp_path / "x"),
                  data=REPO / "data", figures=tmp_path / "figures", timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert INTEL in proc.stderr


# ------------------------------------------------------------------ the reference layout

def _links_resolve_to_the_repository(html: Path, name: str, machine_id: str,
                                     code: str) -> None:
    assert not (html / "data").exists()
    assert not (html / "code").exists()
    assert not (html / "_static" / "vega").exists()
    assert not (html / "_static" / "requirejs").exists()
    page = (html / name).read_text(encoding="utf-8")
    hrefs = re.findall(r'(?:href|src)="([^"#]+)"', page)
    local = [h for h in hrefs if not h.startswith(("data:", "http", "#"))]
    assert any(h.endswith("vendor/vega/vega.min.js") for h in local)
    assert any("/data/" + machine_id + "/" in h for h in local)
    assert any(h.endswith(code) for h in local)
    for href in local:
        assert not href.startswith(("/", "file:")), href
        assert (html / href).resolve().is_file(), href


def _charts_draw(page: Path) -> None:
    """In headless Chromium, offline: every chart of the page draws its SVG."""
    sync_api = pytest.importorskip("playwright.sync_api")
    from tests.browser.conftest import CHROMIUM_ARGS, chromium_path

    chromium = chromium_path()
    if chromium is None:
        pytest.skip("no chromium (make browser-deps)")
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, headless=True,
                                     args=CHROMIUM_ARGS)
        try:
            ctx = browser.new_context()
            ctx.route("http*://**", lambda route: route.abort())
            tab = ctx.new_page()
            errors: list[str] = []
            tab.on("pageerror", lambda e: errors.append(str(e)))
            tab.goto(page.as_uri(), wait_until="load")
            tab.wait_for_function(
                "() => [...document.querySelectorAll('.tc-vega')].length > 0 && "
                "[...document.querySelectorAll('.tc-vega')].every("
                "c => c.querySelector('svg .mark-group'))", timeout=30_000)
            assert errors == []
        finally:
            browser.close()


# ------------------------------------------------------------------ the specs

def _experiment_names_in_code() -> set[str]:
    """Names given to Result(...) (a string, or a module constant) and EXPERIMENT constants."""
    names: set[str] = set()
    for path in (REPO / "threadcost").rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        constants = {t.id: n.value.value for n in tree.body if isinstance(n, ast.Assign)
                     for t in n.targets if isinstance(t, ast.Name)
                     and isinstance(n.value, ast.Constant) and isinstance(n.value.value, str)}
        names |= {v for k, v in constants.items() if k.endswith("EXPERIMENT")}
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id == "Result"):
                continue
            args = [node.args[0]] if node.args else []
            args += [k.value for k in node.keywords if k.arg == "experiment"]
            for arg in args:
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    names.add(arg.value)
                elif isinstance(arg, ast.Name) and arg.id in constants:
                    names.add(constants[arg.id])
    names.discard("claims")  # the claims command's output, never stored
    names.discard("paper")  # the paper command's output, never stored
    names.discard("run-notebook")  # the run-notebook command's output, never stored
    names -= {"share", "import", "gallery"}  # the share, import and gallery commands' outputs
    return names


def test_every_experiment_made_in_code_is_registered() -> None:
    found = _experiment_names_in_code()
    assert {"malloc_touch", "launch_growth", "context_switch_working_set"} <= found
    assert found - {e.name for e in specs.experiments()} == set()


def test_every_experiment_stored_in_data_is_registered() -> None:
    stored = {json.loads(p.read_text())["experiment"]
              for p in (REPO / "data").glob("*/*/meta.json")}
    assert stored
    assert stored - {e.name for e in specs.experiments()} == set()


def test_every_notebook_label_is_a_registered_experiment() -> None:
    """store.get("name", ...) without experiment=: the label is the experiment's name."""
    for source in (REPO / "notebooks").glob("[0-9][0-9]_*.py"):
        for call in re.finditer(r'store\.get\(\s*"([a-z_]+)"(.*?)\)\)?\n', source.read_text(),
                                re.S):
            label, rest = call.group(1), call.group(2)
            named = re.search(r'experiment="([a-z_]+)"', rest)
            assert specs.known(named.group(1) if named else label), (source.name, label)


def test_declared_experiments_point_at_real_modules_and_notebooks() -> None:
    from threadcost.paper import build as paper

    for entry in specs.experiments():
        module = paper.experiment_module(entry.name)
        assert module is not None and module.is_file(), entry.name
        if entry.notebook:
            assert (REPO / "notebooks" / f"{entry.notebook}.py").is_file(), entry.name
    assert paper.experiment_module("no_such_experiment") is None


# ------------------------------------------------------------------ concurrent builds

def test_save_figure_uses_a_temporary_name_of_its_own(tmp_path: Path) -> None:
    """The old fixed name (.STEM.svg.tmp) taken by someone else does not stop a save."""
    import matplotlib.pyplot as plt

    from threadcost.notebook import plotting

    (tmp_path / ".curve.svg.tmp").mkdir()  # another build's temporary file, say
    (tmp_path / ".curve.png.tmp").mkdir()
    fig, ax = plt.subplots()
    ax.plot([1, 2], [3, 4])
    written = plotting.save_figure(fig, "curve", tmp_path)
    plt.close(fig)
    assert [p.name for p in written] == ["curve.svg", "curve.png"]
    assert all(p.stat().st_size > 0 for p in written)
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == [".curve.png.tmp", ".curve.svg.tmp", "curve.png", "curve.svg"]


SAVER = """
import sys
import matplotlib.pyplot as plt
from threadcost.notebook import plotting
for i in range(6):
    fig, ax = plt.subplots()
    ax.plot(range(50), [v * int(sys.argv[2]) for v in range(50)])
    plotting.save_figure(fig, "shared", sys.argv[1])
    plt.close(fig)
"""


def test_two_processes_save_the_same_figure_at_once(tmp_path: Path) -> None:
    procs = [subprocess.Popen([sys.executable, "-c", SAVER, str(tmp_path), str(k)],
                              stderr=subprocess.PIPE, text=True) for k in (1, 2)]
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err[-2000:]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["shared.png", "shared.svg"]


@pytest.mark.notebook
def test_two_builds_at_once_keep_their_own_provenance(tmp_path: Path) -> None:
    """Same data and figures folders, different --out: both succeed, and each page links
    only to the runs its own build stored."""
    env = {**os.environ, "THREADCOST_DATA_DIR": str(tmp_path / "data"),
           "THREADCOST_FIGURES_DIR": str(tmp_path / "figures")}
    procs = {name: subprocess.Popen(
        [sys.executable, "-m", "threadcost.paper", "--params", str(QUICK), "--out",
         str(tmp_path / name), "--only", "01"], cwd=REPO, env=env, stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for name in ("a", "b")}
    runs = {}
    for name, proc in procs.items():
        _, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, err[-3000:]
        build = json.loads((tmp_path / name / "html" / "_static" / "build.json").read_text())
        runs[name] = set(build["runs"])
        page = (tmp_path / name / "html" / "01_malloc_touch.html").read_text(encoding="utf-8")
        linked = set(re.findall(r'href="data/[^/"]+/([^/"]+)/', page))
        assert linked and linked <= runs[name], (name, linked, runs[name])
    assert runs["a"] and runs["b"] and not runs["a"] & runs["b"]
    every = {r.path.name for r in datastore.list_runs(data_dir=tmp_path / "data")}
    assert runs["a"] | runs["b"] == every


def test_cli_paper_names_the_machine_folders_when_one_is_unknown() -> None:
    from tests.conftest import run_cli

    proc = run_cli("paper", "--machine", "no-such-machine")
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "--machine" in lines[0], proc.stderr
    assert proc.stdout == ""


def test_store_reads_back_what_it_stored_and_stands_in_for_what_is_missing(
        tmp_path: Path) -> None:
    import pandas as pd

    from threadcost.notebook import stored
    from threadcost.results import Result

    fp = {**machine.fingerprint(include_git=False), "git": {"commit": "a" * 40, "dirty": False}}
    frame = pd.DataFrame({"n": [1, 2, 3], "ns": [10.5, 20.25, 30.0]})
    made = Result("echo", {"repeats": 3}, {"rate": 1.5, "placements": {"same-cpu": 2}},
                  {"repeats": frame})
    datastore.save_run(made, data_dir=tmp_path, fingerprint=fp, label="echo")
    old = Result("malloc_touch", {"allocator": "mmap"}, {}, {"stages": frame})  # no touch_curve
    datastore.save_run(old, data_dir=tmp_path, fingerprint=fp)
    mid = machine.machine_id(fp)

    store = stored.Store(measure=False, data_dir=tmp_path, machine_id=mid)
    assert store.commits() == ["a" * 40]
    back = store.get("echo", lambda: pytest.fail("measured while drawing"))
    assert back.params == made.params and back.summary == made.summary
    pd.testing.assert_frame_equal(back.tables["repeats"], frame)
    # an experiment with no stored run, and a run older than its registered tables
    for got in (store.get("yardsticks", lambda: None),
                store.get("malloc_touch_mmap", lambda: None, experiment="malloc_touch",
                          match={"allocator": "mmap"})):
        assert isinstance(got, stored.MissingRun) and not got
        with pytest.raises(stored.NotMeasured):
            _ = got.summary
    assert stored.present(back, None, got) == [back]
    with pytest.raises(ValueError, match="machine folders with runs"):
        stored.Store(measure=False, data_dir=tmp_path, machine_id="elsewhere")


def test_a_folder_named_relative_to_the_build_reaches_the_kernels_whole(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``THREADCOST_DATA_DIR=../elsewhere make paper-from-data ...``: the kernels run in
    notebooks/, so the build hands them the folder the words named where it started."""
    from threadcost.paper import build

    (tmp_path / "start").mkdir()
    monkeypatch.chdir(tmp_path / "start")
    monkeypatch.setenv("THREADCOST_DATA_DIR", "../runs-elsewhere")
    monkeypatch.setenv("THREADCOST_FIGURES_DIR", "figures")
    build.whole_folders()
    assert os.environ["THREADCOST_DATA_DIR"] == str(tmp_path / "runs-elsewhere")
    assert os.environ["THREADCOST_FIGURES_DIR"] == str(tmp_path / "start" / "figures")
