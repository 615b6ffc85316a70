"""The run folders a process remembers (threadcost.store.run_cache) never hide a change.

A run read whole is remembered by the identity of each of its files (inode, size,
modification and change times); any change to one of them is a miss, and a run whose
files changed less than a second before it was read is not remembered at all (a
rewrite within the same clock tick keeps every time). What is computed from a folder
(the claims' verdicts) is keyed by the same identities.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd
import pytest

from threadcost.results import Result
from threadcost.store import datastore, run_cache


@pytest.fixture(autouse=True)
def _fresh_cache() -> None:
    run_cache.clear()


def _saved(root: Path, value: float = 1.5) -> Path:
    result = Result("demo", {"n": 3}, {"value": value},
                    {"points": pd.DataFrame({"x": [1, 2, 3], "y": [2.0, 4.0, 6.0]})})
    return datastore.save_run(result, data_dir=root)


def _rewrite_meta(path: Path, value: float) -> None:
    meta = json.loads((path / "meta.json").read_text())
    meta["summary"]["value"] = value
    (path / "meta.json").write_text(json.dumps(meta, indent=2))


@pytest.fixture
def settled_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every file counts as settled when read (as the committed folders are)."""
    monkeypatch.setattr(run_cache, "SETTLED_NS", -10**12)


def test_a_run_written_a_moment_ago_is_read_afresh(tmp_path: Path) -> None:
    """The same size, the same inode, likely the same clock tick: still seen."""
    path = _saved(tmp_path, 1.5)
    assert datastore.load_run(path).meta["summary"]["value"] == 1.5
    assert run_cache.lookup(path) is None  # not remembered: written just now
    _rewrite_meta(path, 2.5)  # same length of text, in place
    assert datastore.load_run(path).meta["summary"]["value"] == 2.5
    assert datastore.folder_state(tmp_path) is None  # nothing keyed on it is kept


@pytest.mark.usefixtures("settled_at_once")
def test_a_remembered_run_is_a_fresh_copy_and_any_change_is_read(tmp_path: Path) -> None:
    path = _saved(tmp_path, 1.5)
    datastore.load_run(path)
    assert run_cache.lookup(path) is not None  # remembered
    first = datastore.load_run(path)
    first.meta["summary"]["value"] = 99.0  # a reader's own copy
    assert datastore.load_run(path).meta["summary"]["value"] == 1.5
    _rewrite_meta(path, 2.5)
    assert datastore.load_run(path).meta["summary"]["value"] == 2.5
    meta = json.loads((path / "meta.json").read_text())
    meta["complete"] = False
    (path / "meta.json").write_text(json.dumps(meta))
    with pytest.raises(datastore.DataError, match="not marked complete"):
        datastore.load_run(path)


@pytest.mark.usefixtures("settled_at_once")
def test_a_changed_table_of_a_remembered_run_is_read(tmp_path: Path) -> None:
    path = _saved(tmp_path)
    datastore.load_run(path)
    (path / "points.csv").write_text("x,y\n1,2.0\n2,oops\n3,6.0\n")
    with pytest.raises(datastore.DataError, match=r"points\.csv"):
        datastore.load_run(path)
    assert run_cache.lookup(path) is None
    (path / "points.csv").unlink()
    with pytest.raises(datastore.DataError, match=r"points\.csv"):
        datastore.load_run(path)


@pytest.mark.usefixtures("settled_at_once")
def test_a_file_given_back_its_old_times_is_still_seen(tmp_path: Path) -> None:
    """Setting the modification time back (as a copy that keeps times does) moves the
    change time, which cannot be set back."""
    path = _saved(tmp_path, 1.5)
    before = os.stat(path / "meta.json")
    datastore.load_run(path)
    _rewrite_meta(path, 2.5)
    os.utime(path / "meta.json", ns=(before.st_atime_ns, before.st_mtime_ns))
    assert os.stat(path / "meta.json").st_mtime_ns == before.st_mtime_ns
    assert datastore.load_run(path).meta["summary"]["value"] == 2.5


@pytest.mark.usefixtures("settled_at_once")
def test_folder_state_follows_every_run_of_the_folder(tmp_path: Path) -> None:
    first = _saved(tmp_path)
    mid = first.parent.name
    assert datastore.folder_state(tmp_path, mid) is None  # not read yet
    datastore.scan(tmp_path, mid)
    state = datastore.folder_state(tmp_path, mid)
    assert state is not None and datastore.folder_state(tmp_path, mid) == state
    second = _saved(tmp_path, 2.0)
    assert datastore.folder_state(tmp_path, mid) is None  # a run not read yet
    datastore.scan(tmp_path, mid)
    grown = datastore.folder_state(tmp_path, mid)
    assert grown is not None and grown != state
    _rewrite_meta(second, 3.0)
    assert datastore.folder_state(tmp_path, mid) is None
    (first / "meta.json").write_text("")  # an unreadable run: never a key
    datastore.scan(tmp_path, mid)
    assert datastore.folder_state(tmp_path, mid) is None


@pytest.mark.usefixtures("settled_at_once")
def test_verdicts_are_judged_again_when_a_run_changes(tmp_path: Path) -> None:
    """The claims' verdicts on a folder are kept by its state: the same folder gives the
    same verdicts, a folder with one more run is judged afresh."""
    from threadcost import claims

    path = _saved(tmp_path)
    mid = path.parent.name
    first = claims.judge(mid, tmp_path)
    key = claims._judged_key(mid, tmp_path)
    assert key is not None and key in claims._JUDGED
    again = claims.judge(mid, tmp_path)
    assert again == first and again is not claims._JUDGED[key]
    _saved(tmp_path, 2.0)
    claims.judge(mid, tmp_path)
    newer = claims._judged_key(mid, tmp_path)
    assert newer is not None and newer != key and newer in claims._JUDGED


def test_a_table_rewritten_a_moment_after_it_was_read_is_read_again(tmp_path: Path) -> None:
    """Kept by the digest of its bytes while it may still change unseen: the same size,
    in place, maybe in the same clock tick, and the new numbers are read."""
    path = _saved(tmp_path)
    run = datastore.load_run(path)
    assert run.table("points")["y"].tolist() == [2.0, 4.0, 6.0]
    text = (path / "points.csv").read_text()
    (path / "points.csv").write_text(text.replace("4.0", "5.0"))
    assert run.table("points")["y"].tolist() == [2.0, 5.0, 6.0]
