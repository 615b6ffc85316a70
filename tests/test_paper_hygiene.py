"""The rendered paper as a reader reads it (quick parameters, every notebook).

No debris in any page (stderr, progress bars, Out[] prompts, Python reprs, machine
paths, NaN/None cells, scientific notation, index columns); every figure and table
links to its CSV (copied next to the pages) and to its code; one shared stylesheet;
an index with the abstract, the verdict tally and the five sources; a notebook that
raises stops the build and names the notebook, the cell and the error.
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from threadcost import vocabulary
from threadcost.paper import build as paper
from threadcost.paper import hygiene
from threadcost.views import tables

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def rendered(quick_paper_html: Path) -> Path:
    """The session's quick rendering of every notebook (tests/conftest.py)."""
    return quick_paper_html


def _pages(html_dir: Path) -> list[Path]:
    pages = sorted(html_dir.glob("*.html"))
    assert len(pages) >= 8, [p.name for p in pages]  # index + 7 notebooks
    return pages


@pytest.mark.notebook
def test_no_page_carries_debris(rendered: Path) -> None:
    found = {p.name: hygiene.problems(p.read_text(encoding="utf-8")) for p in _pages(rendered)}
    assert {k: v[:5] for k, v in found.items() if v} == {}


@pytest.mark.notebook
def test_every_figure_and_table_links_to_its_data_and_code(rendered: Path) -> None:
    for page in _pages(rendered):
        if page.name == "index.html":
            continue
        text = page.read_text(encoding="utf-8")
        lines = re.findall(r'<p class="tc-provenance">(.*?)</p>', text, re.S)
        outputs = len(re.findall(r'<img src="data:image|<table', text))
        assert outputs and len(lines) >= 1, page.name
        # a long list of data files is printed once (id tc-data); later lines point to it
        listed = 'id="tc-data"' in text
        for line in lines:
            hrefs = re.findall(r'href="([^"]+)"', line)
            assert any(h.endswith((".csv", ".csv.gz")) for h in hrefs) or (
                listed and "#tc-data" in hrefs), (page.name, line)
            hrefs = [h for h in hrefs if h != "#tc-data"]
            assert any(h.startswith("code/") and h.endswith(".py") for h in hrefs), line
            for href in hrefs:  # relative, and there: works offline and from a zip
                assert not href.startswith(("/", "file:", "http")), href
                assert (rendered / href).is_file(), (page.name, href)


@pytest.mark.notebook
def test_one_shared_stylesheet(rendered: Path) -> None:
    sheet = rendered / "_static" / "paper.css"
    assert sheet.stat().st_size > 10_000
    for page in _pages(rendered):
        text = page.read_text(encoding="utf-8")
        inline = sum(len(s) for s in re.findall(r"<style[^>]*>(.*?)</style>", text, re.S))
        if page.name != "index.html":
            assert 'href="_static/paper.css"' in text, page.name
            # pandas table styles at most (06 tints one row per claim: 29 claims, ~22 KB)
            assert inline < 30_000, (page.name, inline)


@pytest.mark.notebook
def test_index_has_abstract_tally_figure_and_references(rendered: Path) -> None:
    text = (rendered / "index.html").read_text(encoding="utf-8")
    plain = hygiene.visible_text(text)
    assert re.search(r"An idle thread (?:costs|adds) about [\d,.]+ KiB", plain), plain[:800]
    assert re.search(r"starts .* in about [\d,.]+ µs", plain)
    assert re.search(r"Verdicts on \d+ published claims", plain)
    for key in ("S0", "S1", "S2", "S3", "S4"):
        assert f"[{key}]" in plain, key
    assert "Bendersky" in plain and "matklad" in plain
    assert re.search(r'<img src="figures/summary_headline\.png"', text)


@pytest.mark.notebook
def test_index_tally_chips_carry_their_class_colours(rendered: Path) -> None:
    text = (rendered / "index.html").read_text(encoding="utf-8")
    chips = re.findall(r'<li style="background:(#[0-9a-fA-F]+)"><b>\d+</b> ([^<]+)</li>', text)
    assert chips
    for colour, name in chips:
        assert colour == vocabulary.verdict_colour(name) and name in vocabulary.CLASSES


