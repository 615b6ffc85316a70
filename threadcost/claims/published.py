"""The published claims, their numbers and sources.

The numbers are typed once, in each claim's record (threadcost/claims/records/);
``data/published/values.csv`` keeps only the numbers of claims that have no record
yet. ``data/published/claims.csv`` holds each claim's words and source document.
"""

from __future__ import annotations

import pandas as pd

from threadcost import paths

COLUMNS = ["claim_id", "quantity", "value", "low", "high", "unit", "note"]


def claims() -> pd.DataFrame:
    """One row per claim: claim_id, source, source_doc, their_machine, claim (claims.csv,
    plus a row for every record that claims.csv does not list)."""
    from threadcost.claims.catalogue import CLAIMS

    table = pd.read_csv(paths.published_dir() / "claims.csv")
    listed = set(table.claim_id)
    extra = [{"claim_id": c.id, "source": c.source, "source_doc": "", "their_machine": "",
              "claim": c.words} for c in CLAIMS if c.id not in listed]
    return pd.concat([table, pd.DataFrame(extra)], ignore_index=True) if extra else table


def values() -> pd.DataFrame:
    """One row per published quantity: claim_id, quantity, value, low, high, unit, note."""
    from threadcost.claims.catalogue import CLAIMS

    rows = [{"claim_id": c.id, "quantity": p.quantity, "value": p.value, "low": p.low,
             "high": p.high, "unit": p.unit, "note": p.note}
            for c in CLAIMS for p in c.published]
    typed = {c.id for c in CLAIMS if c.published}
    csv = pd.read_csv(paths.published_dir() / "values.csv")
    csv = csv[~csv.claim_id.isin(typed)]
    frames = [f for f in (pd.DataFrame(rows, columns=COLUMNS), csv) if not f.empty]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=COLUMNS)


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
