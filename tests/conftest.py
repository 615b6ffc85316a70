"""Shared fixtures: isolated data/figures folders, the CLI, papermill runs."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parent.parent
NOTEBOOKS = REPO / "notebooks"

# A suite started in the background by a script (`make test &`, `nohup make test &`)
# inherits SIGINT ignored, and so would every command it starts, and the tests that stop
# a command with SIGINT (tests/test_interrupts.py) would wait for nothing: the suite's
# own processes take Python's handler back, so what they start gets SIGINT's default.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)
QUICK_PARAMS = REPO / "params" / "quick.yaml"


@pytest.fixture(autouse=True)
def _isolated_outputs(tmp_path_factory: pytest.TempPathFactory,
                      monkeypatch: pytest.MonkeyPatch) -> None:
    """No test writes into the repository's data/ or figures/."""
    base = tmp_path_factory.mktemp("outputs")
    monkeypatch.setenv("THREADCOST_DATA_DIR", str(base / "data"))
    monkeypatch.setenv("THREADCOST_FIGURES_DIR", str(base / "figures"))


def run_cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run ``python -m threadcost ARGS`` in a fresh process (stdin closed)."""
    return subprocess.run([sys.executable, "-m", "threadcost", *args], capture_output=True,
                          text=True, timeout=timeout, stdin=subprocess.DEVNULL,
                          env=os.environ.copy(), check=False)


def cli_json(*args: str, timeout: float = 120) -> tuple[int, dict[str, Any], str]:
    proc = run_cli(*args, "--json", timeout=timeout)
    data = json.loads(proc.stdout) if proc.stdout.strip() else {}
    return proc.returncode, data, proc.stderr


def quick_params() -> dict[str, Any]:
    with open(QUICK_PARAMS) as fh:
        return yaml.safe_load(fh) or {}


# With params/quick.yaml every cell takes seconds: one that takes minutes is stuck.
# The notebook then fails naming the cell (threadcost.paper.notebook_run), well before
# the test's own pytest-timeout (NOTEBOOK_TEST_TIMEOUT_S) would stop it.
NOTEBOOK_CELL_TIMEOUT_S = 180
NOTEBOOK_START_TIMEOUT_S = 120
NOTEBOOK_TEST_TIMEOUT_S = 900


def run_notebook(name: str, tmp_path: Path, **overrides: Any) -> tuple[Path, Path]:
    """Execute notebooks/<name> with params/quick.yaml into tmp_path.

    Returns (executed notebook, data dir). Data and figures go to tmp_path too.
    Each cell may take NOTEBOOK_CELL_TIMEOUT_S and the kernel's start
    NOTEBOOK_START_TIMEOUT_S; a timeout fails naming the notebook and the cell.
    """
    from threadcost.paper.notebook_run import execute

    data_dir = tmp_path / "data"
    figures_dir = tmp_path / "figures"
    params = {**quick_params(), "data_dir": str(data_dir), "figures_dir": str(figures_dir),
              **overrides}
    from threadcost.paper import notebook_sources

    source = notebook_sources.write_ipynb(notebook_sources.source_for(name),
                                          tmp_path / "source")
    out = tmp_path / source.name
    execute(source, out, params, cwd=NOTEBOOKS, cell_timeout=NOTEBOOK_CELL_TIMEOUT_S,
            start_timeout=NOTEBOOK_START_TIMEOUT_S, progress_bar=False)
    return out, data_dir


# The quick rendering is built once per session and read by every test that needs an
# executed notebook, its stored runs or figures, or the rendered pages. The build
# starts in the background as soon as collection shows a test that reads it (in the
# first pytest-xdist worker to collect under `make test`, else in the pytest process), and runs
# while the other tests do; the tests that read it are moved to the end of the run
# and wait for it (QuickPaper build folder: status.json when done). Under xdist every
# worker reads the same build.
QUICK_PAPER_FIXTURES = ("quick_paper", "quick_paper_html")
# The rendering's build (every notebook, about 3 minutes on 2 cores) may be part of a
# test's time: give the tests that read it room for it on a loaded machine.
QUICK_PAPER_TEST_TIMEOUT_S = 1500
QUICK_PAPER_BUILD_TIMEOUT_S = 1200
QUICK_PAPER_DIR = "quick-paper"

BUILD_SCRIPT = """
import json, subprocess, sys
from pathlib import Path
base, params = Path(sys.argv[1]), sys.argv[2]
env = dict(__import__("os").environ, THREADCOST_DATA_DIR=str(base / "data"),
           THREADCOST_FIGURES_DIR=str(base / "figures"))
try:
    proc = subprocess.run([sys.executable, "-m", "threadcost.paper", "--params", params,
                           "--out", str(base / "paper")], env=env, capture_output=True,
                          text=True, timeout=float(sys.argv[3]), stdin=subprocess.DEVNULL)
    status = {"returncode": proc.returncode, "log": (proc.stdout + proc.stderr)[-6000:]}
except subprocess.TimeoutExpired:
    status = {"returncode": -1, "log": "the quick rendering did not finish in time"}
