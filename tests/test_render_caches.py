"""The caches that keep a stored rendering cheap never serve a stale answer.

- A run's meta.json text that was checked once is parsed again without its checks only
  while the text is the same: a changed meta.json is read afresh, a damaged one refused.
- Page 07's brigade pivot is keyed by the table's content: a changed cell changes the
  net time per hop.
- The findings of a few machines are kept at once, each folder's newest set only: a new
  run in a folder is read.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from threadcost import findings
from threadcost.findings import brigade
from threadcost.results import Result
from threadcost.store import datastore


def _saved(tmp_path: Path, value: float = 1.5) -> Path:
    result = Result("demo", {"n": 3}, {"value": value},
                    {"points": pd.DataFrame({"x": [1, 2, 3], "y": [2.0, 4.0, 6.0]})})
    return datastore.save_run(result, data_dir=tmp_path)


def test_a_changed_meta_json_is_read_again(tmp_path: Path) -> None:
    path = _saved(tmp_path)
    assert datastore.load_run(path).meta["summary"] == {"value": 1.5}
    first = datastore.load_run(path)  # the checked text again: a fresh dict each time
    first.meta["summary"]["value"] = 99.0
    assert datastore.load_run(path).meta["summary"] == {"value": 1.5}
    meta = json.loads((path / "meta.json").read_text())
    meta["summary"]["value"] = 2.5
    (path / "meta.json").write_text(json.dumps(meta))
    assert datastore.load_run(path).meta["summary"] == {"value": 2.5}
    meta["complete"] = False  # a text never checked is checked
    (path / "meta.json").write_text(json.dumps(meta))
    with pytest.raises(datastore.DataError, match="not marked complete"):
        datastore.load_run(path)


def test_a_listed_table_removed_after_a_read_is_named(tmp_path: Path) -> None:
    path = _saved(tmp_path)
    datastore.load_run(path)
    (path / "points.csv").unlink()  # the same meta.json text, its table gone
    with pytest.raises(datastore.DataError, match=r"points\.csv"):
        datastore.load_run(path)


def _brigade_table(thread_ns: float) -> pd.DataFrame:
    rows = []
    for repeat in range(3):
        for kind, ns in (("thread", thread_ns + repeat), ("one-thread", 100.0)):
            for tasks in (10, 500):
                rows.append({"kind": kind, "tasks": tasks, "placement": "unpinned",
                             "repeat": repeat, "trips": 5, "per_hop_ns_p50": ns * tasks / 10})
    return pd.DataFrame(rows)


def test_the_brigade_pivot_follows_the_table(tmp_path: Path) -> None:
    table = _brigade_table(300.0)
    got = brigade.net_per_hop(table, "thread", 10, "unpinned")
    assert got is not None and got[0] == pytest.approx(201.0) and got[3] == 3
    changed = table.copy()
    changed.loc[(changed.kind == "thread") & (changed.tasks == 10), "per_hop_ns_p50"] += 10.0
    again = brigade.net_per_hop(changed, "thread", 10, "unpinned")
    assert again is not None and again[0] == pytest.approx(211.0)
    assert brigade.net_per_hop(table, "thread", 10, "unpinned") == got
    assert brigade.net_per_hop(table, "thread", 500, "unpinned") is not None
    assert brigade.net_per_hop(table, "thread", 77, "unpinned") is None
    assert brigade.net_per_hop(table, "epoll", 10, "unpinned") is None
    assert brigade.net_per_hop(table, "thread", 10, "same-cpu") is None
    assert len(brigade._WIDE) <= brigade._WIDE_MAX


def test_findings_of_two_folders_kept_and_a_new_run_read(tmp_path: Path) -> None:
    findings.clear_cache()
    one, two = tmp_path / "one", tmp_path / "two"
    mid = _saved(one).parent.name
    _saved(two)
    a = findings.runs_of(one, mid)
    b = findings.runs_of(two, mid)
    assert findings.runs_of(one, mid) is a and findings.runs_of(two, mid) is b
    _saved(one, 3.0)  # a new run in folder one: read, and its older set dropped
    fresh = findings.runs_of(one, mid)
    assert fresh is not a and len(fresh.runs) == len(a.runs) + 1
    assert sum(1 for key in findings._CACHE if key[0] == str(one.resolve())) == 1
    findings.clear_cache()


class _Run:
    def __init__(self, table: pd.DataFrame) -> None:
        self.frame = table

    def table(self, name: str) -> pd.DataFrame:
        return self.frame.copy()


def test_the_nets_over_n_follow_the_table() -> None:
    run = _Run(_brigade_table(300.0))
    first = brigade._nets(run, "thread", "unpinned")
    assert list(first.index) == [10, 500] and first[10] == pytest.approx(201.0)
    first[10] = -1.0  # a caller's copy: the cache keeps its own
    assert brigade._nets(run, "thread", "unpinned")[10] == pytest.approx(201.0)
    run.frame.loc[run.frame.kind == "one-thread", "per_hop_ns_p50"] += 1.0
    assert brigade._nets(run, "thread", "unpinned")[10] == pytest.approx(200.0)
