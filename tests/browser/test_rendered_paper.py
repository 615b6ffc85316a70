"""The rendered paper opened from the file system with the network blocked.

Figures and tables must show; the explorers are Vega-Lite charts drawn by the
vendored bundles in ``_static/vega``; every control of every chart, moved, must
change the chart it drives (its SVG); and no page may ask for anything that is not
a local file.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from threadcost.paper import notebook_sources

# Every page of the paper: the index and one per notebook.
PAGES = ["index.html", *(f"{source.stem}.html" for source in notebook_sources.sources())]
# The explorers, drawn without a kernel: every page whose notebook shows a Vega-Lite chart.
CHART_PAGES = [f"{source.stem}.html" for source in notebook_sources.sources()
               if "charts.show(" in source.read_text(encoding="utf-8")]
MIN_CONTROLS = 10
PAGE_BYTES_MAX = 1_000_000
CHART_TIMEOUT_MS = 30_000
CHANGE_TIMEOUT_MS = 5_000


@pytest.fixture(scope="module")
def paper_html(request: pytest.FixtureRequest) -> Path:
    """The session's quick rendering of the whole paper (tests/conftest.py), or the one
    $THREADCOST_RENDERED_PAPER names (e.g. reference/<machine-id>, to check the committed
    reference rendering)."""
    given = os.environ.get("THREADCOST_RENDERED_PAPER")
    if given:
        return Path(given).resolve()
    return request.getfixturevalue("quick_paper_html")


def _open_offline(browser: Any, url: str) -> tuple[Any, Any, list[str], list[str]]:
    """A page with every request that is not a local file aborted and recorded."""
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
    errors: list[str] = []
    page.on("requestfailed", lambda req: asked.append(f"failed: {req.url}"))
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(url, wait_until="load")
    return context, page, asked, errors


@pytest.mark.parametrize("page_name", PAGES)
def test_page_reads_offline(page_name: str, paper_html: Path, browser: Any,
                            screenshots: Path) -> None:
    context, page, problems, errors = _open_offline(browser,
                                                    (paper_html / page_name).as_uri())
    try:
        page.wait_for_timeout(1000)
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
        assert errors == [], f"{page_name}: script errors: {errors[:3]}"
    finally:
        context.close()


def test_pages_are_small_and_carry_no_widget_state(paper_html: Path) -> None:
    for name in PAGES:
        text = (paper_html / name).read_text(encoding="utf-8")
        size = len(text.encode())
        assert size < PAGE_BYTES_MAX, f"{name}: {size:,} bytes (the bundles belong in _static)"
        assert "application/vnd.jupyter.widget-state+json" not in text, \
            f"{name}: ipywidgets state embedded (papermill must create no widgets)"
        assert "html-manager" not in text, f"{name}: loads the widget manager"
    for bundle in ("vega.min.js", "vega-lite.min.js", "vega-embed.min.js"):
        # copied next to the pages, or (a reference rendering) linked in vendor/ in place
        assert ((paper_html / "_static" / "vega" / bundle).is_file()
                or (paper_html / ".." / ".." / "vendor" / "vega" / bundle).is_file())


# The chart a control drives: the SVG of the .tc-vega element around it.
CHART_OF = """(el) => {
  const box = el.closest('.tc-vega');
  const svg = box && box.querySelector('svg');
  return svg ? svg.outerHTML : '';
}"""

# Every control of every chart on the page, as [chart index, control index, kind, name].
CONTROLS = """() => {
  const out = [];
  document.querySelectorAll('.tc-vega').forEach((chart, c) => {
    chart.querySelectorAll('.vega-bind').forEach((bind, i) => {
      const name = (bind.querySelector('.vega-bind-name') || {}).textContent || '';
      let kind = 'other';
      if (bind.querySelector('select')) kind = 'select';
      else if (bind.querySelector('input[type=range]')) kind = 'range';
      else if (bind.querySelector('input[type=radio]')) kind = 'radio';
      else if (bind.querySelector('input[type=checkbox]')) kind = 'checkbox';
      out.push([c, i, kind, name.trim()]);
    });
  });
  return out;
}"""

# A reader's moves of one control, each a list of steps: (what to do, argument).
# A range: three steps right with the keyboard, then End, then Home. A select or a
# radio group: every other option in turn. A checkbox: a click (and one back).
OPTIONS = """(bind) => {
  const select = bind.querySelector('select');
  if (select) return [select.selectedIndex, [...select.options].map(o => o.value)];
  const radios = [...bind.querySelectorAll('input[type=radio]')];
  return [radios.findIndex(r => r.checked), radios.map(r => r.value)];
}"""


def _reader_moves(control: Any, kind: str) -> list[list[tuple[str, str]]]:
    """The moves a reader makes with ``control``; each must redraw its chart."""
    if kind == "range":
        return [[("key", "ArrowRight")] * 3 + [("key", "End")], [("key", "Home")]]
    if kind == "checkbox":
        return [[("click", "")], [("click", "")]]
    current, values = control.evaluate(OPTIONS)
    others = values[current + 1:] + values[:max(current, 0)]
    return [[(kind, value)] for value in others]


def _do(control: Any, kind: str, step: tuple[str, str]) -> str:
    action, arg = step
    if action == "key":
        target = control.locator("input[type=range]")
        target.focus()
        target.press(arg)
        return f"{arg} -> {target.input_value()}"
    if action == "click":
        box = control.locator("input[type=checkbox]")
        box.click()
        return f"checked {box.is_checked()}"
    if action == "select":
        control.locator("select").select_option(arg)
        return f"option {arg}"
    control.locator(f"input[type=radio][value={arg!r}]").click()
    return f"radio {arg}"


def test_every_control_changes_its_chart(paper_html: Path, browser: Any,
                                         screenshots: Path) -> None:
    """Each control, moved as a reader moves it (keyboard steps and End, then Home,
    for a range; each option of a select or radio group; a click on a checkbox),
    redraws the chart it drives."""
    moved: list[str] = []
    for name in CHART_PAGES:
        context, page, problems, errors = _open_offline(browser, (paper_html / name).as_uri())
        try:
            charts = page.locator(".tc-vega")
            assert charts.count() >= 1, f"{name}: no Vega-Lite chart on the page"
            page.wait_for_function(
                "() => [...document.querySelectorAll('.tc-vega')].every("
                "c => c.querySelector('svg .mark-group') || c.textContent.includes('chart'))",
                timeout=CHART_TIMEOUT_MS)
            texts = charts.all_inner_texts()
            for t in texts:
                assert "could not be drawn" not in t and "did not load" not in t, \
                    f"{name}: {t[:300]}"
            controls = page.evaluate(CONTROLS)
            assert controls, f"{name}: a chart without controls"
            for c, i, kind, label in controls:
                assert kind != "other", f"{name}: control {label!r} of an unknown kind"
                control = charts.nth(c).locator(".vega-bind").nth(i)
                control.scroll_into_view_if_needed()
                for move in _reader_moves(control, kind):
                    before = control.evaluate(CHART_OF)
                    assert before, f"{name}: chart {c} has no SVG"
                    what = ", ".join(_do(control, kind, step) for step in move)
                    try:
                        page.wait_for_function(
                            f"([el, before]) => ({CHART_OF})(el) !== before",
                            arg=[control.element_handle(), before],
                            timeout=CHANGE_TIMEOUT_MS, polling=100)
                    except Exception as exc:
                        shot = screenshots / f"paper_{Path(name).stem}_dead_control.png"
                        page.screenshot(path=str(shot))
                        raise AssertionError(
                            f"{name}: control {i + 1} ({kind} {label!r}), moved as a reader "
                            f"does ({what}), left its chart unchanged (screenshot: {shot})"
                        ) from exc
                    moved.append(f"{name}: {kind} {label!r} {what}")
            charts.first.scroll_into_view_if_needed()
            page.screenshot(path=str(screenshots / f"paper_{Path(name).stem}_chart.png"))
            assert problems == [], f"{name}: requests that left the file system: {problems[:5]}"
            assert errors == [], f"{name}: script errors: {errors[:3]}"
        finally:
            context.close()
    print(f"{len(moved)} moves, each changed its chart:\n" + "\n".join(moved))
    assert len(moved) >= MIN_CONTROLS, f"only {len(moved)} moves in the paper: {moved}"
