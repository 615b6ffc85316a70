"""Goroutine launch and C04's interleaved pinning runs (the Go peer), or their reason."""

from __future__ import annotations

import pytest

from threadcost import ParameterError
from threadcost.experiments.user_space_tasks import goroutines as peers
from threadcost.runsafety import leakcheck


def test_goroutine_launch_counts_every_launch() -> None:
    r = peers.launch_run(iterations=500, warmup=50)
    if r.summary["skipped"]:
        assert "Go" in r.summary["skipped"] or "go" in r.summary["skipped"]
        return
    s = r.summary
    assert s["launched"] == s["expected_launches"] == 50 + 2 * 500
    assert s["gomaxprocs"] == 1 and s["affinity"] == [r.params["cpu"]]
    assert s["launch_ns"]["n"] == 500 == len(r.tables["samples"])
    assert 0 < s["launch_ns"]["min"] <= s["launch_ns"]["p50"] <= s["launch_ns"]["max"]
    assert s["batch_launch_ns"] > 0


def test_pinning_runs_alternate_and_pair() -> None:
    r = peers.pinning_run(repeats=3, iterations=2000, warmup=100)
    if r.summary["skipped"]:
        return
    runs = r.tables["runs"]
    assert len(runs) == 6
    assert list(runs["mode"]) == ["gomaxprocs1_pinned", "default", "default",
                                  "gomaxprocs1_pinned", "gomaxprocs1_pinned", "default"]
    assert (runs[runs["mode"] == "gomaxprocs1_pinned"]["gomaxprocs"] == 1).all()
    gain = r.tables["gain"]
    assert list(gain["pairs"]) == [3, 3]
    assert (gain.ci95_low <= gain.gain_mean).all() and (gain.gain_mean <= gain.ci95_high).all()


@pytest.mark.parametrize("call", [
    lambda: peers.launch_run(iterations=0),
    lambda: peers.launch_run(warmup=-1),
    lambda: peers.pinning_run(repeats=1),
    lambda: peers.pinning_run(iterations=10),
])
def test_bad_parameters_are_refused(call) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ParameterError):
        call()


def test_nothing_left_behind() -> None:
    assert not leakcheck.check(lambda: peers.launch_run(iterations=100, warmup=10),
                               warmup=1, repeat=1)
