"""The verdict rule, and a claims table that never drops a claim."""

from __future__ import annotations

import pandas as pd
import pytest

from threadcost import claims, datastore, verdicts
from threadcost.experiments import malloc_touch

ALL_IDS = [f"C{i:02d}" for i in range(1, 24)]  # C18-C23: the I/O brigade (notebook 07)


@pytest.mark.parametrize("measured, published, cls", [
    (100.0, 100.0, "reproduced"),
    (140.0, 100.0, "reproduced"),
    (70.0, 100.0, "reproduced"),
    (300.0, 100.0, "same order"),
    (15.0, 100.0, "same order"),
    (1100.0, 100.0, "differs"),
    (5.0, 100.0, "differs"),
])
def test_rule_classes_by_ratio(measured: float, published: float, cls: str) -> None:
    got, words, ratio = verdicts.judge(measured, published, "ns")
    assert got == cls
    assert ratio == pytest.approx(measured / published)
    assert words.startswith(cls)


def test_a_measurement_inside_the_published_range_is_reproduced() -> None:
    got, _, _ = verdicts.judge(4.0, 1.0, "us", low=3.5, high=5.0)
    assert got == "reproduced"


def test_missing_measurement_or_published_number_is_said_not_hidden() -> None:
    assert verdicts.judge(None, 1.0, "ns")[0] == "not run"
    assert verdicts.judge(1.0, None, "ns")[0] == "measured"


def test_direction_words_follow_the_dimension() -> None:
    assert "slower" in verdicts.judge(200.0, 100.0, "ns")[1]
    assert "larger" in verdicts.judge(200.0, 100.0, "KiB")[1]


def test_units_convert_between_published_and_measured() -> None:
    assert verdicts.convert(1.0, "us", "ns") == pytest.approx(1000.0)
    assert verdicts.convert(1.0, "MiB", "KiB") == pytest.approx(1024.0)
    assert verdicts.convert(1.0, "ns", "KiB") is None


def test_every_claim_appears_with_no_runs_at_all(tmp_path) -> None:
    table = verdicts.verdict_table(tmp_path, machine_id="nowhere", virtualization="none")
    per_claim = verdicts.claim_verdicts(table)
    assert list(per_claim.claim_id) == ALL_IDS
    assert (per_claim.verdict_class == "not run").all()
    assert per_claim.verdict.str.startswith("not run here:").all()


def test_a_stored_run_fills_its_claim_and_leaves_the_rest_not_run(tmp_path) -> None:
    result = malloc_touch.run(mib=32, points=3)
    path = datastore.save_run(result, data_dir=tmp_path)
    run = datastore.load_run(path)
    table = verdicts.verdict_table(tmp_path, machine_id=run.meta["machine_id"],
                                   virtualization="none")
    per_claim = verdicts.claim_verdicts(table).set_index("claim_id")
    assert list(per_claim.index) == ALL_IDS
    assert per_claim.loc["C07", "verdict_class"] in ("reproduced", "same order", "differs")
    c07 = table[table.claim_id == "C07"]
    measured = {r["quantity"]: r["measured"] for r in result.summary["claims"]}
    for row in c07.itertuples():
        assert row.measured == pytest.approx(measured[row.quantity])
        assert row.published == claims.value("C07", row.quantity)
    assert (per_claim.drop(index="C07").verdict_class == "not run").all()


def test_published_values_cover_every_claim_with_units() -> None:
    values = claims.values()
    assert sorted(values.claim_id.unique()) == ALL_IDS
    assert values.unit.notna().all()
    assert pd.api.types.is_numeric_dtype(values.value)
    known = set(verdicts.UNITS)
    assert set(values.unit) <= known, set(values.unit) - known
