"""Page 05's kernel-task rows: the switch measured by an experiment (stored, read back),
the thread's memory and launch the findings pages 02 and 03 print.

- ``threadcost.experiments.user_space_tasks.kernel_task_switch`` refuses a bad parameter
  by name before any C runs, and a tiny run is stored and read back under its registered
  name with its bare batches (one process pair per batch, a handful of round trips: no
  timing is judged);
- the thread row of a committed machine folder prints the very findings of pages 02 and
  03 (the same named numbers, not a second measurement of them);
- what the rows lack is said in words, never as an identifier.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from threadcost import findings
from threadcost.errors import ParameterError
from threadcost.experiments import specs
from threadcost.experiments.user_space_tasks import kernel_task_switch
from threadcost.notebook import stored
from threadcost.results import Result
from threadcost.store import datastore
from threadcost.views import kernel_task_rows as kernel_rows
from threadcost.views import user_space_tasks as view

REPO = Path(__file__).resolve().parent.parent
MACHINE = "x86_64-amd-epyc-2cpu-24g-kvm-1650d2c6"  # the committed reference folder


@pytest.mark.parametrize("kwargs, name", [({"kind": "fiber"}, "kind"),
                                          ({"kind": "thread", "iterations": 0}, "iterations"),
                                          ({"kind": "process", "iterations": "many"},
                                           "iterations")])
def test_bad_parameters_are_refused_by_name(kwargs: dict, name: str) -> None:
    with pytest.raises(ParameterError) as info:
        kernel_task_switch.check_params(**kwargs)
    assert info.value.name == name


def test_each_kind_is_a_registered_experiment_of_page_five() -> None:
    for experiment in kernel_task_switch.EXPERIMENTS.values():
        entry = specs.get(experiment)
        assert entry.module == "user_space_tasks.kernel_task_switch"
        assert entry.notebook == "05_user_space_tasks"
        assert not entry.retired


@pytest.fixture
def restore_findings_machine() -> object:
    yield None
    findings.use_machine(None)
    findings.clear_cache()


@pytest.mark.usefixtures("restore_findings_machine")
def test_a_tiny_run_is_stored_and_read_back_with_its_bare_batches(tmp_path: Path) -> None:
    measuring = stored.Store(measure=True, save=True, data_dir=tmp_path)
    made = measuring.get("tasks_switch_thread", lambda: kernel_task_switch.run(
        kind="thread", iterations=1), announce=False)
    assert isinstance(made, Result) and made.experiment == "tasks_switch_thread"
    batches = made.summary["batch_round_trip_ns_runs"]
    assert len(batches) == kernel_task_switch.BARE_BATCHES == made.params["bare_batches"]
    assert made.params["bare_batch_iterations"] == 1  # never more than the run's
    # bare batches only (no sampled run beside them), with the pinning record of them all
    assert "samples" not in made.tables
    assert made.summary["cpus_seen"] == sorted(set(made.summary["cpus_requested"]))

    def never() -> Result:
        raise AssertionError("a rendering from stored runs measured")

    drawing = stored.Store(measure=False, data_dir=tmp_path, machine_id=measuring.machine_id)
    back = drawing.get("tasks_switch_thread", never, announce=False)
    assert back.summary["batch_round_trip_ns_runs"] == batches
    rows = kernel_rows.kernel_task_rows(kernel_rows.switch_findings({"thread": back}), {})
    assert not rows[0]["switch"].extra.get("partial")  # bare batches: the definition
    assert rows[0]["switch"].n == kernel_task_switch.BARE_BATCHES


@pytest.mark.usefixtures("restore_findings_machine")
def test_the_thread_row_prints_the_findings_of_pages_two_and_three() -> None:
    data = REPO / "data"
    findings.use_machine(MACHINE)
    thread = kernel_rows.thread_findings(data, MACHINE)
    row = kernel_rows.kernel_task_rows({}, thread)[0]
    for key, column in (("kernel_kib", "kernel_per_task_kib"), ("rss_kib", "rss_per_task_kib"),
                        ("vsz_kib", "vsz_per_task_kib"), ("create_ns", "create_ns"),
                        ("life_ns", "life_ns")):
        q = findings.get(kernel_rows.THREAD_FINDINGS[key], data, MACHINE)
        assert q.measured and row[column] == q.value, key
    table = view.comparison_table(kernel_rows.kernel_task_rows({}, thread))
    assert "kernel memory per task (KiB)" in table.columns
    assert not any("this page's run" in c for c in table.columns)
    samples = kernel_rows.thread_launch_samples(data, MACHINE)
    assert samples is not None and set(samples.kind) >= {"thread"}


def test_what_the_rows_lack_is_said_in_words() -> None:
    absent = findings.Quantity("memory_thread_kernel_slope_kib", None, "KiB", "slope",
                               missing="no thread memory run stored (notebook 02)")
    text = kernel_rows.missing_text({"thread": None}, {"kernel_kib": absent})
    assert "OS thread switch" in text and "kernel memory" in text
    assert "notebook 02" in text
    assert "`switch_thread`" not in text and "_" not in text.replace("\\_", "")
    assert "notebook 04" in kernel_rows.missing_text({}, {}, {})  # no sweep: its round trips
    assert kernel_rows.missing_text({}, {}, None).startswith("All kernel-task experiments ran")


@pytest.mark.usefixtures("restore_findings_machine")
def test_the_kernel_rows_round_trips_are_page_fours_sweep() -> None:
    data = REPO / "data"
    sweep = kernel_rows.sweep_round_trips(data, MACHINE)
    run = datastore.latest_run("context_switch", data_dir=data, machine_id=MACHINE)
    configs = run.table("configs")
    rows = kernel_rows.kernel_task_rows({}, {}, sweep)
    for row, tasks in zip(rows, ("threads", "processes"), strict=True):
        stored_row = configs[(configs.mechanism == "futex") & (configs.placement == "same-cpu")
                             & (configs.tasks == tasks)].iloc[0]
        assert row["round_trip_p50_ns"] == stored_row.round_trip_p50_ns
        assert row["round_trip_p99_ns"] == stored_row.round_trip_p99_ns
        assert row["switches_per_round_trip"] == stored_row.switches_per_round_trip
    assert kernel_rows.sweep_round_trips(data, "no-such-machine") == {}


@pytest.mark.usefixtures("restore_findings_machine")
def test_a_folder_without_page_fives_switch_runs_prints_the_headlines_switch() -> None:
    data, older = REPO / "data", "x86_64-amd-epyc-2cpu-24g-kvm-7003449b"  # no tasks_* runs
    findings.use_machine(older)
    switches = kernel_rows.switch_findings({"thread": None}, data, older)
    headline = findings.get("switch_thread_batch_median_ns", data, older)
    assert headline.measured and switches["thread"].value == headline.value
    assert switches["thread"].extra.get("partial")  # notebook 04's sweep, said so
    row = kernel_rows.kernel_task_rows(switches, {})[0]
    assert row["switch_ns"] == headline.value and row["missing"] is None
    assert "switch" not in kernel_rows.missing_text(switches, {})
