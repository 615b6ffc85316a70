"""Every reading carries its source's words (#49 item 2), and the words are the rows of
``data/published/quotes.csv`` (``make published`` writes it from the records).

- every reading of every record quotes its source (never a sentence of ours);
- quotes.csv holds each reading's quote under its text, with where it was read, and no
  other quote of a reading;
- on every folder of data/, every judged reading's verdict carries that quote.
"""

from __future__ import annotations

import pandas as pd
import pytest

from tests.test_every_folder_renders import DATA, machine_folders
from threadcost import claims, paths
from threadcost.claims import catalogue


def _readings() -> list[tuple[str, str, str]]:
    return [(c.id, r.text, r.quote) for c in catalogue.CLAIMS for _, r in c.readings()]


def test_every_reading_quotes_its_source() -> None:
    unquoted = {(cid, text) for cid, text, quote in _readings() if not quote}
    assert unquoted == set()


def test_quotes_csv_holds_every_readings_words() -> None:
    table = pd.read_csv(paths.published_dir() / "quotes.csv", dtype=str).fillna("")
    rows = {(r.claim_id, r.reading): r for r in table.itertuples() if r.reading}
    for cid, text, quote in _readings():
        row = rows[(cid, text)]
        assert row.quote == quote and len(row.address) > 10, (cid, text)
    assert set(rows) == {(cid, text) for cid, text, _ in _readings()}


@pytest.mark.parametrize("folder", machine_folders())
def test_every_judged_reading_carries_its_quote(folder: str) -> None:
    quoted = {(cid, text): quote for cid, text, quote in _readings()}
    for c in claims.judge(folder, DATA):
        for a in c.assertions:
            assert a.quote == quoted[(c.id, a.text)], (folder, c.id, a.text)
            assert a.quote, (folder, c.id, a.text)
