"""The malloc-touch kernel through the Python API: invariants with honest bounds."""

from __future__ import annotations

import pytest

from threadcost import ParameterError
from threadcost.experiments.malloc_touch import run as malloc_touch

MIB = 64
KIB = MIB * 1024
# Honest bounds: the allocation itself is exact to a page or two, but the
# process's other memory can drift by a little between readings.
SLACK_KIB = 4 * 1024


@pytest.mark.parametrize("allocator", ["malloc", "mmap"])
def test_allocating_moves_vsz_not_rss(allocator: str) -> None:
    r = malloc_touch.run(mib=MIB, allocator=allocator, points=5)
    d = r.summary["deltas_kib"]
    assert abs(d["after_alloc"]["vsz"] - KIB) <= SLACK_KIB
    assert abs(d["after_alloc"]["rss"]) <= SLACK_KIB


@pytest.mark.parametrize("allocator", ["malloc", "mmap"])
def test_touching_64_mib_moves_rss_by_about_64_mib(allocator: str) -> None:
    r = malloc_touch.run(mib=MIB, allocator=allocator, points=5)
    s = r.summary
    grew = s["after_touch"]["rss_kib"] - s["after_alloc"]["rss_kib"]
    assert abs(grew - KIB) <= SLACK_KIB


@pytest.mark.parametrize("allocator", ["malloc", "mmap"])
def test_freeing_returns_the_memory(allocator: str) -> None:
    r = malloc_touch.run(mib=MIB, allocator=allocator, points=3)
    d = r.summary["deltas_kib"]["after_free"]
    assert abs(d["vsz"]) <= SLACK_KIB
    assert abs(d["rss"]) <= SLACK_KIB


def test_curve_is_monotonic_and_follows_the_touch() -> None:
    r = malloc_touch.run(mib=MIB, points=9)
    curve = r.tables["touch_curve"]
    assert len(curve) == 9
    assert curve.touched_kib.iloc[0] == 0
    assert curve.touched_kib.iloc[-1] == KIB
    assert curve.touched_kib.is_monotonic_increasing
    rss_growth = curve.rss_kib - curve.rss_kib.iloc[0]
    assert ((rss_growth - curve.touched_kib).abs() <= SLACK_KIB).all()


def test_partial_touch_makes_only_that_share_resident() -> None:
    r = malloc_touch.run(mib=MIB, points=3, touch_fraction=0.25)
    s = r.summary
    grew = s["after_touch"]["rss_kib"] - s["after_alloc"]["rss_kib"]
    assert abs(grew - KIB // 4) <= SLACK_KIB


@pytest.mark.parametrize("kwargs, name", [
    ({"mib": 0}, "mib"),
    ({"mib": -1}, "mib"),
    ({"mib": "abc"}, "mib"),
    ({"mib": 1.5}, "mib"),
    ({"mib": True}, "mib"),
    ({"mib": 10**9}, "mib"),
    ({"mib": 8, "allocator": "sbrk"}, "allocator"),
    ({"mib": 8, "points": 1}, "points"),
    ({"mib": 8, "touch_fraction": 1.5}, "touch_fraction"),
    ({"mib": 8, "touch_fraction": float("nan")}, "touch_fraction"),
])
def test_bad_parameters_are_refused_by_name(kwargs: dict, name: str) -> None:
    with pytest.raises(ParameterError) as info:
        malloc_touch.run(**kwargs)
    assert info.value.name == name
    assert name in str(info.value)
