"""A damaged run never changes a verdict silently (#26 items 2 and 3).

Each case copies the committed reference folder, damages one run, and checks that
``threadcost claims`` names the file and the reason on stderr and in ``--json``
(``skipped``), in one line, never a traceback; and that an unknown machine or an
empty data folder is refused (exit 2) naming what exists."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest

from threadcost import paths
from threadcost.host import machine
from threadcost.results import Result
from threadcost.store import datastore

REFERENCE = "x86_64-amd-epyc-2cpu-24g-kvm-1650d2c6"  # the committed reference run
SOURCE = paths.REPO_ROOT / "data" / REFERENCE
FP = {**machine.fingerprint(include_git=False), "cpu_model": "Test CPU"}

assert SOURCE.is_dir(), f"the committed reference run {REFERENCE} is missing"


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "threadcost", "claims", *args],
                          capture_output=True, text=True, timeout=300, check=False,
                          stdin=subprocess.DEVNULL)


def _copy(tmp_path: Path) -> Path:
    data = tmp_path / "data"
    shutil.copytree(SOURCE, data / REFERENCE)
    return data


def _run(data: Path, experiment: str) -> Path:
    return next(p for p in sorted((data / REFERENCE).iterdir())
                if p.name.split("-", 1)[1].rsplit("-", 1)[0] == experiment)


def _csv(run: Path) -> Path:
    return sorted(run.glob("*.csv"))[0]


def _empty_meta(run: Path) -> None:
    (run / "meta.json").write_text("")


def _no_meta(run: Path) -> None:
    (run / "meta.json").unlink()


def _null_meta(run: Path) -> None:
    (run / "meta.json").write_text("null")


def _text_cell(run: Path) -> None:
    path = run / "repeats.csv"
    frame = pd.read_csv(path)
    frame["rate_per_s"] = frame["rate_per_s"].astype(object)
    frame.loc[1, "rate_per_s"] = "lots"
    frame.to_csv(path, index=False)


def _old_run(run: Path) -> None:
    """The run as code before the kinds and missing counts saved it: rows and columns."""
    meta = json.loads((run / "meta.json").read_text())
    meta["table_schema"] = {name: {"rows": s["rows"], "columns": s["columns"]}
                            for name, s in meta["table_schema"].items()}
    (run / "meta.json").write_text(json.dumps(meta))


def _cell(run: Path, text: str) -> None:
    path = run / "repeats.csv"
    frame = pd.read_csv(path)
    frame["rate_per_s"] = frame["rate_per_s"].astype(object)
    frame.loc[1, "rate_per_s"] = text
    frame.to_csv(path, index=False)


def _old_run_nan_cell(run: Path) -> None:
    _old_run(run)
    _cell(run, "")


def _old_run_inf_cell(run: Path) -> None:
    _old_run(run)
    _cell(run, "inf")


def _inf_cell(run: Path) -> None:
    _cell(run, "-inf")


def _negative_rate(run: Path) -> None:
    _cell(run, "-1")


def _absurd_median(run: Path) -> None:
    path = run / "distributions.csv"
    frame = pd.read_csv(path)
    frame["p50"] = frame["p50"].astype(float)
    frame.loc[0, "p50"] = 1e308
    frame.to_csv(path, index=False)


def _climbing_table(run: Path) -> None:
    meta = json.loads((run / "meta.json").read_text())
    meta["tables"] = ["../../../repeats"]
    (run / "meta.json").write_text(json.dumps(meta))


def _linked_table(run: Path) -> None:
    path = run / "repeats.csv"
    outside = run.parent.parent.parent / "repeats.csv"
    path.rename(outside)
    path.symlink_to(outside)


def _truncated(run: Path) -> None:
    path = _csv(run)
    text = path.read_text()
    path.write_text(text[: len(text) // 2])


def _missing_column(run: Path) -> None:
    path = _csv(run)
    frame = pd.read_csv(path)
    frame.drop(columns=[frame.columns[-1]]).to_csv(path, index=False)


CASES: dict[str, tuple[str, Callable[[Path], None], str]] = {
    "empty meta.json": ("cpu_bound", _empty_meta, "not valid JSON"),
    "no meta.json": ("brigade", _no_meta, "missing"),
    "meta.json is null": ("cpu_bound", _null_meta, "null, not a JSON object"),
    "non-numeric cell": ("echo", _text_cell, "'lots' is not a number"),
    "truncated CSV": ("echo", _truncated, "rows where meta.json says"),
    "missing column": ("echo", _missing_column, "missing"),
    "NaN cell, run saved by old code": ("echo", _old_run_nan_cell,
                                        "row 2: 'nan' is empty or NaN in a number column"),
    "infinite cell, run saved by old code": ("echo", _old_run_inf_cell,
                                             "row 2: 'inf' is infinite"),
    "infinite cell": ("echo", _inf_cell, "row 2: '-inf' is infinite"),
    "negative rate": ("echo", _negative_rate,
                      "column 'rate_per_s', row 2: '-1.0' is impossible: a rate is > 0"),
    "launch median of 1e308": ("launch", _absurd_median,
                               "column 'p50', row 1: '1e+308' is impossible"),
    "table name climbing out": ("echo", _climbing_table,
                                "table name '../../../repeats' is not a plain name"),
    "table linked out": ("echo", _linked_table, "a symbolic link, not a regular file"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_damaged_run_is_named_not_dropped(case: str, tmp_path: Path) -> None:
    """The store names the damaged run and the reason, and reads every other run."""
    experiment, damage, reason = CASES[case]
    data = _copy(tmp_path)
    run = _run(data, experiment)
    damage(run)
    runs, skipped = datastore.scan(data)
    assert [s.path for s in skipped] == [run]
    assert reason in skipped[0].reason, skipped[0].reason
    assert len(runs) == len(list((data / REFERENCE).iterdir())) - 1


# Through the CLI, one damage per kind of experiment it hides (the claims read by
# name what the store skipped): a meta.json, a whole run's folder, a table's cell.
CLI_CASES = ["empty meta.json", "no meta.json", "infinite cell", "negative rate"]


@pytest.mark.parametrize("case", CLI_CASES)
def test_claims_name_the_damaged_run_and_move_no_verdict_silently(case: str,
                                                                  tmp_path: Path) -> None:
    experiment, damage, reason = CASES[case]
    data = _copy(tmp_path)
    run = _run(data, experiment)
    damage(run)
    proc = _cli("--machine", REFERENCE, "--data-dir", str(data), "--json")
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if "skipped" in ln]
    assert len(lines) == 1 and str(run) in lines[0] and reason in lines[0], proc.stderr
    out = json.loads(proc.stdout)
    assert all(c["skipped"] == out[0]["skipped"] for c in out)
    assert [s["path"] for s in out[0]["skipped"]] == [str(run)]
    assert reason in out[0]["skipped"][0]["reason"]
    # No verdict moved without saying so: every claim that is "not run here" names
    # the skipped run instead of claiming nothing was stored, and no reading says
    # that no run of the damaged experiment was stored.
    for claim in out:
        if claim["verdict"].startswith("not run here"):
            assert run.name in claim["reason"], claim
        assert f"no stored {experiment} run" not in claim["sentence"], claim


def test_nan_cell_in_a_number_column_is_named(tmp_path: Path) -> None:
    frame = pd.DataFrame({"repeat": [0, 1, 2], "ns": [1.5, 2.5, 3.5], "note": ["a", "", None]})
    saved = datastore.save_run(Result("demo", {}, {}, tables={"t": frame}),
                               data_dir=tmp_path, fingerprint=FP)
    assert datastore.load_run(saved).table("t")["ns"].tolist() == [1.5, 2.5, 3.5]
    path = saved / "t.csv"
    path.write_text(path.read_text().replace("2.5", ""))
    runs, skipped = datastore.scan(tmp_path)
    assert runs == [] and len(skipped) == 1
    assert "'ns' has 1 empty or NaN cells where the run stored 0" in skipped[0].reason


def test_old_run_keeps_its_legitimately_empty_columns(tmp_path: Path) -> None:
    """A run saved before missing counts: a column empty where nothing was measured
    (declared in table_checks.MAY_BE_EMPTY), or empty in every row, still loads."""
    frame = pd.DataFrame({"n": [1, 2, 3], "rss_r2": [0.9, None, 0.99],
                          "limit": [None, None, None], "ns": [1.5, 2.5, 3.5]})
    saved = datastore.save_run(Result("demo", {}, {}, tables={"t": frame}),
                               data_dir=tmp_path, fingerprint=FP)
    _old_run(saved)
    runs, skipped = datastore.scan(tmp_path)
    assert len(runs) == 1 and skipped == []
    path = saved / "t.csv"
    path.write_text(path.read_text().replace("2.5", ""))
    runs, skipped = datastore.scan(tmp_path)
    assert runs == [] and len(skipped) == 1
    assert "column 'ns', row 2: 'nan' is empty or NaN" in skipped[0].reason


def test_every_committed_run_loads() -> None:
    """The NaN and infinity checks skip none of the committed runs of any machine."""
    machines = [m for m in (paths.REPO_ROOT / "data").iterdir()
                if m.is_dir() and m.name != "published"]
    assert machines
    for folder in machines:
        runs, skipped = datastore.scan(paths.REPO_ROOT / "data", machine_id=folder.name)
        assert runs and skipped == [], [(s.path.name, s.reason) for s in skipped]


def test_unknown_machine_names_what_exists(tmp_path: Path) -> None:
    data = _copy(tmp_path)
    (data / REFERENCE).rename(data / "renamed-machine")
    proc = _cli("--machine", REFERENCE, "--data-dir", str(data))
    assert proc.returncode == 2
    assert "renamed-machine" in proc.stderr and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("folder", ["/proc", "empty"])
def test_data_folder_without_runs_is_refused(folder: str, tmp_path: Path) -> None:
    if folder == "empty":
        folder = str(tmp_path)
    proc = _cli("--data-dir", folder)
    assert proc.returncode == 2, proc.stderr
    assert "has none" in proc.stderr and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_stale_partial_folders_are_removed_on_save(tmp_path: Path) -> None:
    import os
    import time

    fp = FP
    first = datastore.save_run(Result("demo", {}, {}), data_dir=tmp_path, fingerprint=fp)
    mdir = first.parent
    old = mdir / ".20200101T000000Z-demo-aaaaaa.partial"
    young = mdir / ".20200101T000000Z-demo-bbbbbb.partial"
    for d in (old, young):
        d.mkdir()
        (d / "t.csv").write_text("x\n1\n")
    day_ago = time.time() - datastore.STALE_PARTIAL_S - 60
    os.utime(old, (day_ago, day_ago))
    datastore.save_run(Result("demo", {}, {}), data_dir=tmp_path, fingerprint=fp)
    assert not old.exists() and young.exists()
