"""S3's CPU-bound tasks (C13/C14): invariants of every run, bad input, nothing left behind."""

from __future__ import annotations

from pathlib import Path

import pytest

from threadcost import ParameterError
from threadcost.experiments.context_switch import cpu_bound
from threadcost.host import sysinfo
from threadcost.results import Result
from threadcost.runsafety import isolate, leakcheck
from threadcost.views import cpu_bound as cpu_view

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
    ({"limit": "soon"}, "limit"),
    ({"limit": ""}, "limit"),
    ({"ws_limit": 1_000_001}, "ws_limit"),
    ({"run_s": 0}, "run_s"),
    ({"run_s": "long"}, "run_s"),
    ({"ws_run_s": 601}, "ws_run_s"),
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

    from threadcost.experiments.context_switch.cpu_bound import _perf_note

    missing = _perf_note(errno.ENOENT)
    assert missing.startswith("not available here") and "paranoid" not in missing
    assert "no such event" in missing
    assert "perf_event_paranoid" in _perf_note(errno.EACCES)


def test_a_ratio_interval_no_run_could_resolve_stays_empty() -> None:
    """Two repeats a factor of 10^9 apart each way: a t-interval on their log ratios spans
    beyond 10^12 either way, so it is left empty (the run stays readable); an ordinary
    spread keeps its interval around the geometric mean."""
    import pandas as pd

    from threadcost.experiments.context_switch import cpu_bound

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

    from threadcost.notebook import stored

    note = ("not available here (perf_event_open: ENOENT: No such file or directory; "
            "kernel.perf_event_paranoid = 2)")
    run = SimpleNamespace(experiment="cpu_bound",
                          meta={"summary": {"perf": {"dtlb_misses": note}}})
    lines = stored.not_run_lines([run])  # type: ignore[list-item]
    assert len(lines) == 1 and "dtlb_misses" in lines[0], lines
    assert "does not expose the event" in lines[0]
    assert "ENOENT" not in lines[0] and "paranoid" not in lines[0]


# --- sizing by time (#33 item 8) ------------------------------------------------------------

LIMITS = {"minimum": cpu_bound.LIMIT.minimum, "maximum": cpu_bound.LIMIT.maximum}
AMD_REFERENCE = (Path(__file__).resolve().parent.parent / "data"
                 / "x86_64-amd-epyc-2cpu-24g-kvm-1650d2c6" / "20261125T131217Z-cpu_bound-026621")


@pytest.mark.parametrize("bad, shown", [({"run_s": 0}, "0"), ({"ws_run_s": 601}, "601"),
                                        ({"limit": 2}, "2"), ({"ws_limit": -1}, "-1")])
def test_a_bad_size_is_refused_in_one_line_naming_value_and_range(bad: dict[str, object],
                                                                  shown: str) -> None:
    ((name, _),) = bad.items()
    with pytest.raises(ParameterError) as info:
        cpu_bound.check_params(**bad)  # type: ignore[arg-type]
    text = str(info.value)
    assert "\n" not in text and name in text and shown in text, text
    declared = {"run_s": cpu_bound.RUN_S, "ws_run_s": cpu_bound.WS_RUN_S,
                "limit": cpu_bound.LIMIT, "ws_limit": cpu_bound.WS_LIMIT}[name]
    for bound in (declared.minimum, declared.maximum):  # the allowed range, as printed
        assert f"{bound:,}" in text or f"{bound:g}" in text, text


def test_a_size_not_given_is_left_to_the_calibration() -> None:
    for spelled in (None, "auto", "None"):
        p = cpu_bound.check_params(limit=spelled, ws_limit=spelled)
        assert p["limit"] is None and p["ws_limit"] is None


def test_the_chosen_size_is_the_smallest_that_lasts_the_target() -> None:
    """A pure function of the calibrated costs: the prediction at the size reaches the
    target and one less does not; the same for the working-set loop."""
    size = cpu_bound.size_for(0.8, 5, 0, 3.5e-9, 0.0, **LIMITS)
    assert cpu_bound.predicted_s(size, 5, 0, 3.5e-9, 0.0) >= 0.8
    assert cpu_bound.predicted_s(size - 1, 5, 0, 3.5e-9, 0.0) < 0.8
    ws = cpu_bound.size_for(0.4, 5, 1_000_000, 3.5e-9, 0.65e-9, **LIMITS)
    assert cpu_bound.predicted_s(ws, 5, 1_000_000, 3.5e-9, 0.65e-9) >= 0.4
    assert cpu_bound.predicted_s(ws - 1, 5, 1_000_000, 3.5e-9, 0.65e-9) < 0.4


