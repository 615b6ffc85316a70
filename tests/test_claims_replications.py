"""The claims that read the replication experiments and the brigade, on constructed runs.

Each test builds the tables an experiment stores (no C runs), hands them to
``claims.judge`` as unsaved results, and checks the verdict: inside, outside,
straddling the tolerance, too few repeats, missing, not run. The values are
chosen relative to each claim's tolerance (read from the catalogue), never from
a measurement.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from tests.test_claims_readings import _yardsticks
from tests.test_claims_s4 import VARIANTS as S4_VARIANTS
from tests.test_claims_s4 import sleepers_run
from threadcost import claims, paths
from threadcost.claims import catalogue
from threadcost.claims.records import s5
from threadcost.results import Result

REFERENCE = "x86_64-amd-epyc-2cpu-24g-kvm-7003449b"
ALL_IDS = [f"C{i:02d}" for i in range(1, 26)] + [f"C{i}" for i in range(30, 36)]  # + S6, S7-S12


def _judge(tmp_path: Path, *results: Result) -> dict[str, claims.ClaimVerdict]:
    return {v.id: v for v in claims.judge(None, tmp_path, list(results))}


def _tolerance(claim_id: str, index: int = 0) -> tuple[float | None, float | None]:
    claim = next(c for c in catalogue.CLAIMS if c.id == claim_id)
    a = claim.readings()[index][1]
    return a.low, a.high


def _inside(a: claims.AssertionVerdict) -> bool:
    assert a.measured is not None
    return ((a.low is None or a.measured >= a.low)
            and (a.high is None or a.measured <= a.high))


def _consistent(verdicts: dict[str, claims.ClaimVerdict]) -> None:
    """No assertion supported outside its tolerance nor contradicted inside it, and every
    judged timing assertion rests on >= 5 repeats."""
    for claim in verdicts.values():
        for a in claim.assertions:
            if a.verdict == "supported":
                assert _inside(a), (claim.id, a.text)
                assert a.ci_low is not None and a.ci_high is not None
                assert (a.low is None or a.ci_low >= a.low) and (
                    a.high is None or a.ci_high <= a.high)
            if a.verdict == "contradicted":
                assert not _inside(a), (claim.id, a.text)
            if a.verdict in ("supported", "contradicted") and a.timing:
                assert a.repeats >= 5, (claim.id, a.text)


# --- C13 / C14: cpu_bound ------------------------------------------------------------------

def _cpu_bound(wall_ratio: list[float], sys_threads: float = 0.2, sys_ratio: float = 8.0,
               spread: float = 0.0) -> Result:
    rows = []
    for rep, r in enumerate(wall_ratio):
        for ws in ("none", "own"):
            for mode in ("threads", "processes"):
                wall = 2.0 * (r if mode == "processes" and ws == "none" else 1.0)
                sys = sys_threads * (sys_ratio * (1 + spread * (rep % 2 - 0.5))
                                     if mode == "processes" else 1.0)
                rows.append({"repeat": rep, "mode": mode, "working_set": ws, "wall_s": wall,
                             "whole_sys_s": sys if ws == "own" else 0.01,
                             "dtlb_misses": 1e6 * (5 if mode == "processes" else 1)})
    params = {"tasks": 5, "limit": 12000, "ws_limit": 1000, "ws_ints": 1_000_000,
              "working_sets": ["none", "own"], "modes": ["threads", "processes"],
              "repeats": len(wall_ratio), "cpu": 0}
    return Result("cpu_bound", params, {"perf": {"dtlb_misses": "available"}},
                  {"runs": pd.DataFrame(rows)})


def test_c13_inside_outside_straddling_and_too_few(tmp_path: Path) -> None:
    lo, hi = _tolerance("C13")
    assert (lo, hi) == (pytest.approx(0.99), pytest.approx(1.01))
    inside = _judge(tmp_path, _cpu_bound([1.0, 1.001, 0.999, 1.0, 1.002]))["C13"]
    # the cpu_bound experiment is a C rewrite of S3's Go programs: a labelled substitute
    assert inside.verdict == "substitute" and inside.assertions[0].verdict == "supported"
    assert inside.assertions[0].setup["working_set"] == "none"
    assert "C rewrite of S3's Go programs" in (inside.assertions[0].substitute or "")
    outside = _judge(tmp_path, _cpu_bound([1.10, 1.12, 1.11, 1.09, 1.10]))["C13"]
    assert outside.label == "substitute, contradicted"
    # a stand-in is the legend's "substitute" whatever it gave, inconclusive included
    straddle = _judge(tmp_path, _cpu_bound([0.97, 1.03, 0.98, 1.04, 1.0]))["C13"]
    assert straddle.verdict == "substitute" and straddle.label == "substitute, inconclusive"
    few = _judge(tmp_path, _cpu_bound([1.0, 1.0]))["C13"]
    assert few.verdict == "substitute" and ">= 5" in few.assertions[0].reason
    for v in (inside, outside, straddle, few):
        _consistent({"C13": v})


def test_c14_judged_only_with_enough_ticks(tmp_path: Path) -> None:
    big = _judge(tmp_path, _cpu_bound([1.0] * 5, sys_threads=0.5, sys_ratio=8.0,
                                      spread=0.1))["C14"]
    (shape,) = big.shape  # processes / threads: "much more"
    assert shape.verdict == "supported"
    assert "S3: 0.74 s vs 0.084 s" in shape.how
    assert big.context and big.context[0].measured == pytest.approx(5.0)  # dTLB ratio
    few_ticks = _judge(tmp_path, _cpu_bound([1.0] * 5, sys_threads=0.001))["C14"]
    assert few_ticks.shape[0].verdict == "inconclusive"
    assert "tick" in few_ticks.shape[0].reason
    zero = _judge(tmp_path, _cpu_bound([1.0] * 5, sys_threads=0.0))["C14"]
    assert zero.shape[0].verdict == "inconclusive" and "tick" in zero.shape[0].reason


# --- C15 / C17: S4's program on the peers (tests/test_claims_s4.py) -------------------------


# --- C11 / C10: one million goroutines, the thread ceiling ----------------------------------

def _million(per_goroutine: float, count: int = 1_000_000) -> Result:
    rows = [{"variant": v, "count": count, "max_rss_kib_per_goroutine": per_goroutine,
             "max_rss_kib": per_goroutine * count, "wall_s": 2.0, "user_s": 10.0,
             "sys_s": 1.0} for v in ("as_published", "all_at_once")]
    return Result("goroutines_million", {"count": count, "sleep_ms": 1000},
                  {"skipped": None}, {"runs": pd.DataFrame(rows)})


def test_c11_million_run_skip_and_small_count(tmp_path: Path) -> None:
    ok = _judge(tmp_path, _million(2.1))["C11"]
    rss, wall = ok.as_published[0], ok.as_published[1]
    assert rss.verdict == "supported" and rss.substitute is None
    assert rss.setup["goroutines"] == 1_000_000
    assert wall.measured == pytest.approx(2.0)  # S1's program: wall
    assert wall.verdict == "inconclusive" and wall.power and not wall.power["resolves"]
    far = _judge(tmp_path, _million(4.0))["C11"]
    assert far.as_published[0].verdict == "contradicted"
    assert far.as_published[0].why  # a cause, or "unexplained"
    small = _judge(tmp_path, _million(2.1, count=2000))["C11"]
    assert small.verdict == "inconclusive" and "not S1's" in small.as_published[0].reason
    assert small.as_published[1].measured is None  # not a one-million wall time
    skipped = Result("goroutines_million", {"count": 1_000_000, "sleep_ms": 1000},
                     {"skipped": "needs about 3.8 GiB; MemAvailable is 1.0 GiB"}, {})
    not_run = _judge(tmp_path, skipped)["C11"]
    assert not_run.verdict == "not run here" and "MemAvailable" in not_run.reason


def test_c10_reads_the_measured_count_and_labels_the_million_computed(tmp_path: Path) -> None:
    measured = pd.DataFrame([{"threads": 8000, "finished": 8000, "wall_s": 1.2, "user_s": 0.1,
                              "sys_s": 0.5, "rss_growth_kib": 8000 * 8.4,
                              "vsz_growth_kib": 8000 * 2052.0, "rss_kib_per_thread": 8.4,
                              "vsz_kib_per_thread": 2052.0}])
    scaled = pd.DataFrame([{"quantity": q, "value": v, "unit": u,
                            "label": "computed (scaled x125 from 8,000 measured threads)"}
                           for q, v, u in (("rss_kib", 8.4e6, "KiB"), ("vsz_kib", 2.05e9, "KiB"),
                                           ("user_s", 12.5, "s"), ("sys_s", 62.5, "s"))])
    res = Result("threads_ceiling", {"cap": 8000, "stack_kib": 2048, "sleep_ms": 1000,
                                     "count": 8000, "bound": "cap (parameter)"}, {},
                 {"measured": measured, "scaled": scaled})
    c10 = _judge(tmp_path, res)["C10"]
    vsz, rss, million, times = c10.as_published[:4]
    assert vsz.verdict == "supported" and vsz.setup["threads"] == 8000
    assert rss.verdict == "supported" and "cap (parameter)" in rss.setup["count set by"]
    assert times.verdict == "computed" and "scaled" in times.how
    assert million.verdict in ("computed", "not run here")


# --- C04 / C02: repeated pairs ----------------------------------------------------------------

def _pairs(gains: list[float]) -> Result:
    rows = []
    for rep, g in enumerate(gains):
        base = 3e6
        rows.append({"repeat": rep, "mode": "default", "round_trips_per_s": base,
                     "switch_ns_batch": 1e9 / base / 2})
        rows.append({"repeat": rep, "mode": "gomaxprocs1_pinned",
                     "round_trips_per_s": base * (1 + g),
                     "switch_ns_batch": 1e9 / (base * (1 + g)) / 2})
    return Result("goroutine_pinning", {"repeats": len(gains), "iterations": 200_000},
                  {"skipped": None}, {"runs": pd.DataFrame(rows)})


def test_c04_pairs(tmp_path: Path) -> None:
    assert _judge(tmp_path, _pairs([0.10, 0.11, 0.09, 0.10, 0.10, 0.1, 0.1]))["C04"].verdict \
        == "supported"
    assert _judge(tmp_path, _pairs([-0.05, -0.04, -0.06, -0.05, -0.05]))["C04"].verdict \
        == "contradicted"
    assert _judge(tmp_path, _pairs([-0.2, 0.3, -0.1, 0.25, 0.0]))["C04"].verdict \
        == "inconclusive"
    c04 = _judge(tmp_path, _pairs([0.1, 0.1, 0.1]))["C04"]
    assert c04.verdict == "inconclusive" and ">= 5" in c04.assertions[0].reason


def _placement(ratio: float, repeats: int = 5) -> Result:
    rows = []
    for rep in range(repeats):
        for mech in ("pipe", "condvar"):
            for place, ns in (("same-cpu", 1500.0), ("unpinned", 1500.0 * ratio
                                                     * (1 + 0.01 * (rep % 2)))):
                rows.append({"repeat": rep, "mechanism": mech, "placement": place,
                             "round_trip_ns": 2 * ns, "switch_ns": ns})
    return Result("context_switch_placement",
                  {"mechanisms": ["pipe", "condvar"], "placements": ["same-cpu", "unpinned"],
                   "tasks": "threads", "repeats": repeats}, {}, {"repeats": pd.DataFrame(rows)})


def test_c02_pairs_are_not_a_substitute(tmp_path: Path) -> None:
    ok = _judge(tmp_path, _placement(1.6))["C02"]
    assert ok.verdict == "supported" and ok.assertions[0].substitute is None
    assert ok.assertions[0].repeats == 5  # 5 pairs of each mechanism, pooled
    assert _judge(tmp_path, _placement(1.0))["C02"].verdict == "contradicted"


# --- the brigade (C18-C23) --------------------------------------------------------------------

def _brigade(per_hop: dict[tuple[str, str], float], tasks: tuple[int, ...] = (100, 500),
             repeats: int = 5) -> Result:
    rows = []
    for rep in range(repeats):
        for n in tasks:
            for (kind, placement), ns in per_hop.items():
                rows.append({"kind": kind, "tasks": n, "placement": placement,
                             "repeat": rep, "trips": 300,
                             "per_hop_ns_p50": ns * (1 + 0.01 * (rep % 3)),
                             "per_hop_ns_mean": ns * (1 + 0.01 * (rep % 3))})
    memory = pd.DataFrame([
        {"kind": k, "placement": "unpinned", "runs": 5 * len(tasks), "max_tasks": max(tasks),
         "rss_per_task_kib": r, "rss_ci95_low": r * 0.95, "rss_ci95_high": r * 1.05,
         "kernel_per_task_kib": kk, "kernel_ci95_low": kk - 0.5, "kernel_ci95_high": kk + 0.5}
        for k, r, kk in (("thread", 9.5, 11.0), ("goroutine", 0.45, 0.5),
                         ("one-thread", 0.0, 1.0), ("epoll", 0.0, 1.0))])
    return Result("brigade", {"tasks": list(tasks), "repeats": repeats, "iterations": 300},
                  {}, {"runs": pd.DataFrame(rows), "memory": memory})


CONVERGED = {("thread", "unpinned"): 3600.0, ("goroutine", "unpinned"): 3400.0,
             ("epoll", "unpinned"): 2000.0, ("one-thread", "unpinned"): 1800.0,
             ("thread", "same-cpu"): 3400.0, ("goroutine", "same-cpu"): 3000.0,
             ("epoll", "same-cpu"): 2000.0, ("one-thread", "same-cpu"): 1800.0}


def test_brigade_claims_on_constructed_runs(tmp_path: Path) -> None:
    got = _judge(tmp_path, _brigade(CONVERGED))
    _consistent(got)
    net = got["C18"].as_published[0]  # measured as S5 measured it: never "computed"
    assert net.verdict == "supported" and net.setup["tasks"] == 500
    assert net.measured == pytest.approx(3600.0 * 1.01 - 1800 * 1.01, rel=0.02)
    c20 = got["C20"]
    assert c20.shape[1].setup["tasks"] == 500 and c20.shape[1].verdict == "supported"
    assert c20.as_published[0].substitute  # goroutines stand in for Tokio tasks
    assert got["C21"].shape[0].verdict == "supported"  # 3400 / 3400
    assert got["C22"].shape[0].verdict == "supported"  # 9.5 / 0.45
    # S5 counted slab (slabtop): read from notebook 02's slab slope, not the brigade's
    # wider count (kernel stack + page tables + slab), which is context
    assert "thread memory" in got["C22"].as_published[1].reason
    assert got["C22"].context[0].measured == pytest.approx(10.0)  # 11 - 1 KiB
    assert got["C23"].finding and got["C23"].id not in claims.tally(list(got.values()))
    assert got["C23"].verdict == "supported"
    # a cell where a user-space kind is slower: C23 contradicted
    slow = {**CONVERGED, ("epoll", "same-cpu"): 5000.0}
    assert _judge(tmp_path, _brigade(slow))["C23"].verdict == "contradicted"


def test_brigade_without_500_tasks_says_so(tmp_path: Path) -> None:
    got = _judge(tmp_path, _brigade(CONVERGED, tasks=(2, 20, 100), repeats=1))
    assert got["C20"].verdict == "not run here" and "not S5's 500" in got["C20"].reason
    assert got["C23"].verdict == "inconclusive"  # 1 repeat: not judged


# --- whole-catalogue behaviour --------------------------------------------------------------

def test_judge_lists_every_claim_on_an_old_run_only(tmp_path: Path) -> None:
    ref = paths.REPO_ROOT / "data" / REFERENCE
    olds = sorted(ref.glob("*-echo-*")) if ref.is_dir() else []
    if not olds:
        pytest.skip("the committed reference run is not in this checkout")
    target = tmp_path / REFERENCE
    target.mkdir()
    shutil.copytree(olds[0], target / olds[0].name)
    verdicts = claims.judge(REFERENCE, tmp_path)
    assert [v.id for v in verdicts] == ALL_IDS
    by = {v.id: v for v in verdicts}
    assert by["C13"].verdict == "not run here" and "cpu bound" in by["C13"].reason
    assert by["C15"].verdict == "not run here" and "sleepers run" in by["C15"].reason
    # each mechanism is read from its own pairs, never from the echo
    assert by["C02"].verdict == "not run here"
    assert "context switch placement" in by["C02"].reason
    _consistent(by)


def test_judge_lists_every_claim_on_the_reference() -> None:
    data = paths.REPO_ROOT / "data"
    if not (data / REFERENCE).is_dir():
        pytest.skip("the committed reference run is not in this checkout")
    verdicts = {v.id: v for v in claims.judge(REFERENCE, data)}
    assert list(verdicts) == ALL_IDS
    _consistent(verdicts)


@pytest.mark.parametrize("seed", range(5))
def test_random_constructed_runs_never_disagree_with_their_numbers(tmp_path: Path,
                                                                   seed: int) -> None:
    rng = np.random.default_rng(seed)
    ratios = list(rng.normal(1.0, 0.05, 5))
    gains = list(rng.normal(0.1, 0.08, 6))
    per_hop: dict[tuple[str, str], Any] = {k: v * rng.uniform(0.5, 2.0)
                                           for k, v in CONVERGED.items()}
    _consistent(_judge(tmp_path, _cpu_bound(ratios, sys_threads=rng.uniform(0, 0.5)),
                       _pairs(gains), _brigade(per_hop),
                       sleepers_run(scale={k: rng.uniform(0.7, 1.3) for k in S4_VARIANTS})))


# --- S5 on its own runtimes: the Rust peer (peer_brigade, peer_runtimes) ------------------

def _peer_brigade(per_task: dict[tuple[str, str], float], repeats: int = 5,
                  mean: bool = True, transport: str | None = None,
                  beside: dict[tuple[str, str], float] | None = None) -> Result:
    """peer_brigade's runs table at 500 tasks; ``mean``: False is a run stored before the
    peer kept the mean trip (median only); ``transport``: the column's value (None: a run
    stored before the column, pipes); ``beside``: pipe rows stored next to them."""
    rows = []
    sets = [(per_task, transport)] + ([(beside, "pipe")] if beside else [])
    for rep in range(repeats):
        for (kind, placement), ns, link in [(k, v, t) for d, t in sets for k, v in d.items()]:
            trip = ns * 500 * (1 + 0.01 * (rep % 3))
            row = {"repeat": rep, "kind": kind, "placement": placement, "tasks": 500,
                   "trips": 300, "trip_p50_ns": trip, "per_hop_ns_p50": trip / 501,
                   "bytes_wrong": 0, "rss_growth_kib": 500}
            if link is not None:
                row["transport"] = link
            if mean:
                row.update(trip_mean_ns=trip, per_task_ns_mean=trip / 500)
            rows.append(row)
    return Result("peer_brigade", {"tasks": [500], "iterations": 300, "repeats": repeats,
                                   "kinds": sorted({k for k, _ in per_task})},
                  {"skipped": None}, {"runs": pd.DataFrame(rows)})


def _peer_runtimes(thread_ns: float, tokio_ns: float, repeats: int = 5) -> Result:
    def kind(ns: float, rss: float) -> dict[str, Any]:
        each = [ns * (1 + 0.01 * (r % 3)) for r in range(repeats)]
        return {"not_run": None, "switch_ns_batch": float(np.median(each)),
                "switch_ns_batch_repeats": each,
                "memory": {"tasks": 1000, "per_task_rss_kib": rss}}
    return Result("peer_runtimes", {"iterations": 10_000, "cpu": 0, "repeats": repeats},
                  {"kinds": {"rust-thread": kind(thread_ns, 9.5),
                             "tokio-task": kind(tokio_ns, 0.4)}, "cpu": 0},
                  {"samples": pd.DataFrame(columns=["kind", "what", "ns"])})


# S5's published shape: thread 5.3 unpinned, 3.4 pinned, Tokio 3.6, the one-thread 1.8 µs
S5_LIKE = {("rust-thread", "unpinned"): 5313.0, ("rust-thread", "same-cpu"): 3417.0,
           ("tokio-task", "unpinned"): 3589.0, ("tokio-task", "same-cpu"): 3500.0,
           ("one-thread", "unpinned"): 1800.0, ("one-thread", "same-cpu"): 1800.0}
S5_READINGS = [("C18", "as_published", 0), ("C18", "as_published", 1),
               ("C20", "as_published", 0), ("C20", "as_published", 1),
               ("C20", "shape", 0), ("C20", "shape", 1),
               ("C21", "as_published", 0), ("C21", "shape", 0)]


def _reading(v: dict[str, claims.ClaimVerdict], cid: str, kind: str, i: int
             ) -> claims.AssertionVerdict:
    return getattr(v[cid], kind)[i]


# S5's program as S5 ran it: socket pairs and Tokio's default multi-thread runtime
S5_AS_RUN = {(k.replace("tokio-task", "tokio-task-mt"), p): v for (k, p), v in S5_LIKE.items()}
TOKIO_READINGS = {("C20", "as_published", 0), ("C20", "as_published", 1), ("C20", "shape", 0),
                  ("C20", "shape", 1), ("C21", "shape", 0)}


def test_s5_brigade_as_s5_ran_it_is_no_substitute(tmp_path: Path) -> None:
    """Socket pairs and the multi-thread runtime stored: every brigade reading is like for
    like (no stand-in), read from the socketpair rows, not from the pipe rows beside them."""
    slow_pipes = {k: 3 * v for k, v in S5_AS_RUN.items()}
    got = _judge(tmp_path, _brigade(CONVERGED),
                 _peer_brigade(S5_AS_RUN, transport="socketpair", beside=slow_pipes))
    _consistent(got)
    for cid, kind, i in S5_READINGS:
        a = _reading(got, cid, kind, i)
        assert a.substitute is None, (cid, kind, i, a.substitute)
        assert a.setup["experiment"] == "peer_brigade", (cid, kind, i)
        assert a.setup["channel"] == "Unix socket pairs (S5's)", (cid, kind, i)
        assert "multi-thread" in a.setup["Tokio runtime"], (cid, kind, i)
    gross = _reading(got, "C18", "as_published", 1)
    assert gross.measured == pytest.approx(5313.0 * 1.01, rel=0.02)  # not the pipes' 3x
    for cid, kind, i in [("C18", "as_published", 1), ("C20", "as_published", 0),
                         ("C21", "as_published", 0), ("C20", "shape", 0),
                         ("C21", "shape", 0)]:
        assert _reading(got, cid, kind, i).verdict == "supported", (cid, kind, i)


def test_s5_brigade_on_pipes_and_current_thread_says_what_differs(tmp_path: Path) -> None:
    """Only pipes and the current_thread runtime stored: the readings name both stand-ins,
    the thread readings only the pipes."""
    got = _judge(tmp_path, _brigade(CONVERGED), _peer_brigade(S5_LIKE, transport="pipe"))
    for cid, kind, i in S5_READINGS:
        a = _reading(got, cid, kind, i)
        assert a.substitute and s5.PIPES in a.substitute, (cid, kind, i)
        assert (s5.TOKIO_CT in a.substitute) == ((cid, kind, i) in TOKIO_READINGS), \
            (cid, kind, i, a.substitute)
        assert a.setup["channel"].startswith("pipes"), (cid, kind, i)


def test_s5_brigade_reads_the_rust_peer_when_stored(tmp_path: Path) -> None:
    got = _judge(tmp_path, _brigade(CONVERGED), _peer_brigade(S5_LIKE))
    _consistent(got)
    for cid, kind, i in S5_READINGS:
        a = _reading(got, cid, kind, i)
        # a run stored before the transport column: pipes, said so
        assert a.substitute and a.substitute.startswith(s5.PIPES), (cid, kind, i)
        assert a.setup["experiment"] == "peer_brigade", (cid, kind, i)
        assert "mean trip / 500 tasks" in a.how, (cid, kind, i)
        assert a.repeats == 5
    net = _reading(got, "C18", "as_published", 0)
    assert "one-thread brigade of the same repeat" in net.how  # the peer's own baseline
    # S5's own numbers, stored as the peer stores them, support S5's readings
    for cid, kind, i in [("C18", "as_published", 1), ("C20", "as_published", 0),
                         ("C21", "as_published", 0), ("C20", "shape", 0),
                         ("C21", "shape", 0)]:
        assert _reading(got, cid, kind, i).verdict == "supported", (cid, kind, i)


def test_s5_brigade_without_the_peer_falls_back_labelled(tmp_path: Path) -> None:
    got = _judge(tmp_path, _brigade(CONVERGED))
    for cid, kind, i in S5_READINGS:
        a = _reading(got, cid, kind, i)
        assert a.substitute and "no Rust peer" in a.substitute, (cid, kind, i)
        assert a.setup.get("experiment") != "peer_brigade"


def test_s5_old_peer_run_reads_its_median_and_the_c_baseline_labelled(tmp_path: Path) -> None:
    """A peer run stored before the mean and the one-thread mode: its median stands in
    (said so) and the net subtracts the C brigade's one-thread brigade (said so)."""
    old = {k: v for k, v in S5_LIKE.items() if k[0] != "one-thread"}
    got = _judge(tmp_path, _brigade(CONVERGED), _peer_brigade(old, mean=False))
    net = _reading(got, "C18", "as_published", 0)
    assert net.substitute == s5.PIPES and net.setup["experiment"] == "peer_brigade"  # a thread
    assert "median stands in for S5's mean" in net.how
    assert "C brigade's one-thread mean" in net.how
    assert "brigade" in net.run_id and ";" in net.run_id  # both runs named
    converge = _reading(got, "C20", "shape", 1)
    assert converge.substitute == f"{s5.PIPES}; {s5.TOKIO_CT}"
    assert "taken as a constant" in converge.how
    # with neither baseline stored the net reading is not run, the gross one is read
    alone = _judge(tmp_path, _peer_brigade(old))
    assert _reading(alone, "C18", "as_published", 0).verdict == "not run here"
    assert _reading(alone, "C18", "as_published", 1).setup["experiment"] == "peer_brigade"


