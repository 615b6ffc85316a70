"""Run folders: unique, atomic, validated on read."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from threadcost import datastore
from threadcost.results import Result


def _result() -> Result:
    return Result("demo", {"n": 3}, {"value": 1.5},
                  {"points": pd.DataFrame({"x": [1, 2, 3], "y": [2.0, 4.0, 6.0]})})


def test_save_and_load_roundtrip(tmp_path) -> None:
    path = datastore.save_run(_result(), data_dir=tmp_path)
    run = datastore.load_run(path)
    assert run.experiment == "demo"
    assert run.meta["params"] == {"n": 3}
    assert run.meta["machine"]["logical_cpus"] >= 1
    assert list(run.table("points").y) == [2.0, 4.0, 6.0]


def test_runs_never_overwrite_each_other(tmp_path) -> None:
    paths = {datastore.save_run(_result(), data_dir=tmp_path) for _ in range(5)}
    assert len(paths) == 5
    assert len(datastore.list_runs("demo", data_dir=tmp_path)) == 5


def test_partial_and_broken_runs_are_ignored_and_named(tmp_path) -> None:
    good = datastore.save_run(_result(), data_dir=tmp_path)
    machine_dir = good.parent
    (machine_dir / ".20990101T000000Z-demo-aaaaaa.partial").mkdir()
    broken = machine_dir / "20990101T000000Z-demo-bbbbbb"
    broken.mkdir()
    (broken / "meta.json").write_text("{not json")
    assert [r.path for r in datastore.list_runs(data_dir=tmp_path)] == [good]
    with pytest.raises(datastore.DataError, match=r"meta\.json"):
        datastore.load_run(broken)


def test_missing_table_is_named(tmp_path) -> None:
    path = datastore.save_run(_result(), data_dir=tmp_path)
    (path / "points.csv").unlink()
    with pytest.raises(datastore.DataError, match=r"points\.csv"):
        datastore.load_run(path)


def test_a_failed_save_leaves_no_folder(tmp_path) -> None:
    bad = _result()
    bad.summary = {"x": object()}  # not JSON-serialisable: fails before the rename
    with pytest.raises(TypeError):
        datastore.save_run(bad, data_dir=tmp_path)
    assert not any(p.name.endswith(".partial") for p in tmp_path.rglob("*"))
    assert datastore.list_runs(data_dir=tmp_path) == []


def test_meta_is_plain_json(tmp_path) -> None:
    path = datastore.save_run(_result(), data_dir=tmp_path)
    meta = json.loads((path / "meta.json").read_text())
    assert meta["complete"] is True
    assert "git" in meta["machine"]
