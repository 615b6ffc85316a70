"""The rendered paper opened from the file system with the network blocked.

Figures and tables must show, the widgets must be drawn by the vendored widget
manager, and no page may ask for anything that is not a local file.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.browser.prepare import REPO


@pytest.fixture(scope="module")
def paper_html(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("rendered")
    env = {**os.environ, "THREADCOST_DATA_DIR": str(base / "data"),
           "THREADCOST_FIGURES_DIR": str(base / "figures")}
    proc = subprocess.run(
        [sys.executable, "-m", "threadcost.paper", "--params", "params/quick.yaml",
         "--out", str(base / "paper"), "--only", "01", "00", "06"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=300,
        stdin=subprocess.DEVNULL, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return base / "paper" / "html"


def _open_offline(browser: Any, url: str) -> tuple[Any, Any, list[str]]:
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    asked: list[str] = []

    def route(r: Any) -> None:
        if r.request.url.startswith(("file:", "data:", "blob:")):
            r.continue_()
        else:
            asked.append(r.request.url)
            r.abort()

    context.route("**/*", route)
    page = context.new_page()
    failed: list[str] = []
    page.on("requestfailed", lambda req: failed.append(req.url))
    page.goto(url, wait_until="load")
    return context, page, asked + failed


@pytest.mark.parametrize("page_name", ["index.html", "00_introduction.html",
                                       "01_malloc_touch.html", "06_claims.html"])
def test_page_reads_offline(page_name: str, paper_html: Path, browser: Any,
                            screenshots: Path) -> None:
    context, page, problems = _open_offline(browser, (paper_html / page_name).as_uri())
    try:
        page.wait_for_timeout(1500)
        images = page.locator("img")
        assert images.count() > 0 or page_name == "index.html", f"{page_name}: no figure"
        broken = page.evaluate(
            "[...document.images].filter(i => !(i.complete && i.naturalWidth > 0))"
            ".map(i => i.src.slice(0, 80))")
        assert broken == [], f"{page_name}: figures that did not load: {broken}"
        if page_name != "index.html":
            assert page.locator("table").count() > 0, f"{page_name}: no table"
        page.screenshot(path=str(screenshots / f"paper_{Path(page_name).stem}.png"),
                        full_page=False)
        assert problems == [], f"{page_name}: requests that left the file system or " \
                               f"failed: {problems[:5]}"
    finally:
        context.close()


def test_widgets_render_from_the_vendored_manager(paper_html: Path, browser: Any,
                                                  screenshots: Path) -> None:
    context, page, problems = _open_offline(browser,
                                            (paper_html / "01_malloc_touch.html").as_uri())
    try:
        slider = page.locator(".widget-slider").first
        slider.wait_for(state="visible", timeout=30_000)
        slider.scroll_into_view_if_needed()
        page.screenshot(path=str(screenshots / "paper_01_widget.png"))
        assert page.locator(".widget-slider").count() >= 2
        assert page.locator(".widget-dropdown").count() >= 1
        assert problems == [], problems[:5]
    finally:
        context.close()