def test_s5_switch_and_memory_read_the_peer_runtimes(tmp_path: Path) -> None:
    got = _judge(tmp_path, _peer_runtimes(1700.0, 200.0))
    _consistent(got)
    switch = got["C19"].as_published[0]
    assert switch.substitute is None and switch.setup["experiment"] == "peer_runtimes"
    assert switch.setup["kind"] == "tokio-task" and switch.repeats == 5
    assert switch.verdict == "supported"  # 200 ns against S5's 0.2 µs
    ratio = got["C19"].shape[0]
    assert ratio.substitute is None and ratio.repeats == 5 and ratio.verdict == "supported"
    tokio_rss = got["C22"].as_published[2]
    assert tokio_rss.substitute is None and tokio_rss.setup["kind"] == "tokio-task"
    # a run stored before the repeats: one repeat, so the timings are not judged
    one = _judge(tmp_path, _peer_runtimes(1700.0, 200.0, repeats=1))
    assert one["C19"].as_published[0].verdict == "inconclusive"


def test_s5_switch_and_memory_without_the_peer_fall_back_labelled(tmp_path: Path) -> None:
    got = _judge(tmp_path, _brigade(CONVERGED))
    assert got["C22"].as_published[2].substitute  # the C brigade's epoll loop
    assert "no Rust peer" in (got["C22"].as_published[2].substitute or "")


