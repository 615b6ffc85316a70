"""The gallery: every machine folder under data/ on one page, drawn from its stored runs.

Intake: the gallery is rendered from every folder in data/, and every run of every folder
must read back (the untrusted-data rules) and be filed under the id its fingerprint
computes, so a contributed folder that does not pass cannot land.
"""

from __future__ import annotations

import re
import shutil
from html.parser import HTMLParser
from pathlib import Path

import pytest

from tests.test_untrusted_data import MARKERS, hostile_data_dir
from threadcost.claims import catalogue
from threadcost.host import machine
from threadcost.store import datastore
from threadcost.views import gallery

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "data"


class _Page(HTMLParser):
    """The page's rows, cells' text and titles, and every tag and attribute."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.rows: list[list[tuple[str, str]]] = []
        self.text: list[str] = []
        self._body = False
        self._cell: list[str] | None = None
        self._title = ""
        self._code = False  # inside <style> or <script>: the page's own, not its text

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        self._code = tag in ("style", "script")
        if tag == "tbody":
            self._body = True
        elif tag == "tr" and self._body:
            self.rows.append([])
        elif tag == "td" and self._body and self.rows:
            self._cell, self._title = [], dict(attrs).get("title") or ""

    def handle_endtag(self, tag: str) -> None:
        self._code = False
        if tag == "tbody":
            self._body = False
        elif tag == "td" and self._cell is not None:
            self.rows[-1].append(("".join(self._cell).strip(), self._title))
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._code:
            return
        self.text.append(data)
        if self._cell is not None:
            self._cell.append(data)


def _parse(index: Path) -> _Page:
    page = _Page()
    page.feed(index.read_text("utf-8"))
    return page


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return gallery.build(DATA, tmp_path_factory.mktemp("gallery"), workers=2)


def test_every_folder_in_data_passes_intake() -> None:
    for mid in datastore.machines_with_runs(DATA):
        runs, skipped = datastore.scan(DATA, mid)
        assert not skipped, [s.as_dict() for s in skipped]
        assert runs, mid
        for run in runs:
            assert machine.machine_id(run.meta["machine"]) == mid, run.path


def test_the_gallery_has_a_row_per_folder_and_a_column_per_claim(rendered: Path) -> None:
    page = _parse(rendered)
    mids = datastore.machines_with_runs(DATA)
    assert sorted(row[0][0].split(" (")[0] for row in page.rows) == mids
    heads = [a.get("data-group") for t, a in page.tags if t == "th"]
    assert heads.count("claims") == len(catalogue.CLAIMS)
    assert heads.count("headline") == 12
    assert heads.count("card") == len(gallery.CARD)
    width = 1 + len(gallery.CARD) + 12 + len(catalogue.CLAIMS)
    assert all(len(row) == width for row in page.rows)
    # the card reads each folder's own fingerprint
    for row in page.rows:
        mid = row[0][0].split(" (")[0]
        fp = datastore.list_runs(data_dir=DATA, machine_id=mid)[-1].meta["machine"]
        assert row[1][0] == fp["cpu_model"] and row[2][0].startswith(str(fp["logical_cpus"]))
        assert row[7][0] == fp["glibc"]


def test_each_flip_names_its_property_and_its_value_on_every_machine(rendered: Path) -> None:
    text = rendered.read_text("utf-8")
    flips = re.findall(r"<details><summary><b>(C\d+)</b>", text)
    assert flips, "five machines and no verdict that differs"
    records = catalogue.by_id()
    mids = datastore.machines_with_runs(DATA)
    for cid in flips:
        block = text.split(f"<summary><b>{cid}</b>", 1)[1].split("</details>", 1)[0]
        prop = records[cid].flips_on
        if prop is None:
            assert "names no machine property" in block
            continue
        assert prop.words.replace("'", "&#x27;") in block
        assert all(f"<td>{mid}</td>" in block for mid in mids)


def test_the_page_shows_words_not_nan_none_or_paths(rendered: Path) -> None:
    page = _parse(rendered)
    words = " ".join(page.text) + " ".join(t for row in page.rows for _, t in row)
    for bad in ("NaN", "None", "nan ", "Traceback", str(REPO), "/tmp/", "/home/"):
        assert bad not in words, bad
    for mid in datastore.machines_with_runs(DATA):  # an id's hash may read like 2e4
        words = words.replace(mid, "")
    assert not re.search(r"\d[eE][-+]?\d", words)  # no scientific notation
    assert "reference" in dict(next(a for t, a in page.tags if t == "a")).get("href", "")


def test_a_hostile_folder_renders_as_text(tmp_path: Path) -> None:
    data = hostile_data_dir(tmp_path)
    shutil.rmtree(data / "published", ignore_errors=True)
    index = gallery.build(data, tmp_path / "out", workers=1)
    page = _parse(index)
    assert len(page.rows) == 2
    assert not any(t in ("img", "svg") for t, _ in page.tags)
    assert not any(a.startswith("on") for _, attrs in page.tags for a in attrs)
    scripts = index.read_text("utf-8").count("<script")
    assert scripts == 1 and not any(m in index.read_text("utf-8").split("<script")[1]
                                    for m in MARKERS)
