"""Fixtures for the browser suite: Debian's Chromium through playwright, a JupyterLab.

Nothing is installed here: `make browser-deps` installs chromium; without it (or
without the playwright package) every test in this folder skips with the reason.
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
from tests.browser.prepare import REPO, discover, prepare

# The real binary first: Debian's /usr/bin/chromium is a shell wrapper around it.
CHROMIUM_CANDIDATES = ("/usr/lib/chromium/chromium", "/usr/bin/chromium",
                       "/usr/bin/chromium-browser")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--disable-dev-shm-usage"]
SCREENSHOTS = REPO / "build" / "test-screenshots"
VIEWPORT = {"width": 1400, "height": 900}


def chromium_path() -> str | None:
    for path in CHROMIUM_CANDIDATES:
        if os.access(path, os.X_OK):
            return path
    return shutil.which("chromium")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if Path(str(item.fspath)).parent == here:
            item.add_marker(pytest.mark.browser)


@pytest.fixture(scope="session")
def screenshots() -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS


@pytest.fixture(scope="session")
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


@pytest.fixture(scope="session")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabServer]:
    """JupyterLab serving every notebook, prepared with params/quick.yaml."""
    base = tmp_path_factory.mktemp("lab")
    root, data, figures = base / "root", base / "data", base / "figures"
    for book in discover():
        prepare(book, root, data, figures)
    # The first matplotlib import builds a font cache: do it before any timeout runs.
    subprocess.run([sys.executable, "-c", "import matplotlib.pyplot"], check=False,
                   timeout=300)
    server = LabServer(root=root, state=base / "state",
                       env={"THREADCOST_DATA_DIR": str(data),
                            "THREADCOST_FIGURES_DIR": str(figures),
                            "MPLBACKEND": "module://matplotlib_inline.backend_inline"})
    server.start()
    try:
        yield server
    finally:
        server.stop()
