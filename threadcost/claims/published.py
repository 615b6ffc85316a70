"""The published claims (C01..C23), their numbers and sources, from data/published/."""

from __future__ import annotations

import pandas as pd

from threadcost import paths


def claims() -> pd.DataFrame:
    """One row per claim: claim_id, source, source_doc, their_machine, claim."""
    return pd.read_csv(paths.published_dir() / "claims.csv")


def values() -> pd.DataFrame:
    """One row per published quantity: claim_id, quantity, value, low, high, unit, note."""
    return pd.read_csv(paths.published_dir() / "values.csv")


def value(claim_id: str, quantity: str) -> float:
    """One published number, e.g. ``value("C07", "rss_after_touch_kib")``."""
    table = values()
    rows = table[(table.claim_id == claim_id) & (table.quantity == quantity)]
    if rows.empty:
        raise KeyError(f"no published value {quantity!r} for claim {claim_id}")
    return float(rows.iloc[0]["value"])


def values_for(claim_id: str) -> pd.DataFrame:
    table = values()
    return table[table.claim_id == claim_id].reset_index(drop=True)


REFERENCES_CSV = "references.csv"  # the one citations file, shared with the paper's index


def sources() -> pd.DataFrame:
    """One row per source (S0, S0-code, S1..S5): key, author, title, year, address, code,
    note (``data/published/references.csv``, the file the paper's references list too)."""
    return pd.read_csv(paths.published_dir() / REFERENCES_CSV, dtype=str).fillna("")
