"""Idle forked children: counts, USS against touched memory, bad input, nothing left behind."""

from __future__ import annotations

import pytest

from threadcost import ParameterError
from threadcost.experiments.thread_memory import process_memory
from threadcost.host import sysinfo
from threadcost.runsafety import isolate, leakcheck

TOUCH_KIB = 512


@pytest.mark.parametrize("touch_kib", [0, TOUCH_KIB])
def test_children_started_ready_and_stopped(touch_kib: int) -> None:
    r = process_memory.run(counts=[3, 6, 9], touch_kib=touch_kib, repeats=1, settle_ms=0)
    pts = r.tables["points"]
    assert list(pts.requested) == [3, 6, 9]
    assert (pts.started == pts.requested).all()
    assert (pts.ready == pts.started).all()
    assert (pts.stopped == pts.started).all()
    assert r.summary["children_started"] == r.summary["children_stopped"] == 18
    assert (pts.page_tables_kib > 0).all()  # every process has page tables of its own
    # every page a child wrote is resident and private to it
    assert (pts.uss_kib >= pts.started * touch_kib).all()
    assert (pts.pss_kib >= pts.uss_kib).all()
    assert (pts.rss_kib >= pts.pss_kib).all()
    assert r.limit_hit is None


def test_uss_slope_grows_with_touched_memory() -> None:
    fits = {}
    for touch in (0, TOUCH_KIB):
        r = process_memory.run(counts=[2, 4, 6], touch_kib=touch, repeats=1, settle_ms=0)
        fits[touch] = r.summary["fits"]["uss_kib"]
        assert fits[touch]["method"] == "slope"
    page_kib = sysinfo.PAGE_SIZE // 1024
    assert fits[TOUCH_KIB]["per_process_kib"] - fits[0]["per_process_kib"] >= TOUCH_KIB - page_kib


@pytest.mark.parametrize("kwargs, name", [
    ({"counts": [0]}, "counts"),
    ({"counts": [10**6]}, "counts"),
    ({"counts": "a,b"}, "counts"),
    ({"touch_kib": -1}, "touch_kib"),
    ({"repeats": 0}, "repeats"),
    ({"settle_ms": -5}, "settle_ms"),
    ({"counts": [4000], "touch_kib": 1 << 20}, "counts"),
])
def test_bad_parameters_are_refused_by_name(kwargs: dict[str, object], name: str) -> None:
    with pytest.raises(ParameterError) as info:
        process_memory.check_params(**kwargs)
    assert info.value.name == name


def test_nothing_left_behind() -> None:
    def call() -> object:
        return process_memory.run(counts=[2, 3], touch_kib=16, repeats=1, settle_ms=0)

    with isolate.inline():
        problems = leakcheck.check(call, warmup=1, repeat=2)
    assert not problems, problems
    assert not leakcheck.check(call, warmup=1, repeat=1)