# --- S5's "I don't know why": unpinning, the wake-ups across CPUs, the pinned hop's parts ---

def _counted(run: Result, cross_share: dict[str, float],
             cpu_ns: dict[str, float] | None = None) -> Result:
    """``run`` with its Rust-thread rows' wake-ups across CPUs counted (share of the hops
    per placement) and, pinned, the CPU time of the timed trips (ns per task per trip of
    user, system and off the CPU)."""
    rows = run.tables["runs"].copy()
    thread = rows.kind == "rust-thread"
    hops = rows.trips * (rows.tasks + 1)
    rows["cross_cpu_hops"] = np.where(thread, (rows.placement.map(cross_share) * hops).round(),
                                      np.nan)
    per = rows.trips * rows.tasks
    pinned = thread & (rows.placement == "same-cpu")
    for col, ns in ({"user": 0.0, "system": 0.0, "off_cpu": 0.0} | (cpu_ns or {})).items():
        rows[col] = np.where(pinned, ns * per, np.nan)
    rows["cpu_user_ns"], rows["cpu_system_ns"] = rows.user, rows.system
    rows["timed_wall_ns"] = rows.user + rows.system + rows.off_cpu
    return Result("peer_brigade", run.params, run.summary,
                  {"runs": rows.drop(columns=["user", "system", "off_cpu"])})


