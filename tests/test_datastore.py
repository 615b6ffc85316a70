"""Run folders: unique, atomic, validated on read."""

from __future__ import annotations

import gzip
import json

import pandas as pd
import pytest

from threadcost.results import Result
from threadcost.store import datastore, run_tables


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


# ------------------------------------------------ compressed tables, across runs

def _big() -> Result:
    n = 60_000  # well over GZIP_ABOVE_BYTES as CSV
    return Result("samples", {"n": n}, {},
                  {"round_trips": pd.DataFrame({"i": range(n), "ns": [1000.5 + i % 7
                                                                    for i in range(n)]}),
                   "points": pd.DataFrame({"x": [1, 2]})})


def test_large_tables_are_stored_gzipped_and_read_back(tmp_path) -> None:
    path = datastore.save_run(_big(), data_dir=tmp_path)
    assert (path / "round_trips.csv.gz").is_file() and not (path / "round_trips.csv").exists()
    assert (path / "points.csv").is_file()  # small tables stay plain text
    with gzip.open(path / "round_trips.csv.gz", "rt") as fh:
        assert fh.readline().strip() == "i,ns"
    table = datastore.load_run(path).table("round_trips")
    assert len(table) == 60_000 and table["ns"].iloc[8] == 1001.5
    assert pd.read_csv(path / "round_trips.csv.gz").equals(table)  # pandas' own reading


def test_a_run_folder_is_the_results_stored_form(tmp_path) -> None:
    """save_run writes the Result's stored form byte for byte (tables, then meta.json
    with each table's schema), and the run reads back as the same Result."""
    result = _big()
    path = datastore.save_run(result, data_dir=tmp_path, label="demo")
    meta = json.loads((path / "meta.json").read_text())
    files = result.stored_files(run_id=meta["run_id"], machine_id=meta["machine_id"],
                                created_utc=meta["created_utc"], machine=meta["machine"],
                                label="demo")
    assert list(files)[-1] == "meta.json"
    assert sorted(files) == sorted(p.name for p in path.iterdir())
    assert all((path / name).read_bytes() == data for name, data in files.items())
    assert meta["table_schema"] == result.table_schema()
    back = datastore.load_run(path).result()
    assert (back.experiment, back.params, back.summary, back.limit_hit) == \
        (result.experiment, result.params, result.summary, result.limit_hit)
    assert list(back.tables) == list(result.tables)
    assert all(back.tables[name].equals(frame) for name, frame in result.tables.items())


