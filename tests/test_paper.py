"""The paper under quick parameters (the session's one quick rendering): renders offline,
lists every claim, draws the headline."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import QuickPaper
from threadcost.paper.render import remote_references
from threadcost.store import datastore

pytestmark = pytest.mark.notebook

REPO = Path(__file__).resolve().parent.parent
ALL_IDS = [f"C{i:02d}" for i in range(1, 24)]


@pytest.fixture(scope="module")
def paper(quick_paper: QuickPaper) -> dict[str, Path]:
    """The session's one quick rendering of every notebook (tests/conftest.py)."""
    return {"html": quick_paper.html, "data": quick_paper.data,
            "figures": quick_paper.figures}


def test_index_links_every_rendered_notebook(paper: dict[str, Path]) -> None:
    index = (paper["html"] / "index.html").read_text()
    for page in ("00_introduction.html", "01_malloc_touch.html", "06_claims.html"):
        assert (paper["html"] / page).is_file()
        assert page in index


def test_claims_table_holds_every_id_with_a_verdict(paper: dict[str, Path]) -> None:
    text = (paper["html"] / "06_claims.html").read_text()
    plain = re.sub(r"<[^>]+>", " ", text)
    for claim_id in ALL_IDS:
        assert claim_id in plain, claim_id
    assert re.search(r"supported|contradicted|inconclusive", plain)


def test_no_rendered_page_loads_scripts_or_styles_from_the_network(
        paper: dict[str, Path]) -> None:
    for page in paper["html"].glob("*.html"):
        assert remote_references(page.read_text()) == [], page.name


def test_code_is_hidden_by_default(paper: dict[str, Path]) -> None:
    text = (paper["html"] / "01_malloc_touch.html").read_text()
    assert "malloc_touch.run(" not in re.sub(r"<details.*?</details>", "", text, flags=re.S)


def test_headline_figure_and_run_data_exist(paper: dict[str, Path]) -> None:
    assert (paper["figures"] / "summary_headline.png").is_file()
    assert (paper["figures"] / "summary_headline.svg").is_file()
    assert datastore.list_runs("malloc_touch", data_dir=paper["data"])
