"""A reviewer's audit of the whys, on the committed reference runs: a why never cites the
quantity its reading judges, every empty system call a why prints is its named finding
with one statistic, each mechanism is explained by its own runs, and verdict words keep
the legend's.

Values are read from the stored runs by the claims layer and the findings; no test
computes a value of its own to compare with."""

from __future__ import annotations

import math
import re
from dataclasses import replace

import pytest

from threadcost import claims, findings, paths
from threadcost.claims import readings, whys
from threadcost.claims.model import AssertionVerdict, ClaimVerdict
from threadcost.measured.runs import Runs

DATA = paths.REPO_ROOT / "data"
REFERENCE = "x86_64-amd-epyc-2cpu-24g-kvm-1650d2c6"


@pytest.fixture(scope="module")
def reference() -> dict[str, ClaimVerdict]:
    if not (DATA / REFERENCE).is_dir():
        pytest.skip(f"the committed machine folder {REFERENCE} is not in data/")
    return {v.id: v for v in claims.judge(REFERENCE, DATA)}


@pytest.fixture(scope="module")
def runs() -> Runs:
    if not (DATA / REFERENCE).is_dir():
        pytest.skip(f"the committed machine folder {REFERENCE} is not in data/")
    return Runs.load(REFERENCE, DATA)


def _whys(reference: dict[str, ClaimVerdict]) -> list[tuple[str, AssertionVerdict]]:
    return [(cid, a) for cid, c in reference.items() for a in c.assertions
            if any(w.text != "unexplained" for w in a.why)]


def test_a_why_never_cites_the_quantity_it_explains(
        reference: dict[str, ClaimVerdict]) -> None:
    """C32's why once printed the loop's own count (10 switches per iteration) as its
    yardstick: the number explained by itself. Every yardstick a why names differs from
    the reading's measured value."""
    checked = 0
    for cid, a in _whys(reference):
        for w in a.why:
            for name, value in w.yardsticks.items():
                checked += 1
                assert a.measured is None or not math.isclose(
                    value, a.measured, rel_tol=1e-6), (cid, a.text, name, value)
    assert checked >= 10


def test_c32_gives_the_yieldless_count_as_context_not_a_cause(
        reference: dict[str, ClaimVerdict]) -> None:
    """The loop counted without its yields and its counters split are C32's own kind of
    quantity (switches the kernel counted): context for an "unexplained", never a
    cause (the run counts no sched_yield call)."""
    c32 = reference["C32"]
    plain = c32.shape[0]  # the futex ping-pong without sched_yield: its own reading
    for a in c32.as_published[:2]:
        (why,) = a.why
        assert not why.explains and why.yardsticks == {}
        assert why.text.startswith(whys.UNEXPLAINED_BY) and "For context, not a cause" in why.text
        assert f"without its sched_yield calls makes {plain.measured:.2f} switches" in why.text


def test_every_empty_system_call_a_why_or_context_row_prints_is_one_finding(
        reference: dict[str, ClaimVerdict], runs: Runs) -> None:
    """One quantity, one value, one statistic: every why (C01, C03, C21, C33) and context
    row (C32) that prints "an empty system call" prints the yardsticks run's finding,
    the median over repeats (robust to one disturbed repeat), naming its call. C33's why
    once printed the indirect-cost run's call (164 ns), C32's context row the switch-count
    run's, beside the yardsticks' 177 ns."""
    yard = findings.compute("yardstick_syscall_median_ns", runs)
    assert yard.statistic == whys.SYSCALL_STATISTIC
    shown = f"{findings.number(yard.value)} ns"
    seen = 0
    for cid, c in reference.items():
        for a in c.assertions:
            for w in a.why:
                if "empty system call" not in w.text:
                    continue
                seen += 1
                assert whys.SYSCALL_STATISTIC in w.text and "mean over" not in w.text, cid
                assert w.yardsticks.get("syscall") == yard.value, (cid, w.text)
                assert re.findall(r"empty system call \(getppid\) costs ([\d,.]+ ns)", w.text) == [
                    shown], (cid, w.text)
        for r in c.context:
            if "empty system call" in r.label and r.unit == "ns":
                seen += 1
                assert r.measured == yard.value, (cid, r.label)
                assert whys.SYSCALL_STATISTIC in r.label, (cid, r.label)
    assert seen >= 5
    assert reference["C33"].as_published[0].why[0].yardsticks["syscall"] == yard.value


def test_a_pinned_switch_in_system_calls_is_printed_once(
        reference: dict[str, ClaimVerdict]) -> None:
    """C01's why printed "15.7 of them" (C01's switch / the mean call) and page 06's
    context row 16.5 (the yardsticks' own switch / the call, paired by repeat): the same
    words, two values. The why no longer counts the switch in calls; the context row,
    which says whose switch and how it is paired, is the one value."""
    for cid, c in reference.items():
        for a in c.assertions:
            for w in a.why:
                assert " of them" not in w.text, (cid, w.text)
    rows = [r for r in reference["C01"].context if r.unit == "empty system calls"]
    assert len(rows) == 1 and "paired by repeat" in rows[0].label