# the yardsticks' pipe hand-off: across two CPUs (the partner idle) and on one
WAKE_UPS = {"wakeup_cross_cpu": 8000.0, "pipe_switch_pinned": 2000.0}


def _intercore(got: dict[str, claims.ClaimVerdict]) -> claims.AssertionVerdict:
    return next(a for a in got["C21"].shape if "unpinned ones" in a.text)


def test_s5_unpinning_is_put_down_to_the_wake_ups_that_cross_cpus(tmp_path: Path) -> None:
    """S5's 5,313 vs 3,417 ns a task, with 32% of the unpinned hops crossing CPUs at 6,000 ns
    extra each: the crossings account for about all the added time, named as the cause."""
    got = _judge(tmp_path, _brigade(CONVERGED), _yardsticks(WAKE_UPS),
                 _counted(_peer_brigade(S5_AS_RUN, transport="socketpair"),
                          {"unpinned": 0.32, "same-cpu": 0.0}))
    _consistent(got)
    a = _intercore(got)
    assert a.verdict == "supported" and a.quote and "I don't know why" in a.quote
    (why,) = a.why
    assert why.explains and why.text.startswith("wake-ups across CPUs")
    share = why.yardsticks["peer_brigade_cross_cpu_wakeups_share_of_unpinning_pct"]
    assert 50 <= share <= 150
    assert why.yardsticks["peer_brigade_rust_thread_cross_cpu_unpinned_mean_pct"] == \
        pytest.approx(32, rel=0.01)


