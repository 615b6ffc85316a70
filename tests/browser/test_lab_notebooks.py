"""JupyterLab as a reader uses it after `make lab`: what only a live kernel shows.

The reader double-clicks a notebook, a jupytext ``.py`` file, in the file browser
(JupyterLab started with `make lab`'s overrides.json), finds a notebook (not a text
editor), runs all cells from the Run menu, waits until every code cell has run,
checks that no cell raised, then changes each slider and each dropdown of the live
ipywidgets explorer (and presses Run where the explorer measures on demand) and
checks that the plot it drives redrew. A screenshot goes to build/test-screenshots/.

Every notebook is executed once per test session, by the quick rendering
(tests/conftest.py); its outputs, figures and stored runs are checked there. Only the
live widgets need a kernel in a browser, so this suite runs one notebook's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.browser.prepare import LAB_NOTEBOOK

RUN_TIMEOUT_MS = 240_000
WIDGET_TIMEOUT_MS = 120_000

PANEL = ".jp-NotebookPanel:not(.lm-mod-hidden)"  # the notebook in view
ALL_RAN = """() => {
  const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');
  if (!panel) return false;
  const prompts = [...panel.querySelectorAll('.jp-CodeCell .jp-InputArea-prompt')];
  // a cell that raised stops Run All: report it now rather than wait for the timeout
  const busy = prompts.some(p => p.textContent.includes('*'));
  if (!busy && panel.innerText.includes('Traceback (most recent call last)')) return true;
  return prompts.length > 0 && prompts.every(p => /\\[\\d+\\]/.test(p.textContent));
}"""

# What a widget drives: the images and text of the Output widget in its cell.
OUTPUT_OF = """(control) => {
  const cell = control.closest('.jp-CodeCell');
  const out = [...cell.querySelectorAll('.widget-output')];
  return out.map(o => [...o.querySelectorAll('img')].map(i => i.src.length + ':' +
                        i.src.slice(-200)).join('|') + '#' + o.innerText).join('//');
}"""


# A heavy explorer measures only on its Run button (interact_manual): press it.
PRESS_RUN = """(control) => {
  const box = control.closest('.widget-interact');
  const run = box && [...box.querySelectorAll('button')].find(b => b.textContent.trim() === 'Run');
  if (run) run.click();
  return Boolean(run);
}"""


def _accept_kernel_dialog(page: Any) -> None:
    """A fresh workspace may ask which kernel to start: take the notebook's own."""
    accept = page.locator(".jp-Dialog .jp-Dialog-button.jp-mod-accept")
    try:
        accept.wait_for(state="visible", timeout=8_000)
        accept.click()
    except Exception:  # no dialog: the kernel started by itself
        pass


def _run_all(page: Any) -> None:
    # the kernel must be up before Run All, else the first cells queue oddly
    page.wait_for_selector(f"{PANEL} .jp-Notebook-ExecutionIndicator[data-status='idle']",
                           timeout=90_000)
    page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
    page.locator(".lm-Menu-content .lm-Menu-itemLabel").get_by_text(
        "Run All Cells", exact=True).click()
    page.wait_for_function(ALL_RAN, timeout=RUN_TIMEOUT_MS, polling=1000)


def _open_and_run(page: Any, url: str, name: str) -> None:
    # ?reset: a fresh workspace, so no tab of an earlier test is restored beside it
    page.goto(f"{url}/lab/tree/{name}?reset", wait_until="domcontentloaded")
    page.wait_for_selector(f"{PANEL} .jp-CodeCell", timeout=90_000)
    _accept_kernel_dialog(page)
    _run_all(page)


def _double_click_and_run(page: Any, url: str, name: str) -> None:
    """Open ``name`` as a reader does: a double click in JupyterLab's file browser."""
    page.goto(f"{url}/lab?reset", wait_until="domcontentloaded")
    item = page.locator(".jp-DirListing-item", has_text=name).first
    item.wait_for(timeout=90_000)
    item.dblclick()
    page.wait_for_selector(f"{PANEL}, .jp-FileEditor", timeout=90_000)
    editors = page.locator(".jp-MainAreaWidget:not(.lm-mod-hidden) .jp-FileEditor").count()
    assert editors == 0 and page.locator(PANEL).count() == 1, \
        f"{name}: a double click opened a text editor, not a notebook"
    page.wait_for_selector(f"{PANEL} .jp-CodeCell", timeout=90_000)
    _accept_kernel_dialog(page)
    _run_all(page)


def _errors(page: Any) -> list[str]:
    texts = page.locator(f"{PANEL} .jp-OutputArea-output").all_inner_texts()
    return [t[:600] for t in texts if "Traceback (most recent call last)" in t
            or "Error Traceback" in t]


def _change_slider(page: Any, slider: Any) -> str:
    readout = slider.locator(".widget-readout")
    before = readout.inner_text().strip()
    handle = slider.locator(".noUi-handle").first
    handle.focus()
    handle.press("ArrowRight")
    page.wait_for_timeout(300)
    if readout.inner_text().strip() == before:  # already at the right end
        handle.press("ArrowLeft")
        handle.press("ArrowLeft")
    return f"slider {slider.locator('.widget-label').inner_text().strip()!r} " \
           f"{before} -> {readout.inner_text().strip()}"


