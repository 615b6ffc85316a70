"""S6's claims (C24, C25) on constructed ``peer_peak_memory`` runs, and its published
numbers against the quotes they were checked in (no peer runs here)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from threadcost import claims, paths
from threadcost.claims import catalogue
from threadcost.results import Result

KIB_PER_MB = 1e6 / 1024
POST = {10_000: {"rust-thread": 48.3, "tokio-task": 4.6, "goroutine": 28.6,
                 "java-platform": 244.4, "java-virtual": 78.5},
        1_000_000: {"tokio-task": 213.6, "goroutine": 2658.0, "java-virtual": 1154.0}}


def _peak(count: int, mb: dict[str, float]) -> Result:
    rows = [{"kind": kind, "label": kind, "requested": count, "measured_count": count,
             "count_bound": "requested", "max_rss_kib": v * KIB_PER_MB,
             "max_rss_kib_at_count": v * KIB_PER_MB, "not_run": None}
            for kind, v in mb.items()]
    params = {"kinds": list(mb), "count": count, "sleep_ms": 300, "thread_cap": count,
              "gate": True}
    return Result("peer_peak_memory", params, {}, {"runs": pd.DataFrame(rows)})


def _verdicts(tmp_path: Path, *results: Result) -> dict[str, claims.ClaimVerdict]:
    return {v.id: v for v in claims.judge(None, tmp_path, list(results))}


def test_the_posts_own_numbers_hold_every_reading(tmp_path: Path) -> None:
    got = _verdicts(tmp_path, _peak(10_000, POST[10_000]), _peak(1_000_000, POST[1_000_000]))
    for cid in ("C24", "C25"):
        assert [a.verdict for a in got[cid].assertions] == ["supported"] * len(
            got[cid].assertions), cid
        assert all(a.kind == "shape" and a.quote for a in got[cid].assertions)


def test_goroutines_below_half_a_thread_contradict_the_posts_words(tmp_path: Path) -> None:
    small_go = {**POST[10_000], "goroutine": 0.3 * POST[10_000]["rust-thread"]}
    c24 = _verdicts(tmp_path, _peak(10_000, small_go))["C24"]
    by = {a.text.split(" (")[0]: a.verdict for a in c24.assertions}
    assert by["Goroutines take more than 50% of the memory of Rust threads, and less than "
              "Rust threads"] == "contradicted"
    assert by["Goroutines take over 6x the memory of the best Rust program"] == "contradicted"
    # S6's program as modified here (every task waits for all): a labelled substitute
    assert c24.verdict == "substitute" and c24.label.startswith("substitute, contradicted")


def test_c25_says_which_count_is_missing(tmp_path: Path) -> None:
    c25 = _verdicts(tmp_path, _peak(10_000, POST[10_000]))["C25"]
    assert c25.verdict == "not run here" and "1,000,000" in c25.reason


@pytest.mark.parametrize("cid", ["C24", "C25"])
def test_every_published_number_is_in_a_quote(cid: str) -> None:
    claim = next(c for c in catalogue.CLAIMS if c.id == cid)
    quotes = pd.read_csv(paths.published_dir() / "quotes.csv")
    text = " ".join(quotes[quotes.claim_id == cid].quote)
    assert claim.published
    for p in claim.published:
        assert f"{p.value:g}" in text.replace(",", ""), (cid, p.quantity)
