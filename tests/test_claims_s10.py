"""S10's claim (C33) on constructed ``indirect_cost`` runs: the growth reading takes the
largest array within the last-level cache at the smallest stride, and a repeat whose
cost per switch is at or below zero is never dropped: the reading says why it is not
judged (no run of the kernel here; test_more_sources.py runs it)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from threadcost import claims
from threadcost.claims.model import INCONCLUSIVE, NOT_RUN, SUPPORTED
from threadcost.results import Result

LLC_KIB = 32768
SHAPE = "The total cost per switch grows"
Pairs = list[tuple[float, float]]


def _run(per_hop: dict[tuple[int, int], Pairs]) -> Result:
    """(array KiB, stride) -> per repeat (single, switch) ns per hop; the no-array point
    is (0, smallest stride), as indirect_cost stores it."""
    rows = []
    for (kib, stride), pairs in per_hop.items():
        for rep, (single, switch) in enumerate(pairs):
            rows.append({"repeat": rep, "array_kib": kib, "stride_bytes": stride,
                         "single": single, "switch": switch,
                         "switches_per_round_trip": 2.0})
    points = pd.DataFrame(rows)
    points["c2_ns"] = points["switch"] - points["single"]
    direct = points[points.array_kib == 0].set_index("repeat").c2_ns
    points["c1_ns"] = points.repeat.map(direct)
    points["indirect_ns"] = points.c2_ns - points.c1_ns
    runs = pd.DataFrame([{"repeat": r.repeat, "array_kib": r.array_kib,
                          "stride_bytes": r.stride_bytes, "mode": mode, "hops": 10,
                          "ns_per_hop": getattr(r, mode), "voluntary": 10, "involuntary": 0}
                         for r in points.itertuples() for mode in ("single", "switch")])
    kibs = sorted(set(points.array_kib))
    params = {"array_kib": kibs, "strides": sorted(set(points.stride_bytes)),
              "repeats": int(points.repeat.max()) + 1, "cpu": 0, "target_accesses": 2_000_000,
              "llc_kib": LLC_KIB}
    return Result("indirect_cost", params, {"llc_kib": LLC_KIB},
                  {"runs": runs, "points": points,
                   "syscall": pd.DataFrame({"ns_per_call": [170.0] * 20})})


def _shape(tmp_path: Path, result: Result) -> claims.AssertionVerdict:
    c33 = {v.id: v for v in claims.judge(None, tmp_path, [result])}["C33"]
    return next(a for a in c33.assertions if a.text.startswith(SHAPE))


def _sweep(at_16m_stride_8: Pairs) -> dict[tuple[int, int], Pairs]:
    five = range(5)
    return {(0, 8): [(700.0 + i, 2600.0 + i) for i in five],
            (256, 8): [(14_000.0 + i, 17_000.0 + i) for i in five],
            (256, 128): [(1_900.0 + i, 4_000.0 + i) for i in five],
            (16384, 8): at_16m_stride_8,
            (16384, 128): [(430_000.0 + i, 700_000.0 + i) for i in five],
            (65536, 8): [(4_600_000.0 + i, 3_600_000.0 + i) for i in five]}  # past the LLC


def test_growth_reads_the_largest_array_in_the_cache_at_the_smallest_stride(
        tmp_path: Path) -> None:
    got = _shape(tmp_path, _run(_sweep([(880_000.0 + i, 905_000.0 + 3 * i) for i in range(5)])))
    assert got.verdict == SUPPORTED
    assert got.setup["array_kib"] == 16384 and got.setup["stride_bytes"] == 8
    assert got.repeats == 5
    assert 10 < got.measured < 15  # (905,000 - 880,000) / 1,900, about 13


def test_a_negative_cost_in_every_repeat_says_why_instead_of_not_run(tmp_path: Path) -> None:
    # the committed reference run before the walk was shared: alone slower than switching
    got = _shape(tmp_path, _run(_sweep([(1_167_934.0 + i, 889_539.0) for i in range(5)])))
    assert got.verdict == INCONCLUSIVE and got.verdict != NOT_RUN
    assert "every repeat" in got.reason and "did not time the same work" in got.reason
    assert "1,167,936 ns per hop alone" in got.reason  # the median, in the reading's words
    assert "no positive finite ratio" not in got.reason


def test_a_negative_repeat_is_never_dropped(tmp_path: Path) -> None:
    pairs = [(880_000.0, 905_000.0)] * 4 + [(960_000.0, 905_000.0)]  # one repeat disturbed
    got = _shape(tmp_path, _run(_sweep(pairs)))
    assert got.verdict == INCONCLUSIVE
    assert "1 of 5 repeats" in got.reason and "bias" in got.reason
    assert got.repeats == 5


def test_a_direct_cost_at_or_below_zero_is_named(tmp_path: Path) -> None:
    sweep = _sweep([(880_000.0 + i, 905_000.0) for i in range(5)])
    sweep[(0, 8)] = [(2_600.0, 2_600.0), *sweep[(0, 8)][1:]]
    got = _shape(tmp_path, _run(sweep))
    assert got.verdict == INCONCLUSIVE and "direct cost c1" in got.reason