def test_a_raising_notebook_stops_the_build(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    source = tmp_path / "90_fails.py"
    source.write_text(
        "# %% [markdown]\n# # Fails\n\n# %%\nx = 1\n\n# %%\n"
        "raise RuntimeError('the experiment broke: limit X')\n", encoding="utf-8")
    monkeypatch.setattr(paper, "notebook_order", lambda: [source])
    monkeypatch.setenv("THREADCOST_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("THREADCOST_FIGURES_DIR", str(tmp_path / "figures"))
    params = tmp_path / "p.yaml"
    params.write_text("save: false\n", encoding="utf-8")
    with pytest.raises(paper.NotebookFailed) as info:
        paper.build(str(params), tmp_path / "out")
    assert info.value.notebook == "90_fails.py"
    assert "cell" in info.value.cell and "raise RuntimeError" in info.value.cell
    assert "RuntimeError: the experiment broke: limit X" in info.value.message
    assert not (tmp_path / "out").exists()  # no paper with a failure line in it


def test_hygiene_finds_each_kind_of_debris() -> None:
    page = ('<div data-mime-type="application/vnd.jupyter.stderr">x</div>'
            "<p>Out[3]: [PosixPath('/tmp/x/figures/a.svg')] saved to /work/data/run</p>"
            "<p>launch:  40%|████      | 4/10 [00:01&lt;00:01]</p><p>ratio 4e+05</p>"
            "<table><tbody><tr><th>0</th><td>NaN</td></tr></tbody></table>"
            "<p>per hop, same-cpu (µs)</p>")
    kinds = {p.split(":")[0] for p in hygiene.problems(page)}
    assert {"stderr block", "Out[] prompt", "Python repr", "absolute path", "saved-to line",
            "progress bar", "scientific notation",
            "index column", "identifier for words"} <= kinds, kinds
    assert any(k.startswith("missing value") for k in kinds)
    folded = '<details class="tc-code"><pre>print(Path("/tmp/x"))</pre></details>'
    assert hygiene.problems("<p>1.5 µs, 2,000 KiB, C01-C17, <code>same-cpu</code>: one "
                            "CPU; data: go_lockosthread/runs.csv</p>" + folded) == []


def test_identifiers_in_prose_and_dash_only_columns_are_debris() -> None:
    """A declared parameter's or experiment's name read as prose (not a command a reader
    types, in code font or a code block), and a table column that reads a dash on every
    row, are found; the same name in code font, and a column with one value, are not."""
    prose = "<p>notebook 05 runs the count its tasks_s6_count parameter gives</p>"
    found = hygiene.problems(prose + "<p>the launch_python_parent run</p>")
    assert sum("identifier in prose" in p for p in found) == 2, found
    assert hygiene.problems("<p>set <code>tasks_s6_count</code></p><pre>papermill -p "
                            "malloc_mib 1024</pre>") == []
    table = ("<table><thead><tr><th>task</th><th>ratio</th><th>note</th></tr></thead><tbody>"
             "<tr><td>thread</td><td>—</td><td>a</td></tr>"
             "<tr><td>fiber</td><td>—</td><td>—</td></tr></tbody></table>")
    assert hygiene.dash_columns(table) == ["ratio"]
    assert [p for p in hygiene.problems(table) if "'—' on every row" in p] == [
        "a column that reads '—' on every row: 'ratio'"]


def test_table_rules() -> None:
    frame = pd.DataFrame({"stack_kib_asked": [64, 2048],
                          "vsz_kib_per_thread": [8196.1749, float("nan")],
                          "rate_per_s": [4e5, 2.95e6], "share": [0.045678, None]})
    html = tables.show(frame)._repr_html_()
    assert "stack asked (KiB)" in html and "VSZ per thread (KiB)" in html
    assert "rate (per s)" in html
    assert "8,196" in html and "400,000" in html and "2,950,000" in html
    assert "0.0457" in html
    assert "nan" not in html.lower() and "None" not in html and "e+0" not in html
    assert tables.DASH in html and tables.DEFAULT_MISSING in html
    assert hygiene.problems(html) == []
    assert tables.format_cell("33.8 .. 33.8") == "33.8"


def test_an_identifier_in_code_font_where_words_belong_is_debris() -> None:
    """#49 item 6: an experiment's name in code font is never typed by a reader ("stored
    apart (as launch_python_parent)"); a parameter's is debris where it stands for its
    value ("one run lasts about cpu_bound_run_s"), not where the reader sets it; a
    headline cell's source names the stored run, not its experiment's identifier."""
    flagged = hygiene.problems("<p>Stored apart (as <code>launch_python_parent</code>).</p>"
                               "<p>one run lasts about <code>cpu_bound_run_s</code> of CPU</p>"
                               "<table><tbody><tr><td>tasks_switch_thread run 2026</td>"
                               "</tr></tbody></table>")
    names = [p for p in flagged if "identifier" in p]
    assert len(names) == 3, flagged
    assert hygiene.problems("<p>set <code>tasks_s6_count</code> to 1000000</p><p>its "
                            "<code>cpu_bound_run_s</code> parameter</p><pre>papermill -p "
                            "launch_python_parent 1</pre>") == []
