"""The cells of a stored table, checked as it is read back (:func:`threadcost.datastore.
read_table`): numbers stay numbers, and no number went missing or infinite unless the run
said so.

How a run declares the cells it left empty:

- runs saved since ``table_schema`` records ``kinds`` and ``missing`` declare, per number
  column, how many cells were empty when saved (``NaN``: not measured, or not applicable
  to that row); ``infinite`` likewise counts infinite cells (none so far). A different
  count is damage;
- older runs carry no count: a number column may then hold empty cells only when it is
  one that code left empty where nothing was measured (:data:`MAY_BE_EMPTY`), or when
  every cell of it is empty (a text column with nothing in it reads back as numbers).
  Any other empty or NaN cell, and any infinite one, is named as damage.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from threadcost.errors import DataError

# Number columns that code saving runs before the "missing" counts left empty where a
# value was not measured or does not apply (a goroutine has no voluntary switches, a
# slope over fewer than three points has no interval, perf counters a VM does not
# expose, a limit that does not apply on this machine).
MAY_BE_EMPTY = frozenset({
    "value", "threads_allowed", "current",  # thread_limits: limits, advice
    "ratio", "ci95_low", "ci95_high",  # cpu_bound: ratios
    "dtlb_misses", "dtlb_misses_median", "dtlb_misses_min", "dtlb_misses_max",  # cpu_bound
    "voluntary_switches", "involuntary_switches",  # brigade: runs (goroutine rows)
    "rss_ci95_low", "rss_ci95_high", "rss_r2",  # brigade: memory
    "voluntary", "involuntary", "switches_per_round_trip",  # fiber_gap: repeats
    "rss_pmap_kib", "rss_pmap_kib_per_thread", "rss_pmap_kib_per_thread_min",
    "rss_pmap_kib_per_thread_max",  # thread_memory: points, per_stack_size, per_touch_depth
})


def bad_cell(path: Path, frame: pd.DataFrame, column: str, mask: Any, what: str) -> DataError:
    row = int(np.asarray(mask).nonzero()[0][0])
    value = str(frame[column].iloc[row])[:40]
    return DataError(f"{path}: column {column!r}, row {row + 1}: {value!r} {what}")


def check_kind(path: Path, frame: pd.DataFrame, column: str, kind: str,
               missing: Any) -> None:
    if column not in frame.columns:
        raise DataError(f"{path}: column {column!r} missing (truncated or edited?)")
    values = frame[column]
    if kind == "number":
        parsed = pd.to_numeric(values, errors="coerce")
        bad = values.notna() & parsed.isna()
        if bad.any():
            raise bad_cell(path, frame, column, bad, "is not a number")
    # Text cells may read back empty ("" and None are both written as nothing): only
    # a number column's count of empty cells is a fact about the run.
    if kind == "number" and isinstance(missing, int) and int(values.isna().sum()) != missing:
        raise DataError(f"{path}: column {column!r} has {int(values.isna().sum())} empty or "
                        f"NaN cells where the run stored {missing} (edited?)")


def check_mixed(path: Path, frame: pd.DataFrame) -> None:
    """Older runs record no column kinds: a column holding numbers and, in some cell,
    text that is not a number has been damaged (no stored table mixes the two)."""
    for column in frame.columns:
        values = frame[column]
        if pd.api.types.is_numeric_dtype(values) or pd.api.types.is_bool_dtype(values):
            continue
        parsed = pd.to_numeric(values, errors="coerce")
        if not parsed.notna().any():
            continue
        # A cell may list numbers ("0 1": the CPUs a run saw); anything else is damage.
        bad = values.notna() & parsed.isna() & ~values.astype(str).map(numbers_only)
        if bad.any():
            raise bad_cell(path, frame, str(column), bad, "is not a number")


def numbers_only(text: str) -> bool:
    tokens = text.split()
    try:
        return bool(tokens) and all(not math.isnan(float(t)) for t in tokens)
    except ValueError:
        return False


def check_finite(path: Path, frame: pd.DataFrame, schema: Any) -> None:
    """No infinite cell and no empty or NaN cell the run did not declare (see above)."""
    declared = schema if isinstance(schema, dict) else {}
    kinds = declared.get("kinds") if isinstance(declared.get("kinds"), dict) else {}
    missing = declared.get("missing") if isinstance(declared.get("missing"), dict) else {}
    infinite = declared.get("infinite") if isinstance(declared.get("infinite"), dict) else {}
    for column in frame.columns:
        name = str(column)
        values = frame[column]
        if kinds.get(name, "number") != "number" or pd.api.types.is_bool_dtype(values) \
                or not pd.api.types.is_numeric_dtype(values):
            continue
        x = values.to_numpy(dtype=float)
        inf = np.isinf(x)
        if int(inf.sum()) != infinite.get(name, 0):
            raise bad_cell(path, frame, name, inf, "is infinite, which no measurement "
                           "is (edited?)")
        if isinstance(missing.get(name), int):  # counted on save: check_kind compared it
            continue
        nan = np.isnan(x)
        if nan.any() and not nan.all() and name not in MAY_BE_EMPTY:
            raise bad_cell(path, frame, name, nan, "is empty or NaN in a number column "
                           "that this run filled in every other row (edited?)")
