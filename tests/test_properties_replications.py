"""Property tests of the replication experiments' entry points (same rules as
tests/test_properties.py: each call runs or refuses by name; never another error)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.test_properties import HOSTILE, RUNS, Entry, _call, _kwargs
from threadcost import LimitReached, ParameterError
from threadcost.experiments.context_switch import cpu_bound
from threadcost.experiments.thread_memory import process_memory
from threadcost.experiments.user_space_tasks import goroutines as peers
from threadcost.experiments.user_space_tasks import million, sleepers


def _entries() -> list[Entry]:
    small = st.lists(st.integers(1, 6), min_size=1, max_size=3, unique=True)
    return [
        Entry(cpu_bound.run, {
            "tasks": st.integers(1, 3), "limit": st.integers(3, 200),
            "ws_limit": st.integers(3, 10), "ws_ints": st.integers(1, 4096),
            "working_sets": st.sampled_from(["none", "own", ["own", "none"]]),
            "modes": st.sampled_from(["threads", "processes", "threads,processes"]),
            "repeats": st.integers(1, 2), "cpu": st.sampled_from(["auto", None])}),
        Entry(process_memory.run, {
            "counts": small, "touch_kib": st.integers(0, 64), "repeats": st.integers(1, 2),
            "settle_ms": st.integers(0, 5)}),
        Entry(sleepers.sweep, {
            "counts": small, "period_ms": st.integers(1, 3), "duration_ms": st.integers(3, 6),
            "stagger_ms": st.integers(0, 2), "repeats": st.integers(1, 2),
            "variants": st.sampled_from(["threads", "threads_pinned", "threads,goroutines"])}),
        Entry(million.threads, {
            "cap": st.integers(1, 8), "stack_kib": st.sampled_from([0, 64, 2048]),
            "sleep_ms": st.integers(1, 5)}),
        Entry(million.goroutines, {
            "count": st.integers(1, 200), "sleep_ms": st.integers(0, 5),
            "variants": st.sampled_from(["as_published", "all_at_once"])}),
        Entry(peers.launch_run, {
            "iterations": st.integers(1, 200), "warmup": st.integers(0, 20)}),
        Entry(peers.pinning_run, {
            "repeats": st.integers(2, 3), "iterations": st.integers(1000, 2000),
            "warmup": st.integers(0, 100)}),
    ]


ENTRIES = _entries()


@pytest.mark.parametrize("entry", ENTRIES, ids=[e.name for e in ENTRIES])
def test_entry_point_runs_or_refuses(entry: Entry) -> None:
    @RUNS
    @given(kwargs=_kwargs(entry))
    def prop(kwargs: dict[str, Any]) -> None:
        _call(entry, kwargs)

    prop()


@pytest.mark.parametrize("entry", ENTRIES, ids=[e.name for e in ENTRIES])
def test_one_hostile_parameter_is_refused_by_name(entry: Entry) -> None:
    names = sorted(entry.cheap)

    @RUNS
    @given(data=st.data())
    def prop(data: st.DataObject) -> None:
        target = data.draw(st.sampled_from(names))
        kwargs = {n: data.draw(entry.cheap[n]) for n in names if n != target}
        kwargs[target] = data.draw(HOSTILE)
        try:
            entry.func(**{**entry.fixed, **kwargs})
        except ParameterError as exc:
            assert exc.name == target, (target, kwargs[target], str(exc))
        except LimitReached:
            pass

    prop()
