"""Findings: every printed number is a named quantity computed once, read by name by the
pages, the headline, the abstract and the claims; the one vocabulary colours the tally."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pandas as pd
import pytest

from threadcost import claims, findings, vocabulary
from threadcost.findings import marks
from threadcost.host import machine
from threadcost.paper import render
from threadcost.results import Result
from threadcost.store import datastore
from threadcost.views import headline

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def yard() -> Result:
    from threadcost.experiments.context_switch import yardsticks

    return yardsticks.run(repeats=2, batches=3, scale=0.05)


def _store(result: Result, data_dir: Path) -> tuple[str, str]:
    fp = machine.fingerprint(include_git=False)
    path = datastore.save_run(result, data_dir=data_dir, fingerprint=fp)
    return machine.machine_id(fp), path.name


def test_nothing_stored_gives_not_measured_for_every_finding(tmp_path: Path) -> None:
    found = findings.all(tmp_path, "no-such-machine")
    assert set(found) == set(findings.REGISTRY) and len(found) >= 20
    for name, q in found.items():
        assert q.name == name and q.value is None and not q.measured
        assert q.missing and q.text().startswith("not measured on this machine")
        assert "data-quantity" not in findings.span(q)  # no value, no quantity to check


def test_every_finding_says_its_statistic_and_definition() -> None:
    findings.all(REPO / "data", "no-such-machine")  # loads the registry
    for name, d in findings.REGISTRY.items():
        assert re.fullmatch(r"[a-z0-9_]+", name), name
        assert d.statistic and len(d.definition) > 20 and d.unit, name
        # the name says its statistic: a median is not a mean
        stat = d.statistic.split()[0]
        assert stat in ("median", "mean", "slope", "computed", "sum", "share", "ratio",
                        "recorded", "p90", "intercept") or d.computed, name
        if stat in ("median", "mean", "slope", "share", "ratio", "p90", "intercept"):
            assert stat in name, (name, d.statistic)


def test_a_stored_run_feeds_the_finding_and_the_claim_alike(tmp_path: Path,
                                                             yard: Result) -> None:
    mid, run_id = _store(yard, tmp_path)
    memcpy = findings.get("yardstick_memcpy_64kib_median_ns", tmp_path, mid)
    ratio = findings.get("switch_over_memcpy_mean_ratio", tmp_path, mid)
    assert memcpy.measured and ratio.measured
    assert memcpy.run_ids == (run_id,) and memcpy.machine_id == mid
    assert memcpy.n == yard.params["repeats"] and memcpy.unit == "ns"
    assert memcpy.low is not None and memcpy.high is not None
    assert memcpy.low <= memcpy.value <= memcpy.high
    c01 = {v.id: v for v in claims.judge(mid, tmp_path)}["C01"]
    # the claim reads the finding: C01's cached-memcpy context row is the memcpy finding
    context = {c.label: c for c in c01.context}
    assert any(c.measured == memcpy.value for c in context.values())


def test_unsaved_results_and_a_new_run_are_read(tmp_path: Path, yard: Result) -> None:
    mid = machine.machine_id(machine.fingerprint(include_git=False))
    before = findings.get("yardstick_memcpy_64kib_median_ns", tmp_path, mid)
    assert not before.measured
    fresh = findings.get("yardstick_memcpy_64kib_median_ns", tmp_path, mid, results=[yard])
    assert fresh.measured and "unsaved" in fresh.run_id
    _store(yard, tmp_path)  # the cache sees the new run folder
    stored = findings.get("yardstick_memcpy_64kib_median_ns", tmp_path, mid)
    assert stored.measured and stored.value == fresh.value


def test_a_run_older_than_the_definition_is_not_measured_not_an_error(tmp_path: Path) -> None:
    old = Result("yardsticks", {"repeats": 2}, {},
                 {"repeats": pd.DataFrame({"yardstick": ["memcpy_64kib"] * 2,
                                           "repeat": [0, 1], "ns": [1.0, 2.0]})})
    mid, _ = _store(old, tmp_path)
    q = findings.get("yardstick_memcpy_64kib_median_ns", tmp_path, mid)
    assert not q.measured and "cannot give it" in (q.missing or "")


def test_headline_cells_name_their_findings(tmp_path: Path) -> None:
    values = headline.cells(tmp_path, "no-such-machine")
    named = values[values.quantity != ""]  # a kernel thread's switch cell names none
    assert set(named.quantity) <= set(findings.REGISTRY)
    assert len(set(named.quantity)) == len(named) == len(values) - 2


def test_a_printed_finding_keeps_its_span_through_nbconvert(tmp_path: Path) -> None:
    q = findings.Quantity("yardstick_memcpy_64kib_median_ns", 612.7, "ns",
                         "median over repeats")
    text = f"It took **{findings.span(q)}** here."
    assert findings.span(q) == ('<span data-quantity="yardstick_memcpy_64kib_median_ns" '
                                'data-value="613">613 ns</span>')
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("display(Markdown(text))")
    cell.outputs = [nbformat.v4.new_output("display_data", data={"text/markdown": text})]
    nb.cells = [nbformat.v4.new_markdown_cell("# A page"), cell]
    source = tmp_path / "01_page.ipynb"
    nbformat.write(nb, str(source))
    (tmp_path / "html").mkdir()
    page = render.render_notebook(source, tmp_path / "html").read_text(encoding="utf-8")
    assert marks.marked(page) == [("yardstick_memcpy_64kib_median_ns", "613", "613 ns")]


def test_two_values_for_one_finding_are_a_conflict() -> None:
    a = findings.tag("echo_pinned_rate_mean_per_s", "657,627", "657,627 iterations/s")
    b = findings.tag("echo_pinned_rate_mean_per_s", "665,284", "665,284 iterations/s")
    assert marks.conflicts({"04.html": a, "06.html": a}) == {}
    clash = marks.conflicts({"04.html": a, "06.html": b})
    assert list(clash) == ["echo_pinned_rate_mean_per_s"]


# --- one vocabulary ------------------------------------------------------------------------

def test_the_claims_layer_and_the_index_share_the_verdict_classes() -> None:
    assert claims.CLASSES == vocabulary.CLASSES
    assert set(render.TALLY_COLOURS) == set(vocabulary.CLASSES)
    judged = {c for c in vocabulary.CLASSES if c != vocabulary.NOT_RUN}
    assert all(vocabulary.verdict_colour(c) != vocabulary.GREY for c in judged)


def test_index_tally_chips_carry_their_class_colours(tmp_path: Path) -> None:
    """The committed AMD folder judged: every chip coloured as its class (none grey but
    'not run here')."""
    index = render.render_index([], tmp_path, data_dir=REPO / "data",
                                machine_id="x86_64-amd-epyc-2cpu-24g-kvm-7003449b")
    text = index.read_text(encoding="utf-8")
    chips = re.findall(r'<li style="background:(#[0-9a-f]+)"><b>\d+</b> ([^<]+)</li>', text)
    assert len(chips) >= 3, text[:2000]
    for colour, name in chips:
        assert name in vocabulary.CLASSES and colour == vocabulary.verdict_colour(name)
    assert any(colour != vocabulary.GREY for colour, _ in chips)
