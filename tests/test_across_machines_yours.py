"""Your runs beside the committed reference (issue 38, item 4): on a machine whose id is
the reference's, your runs land under runs/, the committed data/ is unchanged, and the
across-machines table shows both columns, yours marked, with their ratio."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from threadcost import paths
from threadcost.errors import ParameterError
from threadcost.host import machine
from threadcost.results import Result
from threadcost.store import datastore
from threadcost.views import across_machines

REFERENCE = "x86_64-amd-epyc-2cpu-24g-kvm-1650d2c6"


def _tree(folder: Path) -> list[tuple[str, int]]:
    return sorted((str(p.relative_to(folder)), p.stat().st_size)
                  for p in folder.rglob("*") if p.is_file())


@pytest.fixture
def on_the_reference_machine(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """This machine has the reference's id; your runs of it are a copy of the reference's."""
    source = paths.REPO_ROOT / "data" / REFERENCE
    if not source.is_dir():
        pytest.skip("the committed reference folder is not in this checkout")
    mine = tmp_path / "runs"
    shutil.copytree(source, mine / REFERENCE)
    monkeypatch.setenv("THREADCOST_DATA_DIR", str(mine))
    monkeypatch.setattr(machine, "machine_id", lambda fp=None: REFERENCE)
    return mine


def test_a_run_of_the_reference_machine_lands_apart(on_the_reference_machine: Path) -> None:
    committed = paths.REPO_ROOT / "data" / REFERENCE
    before = _tree(committed)
    fp = datastore.load_run(next(iter(sorted(committed.iterdir())))).meta["machine"]
    result = Result("malloc_touch", {"mib": 1}, {}, {})
    path = datastore.save_run(result, fingerprint=fp)
    assert path.parent.parent == on_the_reference_machine
    assert _tree(committed) == before
    with pytest.raises(ParameterError, match="only `make reference` writes"):
        datastore.save_run(result, data_dir=paths.REPO_ROOT / "data", fingerprint=fp)
    assert _tree(committed) == before
    assert paths.data_dir_for(REFERENCE) == on_the_reference_machine


def test_across_machines_marks_yours_with_a_ratio(on_the_reference_machine: Path) -> None:
    labels = across_machines.machines()
    mine = REFERENCE + across_machines.THIS_MACHINE
    assert REFERENCE in labels and mine in labels
    assert across_machines.reference_column(labels) == REFERENCE
    table = across_machines.headline_table(across_machines.headline_values())
    assert across_machines.RATIO in table.columns
    both = table.dropna(subset=[REFERENCE, mine])
    assert not both.empty
    # the same runs on both sides: every ratio is 1
    assert all(abs(r - 1.0) < 1e-9 for r in both[across_machines.RATIO])


def test_make_reference_promotes_the_papers_runs(monkeypatch: pytest.MonkeyPatch,
                                                 tmp_path: Path) -> None:
    import json

    from threadcost.store import reference

    mine, committed = tmp_path / "runs", tmp_path / "data"
    source = paths.REPO_ROOT / "data" / REFERENCE
    if not source.is_dir():
        pytest.skip("the committed reference folder is not in this checkout")
    shutil.copytree(source, mine / REFERENCE)
    monkeypatch.setenv("THREADCOST_DATA_DIR", str(mine))
    monkeypatch.setattr(paths, "reference_dir", lambda: committed)
    runs = sorted(p.name for p in (mine / REFERENCE).iterdir())[:2]
    static = tmp_path / "paper" / "html" / "_static"
    static.mkdir(parents=True)
    (static / "build.json").write_text(json.dumps({"machine_id": REFERENCE, "runs": runs}))
    target = reference.promote(tmp_path / "paper")
    assert target == committed / REFERENCE
    assert sorted(p.name for p in target.iterdir()) == runs
    assert all(_tree(target / r) == _tree(mine / REFERENCE / r) for r in runs)
    reference.promote(tmp_path / "paper")  # again: nothing over a run already there
    assert sorted(p.name for p in target.iterdir()) == runs
