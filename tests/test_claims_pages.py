"""A claim has one verdict wherever the paper shows it: page 06, each notebook's claims
section (judged with the runs that notebook holds) and the index's tally, also when the
paper is drawn from the stored runs of a machine other than the one drawing it
(``threadcost paper --machine ID``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from threadcost import claims, paths
from threadcost.experiments import specs
from threadcost.host import machine
from threadcost.measured.runs import Runs
from threadcost.paper import summary as paper_summary
from threadcost.store import datastore

DATA = paths.REPO_ROOT / "data"


def _other_machine() -> str:
    """A committed machine folder with runs, measured on another host than this one."""
    here = machine.machine_id()
    folders = sorted(p.name for p in DATA.iterdir() if p.is_dir() and p.name != "published")
    for name in folders:
        if name != here and datastore.list_runs(data_dir=DATA, machine_id=name):
            return name
    pytest.skip("no committed machine folder of another host")


def _newest(runs: Runs) -> dict[str, Any]:
    """Each experiment's newest run read back, as a notebook drawn from the store holds it."""
    newest: dict[str, datastore.Run] = {}
    for run in runs.runs:
        newest[run.experiment] = run
    return {name: run.result() for name, run in newest.items()}


def _shown(verdicts: list[claims.ClaimVerdict]) -> dict[str, tuple[str, ...]]:
    return {v.id: (v.verdict, v.label, *(a.verdict for a in v.assertions))
            for v in verdicts}


@pytest.fixture(scope="module")
def other() -> tuple[str, dict[str, tuple[str, ...]]]:
    mid = _other_machine()
    return mid, _shown(claims.judge(mid, DATA))


def test_every_page_shows_one_verdict_per_claim(
        other: tuple[str, dict[str, tuple[str, ...]]]) -> None:
    mid, page06 = other
    assert mid != machine.machine_id()
    results = _newest(Runs.load(mid, DATA))
    notebooks = sorted({e.notebook for e in specs.experiments() if e.notebook})
    for stem in notebooks:  # each notebook's section judges with its own runs
        held = [results[e.name] for e in specs.of_notebook(stem) if e.name in results]
        if held:
            assert _shown(claims.judge(mid, DATA, held)) == page06, stem
    assert _shown(claims.judge(mid, DATA, list(results.values()))) == page06


def test_the_index_tally_counts_page_06s_verdicts(
        other: tuple[str, dict[str, tuple[str, ...]]]) -> None:
    mid, page06 = other
    verdicts = claims.judge(mid, DATA)
    assert paper_summary.verdict_tally(DATA, mid) == claims.tally(verdicts)
    table = paper_summary.claim_verdicts(DATA, mid)
    assert dict(zip(table.claim_id, table.verdict_class, strict=True)) == {
        cid: shown[0] for cid, shown in page06.items()}


def test_another_machines_runs_are_never_refused_for_this_hosts_fingerprint(
        other: tuple[str, dict[str, tuple[str, ...]]], tmp_path: Path) -> None:
    """The reported bug: a notebook's results judged with this host's fingerprint made
    every other stored run of the machine drawn "another host", so C19 read "not run
    here" on one page and had a verdict on the next."""
    mid, page06 = other
    results = _newest(Runs.load(mid, DATA))
    some = [r for name, r in results.items() if name.startswith("brigade")] or \
        list(results.values())[:1]
    verdicts = claims.judge(mid, DATA, some)
    assert not any("not pooled" in v.reason or "not pooled" in a.reason
                   for v in verdicts for a in v.assertions)
    assert _shown(verdicts) == page06


# ------------------------------------------------------------ as a reader sees them

def test_a_value_and_its_interval_share_one_precision() -> None:
    from dataclasses import replace

    from threadcost.claims import logic
    from threadcost.claims.model import AssertionVerdict

    base = AssertionVerdict("x", 1.0, None, None, "ratio", 5, "supported", {}, "")
    assert logic.measured_text(replace(base, ci_low=0.9999, ci_high=1.012)) == \
        "1.00 [1.00, 1.01]"
    assert logic.measured_text(replace(base, measured=-0.021, ci_low=-0.042,
                                       ci_high=0.00053)) == "-0.0210 [-0.0420, 0.0005]"
    rate = replace(base, measured=3_276_063, ci_low=3_230_667, ci_high=3_321_460,
                   unit="iterations/s")
    assert logic.measured_text(rate) == "3.28 million iterations/s [3.23, 3.32]"
    assert logic.tolerance_text(0.9, 1.1, "ratio") == "0.90 to 1.10"


def test_up_front_words_sit_only_above_an_inconclusive_reading() -> None:
    for v in claims.judge(_other_machine(), DATA):
        if v.up_front:
            assert any(a.verdict == "inconclusive" for a in v.assertions), v.id


def test_a_why_is_a_more_elementary_quantity_never_the_same_one_again() -> None:
    """A 64 KiB copy explains only a copy; the pinned pipe echo and switch are explained
    by the empty system call (a more elementary quantity), never by the copy nor by the
    pipe hand-off measured again in another run (the same quantity)."""
    verdicts = {v.id: v for v in claims.judge(_other_machine(), DATA)}
    for v in verdicts.values():
        for a in v.assertions:
            for w in a.why:
                if "memcpy_64kib_cold" in w.yardsticks:
                    assert "memcpy" in a.text, (v.id, a.text)
    for a in verdicts["C03"].as_published + verdicts["C01"].as_published:
        if "pinned to one CPU" in a.text:
            for w in a.why:
                assert "pipe_switch_pinned" not in w.yardsticks, a.text
                assert w.text == "unexplained" or "syscall" in w.yardsticks, a.text


def test_claims_tables_show_words_not_identifiers() -> None:
    from threadcost.views import claims as view

    verdicts = claims.judge(_other_machine(), DATA)
    frame = view.assertions_table(verdicts)
    assert len(frame.columns) <= 7
    text = repr(view.style(frame)) + view.style(frame)._repr_html_()
    for raw in ("same-cpu", "vsz_kib", "threadcost.reserve", "['", "64kib", "e+0"):
        assert raw not in text, raw
    assert set(frame["reading"]) <= {"as published", "shape", "as published, by a substitute",
                                     "shape, by a substitute"}
    assert not frame["assertion"].str.startswith(("As published", "Shape", "Why")).any()