def test_a_truncated_gzip_table_is_named(tmp_path) -> None:
    path = datastore.save_run(_big(), data_dir=tmp_path)
    gz = path / "round_trips.csv.gz"
    gz.write_bytes(gz.read_bytes()[: gz.stat().st_size // 2])
    with pytest.raises(datastore.DataError, match=r"round_trips\.csv\.gz"):
        datastore.load_run(path).table("round_trips")


def _fingerprint(cpu_model: str) -> dict:
    from threadcost.host import machine

    return {**machine.fingerprint(include_git=False), "cpu_model": cpu_model}


def test_load_table_across_runs_and_machines(tmp_path) -> None:
    a, b = _fingerprint("Alpha CPU"), _fingerprint("Beta CPU")
    first = datastore.save_run(_result(), data_dir=tmp_path, fingerprint=a)
    datastore.save_run(_result(), data_dir=tmp_path, fingerprint=b)
    datastore.save_run(_result(), data_dir=tmp_path, fingerprint=b)
    datastore.save_run(Result("other", {}, {}, {"other": pd.DataFrame({"z": [0]})}),
                       data_dir=tmp_path, fingerprint=a)
    frame = run_tables.load_table("points", data_dir=tmp_path)
    assert list(frame.columns[:4]) == ["machine_id", "run_id", "experiment", "created_utc"]
    assert len(frame) == 9 and frame["run_id"].nunique() == 3
    assert frame["machine_id"].nunique() == 2 and set(frame["experiment"]) == {"demo"}
    assert str(frame["created_utc"].dtype).startswith("datetime64")
    assert list(frame.groupby("run_id")["y"].sum()) == [12.0, 12.0, 12.0]
    one = run_tables.load_table("points", machines=first.parent.name, data_dir=tmp_path)
    assert set(one["run_id"]) == {first.name}
    both = run_tables.load_table("points", machines=[first.parent.name, "nope"],
                                experiment="demo", data_dir=tmp_path)
    assert len(both) == 3
    with pytest.raises(datastore.DataError, match=r"'missing'.*tables there: other, points"):
        run_tables.load_table("missing", data_dir=tmp_path)


def test_runs_frame_has_one_row_per_run_with_the_fingerprint_flattened(tmp_path) -> None:
    a, b = _fingerprint("Alpha CPU"), _fingerprint("Beta CPU")
    datastore.save_run(_result(), data_dir=tmp_path, fingerprint=a)
    datastore.save_run(_big(), data_dir=tmp_path, fingerprint=b)
    runs = run_tables.runs_frame(data_dir=tmp_path)
    assert len(runs) == 2 and runs["run_id"].is_unique
    assert set(runs["cpu_model"]) == {"Alpha CPU", "Beta CPU"}
    assert {"machine_id", "experiment", "created_utc", "kernel", "logical_cpus",
            "tables"} <= set(runs.columns)
    assert any(c.startswith("limits.") for c in runs.columns)  # nested keys flattened
    assert not any(isinstance(v, dict | list) for v in runs.iloc[0])
    assert list(run_tables.runs_frame(experiment="samples", data_dir=tmp_path)["tables"]) == [
        "round_trips,points"]
    assert run_tables.runs_frame(data_dir=tmp_path / "empty").empty


# ------------------------------------------------ Result.save and Result.load

def _mixed() -> Result:
    return Result("mixed", {"a": [1, 2], "b": {"c": None}}, {"value": 2.5, "k": 4},
                  {"t": pd.DataFrame({"flag": [True, False, True], "name": ["a", "b", "c"],
                                      "v": [1.0, float("nan"), 3.0]}),
                   "round_trips": _big().tables["round_trips"]},
                  limit_hit={"limit": "nproc", "errno": 11})


def test_a_saved_result_loads_back_as_itself(tmp_path) -> None:
    """Result.save writes the stored form into the folder named (run id: its name,
    machine id: its parent's) and Result.load reads back the same result."""
    from threadcost.host import machine

    result = _mixed()
    folder = result.save(tmp_path / "some-machine" / "some-run",
                         machine=machine.fingerprint(include_git=False),
                         created_utc="2026-01-02T03:04:05Z", label="x")
    assert folder == tmp_path / "some-machine" / "some-run"
    meta = json.loads((folder / "meta.json").read_text())
    assert (meta["run_id"], meta["machine_id"], meta["label"]) == ("some-run",
                                                                   "some-machine", "x")
    files = result.stored_files(run_id="some-run", machine_id="some-machine",
                                created_utc="2026-01-02T03:04:05Z", machine=meta["machine"],
                                label="x")
    assert sorted(files) == sorted(p.name for p in folder.iterdir())
    assert all((folder / name).read_bytes() == data for name, data in files.items())
    back = Result.load(folder)
    assert (back.experiment, back.params, back.summary, back.limit_hit) == \
        (result.experiment, result.params, result.summary, result.limit_hit)
    assert list(back.tables) == list(result.tables)
    assert all(back.tables[name].equals(frame) for name, frame in result.tables.items())
    assert not any(p.name.endswith(".partial") for p in folder.parent.iterdir())


def test_a_result_is_never_saved_over_a_folder(tmp_path) -> None:
    from threadcost.host import machine

    folder = tmp_path / "m" / "r"
    folder.mkdir(parents=True)
    with pytest.raises(FileExistsError):
        _result().save(folder, machine=machine.fingerprint(include_git=False))
    assert list(folder.iterdir()) == [] and [p.name for p in folder.parent.iterdir()] == ["r"]


def _meta_edit(**changes):
    def edit(path):
        meta = json.loads((path / "meta.json").read_text())
        meta.update(changes)
        (path / "meta.json").write_text(json.dumps(meta))
    return edit


DAMAGE = {
    "no meta.json": (lambda p: (p / "meta.json").unlink(), "{m}: missing (an incomplete run?)"),
    "not json": (lambda p: (p / "meta.json").write_text("{not json"),
                 "{m}: not valid JSON (Expecting property name enclosed in double quotes: "
                 "line 1 column 2 (char 1))"),
    "incomplete": (_meta_edit(complete=False), "{m}: run is not marked complete"),
    "version": (_meta_edit(schema_version=2), "{m}: schema_version 2, expected 1"),
    "no table file": (lambda p: (p / "points.csv").unlink(),
                      "{p}/points.csv: listed in meta.json but missing (nor is there a .csv.gz)"),
    "a row less": (lambda p: (p / "points.csv").write_text("x,y\n1,2.0\n2,4.0\n"),
                   "{p}/points.csv: 2 rows where meta.json says 3 (truncated or edited?)"),
    "text in a number": (lambda p: (p / "points.csv").write_text("x,y\n1,2.0\n2,oops\n3,6.0\n"),
                         "{p}/points.csv: column 'y', row 2: 'oops' is not a number"),
}


@pytest.mark.parametrize("case", sorted(DAMAGE))
def test_a_damaged_folder_is_refused_by_load_as_by_the_store(case, tmp_path) -> None:
    """Result.load and datastore.load_run are one reader: the same DataError, word for
    word, naming the file."""
    path = datastore.save_run(_result(), data_dir=tmp_path)
    damage, message = DAMAGE[case]
    damage(path)
    expected = message.format(p=path, m=path / "meta.json")
    with pytest.raises(datastore.DataError) as by_load:
        Result.load(path)
    with pytest.raises(datastore.DataError) as by_store:
        datastore.load_run(path)
    assert str(by_load.value) == str(by_store.value) == expected
