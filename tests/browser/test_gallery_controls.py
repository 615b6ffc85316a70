"""The gallery's controls in a browser (headless Chromium, offline): each header sorts its
column both ways, each filter keeps the machines whose cells hold its text, and the column
groups and "only verdicts that differ" hide and show what they say. What each control
should show is read from the page's own cells, never typed here."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from threadcost.views import gallery

DATA = Path(__file__).resolve().parents[2] / "data"
ROWS = "#gallery tbody tr"


@pytest.fixture(scope="module")
def tab(browser: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    index = gallery.build(DATA, tmp_path_factory.mktemp("gallery"), workers=2)
    ctx = browser.new_context()
    try:
        ctx.route("http*://**", lambda route: route.abort())
        page = ctx.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(index.as_uri(), wait_until="load")
        yield page
        assert errors == []
    finally:
        ctx.close()


def _column(tab: Any, col: int, attr: str = "text") -> list[str]:
    """The column's cells in the order the rows are shown (text or data-sort)."""
    script = ("([sel, col, attr]) => [...document.querySelectorAll(sel)].map(r => attr === "
              "'text' ? r.cells[col].textContent.trim() : (r.cells[col].dataset.sort ?? ''))")
    return list(tab.evaluate(script, [ROWS, col, attr]))


def _visible(tab: Any) -> list[str]:
    return list(tab.evaluate("sel => [...document.querySelectorAll(sel)].filter(r => "
                             "r.style.display !== 'none').map(r => r.cells[0].textContent"
                             ".trim())", ROWS))


def _header(tab: Any, col: int) -> Any:
    return tab.locator("#gallery thead tr").first.locator("th").nth(col)


def test_each_header_sorts_its_column_both_ways(tab: Any) -> None:
    machines = _column(tab, 0)
    assert len(machines) >= 2
    _header(tab, 0).click()
    assert _column(tab, 0) == sorted(machines)
    assert _header(tab, 0).get_attribute("aria-sort") == "ascending"
    _header(tab, 0).click()
    assert _column(tab, 0) == sorted(machines, reverse=True)
    kinds = tab.evaluate("() => [...document.querySelectorAll('#gallery thead tr')[0]"
                         ".cells].map(th => th.dataset.kind)")
    number = kinds.index("number")
    _header(tab, number).click()
    keys = _column(tab, number, "sort")
    measured = [float(k) for k in keys if k != ""]
    assert measured == sorted(measured)
    assert keys[len(measured):] == [""] * (len(keys) - len(measured))  # not measured: last
    _header(tab, number).click()
    measured = [float(k) for k in _column(tab, number, "sort") if k != ""]
    assert measured == sorted(measured, reverse=True)


def test_a_filter_keeps_the_machines_whose_cell_holds_its_text(tab: Any) -> None:
    machines = _column(tab, 0)
    wanted = machines[0].split("-")[1]  # the CPU vendor part of a machine's id
    expected = sorted(m for m in machines if wanted in m)
    box = tab.locator('input[data-col="0"]')
    box.fill(wanted)
    assert sorted(_visible(tab)) == expected
    shown = tab.locator("#shown").text_content()
    assert shown == f"{len(expected)} of {len(machines)} machines shown"
    box.fill("no machine is called this")
    assert _visible(tab) == []
    box.fill("")
    assert sorted(_visible(tab)) == sorted(machines)


def test_groups_and_differing_verdicts_hide_and_show_their_columns(tab: Any) -> None:
    def shown(group: str, flip: bool | None = None) -> int:
        script = ("([g, flip]) => [...document.querySelectorAll('#gallery thead tr')[0].cells]"
                  ".filter(th => th.dataset.group === g && (flip === null || "
                  "th.classList.contains('flip') === flip) && th.style.display !== 'none')"
                  ".length")
        return int(tab.evaluate(script, [group, flip]))

    claims, flips = shown("claims"), shown("claims", True)
    assert claims > flips
    tab.locator('input.group[value="claims"]').uncheck()
    assert shown("claims") == 0 and shown("card") > 0
    tab.locator('input.group[value="claims"]').check()
    tab.locator("#flipsonly").check()
    assert shown("claims") == flips and shown("claims", False) == 0
    tab.locator("#flipsonly").uncheck()
    assert shown("claims") == claims