@pytest.mark.parametrize("per_division", [0.0, 1e-18, 1e-9, 1.0, 1e6])
def test_the_calibration_never_chooses_outside_the_declared_bounds(per_division: float) -> None:
    """Whatever a probe measured (nothing, a machine a billion times faster or slower),
    the sizes stay within the declared range of limit and ws_limit."""
    for bounds, ints in ((cpu_bound.LIMIT.bounds, 0), (cpu_bound.WS_LIMIT.bounds, 1 << 20)):
        for target in (cpu_bound.RUN_S.minimum, 1.0, cpu_bound.RUN_S.maximum):
            size = cpu_bound.size_for(target, 64, ints, per_division, per_division, **bounds)
            assert bounds["minimum"] <= size <= bounds["maximum"], (per_division, target)


@pytest.fixture(scope="module")
def calibrated() -> Result:
    return cpu_bound.run(tasks=2, ws_ints=65_536, repeats=1, run_s=0.02, ws_run_s=0.02)


def test_a_calibrated_run_stores_its_sizes_and_probes(calibrated: Result) -> None:
    p, sizing = calibrated.params, calibrated.summary["sizing"]
    assert cpu_bound.LIMIT.minimum <= p["limit"] <= cpu_bound.LIMIT.maximum
    assert cpu_bound.WS_LIMIT.minimum <= p["ws_limit"] <= cpu_bound.WS_LIMIT.maximum
    assert (p["run_s"], p["ws_run_s"]) == (0.02, 0.02)
    assert sizing["none"]["sized"] == sizing["own"]["sized"] == "calibrated"
    assert (sizing["none"]["size"], sizing["own"]["size"]) == (p["limit"], p["ws_limit"])
    runs = calibrated.tables["runs"]
    assert set(runs[runs.working_set == "none"].limit) == {p["limit"]}
    assert set(runs[runs.working_set == "own"].limit) == {p["ws_limit"]}
    probes = calibrated.tables["calibration"]
    assert list(dict.fromkeys(probes.working_set)) == ["none", "own"]  # divisions first
    assert (probes.tasks == 2).all() and (probes.cpu_s > 0).all()
    assert probes.limit.between(cpu_bound.LIMIT.minimum, cpu_bound.LIMIT.maximum).all()
    assert len(probes) <= 2 * cpu_bound.MAX_PROBES
    for ws in ("none", "own"):  # each probe grows, never more than GROWTH times
        sizes = probes[probes.working_set == ws].limit.to_numpy()
        assert (sizes[1:] > sizes[:-1]).all()
        assert (sizes[1:] <= sizes[:-1] * cpu_bound.GROWTH).all()
    assert "sized here" in cpu_view.sizing_text(calibrated)


def test_a_given_size_is_not_calibrated(result: Result) -> None:
    assert "calibration" not in result.tables
    assert "run_s" not in result.params and "ws_run_s" not in result.params
    assert result.summary["sizing"] == {"none": {"sized": "fixed", "size": 1000},
                                        "own": {"sized": "fixed", "size": 20}}
    assert "a fixed size" in cpu_view.sizing_text(result)


def test_a_stored_run_of_the_fixed_size_reads_as_before(tmp_path: Path) -> None:
    """The AMD reference's run (limit 12,000, 500 iterations, before the calibration): its
    tables and claims read as they did, its sizes said to be fixed, no calibration."""
    from threadcost import claims
    from threadcost.store import datastore

    old = datastore.load_run(AMD_REFERENCE).result()
    assert "sizing" not in old.summary and "calibration" not in old.tables
    text = cpu_view.sizing_text(old)
    assert "**12,000**, a fixed size" in text and "**500** outer iterations" in text
    assert "calibration" not in text
    assert len(cpu_view.totals_table(old)) == 4 and not cpu_view.ratios_table(old).empty
    verdicts = {v.id: v for v in claims.judge(None, tmp_path, [old])}
    c13 = verdicts["C13"].assertions[0]
    assert c13.setup["limit"] == 12000 and "sized" not in c13.setup
    assert c13.repeats == 5 and c13.measured is not None
    c14 = verdicts["C14"].assertions[0]
    assert c14.measured is not None and "180 times longer" in " ".join(
        w.text for w in c14.why)
