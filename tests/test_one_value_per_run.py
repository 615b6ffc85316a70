"""A page prints one value per quantity: where a table or a sentence shows the runs a
verdict judges, it prints the verdict's statistic (the claim's reading, marked with the
reading's name), or names a different statistic so it reads as a different quantity.

Read from the committed reference machine's stored runs (data/): nothing is measured.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from threadcost import claims, findings
from threadcost.findings import marks
from threadcost.results import Result
from threadcost.store import datastore
from threadcost.views import tables

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "data"
MACHINE = "x86_64-amd-epyc-2cpu-24g-kvm-1650d2c6"


@pytest.fixture(scope="module", autouse=True)
def _reference_machine() -> Any:
    findings.use_machine(MACHINE)
    yield
    findings.use_machine(None)


def _stored(experiment: str) -> Result:
    run = datastore.latest_run(experiment, DATA, MACHINE)
    assert run is not None, experiment
    return run.result()


def _reading(claim_id: str, words: str, result: Result) -> Any:
    got = claims.measure(claim_id, words, MACHINE, DATA, [result])
    assert getattr(got, "value", None) is not None, (claim_id, words, got)
    return got


def _marked(html: str) -> dict[str, str]:
    return {name: value for name, value, _ in marks.marked(html)}


def test_the_placement_table_prints_the_verdicts_readings() -> None:
    """Page 04: the table of pinned/unpinned pairs printed medians (2,585 ns) beside C01's
    mean (2,763 ns); it prints C01's and C02's readings, under their names."""
    from threadcost.views import context_switch

    placed = _stored("context_switch_placement")
    table = context_switch.placement_table(placed, MACHINE, DATA)
    assert all("mean" in c or "geometric mean" in c for c in table.columns if c != "pairs")
    shown = _marked(tables.show(table.reset_index())._repr_html_())
    for mech in ("pipe", "condvar"):
        for claim_id, words in (("C01", f"One {mech} switch, both threads pinned"),
                                ("C02", f"One {mech} switch, unpinned"),
                                ("C02", f"{mech.capitalize()}: unpinned switch / pinned")):
            got = _reading(claim_id, words, placed)
            name = claims.reading_name(claim_id, words)
            assert name in shown, (name, sorted(shown))
            assert shown[name] == claims.logic.numbers(got.value)[0]


def test_c11_prose_prints_the_judged_means_not_medians() -> None:
    """Page 05: S1's program's wall, user, system time and max RSS per goroutine are C11's
    readings (means over the runs); the start time is a median and says so."""
    from threadcost.views import million

    c11 = _stored("goroutines_million")
    text = million.goroutines_text(c11, MACHINE, DATA)
    shown = _marked(text)
    for column, words in million.C11_READINGS.items():
        got = _reading("C11", words, c11)
        name = claims.reading_name("C11", words)
        assert shown.get(name) == claims.logic.numbers(got.value)[0], (column, shown)
    # the medians of the same columns of S1's program are not printed beside them
    assert not [n for n in shown if n.startswith("million_goroutines_s1_program_")
                and "spawn" not in n], shown
    assert "(median of the runs)" in text
    assert "is the statistic C11" not in (million.goroutines_text.__doc__ or "")


def test_s8_table_and_prose_print_the_same_means() -> None:
    """Page 08: S8's table printed medians (10.8 / 222 / 164 ns) beside the prose's means
    (10.9 / 224 / 165 ns); it prints the fiber_gap findings the prose prints."""
    from threadcost.views import more_sources

    gap = _stored("fiber_gap")
    table_html = more_sources.gap_table(gap)._repr_html_()
    prose = more_sources.gap_text(gap, None)
    in_table, in_prose = _marked(table_html), _marked(prose)
    for what in ("asm", "ucontext", "sigprocmask"):
        name = f"fiber_gap_{what}_mean_ns"
        assert in_table.get(name) and in_table[name] == in_prose.get(name), (name, in_table)
    assert "(median)" not in table_html
    # S9's table of every mechanism gives the fiber rows the same means
    rows = more_sources.all_switch_rows(_stored("switch_counts"), gap, None, None)
    asm = rows[rows.mechanism == "fiber, hand-written switch"]["per switch, ns"].iloc[0]
    assert findings.number(asm, "auto") == in_prose["fiber_gap_asm_mean_ns"]


def test_s10_table_names_its_statistic_beside_c33s_mean() -> None:
    """Page 08: S10's table is medians (a mean moves with one repeat's outlier); its
    columns say so, and the prose prints C33's mean as a mean."""
    from threadcost.views import more_sources

    ind = _stored("indirect_cost")
    html = more_sources.indirect_table(ind)._repr_html_()
    assert "c2 per switch, µs (median over repeats)" in html
    judged = _reading("C33", "direct cost", ind)
    text = more_sources.indirect_text(ind, judged)
    assert "mean over" in text and "median over repeats, as in the table" in text


