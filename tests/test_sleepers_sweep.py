"""The sleepers sweep: every task started and woken as planned, CPU within wall x CPUs."""

from __future__ import annotations

import pytest

from threadcost import ParameterError
from threadcost.experiments.user_space_tasks import sleepers
from threadcost.host import sysinfo
from threadcost.results import Result
from threadcost.runsafety import leakcheck

COUNTS = [4, 12]
PERIOD_MS, DURATION_MS = 2, 20


@pytest.fixture(scope="module")
def result() -> Result:
    return sleepers.sweep(counts=COUNTS, period_ms=PERIOD_MS, duration_ms=DURATION_MS,
                          stagger_ms=2, repeats=2)


def _measured(result: Result):  # type: ignore[no-untyped-def]
    pts = result.tables["points"]
    return pts[pts["not_run"].isna()] if "not_run" in pts else pts


def test_every_point_ran_every_task_and_wake_up(result: Result) -> None:
    pts = result.tables["points"]
    assert len(pts) == len(COUNTS) * len(sleepers.VARIANTS) * 2
    m = _measured(result)
    assert (m["tasks"] == m["count"]).all()
    assert (m["wakeups"] == m["count"] * (DURATION_MS // PERIOD_MS)).all()
    threads = m[m.variant != "goroutines"]
    assert (threads["peak_os_threads"] <= threads["count"] + 1).all()


def test_variants_alternate_within_each_count(result: Result) -> None:
    pts = result.tables["points"]
    first = pts[pts.repeat == 0].groupby("count")["variant"].apply(list)
    second = pts[pts.repeat == 1].groupby("count")["variant"].apply(list)
    for count in COUNTS:
        assert first[count] == list(reversed(second[count]))


def test_cpu_time_fits_in_wall_time_times_cpus(result: Result) -> None:
    """A process cannot use more CPU than wall x the CPUs it may run on (getrusage is
    charged in scheduler ticks at worst: allow 20 ms)."""
    m = _measured(result)
    cpus = len(sysinfo.affinity())
    assert (m["cpu_s"] <= m["wall_s"] * cpus + 0.02).all()
    assert ((m["user_us_per_wakeup"] + m["sys_us_per_wakeup"]) * m["wakeups"] / 1e6
            <= m["cpu_s"] + 1e-6).all()


def test_saturated_is_either_reason(result: Result) -> None:
    m = _measured(result)
    assert (m["saturated"] == (m["cpu_bound"] | m["late"])).all()


@pytest.mark.parametrize("kwargs", [
    {"counts": [0]}, {"counts": "x"}, {"repeats": 0}, {"variants": "fibers"},
    {"duration_ms": 1, "period_ms": 5},
])
def test_bad_parameters_are_refused(kwargs: dict[str, object]) -> None:
    with pytest.raises(ParameterError):
        sleepers.sweep(**kwargs)


def test_nothing_left_behind() -> None:
    assert not leakcheck.check(lambda: sleepers.sweep(counts=[3], period_ms=1, duration_ms=3,
                                                      stagger_ms=0), warmup=1, repeat=1)
