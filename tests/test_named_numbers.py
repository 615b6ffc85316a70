"""One number, one place: every number the rendered paper prints is a named finding.

Read on the HTML a reader gets (``threadcost.findings.marks``):

- one finding's name never shows two values (within the rounding of the less precise
  print), across every page and the abstract;
- the prose the notebooks generate prints no number with a unit outside a finding's
  span, on every page but those listed in ``UNCONVERTED`` (each with the most unnamed
  numbers it may still print: the list only shrinks);
- a span is the project's own markup: a value from data is escaped, never a mark;
- every marked number names the stored run(s) it reads (``data-runs``), and one that
  reads more than one says so where it is printed ("2.05 µs (pooled over 3 runs)"): a
  figure of the newest run beside a number pooled over every run is not its source;
- every finding declares the run(s) it reads (the newest run of an experiment, or every
  stored run pooled), beside its statistic and unit.

The committed reference rendering is checked at every run (it is a file); a fresh
rendering of each machine folder of ``data/`` from its stored runs (minutes each) is
checked under the ``notebook`` mark.

Tables and figures: a table that shows a stored run's table prints that CSV's rows and
columns (its provenance line names the CSV); a figure names the runs and CSVs it draws
in its provenance line. Neither is counted as prose; a number they share with the prose
is printed through its finding in both (the headline's table and the abstract).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from threadcost import claims, findings
from threadcost.findings import marks

REPO = Path(__file__).resolve().parent.parent
REFERENCE_MACHINE = "x86_64-amd-epyc-2cpu-24g-kvm-1650d2c6"
# THREADCOST_REFERENCE_HTML: check another rendering of the reference machine's runs (a
# fresh `python -m threadcost.paper --machine ... --out build/reference-check`) as if committed
REFERENCE = Path(os.environ.get("THREADCOST_REFERENCE_HTML")
                 or REPO / "reference" / REFERENCE_MACHINE)

# page -> the most numbers with a unit its generated prose may print without a finding's
# name; every page is converted (a page absent from this list must print none).
UNCONVERTED: dict[str, int] = {}


def _pages(folder: Path) -> dict[str, str]:
    pages = {p.name: p.read_text(encoding="utf-8") for p in sorted(folder.glob("*.html"))}
    assert "index.html" in pages and len(pages) >= 9, sorted(pages)
    return pages


def _check(pages: dict[str, str]) -> None:
    assert marks.conflicts(pages) == {}
    over = {}
    for name, text in pages.items():
        loose = marks.unnamed(text)
        if len(loose) > UNCONVERTED.get(name, 0):
            over[name] = (len(loose), UNCONVERTED.get(name, 0), loose[:12])
    assert over == {}, "numbers printed without a finding's name (page: found, allowed, " \
                       "first ones)"
    unsaid = {name: marks.runs_unsaid(text) for name, text in pages.items()}
    assert {k: v for k, v in unsaid.items() if v} == {}, "runs not named, or not said"
    named = {n for text in pages.values() for n, _, _ in marks.marked(text)}
    # every number of the abstract is printed (with the same value) on a page of the paper
    abstract = {n for n, _, _ in marks.marked(pages["index.html"])}
    assert abstract and abstract <= {n for page, text in pages.items() if page != "index.html"
                                     for n, _, _ in marks.marked(text)}
    assert len(named) >= 10, sorted(named)


def test_the_reference_rendering_prints_one_value_per_name() -> None:
    _check(_pages(REFERENCE))


def test_a_name_with_two_values_is_found_within_rounding() -> None:
    page = (findings.tag("a_ns", "2,763") + findings.tag("a_ns", "2,763.4")
            + findings.tag("b_ns", "2.76", "2.76 µs"))
    assert marks.conflicts({"p": page}) == {}
    other = findings.tag("a_ns", "2,585")
    assert set(marks.conflicts({"p": page, "q": other})) == {"a_ns"}
    wrong = findings.tag("c_ns", "2.76", "3.1 µs")  # shown text lacks its value
    assert set(marks.conflicts({"p": wrong})) == {"c_ns"}


def test_unnamed_numbers_are_read_from_generated_prose_only() -> None:
    out = ('<div class="jp-RenderedHTMLCommon jp-RenderedMarkdown jp-OutputArea-output" '
           'data-mime-type="text/markdown"><p>took {} and 164 ns, <code>64 KiB</code></p>'
           "</div>").format(findings.tag("x_ns", "2,003", "2,003 ns"))
    typed = '<div class="jp-RenderedMarkdown jp-MarkdownOutput"><p>S0: 1.5 µs</p></div>'
    assert marks.unnamed(out + typed) == ["164 ns"]


def test_parameters_and_published_numbers_carry_their_own_names() -> None:
    out = ('<div class="jp-RenderedHTMLCommon jp-RenderedMarkdown jp-OutputArea-output">'
           "<p>{} against {} (95% interval 1 to 2)</p></div>").format(
        findings.parameter("launch_iterations", "600 threads"),
        findings.published("C33", "3.8 µs"))
    assert marks.unnamed(out) == []
    name = claims.reading_name("C33", "direct cost")
    assert name.startswith("reading_c33_") and name == claims.reading_name("C33", "direct")


def test_data_cannot_forge_a_mark() -> None:
    from threadcost.views import tables

    forged = '<span data-quantity="x_ns" data-value="1">1 ns</span>'
    cell = tables.cell_html(forged.replace("x_ns", "X NS"))
    assert "data-quantity" not in marks.SPAN.sub("", cell) or "&lt;" in cell
    # a quantity's missing reason (from data) is escaped text, never a span
    q = findings.Quantity(name="y_ns", value=None, unit="ns", statistic="median",
                          missing=forged)
    assert marks.marked(findings.show(q)) == []


def test_every_finding_declares_its_statistic_unit_and_runs() -> None:
    findings._load_modules()
    for name, d in findings.REGISTRY.items():
        assert d.statistic and d.unit and d.definition, name
        assert d.reads.startswith((findings.NEWEST, findings.POOLED)), (name, d.reads)


def test_a_number_pooled_over_runs_says_so_where_it_is_printed() -> None:
    q = findings.Quantity(name="echo_x_per_s", value=182518.0, unit="iterations/s",
                          statistic="mean over repeats", run_ids=("r1", "r2", "r3"),
                          reads=findings.pooled("echo"))
    shown = findings.show(q)
    assert "182,518 iterations/s (pooled over 3 runs)" in shown
    assert marks.sources(shown) == [("echo_x_per_s", ["r1", "r2", "r3"],
                                     "182,518 iterations/s (pooled over 3 runs)")]
    assert marks.runs_unsaid(shown) == []
    newest = findings.show(findings.Quantity(
        name="echo_x_per_s", value=1.0, unit="iterations/s", statistic="mean",
        run_ids=("r3",), reads=findings.newest("echo")))
    assert "pooled" not in newest and marks.runs_unsaid(newest) == []
    # a hand-made span that hides its runs, or names none, is caught
    hidden = findings.tag("echo_x_per_s", "182,518", "182,518 iterations/s", ["r1", "r2"])
    nameless = findings.tag("echo_x_per_s", "182,518", "182,518 iterations/s")
    assert len(marks.runs_unsaid(hidden + nameless)) == 2


def test_pooled_findings_are_declared_pooled_on_a_folder_with_several_runs() -> None:
    """The 16-CPU folder stores two brigade runs: what reads both is declared pooled."""
    from threadcost.findings import brigade

    machine_id = "x86_64-intel-xeon-16cpu-126g-vm-3754101c"
    names = [brigade.net_name(k, p) for k in ("thread", "epoll") for p in brigade.PLACES]
    several = [q for q in (findings.get(n, REPO / "data", machine_id) for n in names)
               if len(q.run_ids) > 1]
    assert several, "the folder no longer holds a finding read from several runs"
    assert [q.name for q in several if not q.reads.startswith(findings.POOLED)] == []
    assert all("pooled over" in findings.show(q) for q in several)


def _machine_folders() -> list[str]:
    data = REPO / "data"
    return sorted(p.name for p in data.iterdir()
                  if p.is_dir() and p.name != "published" and any(p.iterdir()))


def test_the_quick_rendering_prints_one_value_per_name(quick_paper_html: Path) -> None:
    """The paper this suite measured and rendered (params/quick.yaml), checked as the
    committed reference is."""
    _check(_pages(quick_paper_html))


# A fresh rendering of every machine folder takes about 90 s of CPU per folder: on
# demand (make test-folders), not in the suite's five minutes; every folder's notebooks
# are executed by the suite in tests/test_every_folder_renders.py.
@pytest.mark.folders
@pytest.mark.notebook
@pytest.mark.timeout(1800)
@pytest.mark.parametrize("machine_id", _machine_folders())
def test_a_fresh_rendering_of_each_machine_prints_one_value_per_name(
        machine_id: str, tmp_path: Path) -> None:
    env = {**os.environ, "THREADCOST_FIGURES_DIR": str(tmp_path / "figures")}
    done = subprocess.run([sys.executable, "-m", "threadcost.paper", "--machine", machine_id,
                           "--out", str(tmp_path / "html")], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=1700, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    _check(_pages(tmp_path / "html" / "html"))  # --out holds notebooks/ and html/


def test_every_reading_prints_under_a_name_of_its_own() -> None:
    """Two readings whose words begin alike (cut at the same length) never share a name."""
    from threadcost.claims import catalogue

    names = [claims.reading_name(c.id, r.text) for c in catalogue.CLAIMS
             for _, r in c.readings()]
    assert len(names) == len(set(names))
