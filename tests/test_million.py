"""S1's million-task runs at small counts: counts, bounds, skip reasons, scaled labels."""

from __future__ import annotations

import pytest

from threadcost import ParameterError
from threadcost.experiments.user_space_tasks import million
from threadcost.host import sysinfo
from threadcost.runsafety import leakcheck


def test_goroutines_run_like_usr_bin_time() -> None:
    r = million.goroutines(count=2000, sleep_ms=20, repeats=1)
    if r.summary["skipped"]:
        assert "Go" in r.summary["skipped"] or "MemAvailable" in r.summary["skipped"]
        return
    runs = r.tables["runs"]
    assert list(runs["variant"]) == ["as_published", "all_at_once"]
    assert (runs["finished"] == 2000).all()
    assert ((runs["alive_at_spawn_end"] > 0) & (runs["alive_at_spawn_end"] <= 2000)).all()
    # held at the gate, none can end before the last has started
    assert runs.set_index("variant").loc["all_at_once", "alive_at_spawn_end"] == 2000
    assert (runs["wall_s"] >= 0.020).all()  # every goroutine slept 20 ms
    assert (runs["max_rss_kib"] > 0).all()
    cpus = len(sysinfo.affinity())
    assert (runs["user_s"] + runs["sys_s"] <= runs["wall_s"] * cpus + 0.05).all()


def test_goroutines_skip_when_memory_is_short(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(million.sysinfo, "mem_available_kib", lambda: 1024)
    r = million.goroutines(count=1_000_000)
    assert r.summary["skipped"]
    assert "MemAvailable" in r.summary["skipped"] or "Go" in r.summary["skipped"]
    assert r.tables == {}


def test_threads_at_the_ceiling_and_scaled_rows_are_labelled() -> None:
    r = million.threads(cap=40, stack_kib=2048, sleep_ms=20)
    m = r.summary["measured"]
    assert r.params["count"] == 40 and r.params["bound"] == million.CAP_WORDS
    assert m["threads"] == m["finished"] == 40
    assert m["peak_threads"] >= 41  # the 40 and the thread that started them
    assert m["wall_s"] >= 0.020
    scaled = r.tables["scaled"]
    assert scaled["label"].str.startswith("computed (scaled").all()


def test_ceiling_stays_clear_of_pid_max() -> None:
    count, _ = million.thread_ceiling(cap=10**6)
    pid_max = sysinfo.sysctl("kernel.pid_max") or 32768
    assert count <= pid_max - million.PID_RESERVE


@pytest.mark.parametrize("call", [
    lambda: million.goroutines(count=0),
    lambda: million.goroutines(sleep_ms=-1),
    lambda: million.threads(cap=0),
    lambda: million.threads(stack_kib=3),
])
def test_bad_parameters_are_refused(call) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ParameterError):
        call()


def test_nothing_left_behind() -> None:
    assert not leakcheck.check(lambda: million.goroutines(count=100, sleep_ms=1),
                               warmup=1, repeat=1)
    assert not leakcheck.check(lambda: million.threads(cap=10, sleep_ms=5), warmup=1, repeat=1)