def test_s5_crossings_that_cover_most_of_the_unpinning_name_the_rest(tmp_path: Path) -> None:
    """20% of the unpinned hops crossing CPUs account for most, not all, of S5's added
    1.9 µs: still the cause, and the part no measured quantity covers is named."""
    got = _judge(tmp_path, _brigade(CONVERGED), _yardsticks(WAKE_UPS),
                 _counted(_peer_brigade(S5_AS_RUN, transport="socketpair"),
                          {"unpinned": 0.2, "same-cpu": 0.0}))
    (why,) = _intercore(got).why
    share = why.yardsticks["peer_brigade_cross_cpu_wakeups_share_of_unpinning_pct"]
    assert 50 <= share < 90
    assert why.explains and why.text.startswith("wake-ups across CPUs")
    rest = why.text.rpartition("; no quantity measured here accounts for the other ")[2]
    assert rest.endswith("%") and float(rest[:-1]) == pytest.approx(100 - share, abs=0.1)


def test_s5_unpinning_that_the_crossings_do_not_cover_stays_unexplained(
        tmp_path: Path) -> None:
    """Almost no hop crosses CPUs, yet unpinning adds S5's 1.9 µs: the share they account
    for is given with the numbers, and the rest is said to be unexplained."""
    got = _judge(tmp_path, _brigade(CONVERGED), _yardsticks(WAKE_UPS),
                 _counted(_peer_brigade(S5_AS_RUN, transport="socketpair"),
                          {"unpinned": 0.001, "same-cpu": 0.0}))
    (why,) = _intercore(got).why
    assert not why.explains and why.text.startswith("unexplained: ")
    assert "no quantity measured here accounts for the rest" in why.text


