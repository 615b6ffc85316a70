"""The claims layer: verdict rules on constructed inputs, and the reference data."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from threadcost import claims, paths
from threadcost.claims import catalogue, logic
from threadcost.claims.model import CLASSES, Assertion, Claim
from threadcost.measured.measurement import Measurement, Missing
from threadcost.measured.runs import Runs

REFERENCE = "x86_64-amd-epyc-2cpu-24g-kvm-7003449b"


def _assertion(low: float | None, high: float | None, got: Measurement | Missing,
               timing: bool = False, **kw: object) -> Assertion:
    return Assertion("x is about 1", "ratio", low, high, lambda runs: got, timing=timing,
                     **kw)  # type: ignore[arg-type]


def _judge(a: Assertion) -> str:
    return logic.judge_assertion(a, Runs("none", ())).verdict


@pytest.mark.parametrize(("lo", "hi", "expected"), [
    (0.95, 1.05, "supported"),      # inside
    (1.30, 1.40, "contradicted"),   # outside, above
    (0.10, 0.20, "contradicted"),   # outside, below
    (0.85, 1.05, "inconclusive"),   # straddles the low bound
    (0.95, 1.25, "inconclusive"),   # straddles the high bound
])
def test_interval_against_tolerance(lo: float, hi: float, expected: str) -> None:
    got = Measurement((lo + hi) / 2, "ratio", lo, hi, repeats=5)
    assert _judge(_assertion(0.9, 1.1, got)) == expected


def test_one_sided_tolerance() -> None:
    assert _judge(_assertion(None, 1.0, Measurement(0.5, "ratio", 0.4, 0.6))) == "supported"
    assert _judge(_assertion(1.1, None, Measurement(0.5, "ratio", 0.4, 0.6))) == "contradicted"


def test_timing_needs_five_repeats() -> None:
    few = Measurement(1.0, "ratio", 0.99, 1.01, repeats=4)
    verdict = logic.judge_assertion(_assertion(0.9, 1.1, few, timing=True), Runs("none", ()))
    assert verdict.verdict == "inconclusive"
    assert ">= 5" in verdict.reason
    enough = Measurement(1.0, "ratio", 0.99, 1.01, repeats=5)
    assert _judge(_assertion(0.9, 1.1, enough, timing=True)) == "supported"


def test_missing_measurement_is_not_run_with_reason() -> None:
    verdict = logic.judge_assertion(_assertion(0.9, 1.1, Missing("no Go toolchain")),
                                    Runs("none", ()))
    assert verdict.verdict == "not run here"
    assert verdict.reason == "no Go toolchain"
    assert verdict.measured is None


def test_selector_error_becomes_not_run() -> None:
    def broken(runs: Runs) -> Measurement:
        raise KeyError("column")

    a = Assertion("x", "ratio", 0.9, 1.1, broken)
    assert logic.judge_assertion(a, Runs("none", ())).verdict == "not run here"


def test_known_cause_turns_a_miss_into_not_reproduced() -> None:
    got = Measurement(1.02, "ratio", 1.02, 1.02, repeats=3)
    a = _assertion(0.5, 0.8, got, known_cause=lambda runs, m: "kernel >= 6.2")
    verdict = logic.judge_assertion(a, Runs("none", ()))
    assert (verdict.verdict, verdict.reason) == ("not reproduced", "kernel >= 6.2")
    inside = _assertion(0.5, 0.8, Measurement(0.6, "ratio", 0.6, 0.6),
                        known_cause=lambda runs, m: "kernel >= 6.2")
    assert _judge(inside) == "supported"


def test_computed_is_never_judged() -> None:
    got = Measurement(32_000, "threads", computed=True)
    assert _judge(_assertion(1e6, None, got)) == "computed"


def test_claim_that_cannot_run() -> None:
    claim = Claim("C99", (_assertion(0.9, 1.1, Missing("needs one million threads")),))
    verdict = logic.judge_claim(claim, Runs("none", ()), "S9", "a claim")
    assert verdict.verdict == "not run here"
    assert verdict.reason == "needs one million threads"
    assert verdict.as_dict()["verdict"] == "not run here (needs one million threads)"


def test_claim_combines_its_assertions() -> None:
    ok = _assertion(0.9, 1.1, Measurement(1.0, "ratio", 1.0, 1.0))
    bad = _assertion(0.9, 1.1, Measurement(2.0, "ratio", 2.0, 2.0))
    unsure = _assertion(0.9, 1.1, Measurement(1.0, "ratio", 0.5, 1.5))
    none = Runs("none", ())
    assert logic.judge_claim(Claim("C", (ok, ok)), none, "S", "c").verdict == "supported"
    assert logic.judge_claim(Claim("C", (ok, bad)), none, "S", "c").verdict == "contradicted"
    assert logic.judge_claim(Claim("C", (ok, unsure)), none, "S", "c").verdict == "inconclusive"
    stand_in = _assertion(0.9, 1.1, Measurement(1.0, "ratio", 1.0, 1.0), substitute="other")
    assert logic.judge_claim(Claim("C", (stand_in,)), none, "S", "c").verdict == "substitute"


def test_every_published_claim_is_declared_once() -> None:
    ids = [c.id for c in catalogue.CLAIMS]
    assert len(ids) == len(set(ids))
    assert set(ids) == set(claims.claims().claim_id)


def test_every_source_is_cited() -> None:
    cited = claims.sources()
    assert set(claims.claims().source) <= set(cited.key)
    assert (cited.author != "").all() and (cited.title != "").all()


def test_empty_data_folder_lists_every_claim_as_not_run(tmp_path: Path) -> None:
    verdicts = claims.judge("nowhere", tmp_path)
    assert [v.id for v in verdicts] == sorted(claims.claims().claim_id)
    assert {v.verdict for v in verdicts} == {"not run here"}
    assert all(v.reason for v in verdicts)
    assert sum(claims.tally(verdicts).values()) == len([v for v in verdicts if not v.finding])


@pytest.fixture(scope="module")
def reference() -> list[claims.ClaimVerdict]:
    if not (paths.REPO_ROOT / "data" / REFERENCE).is_dir():
        pytest.skip("the committed reference run is not in this checkout")
    return claims.judge(REFERENCE, paths.REPO_ROOT / "data")


def _inside(a: claims.AssertionVerdict) -> bool:
    assert a.measured is not None
    return ((a.low is None or a.measured >= a.low)
            and (a.high is None or a.measured <= a.high))


def test_reference_verdicts_agree_with_their_numbers(reference: list[claims.ClaimVerdict]) -> None:
    ids = [c.id for c in reference]
    assert ids[:23] == [f"C{i:02d}" for i in range(1, 24)]
    assert ids == sorted(claims.claims().claim_id)  # C30.. (sources S7-S12) follow
    for claim in reference:
        assert claim.verdict in CLASSES
        for a in claim.assertions:
            if a.verdict == "supported":
                assert _inside(a), (claim.id, a.text)
            if a.verdict == "contradicted":
                assert not _inside(a), (claim.id, a.text)
            if a.verdict in ("supported", "contradicted") and a.timing:
                assert a.repeats >= 5


def test_reference_specific_readings(reference: list[claims.ClaimVerdict]) -> None:
    by_id = {c.id: c for c in reference}
    assert by_id["C06"].verdict == "not reproduced"
    assert "6.2" in by_id["C06"].reason
    c10 = by_id["C10"].assertions
    # C10 reads S1's Rust threads from the Rust peer; a run stored before the peer
    # falls back to C threads with Rust's 2 MiB stacks
    assert c10[0].setup.get("kind") == "rust-thread" or c10[0].setup["stack_kib"] == 2048
    assert c10[2].verdict == "computed"
    assert all(a.setup.get("allocator") == "malloc" for a in by_id["C07"].assertions)
    assert by_id["C13"].assertions[0].low == pytest.approx(0.99)
    assert by_id["C14"].verdict != "supported"
    assert by_id["C04"].assertions[0].verdict in ("supported", "contradicted", "inconclusive")


def test_unsaved_results_stand_in_for_stored_runs(tmp_path: Path) -> None:
    from threadcost.experiments.context_switch import yardsticks

    result = yardsticks.run(repeats=2, batches=3, scale=0.05)
    (c01,) = [v for v in claims.judge(None, tmp_path, [result]) if v.id == "C01"]
    (a,) = c01.shape  # switch / uncached memcpy, both from the yardsticks just run
    assert a.repeats == 2 and "unsaved" in a.run_id
    assert a.measured is not None and a.measured > 0
    assert a.verdict == "inconclusive" and ">= 5" in a.reason  # 2 repeats: not judged


def test_tables_are_readable(reference: list[claims.ClaimVerdict]) -> None:
    from threadcost.views import claims as view

    for frame in (view.tally_table(reference), view.overview_table(reference),
                  view.assertions_table(reference), view.context_table(reference)):
        assert not frame.empty
        assert not frame.isna().any().any()
        text = frame.astype(str).to_string()
        assert "nan" not in text.lower().split() and "None" not in text
        assert "e+" not in text and "e-0" not in text


def _stages(vsz_grow: int, rss_alloc: int, rss_touch: int) -> object:

    return pd.DataFrame({"stage": ["before", "after_alloc", "after_touch", "after_free"],
                         "vsz_kib": [1000, 1000 + vsz_grow, 1000 + vsz_grow, 1000],
                         "rss_kib": [500, 500 + rss_alloc, 500 + rss_touch, 500]})


def test_selectors_match_setup_not_recency(tmp_path: Path) -> None:
    """C07 reads the malloc run even when an mmap run is newer, and pools malloc runs."""
    from threadcost.host import machine
    from threadcost.results import Result
    from threadcost.store import datastore

    fp = machine.fingerprint(include_git=False)
    mib = 400  # S0's allocation: the as-published reading reads only this workload
    kib = mib * 1024
    def run(allocator: str, touch: int) -> Result:
        return Result("malloc_touch", {"mib": mib, "allocator": allocator, "points": 2,
                                       "touch_fraction": 1.0}, {},
                      {"stages": _stages(kib, 0, touch)})
    datastore.save_run(run("malloc", kib), tmp_path, fp)
    datastore.save_run(run("malloc", kib), tmp_path, fp)
    newest = datastore.save_run(run("mmap", kib // 2), tmp_path, fp)  # wrong setup
    (c07,) = [v for v in claims.judge(machine.machine_id(fp), tmp_path) if v.id == "C07"]
    touch = c07.assertions[2]
    assert touch.setup["allocator"] == "malloc"
    assert touch.repeats == 2 and touch.measured == pytest.approx(kib)
    assert touch.verdict == "supported"
    assert newest.name not in touch.run_id
