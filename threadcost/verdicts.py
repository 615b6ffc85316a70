"""Every published claim beside this machine's number, with a verdict in words.

Experiments report their share as ``Result.summary["claims"]`` rows (the
contract is in CONTRIBUTING.md). This module reads the complete runs of one
machine in a data folder, keeps for each (claim, quantity) the row of the most
recent run that reported it, joins the rows with ``data/published/values.csv``
and states a verdict by :data:`RULE`. Every claim C01..C17 appears, measured or
"not run here" with the reason; none is dropped.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pandas as pd

from threadcost import claims, datastore, machine

REPRODUCED = 1.5  # measured/published within this factor either way: reproduced
SAME_ORDER = 10.0  # within this factor: same order of magnitude

RULE = (f"ratio = measured here / published. Reproduced: the ratio is within "
        f"{REPRODUCED:g}x either way, or the measurement (with its interval) falls in the "
        f"published range. Same order: within {SAME_ORDER:g}x. Differs: beyond "
        f"{SAME_ORDER:g}x. Not run here: no measurement on this machine, with the reason.")

# Verdict classes, best first; a claim's verdict is that of its worst compared row.
CLASSES = ("reproduced", "same order", "differs", "measured", "not run")

# Which notebook measures each claim: only used to say why a claim has no row.
NOTEBOOK_FOR_CLAIM = {
    "C01": "04_context_switch", "C02": "04_context_switch", "C03": "04_context_switch",
    "C04": "05_user_space_tasks", "C05": "02_thread_memory", "C06": "02_thread_memory",
    "C07": "01_malloc_touch", "C08": "02_thread_memory", "C09": "03_launch",
    "C10": "02_thread_memory", "C11": "05_user_space_tasks", "C12": "02_thread_memory",
    "C13": "04_context_switch", "C14": "04_context_switch", "C15": "05_user_space_tasks",
    "C16": "02_thread_memory", "C17": "05_user_space_tasks",
}

# Units a row may use, as (dimension, factor to the dimension's base unit).
UNITS: dict[str, tuple[str, float]] = {
    "ns": ("time", 1e-9), "us": ("time", 1e-6), "µs": ("time", 1e-6), "ms": ("time", 1e-3),
    "s": ("time", 1.0),
    "B": ("memory", 1 / 1024), "bytes": ("memory", 1 / 1024), "KiB": ("memory", 1.0),
    "kB": ("memory", 1.0), "MiB": ("memory", 1024.0), "MB": ("memory", 1024.0),
    "GiB": ("memory", 1024.0**2),
    "iterations/s": ("rate", 1.0), "threads": ("count", 1.0), "goroutines": ("count", 1.0),
    "ratio": ("ratio", 1.0), "fraction": ("ratio", 1.0), "x": ("ratio", 1.0),
}
# Words for "bigger" and "smaller" per dimension (time: bigger is slower).
DIRECTION = {"time": ("slower", "faster"), "memory": ("larger", "smaller"),
             "rate": ("faster", "slower"), "count": ("more", "fewer"),
             "ratio": ("higher", "lower")}

COLUMNS = ["claim_id", "source", "their_machine", "claim", "quantity", "published",
           "published_low", "published_high", "unit", "measured", "ci_low", "ci_high",
           "ratio", "verdict_class", "verdict", "note", "experiment", "run_id",
           "created_utc"]


def _number(value: Any) -> float | None:
    """A finite float, or None (missing, NaN, text)."""
    if value is None or isinstance(value, bool):
        return None
    try:
        out = float(value)
    except (TypeError, ValueError):
        return None
    return out if math.isfinite(out) else None


def convert(value: float, unit: str, to_unit: str) -> float | None:
    """``value`` in ``unit`` expressed in ``to_unit``; None when they do not convert."""
    if unit == to_unit:
        return value
    a, b = UNITS.get(unit), UNITS.get(to_unit)
    if a is None or b is None or a[0] != b[0]:
        return None
    return value * a[1] / b[1]


def collect_rows(data_dir: str | Path | None = None,
                 machine_id: str | None = None) -> pd.DataFrame:
    """Claim rows of one machine's complete runs; per (claim, quantity) the newest.

    Columns: the row's own keys plus ``experiment``, ``run_id`` and
    ``created_utc`` of the run that reported it.
    """
    mid = machine_id or machine.machine_id()
    newest: dict[tuple[str, str], dict[str, Any]] = {}
    for run in datastore.list_runs(data_dir=data_dir, machine_id=mid):  # oldest first
        rows = run.meta.get("summary", {}).get("claims") or []
        if not isinstance(rows, list):
            continue
        for row in rows:
            if not isinstance(row, dict) or "claim_id" not in row:
                continue
            key = (str(row["claim_id"]), str(row.get("quantity") or row.get("not_run") or ""))
            newest[key] = {**row, "experiment": run.experiment,
                           "run_id": run.meta["run_id"],
                           "created_utc": run.meta.get("created_utc", "")}
    return pd.DataFrame(list(newest.values()))


def judge(measured: float | None, published: float | None, unit: str,
          low: float | None = None, high: float | None = None,
          ci_low: float | None = None, ci_high: float | None = None,
          virtualization: str = "none") -> tuple[str, str, float | None]:
    """(class, verdict in words, ratio) for one measured quantity against its published one.

    ``measured`` and the interval are in ``unit``, the published value's unit.
    """
    if measured is None:
        return "not run", "not run here: no measurement", None
    if published is None:
        return "measured", "measured here; no published number to compare", None
    if published <= 0 or measured <= 0:
        return ("measured", f"measured here; no ratio (published {published:g}, "
                f"measured {measured:g})", None)
    ratio = measured / published
    m_lo = ci_low if ci_low is not None else measured
    m_hi = ci_high if ci_high is not None else measured
    in_range = (low is not None and high is not None and m_hi >= low and m_lo <= high)
    dim = UNITS.get(unit, ("ratio", 1.0))[0]
    bigger, smaller = DIRECTION.get(dim, ("higher", "lower"))
    factor = ratio if ratio >= 1 else 1 / ratio
    digits = 2 if factor < 2 else 1 if factor < 100 else 0
    way = f"{factor:.{digits}f}x {bigger if ratio >= 1 else smaller} here"
    if factor < 1.01:
        way = "the same here (within 1%)"
    vm = (f" (this machine is a virtual machine: {virtualization})"
          if virtualization not in ("none", "", None) and dim == "time" and ratio > 1 else "")
    if in_range:
        return "reproduced", "reproduced (within the published range)", ratio
    if factor <= REPRODUCED:
        return "reproduced", f"reproduced (within {REPRODUCED:g}x): {way}", ratio
    if factor <= SAME_ORDER:
        return "same order", f"same order (within {SAME_ORDER:g}x), {way}{vm}", ratio
    return "differs", f"differs: {way}{vm}", ratio


def _published_lookup() -> dict[tuple[str, str], dict[str, Any]]:
    table = claims.values()
    return {(str(r.claim_id), str(r.quantity)): r._asdict()
            for r in table.itertuples(index=False)}


def verdict_table(data_dir: str | Path | None = None, machine_id: str | None = None,
                  virtualization: str | None = None) -> pd.DataFrame:
    """One row per reported (claim, quantity), plus one 'not run' row per silent claim.

    Every claim of ``data/published/claims.csv`` appears at least once, in ID order.
    """
    fp = None
    if machine_id is None or virtualization is None:
        fp = machine.fingerprint(include_git=False)
    mid = machine_id or machine.machine_id(fp)
    virt = virtualization if virtualization is not None else str(
        fp["virtualization"] if fp else "none")
    rows = collect_rows(data_dir, mid)
    published = _published_lookup()
    claim_info = claims.claims().set_index("claim_id")
    out: list[dict[str, Any]] = []
    for claim_id, info in claim_info.iterrows():
        mine = (rows[rows.claim_id == claim_id].to_dict("records")
                if not rows.empty else [])
        base = {"claim_id": claim_id, "source": info["source"],
                "their_machine": info["their_machine"], "claim": info["claim"]}
        if not mine:
            book = NOTEBOOK_FOR_CLAIM.get(str(claim_id), "its experiment notebook")
            out.append({**base, "verdict_class": "not run",
                        "verdict": f"not run here: no run of {book} is stored for this "
                                   "machine",
                        "note": ""})
            continue
        for row in mine:
            out.append({**base, **_judge_row(row, published, str(claim_id), virt)})
    table = pd.DataFrame(out)
    for col in COLUMNS:
        if col not in table.columns:
            table[col] = None
    return table[COLUMNS]


def _judge_row(row: dict[str, Any], published: dict[tuple[str, str], dict[str, Any]],
               claim_id: str, virt: str) -> dict[str, Any]:
    meta = {"quantity": row.get("quantity"), "note": row.get("note") or "",
            "experiment": row.get("experiment"), "run_id": row.get("run_id"),
            "created_utc": row.get("created_utc")}
    reason = row.get("not_run")
    if isinstance(reason, str) and reason.strip():
        return {**meta, "verdict_class": "not run", "verdict": f"not run here: {reason}"}
    unit = str(row.get("unit") or "")
    measured = _number(row.get("measured"))
    ci_low, ci_high = _number(row.get("ci_low")), _number(row.get("ci_high"))
    pub_q = row.get("published_quantity")
    pub = published.get((claim_id, str(pub_q))) if isinstance(pub_q, str) else None
    if pub is None:
        cls, words, ratio = judge(measured, None, unit)
        if isinstance(pub_q, str):
            words = f"measured here; published quantity {pub_q!r} not in values.csv"
        return {**meta, "unit": unit, "measured": measured, "ci_low": ci_low,
                "ci_high": ci_high, "verdict_class": cls, "verdict": words, "ratio": ratio}
    pub_unit = str(pub["unit"])
    conv = [convert(v, unit, pub_unit) if v is not None else None
            for v in (measured, ci_low, ci_high)]
    if measured is not None and conv[0] is None:
        return {**meta, "unit": unit, "measured": measured, "published": _number(pub["value"]),
                "verdict_class": "measured",
                "verdict": f"measured here in {unit}; published in {pub_unit}: not compared"}
    m, lo, hi = conv
    p_val, p_lo, p_hi = (_number(pub["value"]), _number(pub["low"]), _number(pub["high"]))
    cls, words, ratio = judge(m, p_val, pub_unit, p_lo, p_hi, lo, hi, virt)
    return {**meta, "quantity": pub_q, "unit": pub_unit, "measured": m, "ci_low": lo,
            "ci_high": hi, "published": p_val, "published_low": p_lo, "published_high": p_hi,
            "ratio": ratio, "verdict_class": cls, "verdict": words}


def claim_verdicts(table: pd.DataFrame) -> pd.DataFrame:
    """One row per claim: its worst compared verdict (reproduced < same order < differs).

    A claim with only 'measured' or 'not run' rows takes the best of those.
    """
    out = []
    for claim_id, group in table.groupby("claim_id", sort=True):
        compared = group[group.verdict_class.isin(CLASSES[:3])]
        if not compared.empty:
            rank = compared.verdict_class.map(CLASSES.index)
            pick = compared.loc[rank.idxmax()]
            n = len(compared)
            verdict = pick.verdict if n == 1 else f"{pick.verdict} (worst of {n} quantities)"
        else:
            rank = group.verdict_class.map(CLASSES.index)
            pick = group.loc[rank.idxmin()]
            verdict = pick.verdict
        out.append({"claim_id": claim_id, "source": pick.source, "claim": pick.claim,
                    "verdict_class": pick.verdict_class, "verdict": verdict})
    return pd.DataFrame(out)


def counts(table: pd.DataFrame) -> dict[str, int]:
    """How many claims got each verdict class (by :func:`claim_verdicts`)."""
    per_claim = claim_verdicts(table)
    return {cls: int((per_claim.verdict_class == cls).sum()) for cls in CLASSES}


def machines(data_dir: str | Path | None = None) -> list[str]:
    """Machine folders of a data folder that hold at least one complete run."""
    return sorted({run.meta["machine_id"] for run in datastore.list_runs(data_dir=data_dir)
                   if "machine_id" in run.meta})