def _change_dropdown(dropdown: Any) -> str:
    select = dropdown.locator("select")
    options = select.locator("option").all_inner_texts()
    current = select.input_value()
    values = select.evaluate("s => [...s.options].map(o => o.value)")
    other = next(v for v in values if v != current)
    select.select_option(other)
    return f"dropdown {dropdown.locator('.widget-label').inner_text().strip()!r} " \
           f"{options[values.index(current)]} -> {options[values.index(other)]}"


def _save_rewrites_nothing(page: Any, path: Path) -> None:
    """Saving after Run All and widget moves (Ctrl+S, as a reader does, or autosave)
    writes the notebook back as it was: no outputs, no kernel name, no metadata."""
    before = path.read_text(encoding="utf-8")
    written = path.stat().st_mtime_ns
    page.locator(PANEL).first.click()
    page.keyboard.press("Control+s")
    for _ in range(60):  # the contents API writes the file: wait for its new time
        if path.stat().st_mtime_ns != written:
            break
        page.wait_for_timeout(500)
    assert path.stat().st_mtime_ns != written, f"{path.name}: Ctrl+S did not save"
    # The new time shows as soon as the save truncates the file, before it has written
    # it: read once the text stops changing (a save is one write; 20 s bound).
    after = path.read_text(encoding="utf-8")
    for _ in range(40):
        page.wait_for_timeout(500)
        again = path.read_text(encoding="utf-8")
        if again == after and after:
            break
        after = again
    assert after == before, f"{path.name}: a save from JupyterLab rewrote the notebook"


def test_in_the_lab_a_double_clicked_notebook_runs_and_every_chart_redraws(
        lab: Any, browser: Any, screenshots: Path) -> None:
    """One test, so that one worker starts one JupyterLab (pytest-xdist's loadgroup
    does not group under pytest 9): the reader's notebook, then the paper's chart."""
    _double_clicked_py_notebook_runs_and_its_widgets_redraw(lab, browser, screenshots)
    lab.shutdown_kernels()
    _the_papers_chart_also_works_in_the_lab(lab, browser, screenshots)


def _double_clicked_py_notebook_runs_and_its_widgets_redraw(
        lab: Any, browser: Any, screenshots: Path) -> None:
    name = f"{LAB_NOTEBOOK}.py"
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    shot = screenshots / f"lab_{LAB_NOTEBOOK}.png"
    try:
        _double_click_and_run(page, lab.url, name)
        assert not _errors(page), f"{name}: a cell raised:\n{_errors(page)[0]}"

        controls = page.locator(f"{PANEL} .widget-slider, {PANEL} .widget-dropdown")
        changed: list[str] = []
        for i in range(controls.count()):
            control = controls.nth(i)
            control.scroll_into_view_if_needed()
            before = control.evaluate(OUTPUT_OF)
            classes = control.get_attribute("class") or ""
            what = (_change_slider(page, control) if "widget-slider" in classes
                    else _change_dropdown(control))
            if control.evaluate(PRESS_RUN):
                what += " (then Run)"
            try:
                page.wait_for_function(
                    f"([el, before]) => ({OUTPUT_OF})(el) !== before && "
                    "!el.closest('.jp-CodeCell').querySelector('.jp-InputArea-prompt')"
                    ".textContent.includes('*')",
                    arg=[control.element_handle(), before], timeout=WIDGET_TIMEOUT_MS,
                    polling=500)
            except Exception as exc:
                page.screenshot(path=str(shot))
                raise AssertionError(f"{name}: after {what}, the plot output did not "
                                     f"change (screenshot: {shot})") from exc
            changed.append(what)
        assert changed, f"{name}: no widget to move (the explorer did not appear)"
        _save_rewrites_nothing(page, lab.root / name)
        if controls.count():
            controls.first.scroll_into_view_if_needed()
            page.mouse.wheel(0, 250)
            page.wait_for_timeout(500)
        page.screenshot(path=str(shot))
        print(f"{name}: {len(changed)} widget(s) changed: {changed}; screenshot {shot}")
    except Exception:
        page.screenshot(path=str(shot))
        raise
    finally:
        context.close()


STATIC_CHART_CELL = """\
from threadcost.experiments.malloc_touch import grid as explorer_grid
from threadcost.views import charts, malloc_touch_chart

grid = explorer_grid.malloc_touch_grid(sizes_mib=[8, 16], allocators=["malloc"], points=5)
charts.show(malloc_touch_chart.chart(grid))
"""


def _the_papers_chart_also_works_in_the_lab(lab: Any, browser: Any,
                                            screenshots: Path) -> None:
    """The chart code of the paper (interactive=False), run in a live JupyterLab
    kernel: the vendored bundles come inline, the chart draws and its controls work."""
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nb.cells = [nbformat.v4.new_code_cell(STATIC_CHART_CELL)]
    nbformat.write(nb, lab.root / "static_chart.ipynb")
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    shot = screenshots / "lab_static_chart.png"
    try:
        _open_and_run(page, lab.url, "static_chart.ipynb")
        assert not _errors(page), _errors(page)[0]
        svg = page.locator(f"{PANEL} .tc-vega svg").first
        svg.wait_for(timeout=WIDGET_TIMEOUT_MS)
        before = svg.inner_html()
        page.locator(f"{PANEL} .tc-vega select").first.select_option(index=0)  # 8 MiB
        page.wait_for_function(
            "(before) => document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) "
            ".tc-vega svg').innerHTML !== before", arg=before, timeout=10_000)
        page.screenshot(path=str(shot))
    except Exception:
        page.screenshot(path=str(shot))
        raise
    finally:
        context.close()
