"""S3's CPU-bound tasks (C13/C14): invariants of every run, bad input, nothing left behind."""

from __future__ import annotations

import pytest

from threadcost import ParameterError
from threadcost.experiments import cpu_bound
from threadcost.host import sysinfo
from threadcost.results import Result
from threadcost.runsafety import isolate, leakcheck

# S3's loop counts the primes up to LIMIT (a mathematical fact, not a measurement)
PRIMES_UP_TO = {600: 109, 1000: 168}
# getrusage and the thread CPU clock read a few microseconds apart; allow 5 ms
# per task of accounting slack on top of the physical bound.
SLACK_S = 0.005


@pytest.fixture(scope="module")
def result() -> Result:
    return cpu_bound.run(tasks=3, limit=1000, ws_limit=20, ws_ints=65_536, repeats=2)


def test_every_task_started_stopped_and_completed(result: Result) -> None:
    runs = result.tables["runs"]
    assert len(runs) == 2 * 2 * 2  # repeats x working sets x modes
    assert (runs["tasks_started"] == 3).all()
    assert (runs["tasks_stopped"] == runs["tasks_started"]).all()
    assert (runs["tasks_completed"] == 3).all()
    tasks = result.tables["tasks"]
    assert len(tasks) == 3 * len(runs)
    assert tasks["completed"].all()
    expected = tasks["limit"].map(lambda lim: PRIMES_UP_TO.get(lim))
    assert (tasks["primes"][expected.notna()] == expected.dropna()).all()
    assert result.summary["tasks_started"] == result.summary["tasks_stopped"] == 24


def test_alternates_threads_and_processes(result: Result) -> None:
    runs = result.tables["runs"].sort_values("order")
    assert list(runs["mode"]) == ["threads", "processes"] * 4


def test_all_tasks_ran_on_the_one_cpu(result: Result) -> None:
    cpu = result.params["cpu"]
    assert cpu in sysinfo.affinity()
    assert (result.tables["tasks"]["cpu"] == cpu).all()


def test_cpu_time_fits_in_wall_time_on_one_cpu(result: Result) -> None:
    """Tasks pinned to one CPU cannot use more CPU time than the wall time of
    that CPU (other programs on it only make the CPU time smaller)."""
    runs = result.tables["runs"]
    n = runs["tasks_started"]
    assert (runs["cpu_s"] <= runs["wall_s"] * 1 + SLACK_S * n).all()
    assert (runs["user_s"] + runs["sys_s"] <= runs["wall_s"] + SLACK_S * n).all()
    tasks = result.tables["tasks"]
    assert (tasks["cpu_s"] > 0).all()
    assert (tasks["cpu_s"] <= tasks["wall_s"] + SLACK_S).all()
    # the run's wall is the last task's end
    last = tasks.groupby("order")["wall_s"].max().sort_index()
    assert (abs(last.to_numpy() - runs.sort_values("order")["wall_s"].to_numpy()) < 1e-6).all()


def test_ratio_table_pairs_each_repeat(result: Result) -> None:
    ratios = result.tables["ratios"]
    wall = ratios[ratios.quantity == "wall_s"]
    assert set(wall["working_set"]) == {"none", "own"}
    assert (wall["n"] == 2).all()
    assert (wall["ci95_low"] <= wall["ratio"]).all() and (wall["ratio"] <= wall["ci95_high"]).all()


def test_perf_counters_are_there_or_say_why(result: Result) -> None:
    runs = result.tables["runs"]
    note = result.summary["perf"]["dtlb_misses"]
    if note.startswith("available"):
        assert runs["dtlb_misses"].notna().all()
    else:
        assert note.startswith("not available here")
        assert runs["dtlb_misses"].isna().all()


@pytest.mark.parametrize("kwargs, name", [
    ({"tasks": 0}, "tasks"),
    ({"tasks": 65}, "tasks"),
    ({"limit": 2}, "limit"),
    ({"ws_ints": 0}, "ws_ints"),
    ({"working_sets": "big"}, "working_sets"),
    ({"modes": "fibers"}, "modes"),
    ({"repeats": 0}, "repeats"),
    ({"cpu": 4095}, "cpu"),
    ({"run_timeout_s": 0}, "run_timeout_s"),
    ({"ws_ints": 1 << 27, "tasks": 64}, "ws_ints"),
])
def test_bad_parameters_are_refused_by_name(kwargs: dict[str, object], name: str) -> None:
    with pytest.raises(ParameterError) as info:
        cpu_bound.check_params(**kwargs)
    assert info.value.name == name


def test_nothing_left_behind() -> None:
    def call() -> object:
        return cpu_bound.run(tasks=2, limit=300, ws_limit=5, ws_ints=4096, repeats=1)

    with isolate.inline():
        problems = leakcheck.check(call, warmup=1, repeat=2)
    assert not problems, problems
    assert not leakcheck.check(call, warmup=1, repeat=1)


def test_a_missing_counter_is_not_blamed_on_permissions() -> None:
    """ENOENT from perf_event_open means the event does not exist here: its note never
    names kernel.perf_event_paranoid, which only EACCES and EPERM are about."""
    import errno

    from threadcost.experiments.cpu_bound import _perf_note

    missing = _perf_note(errno.ENOENT)
    assert missing.startswith("not available here") and "paranoid" not in missing
    assert "no such event" in missing
    assert "perf_event_paranoid" in _perf_note(errno.EACCES)


def test_a_ratio_interval_no_run_could_resolve_stays_empty() -> None:
    """Two repeats a factor of 10^9 apart each way: a t-interval on their log ratios spans
    beyond 10^12 either way, so it is left empty (the run stays readable); an ordinary
    spread keeps its interval around the geometric mean."""
    import pandas as pd

    from threadcost.experiments import cpu_bound

    wild = pd.DataFrame({"working_set": [1] * 4, "mode": ["processes", "threads"] * 2,
                         "repeat": [0, 0, 1, 1], "x": [1e9, 1, 1, 1e9]})
    row = cpu_bound.paired_ratios(wild, "x").iloc[0]
    assert row["n"] == 2 and row["ci95_low"] is None and row["ci95_high"] is None
    calm = pd.DataFrame({"working_set": [1] * 4, "mode": ["processes", "threads"] * 2,
                         "repeat": [0, 0, 1, 1], "x": [2.0, 1.0, 3.0, 1.0]})
    row = cpu_bound.paired_ratios(calm, "x").iloc[0]
    assert row["ci95_low"] < row["ratio"] < row["ci95_high"]


def test_the_end_of_make_paper_words_a_missing_counter_as_the_pages_do() -> None:
    """The "Not run here" lines at the end of a build read a stored counter note in words
    (ENOENT: no such event here), never the raw errno with perf_event_paranoid."""
    from types import SimpleNamespace

    from threadcost.store import stored

    note = ("not available here (perf_event_open: ENOENT: No such file or directory; "
            "kernel.perf_event_paranoid = 2)")
    run = SimpleNamespace(experiment="cpu_bound",
                          meta={"summary": {"perf": {"dtlb_misses": note}}})
    lines = stored.not_run_lines([run])  # type: ignore[list-item]
    assert len(lines) == 1 and "dtlb_misses" in lines[0], lines
    assert "does not expose the event" in lines[0]
    assert "ENOENT" not in lines[0] and "paranoid" not in lines[0]