def test_c21_brigade_hop_is_unexplained_and_not_put_on_s0(
        reference: dict[str, ClaimVerdict]) -> None:
    (why,) = reference["C21"].as_published[0].why
    assert why.text.startswith("unexplained: ") and not why.explains
    assert "one switch," not in why.text and "S0" not in why.text


def test_c34_gives_its_decomposition_as_context_not_a_cause(
        reference: dict[str, ClaimVerdict]) -> None:
    """The slowdown split by the kernel switches locking adds, and the pipe hand-off
    yardsticks, are a hand-off's time: C34's own kind of quantity. The why says
    "unexplained" and gives them as a decomposition."""
    (why,) = reference["C34"].as_published[0].why
    assert not why.explains and why.text.startswith(whys.UNEXPLAINED_BY)
    assert "As a decomposition, not a cause" in why.text
    assert "on one CPU" in why.text and "across two, idle" in why.text
    assert "price of a thread switch" not in why.text and "wake-ups, the" not in why.text


def test_not_reproduced_reads_the_legends_words(
        reference: dict[str, ClaimVerdict]) -> None:
    """C06: the kernel's RSS counting keeps the published effect from showing here: the
    legend's "not reproducible on this machine", never a word of its own."""
    for a in reference["C06"].assertions:
        assert a.words.startswith("not reproducible on this machine"), a.words
    reading = reference["C06"].as_published[0]
    shape = replace(reading, kind="shape")
    assert readings.words(shape) == "not reproducible on this machine"


def test_c31_why_is_the_gap_finding_and_names_the_call_it_costs(
        reference: dict[str, ClaimVerdict], runs: Runs) -> None:
    """The gap in rt_sigprocmask calls is the finding page 08 prints (one definition:
    the gap of the means / the mean call), and the why says what the call costs here."""
    (why,) = reference["C31"].as_published[0].why
    gap = findings.compute("fiber_gap_over_sigprocmask_mean_ratio", runs)
    assert list(why.yardsticks.values()) == [gap.value]
    assert f"{gap.value:.2f} empty rt_sigprocmask" in why.text
    assert "rt_sigprocmask call costs" in why.text and "mean over repeats" in why.text


def test_the_cross_machine_cell_labels_the_call_and_whose_switch_it_reads(
        runs: Runs) -> None:
    """The claims-across-machines cell prints the same call as the whys (its statistic
    said), and names the yardsticks run's switch, which is not C01's reading."""
    from threadcost.claims import properties

    cell = properties.syscall(runs)
    assert cell is not None
    assert f"({whys.SYSCALL_STATISTIC})" in cell and "the yardsticks' pinned switch" in cell


LEGEND = ("holds here", "differs here: ", "inconclusive here", "not reproducible on this "
          "machine", "not run here: ", "computed here, not measured")
SHAPE_LEGEND = ("holds", "differs here: ", "fails", "inconclusive here",
                "not reproducible on this machine", "not run here: ")


def test_every_reading_speaks_the_legends_words(
        reference: dict[str, ClaimVerdict]) -> None:
    """No fourth word ("underpowered here", "not reproduced here", "no verdict: ..."): C30's
    relation, measured but not judged, reads "not run here: <why>"."""
    for cid, c in reference.items():
        for a in c.assertions:
            legend = SHAPE_LEGEND if a.kind == "shape" else LEGEND
            assert a.words.startswith(legend), (cid, a.kind, a.words)
            assert "underpowered here" not in a.words and "not reproduced here" not in a.words
    (c30,) = reference["C30"].assertions
    assert c30.words.startswith("not run here: Figure 1's words")


def test_the_machines_normalisation_divides_by_the_call_the_whys_print(runs: Runs) -> None:
    """Page 06's normalisation by one empty system call uses the whys' statistic (the
    median over repeats): on a folder of one yardsticks run, the very value the whys print."""
    from threadcost.views import across_machines

    got = across_machines.yardstick(DATA, REFERENCE)
    assert got is not None
    stored = [r for r in runs.matching("yardsticks")]
    if len(stored) != 1:
        pytest.skip("the reference folder holds more than one yardsticks run")
    assert got[1] == pytest.approx(findings.compute("yardstick_syscall_median_ns", runs).value)
    assert "the median over the repeats" in across_machines.yardstick_text(DATA, [REFERENCE])


def test_a_condvar_switch_is_not_explained_by_pipe_calls(
        reference: dict[str, ClaimVerdict]) -> None:
    """One mechanism at a time: the pipe's write and read appear beside pipe readings (a
    pipe switch, the echo, the brigade's pipe hops), never beside the condvar switch."""
    for cid, a in _whys(reference):
        for w in a.why:
            if "syscall" not in w.yardsticks:
                continue
            pipe_reading = "pipe" in a.text.lower() or "per task per trip" in a.text
            assert ("pipe_write_read" in w.yardsticks) == pipe_reading, (cid, a.text)
            assert ("pipe write and read" in w.text) == pipe_reading, (cid, a.text)
    condvar = [a for a in reference["C01"].as_published if "condvar" in a.text]
    assert condvar and all("pipe" not in w.text for a in condvar for w in a.why)
