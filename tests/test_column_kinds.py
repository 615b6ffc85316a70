"""#37 item 1: each stored table's columns declare their kind in the table's declaration
(its family's spec, threadcost/experiments/<family>/spec.py), and a number is checked
against the kind its column declares; a column's name decides only for a table not
declared there."""

from __future__ import annotations

import csv
import gzip
import io
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from threadcost.errors import DataError
from threadcost.experiments import specs
from threadcost.results import table_checks

REPO = Path(__file__).resolve().parent.parent


def _columns(run: Path, table: str, meta: dict) -> list[str]:
    """A stored table's columns: from its run's table_schema, else its CSV header."""
    schema = (meta.get("table_schema") or {}).get(table)
    if isinstance(schema, dict) and isinstance(schema.get("columns"), list):
        return [str(c) for c in schema["columns"]]
    path = run / f"{table}.csv"
    raw = path.read_bytes() if path.exists() else gzip.decompress(
        (run / f"{table}.csv.gz").read_bytes())
    return next(csv.reader(io.StringIO(raw.decode().split("\n", 1)[0])), [])


def _stored() -> list[tuple[str, str, str, list[str]]]:
    """(run, experiment, table, columns) of every table of every run under data/."""
    found = []
    for meta_path in sorted((REPO / "data").glob("*/*/meta.json")):
        meta = json.loads(meta_path.read_text())
        for table in meta.get("tables", []):
            found.append((meta_path.parent.name, meta["experiment"], table,
                          _columns(meta_path.parent, table, meta)))
    return found


STORED = _stored()


def test_there_are_stored_runs_to_check() -> None:
    assert len({run for run, *_ in STORED}) >= 50


def test_every_column_of_every_stored_table_declares_its_kind() -> None:
    undeclared = sorted({f"{experiment}/{table}: {column}"
                         for _, experiment, table, columns in STORED for column in columns
                         if column not in specs.column_kinds(experiment, table)})
    assert not undeclared, ("declare these in their family's spec: "
                            + ", ".join(undeclared[:20]))


def test_every_declared_kind_is_a_known_one() -> None:
    unknown = {f"{e.name}/{t.name}: {c} = {k}" for e in specs.experiments()
               for t in e.tables for c, k in t.columns.items()
               if k not in table_checks.KINDS}
    assert not unknown


def test_declarations_cover_the_tables_every_run_holds() -> None:
    stored = {(e, t) for _, e, t, _ in STORED}
    for experiment in {e for e, _ in stored}:
        for table in specs.get(experiment).table_names:
            if (experiment, table) in stored:
                assert specs.column_kinds(experiment, table), (experiment, table)


def test_the_declared_kind_decides_not_the_name(tmp_path: Path) -> None:
    # "held" says nothing by its name (any finite number); declared a time, -1 is refused
    frame = pd.DataFrame({"held": [5.0, -1.0]})
    table_checks.check_ranges(tmp_path / "t.csv", frame)  # judged by its name: accepted
    with pytest.raises(DataError, match=r"column 'held', row 2: '-1.0' is impossible: a time"):
        table_checks.check_ranges(tmp_path / "t.csv", frame, {"held": "time"})
    # a declared text column (a reason, empty when the run ran) is not a number
    table_checks.check_ranges(tmp_path / "t.csv", pd.DataFrame({"not_run": [np.nan, -3.0]}),
                              {"not_run": "text"})


def test_a_stored_table_is_checked_with_its_declared_kinds(tmp_path: Path) -> None:
    from threadcost.results import Result
    from threadcost.store import datastore

    declared = specs.column_kinds("launch_growth", "repeats")
    assert declared["lifecycle_ns_p50"] == "time"
    frame = pd.DataFrame({"kind": ["thread"], "repeat": [0], "parent_touch_mib": [0],
                          "create_ns_p50": [1000.0], "lifecycle_ns_p50": [-5.0]})
    run = datastore.save_run(Result("launch_growth", {}, {}, {"repeats": frame}),
                             data_dir=tmp_path)
    with pytest.raises(DataError, match=r"lifecycle_ns_p50.*is impossible: a time"):
        datastore.load_run(run).table("repeats")
