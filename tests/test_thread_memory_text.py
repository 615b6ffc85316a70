"""Page 02's sweep paragraph says when the reading from outside (pmap -x) was asked for
and none came (pmap hidden or missing, as on a reader's bare machine), instead of
leaving it out without a word."""

from __future__ import annotations

import copy
import math
from pathlib import Path

from threadcost.store import datastore
from threadcost.views import thread_memory as view

DATA = Path(__file__).resolve().parents[1] / "data"


def _stored_sweep() -> datastore.Run:
    folder = next(p for p in sorted(DATA.iterdir()) if any(p.glob("*-thread_memory-*")))
    return datastore.load_run(sorted(folder.glob("*-thread_memory-*"))[-1])


def test_a_sweep_without_pmap_readings_says_pmap_was_not_run() -> None:
    result = _stored_sweep().result()
    assert result.params.get("pmap")
    assert "`pmap -x`:" in view.sweep_text(result)
    blind = copy.deepcopy(result)
    blind.summary["per_thread"]["fit"]["rss_pmap_kib"]["per_thread"] = math.nan
    text = view.sweep_text(blind)
    assert "`pmap -x` was not run here" in text and "`pmap -x`:" not in text
    blind.params["pmap"] = False  # not asked for: nothing said
    assert "pmap" not in view.sweep_text(blind)
