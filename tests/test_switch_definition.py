"""One switch, one definition: half the mean round trip of a pinned batch timed whole (the
median of runs where there are several), in the headline and on page 05 alike; the
per-sample round trips stay round trips, never halved into a switch.

Every number here is written by the test as a stored run's input; the findings and the
views must read it back under the one definition."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from threadcost import findings
from threadcost.host import machine
from threadcost.results import Result
from threadcost.store import datastore
from threadcost.views import headline
from threadcost.views import kernel_task_rows as kernel_rows
from threadcost.views import user_space_tasks as tasks_view

ROUND_TRIPS = {"min": 3800.0, "p50": 4000.0, "p90": 4700.0, "p99": 5100.0, "max": 9000.0,
               "mean": 4300.0, "n": 50000}


def _kernel_run(tasks: str, bare: list[float] | None) -> Result:
    """A futex ping-pong run as page 05 stores it: the sampled distribution, the stamped
    run's mean timed whole, and (runs since the bare batches) the bare batches' means."""
    summary: dict[str, Any] = {"round_trip_ns": dict(ROUND_TRIPS), "completed": 50000,
                               "whole_run_mean_ns": 4300.0, "switches_per_round_trip": 2.0}
    if bare is not None:
        summary["batch_round_trip_ns_runs"] = bare
    return Result(f"tasks_switch_{tasks}", {"mechanism": "futex", "placement": "same-cpu",
                                            "tasks": tasks}, summary)


def _store(tmp_path: Path, *results: Result) -> str:
    fp = machine.fingerprint(include_git=False)
    for result in results:
        datastore.save_run(result, data_dir=tmp_path, fingerprint=fp)
    findings.clear_cache()
    return machine.machine_id(fp)


def _switch_cells(tmp_path: Path, mid: str) -> Any:
    values = headline.cells(tmp_path, mid)
    return values[values.column == "switch"].set_index("task")


def test_bare_batches_give_the_switch_median_and_range(tmp_path: Path) -> None:
    mid = _store(tmp_path, _kernel_run("thread", [4200.0, 4000.0, 4600.0]))
    cell = _switch_cells(tmp_path, mid).loc["thread"]
    assert cell.value == pytest.approx(2100.0)  # the median batch's mean round trip / 2
    assert (cell.low, cell.high) == (pytest.approx(2000.0), pytest.approx(2300.0))
    assert not cell.partial and "no clock read inside" in cell.definition
    # the sampled median (4,000 ns / 2) is not the switch: it stays a round trip
    assert cell.value != pytest.approx(ROUND_TRIPS["p50"] / 2)


def test_a_run_before_the_bare_batches_is_marked_partial(tmp_path: Path) -> None:
    mid = _store(tmp_path, _kernel_run("process", None))
    cell = _switch_cells(tmp_path, mid).loc["process"]
    assert cell.value == pytest.approx(2150.0)  # the stamped run timed whole / 2
    assert cell.partial and "clock read" in cell.definition
    assert "(partial: see note)" in headline.table(headline.cells(tmp_path, mid)).loc[
        "process"].iloc[1]


def test_a_folder_without_the_run_says_which_run_would_fill_it(tmp_path: Path) -> None:
    cells = _switch_cells(tmp_path, "no-such-machine")
    for task in ("thread", "process"):
        assert cells.loc[task, "value"] is None
        assert "tasks switch" in cells.loc[task, "not_run"]


def test_page_five_prints_the_headline_switch_and_round_trips_unhalved() -> None:
    # the round trips of the kernel rows: notebook 04's sweep, as page 04 prints them
    sweep = {kind: {"round_trip": dict(ROUND_TRIPS), "switches_per_round_trip": 2.0}
             for kind in ("thread", "process")}
    rows = kernel_rows.kernel_task_rows(kernel_rows.switch_findings(
        {"thread": _kernel_run("thread", [4400.0]),
         "process": _kernel_run("process", None)}), {}, sweep)
    thread, process = rows
    assert thread["switch_ns"] == pytest.approx(2200.0)
    assert thread["round_trip_p50_ns"] == ROUND_TRIPS["p50"]
    assert process["switch"].extra["partial"]
    table = tasks_view.comparison_table(rows)
    assert "per switch, p50/2 (ns)" not in table.columns
    assert table[tasks_view.SWITCH_COLUMN].iloc[0] == pytest.approx(2200.0)
    note = tasks_view.switch_note_text(rows)
    assert "Partial here" in note and "OS process" in note
    distributions = tasks_view.switch_distribution_table(rows)
    assert distributions.loc[thread["task"], "p50"] == ROUND_TRIPS["p50"]


def test_the_ratio_divides_the_two_switches_not_the_round_trips() -> None:
    thread = kernel_rows.kernel_task_rows(
        kernel_rows.switch_findings({"thread": _kernel_run("thread", [4400.0])}), {})
    fiber = Result("fibers", {"impl": "asm"}, {"switch_ns_batch": 11.0})
    rows = [*thread[:1], {**thread[0], "task": "C fiber, hand-written switch", "kind": "fiber",
                          "switch": tasks_view.switch_of("switch_fiber_batch_mean_ns",
                                                         [fiber])}]
    text = tasks_view.switch_ratio_text(rows)
    assert "200x" in text and "2,200 ns" in text and "11.0 ns" in text
