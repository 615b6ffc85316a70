"""The path CONTRIBUTING.md gives for a new claim, walked on a temporary copy: one
record module (collected from a records package without any list), and nothing else
typed. The claim is judged by ``threadcost claims`` on a stored run copied from the
repository, lands in the published tables, and is shown on the page its record names.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from threadcost import claims, cli, paths
from threadcost.claims import catalogue, publish, records
from threadcost.views import claims as claims_view

NEW_ID = "C" + "99"  # a claim no record declares (built, so no scan mistakes it for one)
RECORD = f'''"""A claim added the way CONTRIBUTING.md says: one record."""

from threadcost.claims.model import Claim, Published, Quote, Reading
from threadcost.findings.context_switch import yardstick

CLAIMS = (
    Claim("{NEW_ID}", source="S0",
          words="An empty system call takes well under 10 µs.",
          source_doc="a source added by a test",
          quotes=(Quote("a system call is cheap", "https://example.org/post"),),
          published=(Published("syscall_ns", 10_000, "ns", "an upper bound"),),
          pages=("04_context_switch",), experiments=("yardsticks",),
          as_published=(
              Reading("An empty system call takes under 10 µs", "ns", None, 10_000,
                      yardstick("syscall"), timing=True, published=10_000,
                      tolerance_words="below 10 µs", quote="a system call is cheap"),
          )),
)
'''


@pytest.fixture()
def with_new_record(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A records package in a temporary folder holding the new claim's module, collected
    beside the project's; returns a data folder holding one stored yardsticks run."""
    package = tmp_path / "added_records"
    package.mkdir()
    (package / "__init__.py").write_text('"""Records added by a test."""\n', encoding="utf-8")
    (package / "s99.py").write_text(RECORD, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(records, "PACKAGES", (*records.PACKAGES, "added_records"))
    monkeypatch.setattr(catalogue, "CLAIMS", records.discover())
    runs = sorted(paths.REPO_ROOT.glob("data/*/*-yardsticks-*"))
    if not runs:
        pytest.skip("no stored yardsticks run in this checkout's data/")
    data = tmp_path / "data"
    shutil.copytree(runs[0], data / runs[0].parent.name / runs[0].name)
    return data


def test_a_new_record_is_judged_published_and_shown(with_new_record: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    data = with_new_record
    machine_id = next(data.iterdir()).name
    assert cli.main(["claims", "--machine", machine_id, "--data-dir", str(data),
                     "--json"]) == 0
    verdicts = {v["id"]: v for v in json.loads(capsys.readouterr().out)}
    new = verdicts[NEW_ID]
    assert new["claim"] == "An empty system call takes well under 10 µs."
    assert new["class"] != "not run here", new["verdict"]  # read from the copied run
    assert new["as_published"][0]["repeats"] >= 1

    # the published tables carry its words, value and quote
    assert NEW_ID in publish.as_csv("claims.csv")
    assert claims.value(NEW_ID, "syscall_ns") == 10_000
    assert NEW_ID in set(claims.quotes().claim_id)

    # its page lists it, and the page's claims table shows its reading
    assert NEW_ID in claims.for_page("04_context_switch")
    assert NEW_ID in claims.for_experiment("yardsticks")
    html = claims_view.claims_section(claims.for_page("04"), data,
                                      machine_id=machine_id)._repr_html_()
    assert "An empty system call takes under 10 µs" in html
