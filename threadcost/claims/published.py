"""The published claims, their numbers, quotes and sources, as tables.

Each claim's words, source document, quotes and published values are typed once, in
its record (``threadcost/claims/records/``). The tables here are computed from the
records; ``data/published/{claims,values,quotes}.csv`` are the same tables written
out for readers who want the published numbers as data (``make published``, which
runs :mod:`threadcost.claims.publish`; a test fails when they are stale).
Citations are the one hand-kept file, ``data/published/references.csv``: a source's
record, shared with the paper's list of references.
"""

from __future__ import annotations

import pandas as pd

from threadcost import paths
from threadcost.claims import catalogue

CLAIM_COLUMNS = ["claim_id", "source", "source_doc", "their_machine", "claim"]
COLUMNS = ["claim_id", "quantity", "value", "low", "high", "unit", "note"]
QUOTE_COLUMNS = ["claim_id", "source", "reading", "quote", "address"]
REFERENCES_CSV = "references.csv"  # the one citations file, shared with the paper's index


def claims() -> pd.DataFrame:
    """One row per claim: claim_id, source, source_doc, their_machine, claim."""
    return pd.DataFrame([{"claim_id": c.id, "source": c.source, "source_doc": c.source_doc,
                          "their_machine": c.their_machine, "claim": c.words}
                         for c in catalogue.CLAIMS], columns=CLAIM_COLUMNS)


def values() -> pd.DataFrame:
    """One row per published quantity: claim_id, quantity, value, low, high, unit, note."""
    return pd.DataFrame([{"claim_id": c.id, "quantity": p.quantity, "value": p.value,
                          "low": p.low, "high": p.high, "unit": p.unit, "note": p.note}
                         for c in catalogue.CLAIMS for p in c.published], columns=COLUMNS)


def quotes() -> pd.DataFrame:
    """The source's words behind every reading, and every other sentence a record quotes:
    claim_id, source, reading (its text; empty for a sentence no reading judges), quote,
    address (where it was read: the record's, else the source's own address)."""
    addresses = dict(zip(sources().key, sources().address, strict=True))
    rows = []
    for c in catalogue.CLAIMS:
        where = {q.text: q.address for q in c.quotes}
        for _, r in c.readings():
            if r.quote:
                rows.append({"claim_id": c.id, "source": c.source, "reading": r.text,
                             "quote": r.quote,
                             "address": where.get(r.quote) or addresses.get(c.source, "")})
        judged = {r.quote for _, r in c.readings()}
        rows += [{"claim_id": c.id, "source": c.source, "reading": "", "quote": q.text,
                  "address": q.address} for q in c.quotes if q.text not in judged]
    return pd.DataFrame(rows, columns=QUOTE_COLUMNS)


def value(claim_id: str, quantity: str) -> float:
    """One published number, e.g. ``value("C07", "rss_after_touch_kib")``."""
    table = values()
    rows = table[(table.claim_id == claim_id) & (table.quantity == quantity)]
    if rows.empty:
        raise KeyError(f"no published value {quantity!r} for claim {claim_id}")
    return float(rows.iloc[0]["value"])


def values_for(claim_id: str) -> pd.DataFrame:
    if claim_id not in {c.id for c in catalogue.CLAIMS}:
        raise KeyError(f"no claim {claim_id} in threadcost/claims/records/")
    table = values()
    return table[table.claim_id == claim_id].reset_index(drop=True)


def sources() -> pd.DataFrame:
    """One row per source (S0, S0-code, S1..S5): key, author, title, year, address, code,
    note (``data/published/references.csv``, the file the paper's references list too)."""
    return pd.read_csv(paths.published_dir() / REFERENCES_CSV, dtype=str).fillna("")
