"""The headline: one definition per column, every cell measured or saying why not."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd

from threadcost.experiments.thread_memory import process_memory
from threadcost.host import machine
from threadcost.store import datastore
from threadcost.views import headline


def test_empty_data_folder_gives_a_reason_for_every_cell(tmp_path: Path) -> None:
    values = headline.cells(tmp_path, "no-such-machine")
    assert len(values) == len(headline.TASKS) * len(headline.COLUMNS)
    assert values["value"].isna().all()
    assert values["not_run"].map(lambda r: isinstance(r, str) and len(r) > 5).all()
    table = headline.table(values)
    # a kernel thread's switch is the OS thread's (one definition per column): said so
    assert table.map(lambda t: t.startswith("not measured: ")
                     or t == headline.KERNEL_THREAD_SWITCH).all().all()
    switch = values[values.column == "switch"].set_index("task").not_run
    assert switch["rust-thread"] == switch["java-platform"] == headline.KERNEL_THREAD_SWITCH
    assert switch["thread"] != headline.KERNEL_THREAD_SWITCH
    fig = headline.figure(values)
    plt.close(fig)
    assert "Too few" in headline.sentence(values)


def test_a_stored_run_fills_its_cell(tmp_path: Path) -> None:
    fp = machine.fingerprint(include_git=False)
    run = process_memory.run(counts=[2, 4, 6], repeats=1, settle_ms=0)
    saved = datastore.save_run(run, data_dir=tmp_path, fingerprint=fp)
    values = headline.cells(tmp_path, machine.machine_id(fp))
    cell = values[(values.task == "process") & (values.column == "memory")].iloc[0]
    assert cell.value == run.summary["fits"]["total_kib"]["per_process_kib"]
    assert pd.isna(cell.not_run) and cell.source == f"stored run {saved.name}"
    others = values[~((values.task == "process") & (values.column == "memory"))]
    assert others["value"].isna().all()
    assert not headline.table(values).loc["process"].iloc[2].startswith("not measured")
    fig = headline.figure(values)
    plt.close(fig)
    notes = headline.notes(values)
    assert list(notes.index) == [("memory", "OS process")]