(base / "status.json.tmp").write_text(json.dumps(status))
(base / "status.json.tmp").rename(base / "status.json")
"""


def _reads_quick_paper(item: pytest.Item) -> bool:
    browser_dir = Path(__file__).parent / "browser"
    fixtures = getattr(item, "fixturenames", ())
    in_browser = Path(str(item.fspath)).parent == browser_dir
    return (in_browser and "lab" not in fixtures) or any(
        f in fixtures for f in QUICK_PAPER_FIXTURES)


def _shared_base(config: pytest.Config) -> Path:
    """A folder every pytest-xdist worker and the controller share: the controller's
    (or the single process's) pytest temp folder."""
    factory = config._tmp_path_factory  # type: ignore[attr-defined]
    base = factory.getbasetemp()
    return base.parent if hasattr(config, "workerinput") else base


def start_quick_paper(config: pytest.Config) -> Path:
    """Start the quick rendering's build in the background (once); its folder."""
    base = _shared_base(config) / QUICK_PAPER_DIR
    try:
        base.mkdir()
    except FileExistsError:
        return base  # started already
    with open(base / "build.log", "wb") as log:
        _BUILDS.append(subprocess.Popen(
            [sys.executable, "-c", BUILD_SCRIPT, str(base), str(QUICK_PARAMS),
             str(QUICK_PAPER_BUILD_TIMEOUT_S)], cwd=REPO, stdout=log,
            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True))
    # its process group, for whichever process ends the session (pytest_sessionfinish)
    (base / BUILD_PID).write_text(str(_BUILDS[-1].pid))
    return base


BUILD_PID = "build.pid"


def _build_alive(pid: int) -> bool:
    """The build (a process group leader) still runs: it exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


_BUILDS: list[subprocess.Popen[bytes]] = []


# The quick rendering is the suite's longest chain: its build, then the tests that read
# it (moved last). The long tests that only draw stored runs (every machine folder, the
# hostile folder's claims page, the Intel folder's page 04: no measuring, no deadline
# shorter than minutes) run their drawing process at a lower CPU priority, so that
# while they run the build takes its core first and the chain ends sooner; they use what
# the build and the other tests leave (as much CPU in all, the same work, the same
# checks). A measuring process never runs niced.
DRAWING_NICE = 10


def drawing_priority() -> None:
    """``preexec_fn`` of a drawing-only subprocess: :data:`DRAWING_NICE` (best effort)."""
    with contextlib.suppress(OSError):
        os.nice(DRAWING_NICE)


def pytest_sessionfinish(session: pytest.Session) -> None:
    """A build still running when the whole session ends (it ended early, e.g. under
    -x) is stopped with everything it started: by the process that ends the session
    (pytest itself, or under xdist the controller), never by a worker that ran out of
    tests while another worker's tests still read it."""
    if hasattr(session.config, "workerinput"):
        return
    pids = {proc.pid for proc in _BUILDS}
    recorded = _shared_base(session.config) / QUICK_PAPER_DIR / BUILD_PID
    with contextlib.suppress(OSError, ValueError):
        pids.add(int(recorded.read_text()))
    for pid in pids:
        if _build_alive(pid):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGTERM)
    for proc in _BUILDS:
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=10)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests that read the quick rendering go last (the build runs meanwhile) with room
    for it in their pytest-timeout; notebook tests get a longer pytest-timeout than the
    suite's default (a test's own @pytest.mark.timeout wins). The build starts here,
    in whichever process collects first (each xdist worker collects at the start of
    the session; the shared folder makes it one build)."""
    readers = [item for item in items if _reads_quick_paper(item)]
    for item in items:
        if item in readers and not item.get_closest_marker("timeout"):
            item.add_marker(pytest.mark.timeout(QUICK_PAPER_TEST_TIMEOUT_S))
        if item.get_closest_marker("notebook") and not item.get_closest_marker("timeout"):
            item.add_marker(pytest.mark.timeout(NOTEBOOK_TEST_TIMEOUT_S))
    if readers:
        others = [i for i in items if i not in readers]
        items[:] = sorted(others, key=_weight) + sorted(readers, key=_weight)
        if not os.environ.get("THREADCOST_QUICK_PAPER") and not config.option.collectonly:
            start_quick_paper(config)
    else:
        items.sort(key=_weight)


# Under pytest-xdist (`make test`: --dist loadgroup) each worker takes the next test when
# it is done (it holds two at a time): the long tests go first, longest first (LONG_TESTS:
# their seconds on a quiet 2-core machine, each alone on its worker; then those that
# start notebooks, builds, the sanitizers, a browser), the short ones fill the ends, so
# that neither worker idles while the other finishes a long test. Readers of the quick
# rendering stay last, ordered the same way. (JupyterLab is started by one test only: one
# server.) The order only schedules; no test depends on it (a renamed test only loses
# its place here).
LONG_TESTS = {
    "test_every_machine_folder_renders": 152,
    "test_hostile_machine_folder_renders_as_text": 72,
    "test_bare_machine_paper_says_what_it_did_not_run": 65,
    "test_in_the_lab_a_double_clicked_notebook_runs_and_every_chart_redraws": 57,
    "test_one_usable_cpu_paper_says_the_cross_cpu_parts_need_two": 38,
    "test_kernels_are_clean_under_the_sanitizers": 29,
    "test_stored_rendering_prints_the_numbers_of_the_measuring_one": 28,
    "test_intel_folder_renders_linked_from_stored_runs": 25,
    "test_two_builds_at_once_keep_their_own_provenance": 21,
    "test_every_control_changes_its_chart": 14,
    "test_across_machines_marks_yours_with_a_ratio": 14,
    "test_papermill_runs_leave_the_tree_and_the_reference_alone": 13,
    "test_every_c_program_is_warning_free_under_each_distributions_defaults": 9,
    "test_a_stuck_cell_fails_naming_the_notebook_the_cell_and_its_first_line": 8,
    "test_stopped_paper_is_one_line_and_leaves_the_previous_one": 7,
    "test_every_c_program_compiles_for_arm64": 7,
    "test_agrees_with_a_minimal_c_reference": 4,
}


def _weight(item: pytest.Item) -> tuple[int, int]:
    seconds = LONG_TESTS.get(getattr(item, "originalname", item.name))
    if seconds is not None:
        return 0, -seconds
    marks = ("notebook", "sanitize", "browser")
    in_browser = Path(str(item.fspath)).parent == Path(__file__).parent / "browser"
    return (1 if in_browser or any(item.get_closest_marker(m) for m in marks) else 2), 0


@dataclass(frozen=True)
class QuickPaper:
    """One ``python -m threadcost.paper --params params/quick.yaml`` build: every notebook
    executed once, its runs stored in ``data``, its figures in ``figures``."""

    base: Path

    @property
    def html(self) -> Path:
        return self.base / "paper" / "html"

    @property
    def notebooks(self) -> Path:
        return self.base / "paper" / "notebooks"

    @property
    def data(self) -> Path:
        return self.base / "data"

    @property
    def figures(self) -> Path:
        return self.base / "figures"

    def executed(self, name: str) -> Path:
        """The executed notebook ``name`` (``01_malloc_touch`` or ``...ipynb``)."""
        path = self.notebooks / f"{Path(name).stem}.ipynb"
        assert path.is_file(), f"{path.name} is not among {sorted(self.notebooks.iterdir())}"
        return path

    def stored_by(self, name: str) -> list[Any]:
        """The runs notebook ``name`` stored (from the rendering's html/data/runs.csv)."""
        from threadcost.store import datastore

        stem = Path(name).stem
        index = self.html / "runs.csv"
        if not index.is_file():  # renderings that copied data/ kept it there
            index = self.html / "data" / "runs.csv"
        folders = set()
        for line in index.read_text(encoding="utf-8").splitlines()[1:]:
            notebook, _, _, _, csv = line.split(",")
            if notebook == stem:
                folders.add(self.data.joinpath(*csv.split("/")[:2]))
        return [datastore.load_run(f) for f in sorted(folders)]

    def runs(self, name: str, experiment: str) -> list[Any]:
        """The runs of ``experiment`` notebook ``name`` stored, oldest first."""
        found = [r for r in self.stored_by(name) if r.experiment == experiment]
        return sorted(found, key=lambda r: (r.meta.get("created_utc", ""), r.meta["run_id"]))


@pytest.fixture(scope="session")
def quick_paper(request: pytest.FixtureRequest) -> QuickPaper:
    """``python -m threadcost.paper --params params/quick.yaml``, every notebook, once per
    test session (built in the background, see start_quick_paper): the notebook tests
    read its executed notebooks, stored runs and figures; the hygiene scan and the
    browser suite its pages.

    ``THREADCOST_QUICK_PAPER=<folder>`` reuses an earlier build (a folder holding
    ``paper/``, ``data/`` and ``figures/``, as this fixture writes) instead of building.
    """
    import time

    given = os.environ.get("THREADCOST_QUICK_PAPER")
    if given:
        return QuickPaper(Path(given).resolve())
    base = _shared_base(request.config) / QUICK_PAPER_DIR
    if not base.exists():  # started by no one (e.g. a test asked for it by name only)
        start_quick_paper(request.config)
    status = base / "status.json"
    deadline = time.monotonic() + QUICK_PAPER_BUILD_TIMEOUT_S + 60
    while not status.exists():
        assert time.monotonic() < deadline, "the quick rendering's build never finished"
        with contextlib.suppress(OSError, ValueError):
            pid = int((base / BUILD_PID).read_text())
            if not _build_alive(pid) and not status.exists():
                time.sleep(1)  # (its status is renamed into place just before it exits)
                assert status.exists(), (
                    "the quick rendering's build ended without a status (stopped by a "
                    f"signal?); its log: {(base / 'build.log').read_text()[-3000:]}")
        time.sleep(1)
    done = json.loads(status.read_text())
    assert done["returncode"] == 0, done["log"]
    return QuickPaper(base)


@pytest.fixture(scope="session")
def quick_paper_html(quick_paper: QuickPaper) -> Path:
    """The quick rendering's html/ folder (the same build as :func:`quick_paper`)."""
    return quick_paper.html
