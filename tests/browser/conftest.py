"""Fixtures for the browser suite: Debian's Chromium through playwright, a JupyterLab.

Nothing is installed here: `make browser-deps` installs chromium; without it (or
without the playwright package) every test in this folder skips with the reason.

Life cycle: Chromium and JupyterLab are package-scoped. They start with the first
browser test that needs them and stop when the last test of this folder ends,
not at the end of the whole pytest session (they would otherwise stay alive,
with their kernels, while the rest of the suite runs). The kernels a notebook
test opened are shut down as soon as that test ends.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.browser.lab_server import LabServer
from tests.browser.prepare import LAB_NOTEBOOK, REPO, discover, prepare_py

# The real binary first: Debian's /usr/bin/chromium is a shell wrapper around it.
CHROMIUM_CANDIDATES = ("/usr/lib/chromium/chromium", "/usr/bin/chromium",
                       "/usr/bin/chromium-browser")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--disable-dev-shm-usage"]
SCREENSHOTS = REPO / "build" / "test-screenshots"


def chromium_path() -> str | None:
    for path in CHROMIUM_CANDIDATES:
        if os.access(path, os.X_OK):
            return path
    return shutil.which("chromium")


# pytest-timeout per browser test: Run All (up to 4 min), every widget (up to 2 min
# each) and, for the first test, starting JupyterLab and preparing the notebooks.
BROWSER_TEST_TIMEOUT_S = 1200


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if Path(str(item.fspath)).parent == here:
            item.add_marker(pytest.mark.browser)
            if not item.get_closest_marker("timeout"):
                item.add_marker(pytest.mark.timeout(BROWSER_TEST_TIMEOUT_S))


@pytest.fixture(scope="session")
def screenshots() -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS


@pytest.fixture(scope="package")
def browser() -> Iterator[Any]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("the playwright package is not installed (pip install -e '.[test]')")
    exe = chromium_path()
    if exe is None:
        pytest.skip("no Chromium found (make browser-deps installs Debian's chromium)")
    pw = sync_playwright().start()
    try:
        chrome = pw.chromium.launch(executable_path=exe, headless=True, args=CHROMIUM_ARGS)
    except Exception as exc:  # pragma: no cover - depends on the machine
        pw.stop()
        pytest.skip(f"Chromium at {exe} did not start: {exc}")
    try:
        yield chrome
    finally:
        chrome.close()
        pw.stop()


@pytest.fixture(scope="package")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabServer]:
    """JupyterLab as `make lab` starts it (the same overrides.json, kernels over IPC),
    serving notebook 01 as a jupytext .py file prepared with params/quick.yaml."""
    base = tmp_path_factory.mktemp("lab")
    root, data, figures = base / "root", base / "data", base / "figures"
    (book,) = [b for b in discover() if b.stem == LAB_NOTEBOOK]
    prepare_py(book, root, data, figures)
    # The first matplotlib import builds a font cache: do it before any timeout runs.
    subprocess.run([sys.executable, "-c", "import matplotlib.pyplot"], check=False,
                   timeout=300)
    server = LabServer(root=root, state=base / "state",
                       env={"THREADCOST_DATA_DIR": str(data),
                            "THREADCOST_FIGURES_DIR": str(figures),
                            "MPLBACKEND": "module://matplotlib_inline.backend_inline"},
                       app_overrides=REPO / "tools" / "jupyterlab-overrides.json")
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(autouse=True)
def _shutdown_lab_kernels(request: pytest.FixtureRequest) -> Iterator[None]:
    """After each test that used JupyterLab, shut down the kernels it opened."""
    yield
    if "lab" in request.fixturenames:
        server: LabServer = request.getfixturevalue("lab")
        server.shutdown_kernels()