def test_s5_runtimes_are_printed_in_s5s_unit_as_c18_and_c20_judge_them() -> None:
    """Page 07: the summary printed the Rust peer's net per hop as a median trip / (N+1)
    (15.3 µs) while C18 judged the mean trip / 500 (15,613 ns); the findings the summary
    prints now are C18's and C20's readings."""
    from threadcost.findings import brigade

    peer = _stored("peer_brigade")
    for claim_id, words, kind in (
            ("C18", "Rust thread brigade, 500 tasks, unpinned: net", "rust-thread"),
            ("C20", "net", "tokio-task")):
        got = _reading(claim_id, words, peer)
        q = findings.get(brigade.peer_name(kind, "unpinned"), DATA, MACHINE)
        assert q.value == pytest.approx(got.value, rel=1e-9), (kind, q.value, got.value)
    gross = _reading("C18", "mean time per task per trip, socket-pair I/O included", peer)
    hop = brigade.peer_hop(peer.tables["runs"], "rust-thread", brigade.S5_TASKS, "unpinned")
    assert hop is not None and hop[0] == pytest.approx(gross.value, rel=1e-9)


def test_the_goroutine_batch_is_placed_against_the_median_as_the_data_show() -> None:
    """Page 05: the batch's mean (0.33 µs) lies below the launches' median (0.45 µs), so
    no slow launch can be what sets it apart; the text says where it lies."""
    from threadcost.views import goroutines

    launch = _stored("goroutine_launch")
    text = goroutines.launch_text(launch, _stored("goroutine_pinning"))
    batch = findings.of_results("launch_goroutine_batch_mean_ns", [launch]).value
    median = findings.of_results("launch_goroutine_median_ns", [launch]).value
    assert batch is not None and median is not None
    assert ("below the median" in text) == (batch < median)
    assert "rare launch that waited" not in text


def test_tables_name_their_units_and_spreads() -> None:
    """Page 04's perf cross-check names its unit; page 02's kernel memory per thread per
    stack size carries its spread over the runs, never a bare noisy median."""
    from threadcost.views import context_switch, thread_memory

    perf = context_switch.perf_rounds_table(_stored("context_switch_perf_check"))
    assert list(perf.columns) and all(c.endswith("(ns)") for c in perf.columns)
    assert list(perf.index) == list(range(1, len(perf) + 1))
    stack = thread_memory.stack_table(_stored("thread_memory_stack"))
    kernel = [c for c in stack.columns if c.startswith("kernel per thread")]
    assert kernel == ["kernel per thread (KiB, median [min to max] of runs)"]
    assert all(re.fullmatch(r"[\d.,]+ \[[\d.,]+ to [\d.,]+\]", v) for v in stack[kernel[0]])
    assert "default" in stack.index


def test_a_stored_cap_bound_reads_in_words() -> None:
    from threadcost.experiments.user_space_tasks.million import CAP_WORDS
    from threadcost.views import million

    run = _stored("threads_ceiling")
    text = million.threads_text(run)
    assert "(parameter)" not in text
    if run.summary.get("count_bound") == "cap (parameter)":
        assert f"set by {CAP_WORDS}" in text
