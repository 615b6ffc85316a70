"""The yardsticks experiment: a tidy table, one row per repeat and yardstick."""

from __future__ import annotations

import os

import psutil
import pytest

from threadcost.errors import ParameterError
from threadcost.experiments.context_switch import yardsticks


def test_one_row_per_repeat_and_yardstick() -> None:
    result = yardsticks.run(repeats=2, batches=3, scale=0.05)
    frame = result.tables["repeats"]
    two = len(os.sched_getaffinity(0)) > 1
    cross = {yardsticks.CROSS, yardsticks.CROSS_BUSY} if two else set()
    names = {*yardsticks.YARDSTICKS, yardsticks.SWITCH, yardsticks.COLD, *cross}
    assert len(frame) == 2 * len(names)
    assert set(frame.yardstick) == names
    assert sorted(frame.repeat.unique()) == [0, 1]
    assert (frame.ns_min <= frame.ns_median).all()
    assert (frame.ns_median <= frame.ns_max).all()
    assert (frame.ops_per_batch >= 1).all()
    assert result.experiment == "yardsticks"


@pytest.mark.parametrize("kwargs", [{"repeats": 0}, {"batches": "x"}, {"scale": -1},
                                    {"cpu": 100000}])
def test_bad_input_is_refused(kwargs: dict[str, object]) -> None:
    with pytest.raises(ParameterError):
        yardsticks.run(**kwargs)  # type: ignore[arg-type]


def test_busy_partner_spinner_is_gone_after_the_run() -> None:
    """The cross-CPU wake-up with a busy partner starts a spinner and always ends it."""
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("one CPU: no cross-CPU wake-up")
    me = psutil.Process()

    def alive() -> set[int]:
        return {c.pid for c in me.children(recursive=True)
                if c.is_running() and c.status() != psutil.STATUS_ZOMBIE}

    before = alive()  # the session's own helpers (a background rendering) stay
    yardsticks.run(repeats=1, batches=2, scale=0.02)
    assert not alive() - before


def test_cold_pool_is_larger_than_the_last_level_cache() -> None:
    pool = yardsticks.cold_pool_bytes()
    assert pool % 65536 == 0
    assert yardsticks.MIN_COLD_POOL <= pool <= yardsticks.MAX_COLD_POOL
    llc = yardsticks.last_level_cache_bytes()
    assert llc >= 0
    assert pool >= min(2 * llc, yardsticks.MAX_COLD_POOL) - 65536