def test_s5_no_pinned_advantage_where_the_brigade_stays_on_one_cpu(tmp_path: Path) -> None:
    """Pinned as fast as unpinned, and no unpinned hop crossed CPUs: pinning had nothing to
    remove, which is the why of the difference from S5."""
    same = {k: (S5_AS_RUN[("rust-thread", "unpinned")] if k == ("rust-thread", "same-cpu")
                else v) for k, v in S5_AS_RUN.items()}
    got = _judge(tmp_path, _brigade(CONVERGED), _yardsticks(WAKE_UPS),
                 _counted(_peer_brigade(same, transport="socketpair"),
                          {"unpinned": 0.0, "same-cpu": 0.0}))
    a = _intercore(got)
    assert a.verdict == "contradicted"
    (why,) = a.why
    assert why.explains and why.text.startswith("few wake-ups cross CPUs here")


def test_s5_a_slower_pinned_brigade_names_the_part_of_its_hop_that_grew(
        tmp_path: Path) -> None:
    """A pinned hop of 8,400 ns against S5's 3,417, its user time and its time off the CPU
    as S5's /bin/time had them and its system time 5,000 ns dearer: the kernel's part."""
    slow = {**S5_AS_RUN, ("rust-thread", "same-cpu"): 8400.0}
    got = _judge(tmp_path, _brigade(CONVERGED), _yardsticks({"syscall": 100.0}),
                 _counted(_peer_brigade(slow, transport="socketpair"),
                          {"unpinned": 0.3, "same-cpu": 0.0},
                          {"user": 952.0, "system": 7436.0, "off_cpu": 12.0}))
    a = got["C21"].as_published[0]
    assert a.verdict == "contradicted"
    split = a.why[0]
    assert split.explains and "the kernel's own time" in split.text
    assert split.yardsticks["peer_brigade_rust_thread_one_cpu_system_mean_ns"] == \
        pytest.approx(7436)
    assert "(published 2,475 ns)" in split.text
