"""The cells of a stored table, checked as it is read back (:func:`threadcost.store.datastore.
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
import re
from collections.abc import Mapping
from dataclasses import dataclass
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


def check_table(path: Path, frame: pd.DataFrame, schema: Any, where: str,
                declared: Mapping[str, str] | None = None) -> None:
    """A table read back, checked against the schema its run recorded (``where`` names
    that schema in a message): rows, columns, each column's kind, its empty and
    infinite cells, and every number's range (:func:`check_ranges`; ``declared``: the
    kind of each column, from its family's spec)."""
    if schema is None:  # runs saved before table_schema existed have none
        check_mixed(path, frame)
        check_finite(path, frame, None)
        check_ranges(path, frame, declared)
        return
    if not isinstance(schema, dict) or not isinstance(schema.get("columns"), list) \
            or not isinstance(schema.get("rows"), int):
        raise DataError(f"{where} is not {{rows: int, columns: [...]}}")
    columns = [str(c) for c in frame.columns]
    if columns != schema["columns"] or len(frame) != schema["rows"]:
        missing = [str(c) for c in schema["columns"] if c not in columns]
        what = (f"column {missing[0]!r} missing" if missing else
                f"{len(frame)} rows where meta.json says {schema['rows']}"
                if len(frame) != schema["rows"] else f"columns {', '.join(columns)[:200]}")
        raise DataError(f"{path}: {what} (truncated or edited?)")
    kinds = schema.get("kinds")
    if isinstance(kinds, dict):
        counts = schema.get("missing")
        counts = counts if isinstance(counts, dict) else {}
        for column, kind in kinds.items():
            check_kind(path, frame, str(column), kind, counts.get(column))
    else:
        check_mixed(path, frame)
    check_finite(path, frame, schema)
    check_ranges(path, frame, declared)


def bad_cell(path: Path, frame: pd.DataFrame, column: str, mask: Any, what: str) -> DataError:
    row = int(np.asarray(mask).nonzero()[0][0])
    value = str(frame[column].iloc[row])[:40]
    return DataError(f"{path}: column {column!r}, row {row + 1}: {value!r} {what}")


def check_kind(path: Path, frame: pd.DataFrame, column: str, kind: str,
               missing: Any) -> None:
    if column not in frame.columns:
        raise DataError(f"{path}: column {column!r} missing (truncated or edited?)")
    values = frame[column]
    if kind == "number" and not pd.api.types.is_numeric_dtype(values):  # (else all numbers)
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
        bad = values.notna() & parsed.isna()
        if bad.any():
            bad[bad] = ~values[bad].astype(str).map(numbers_only)
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


# --- what each quantity can be ---------------------------------------------------------
# Every number a run stores is checked against what its quantity can be. A table's
# columns name their kind where its family's spec declares the table
# (its family's spec); a summary key, or a column of a table not
# declared there, is judged by its name, first matching rule of RULES first. A time is never
# negative, a rate is positive, a fraction lies within 0..1, a count is a whole number
# of at least zero; everything is finite and below a bound no measurement reaches
# (1e15 ns is twelve days; 1e15 KiB an exabyte). A run whose numbers are impossible was
# edited (or sent by someone who means harm): it is refused, named, never judged.
BOUND = 1e15
LIMIT_BOUND = 2.0**64  # a limit's value may be RLIM_INFINITY-like


@dataclass(frozen=True)
class ColumnKind:
    """What a stored number can be: ``low``..``high`` (``low`` itself excluded when
    ``positive``), whole when ``whole``; ``what`` names it in a refusal."""

    what: str
    low: float
    high: float
    positive: bool = False
    whole: bool = False

    def refused(self, x: np.ndarray) -> np.ndarray:
        """Mask of the finite values this quantity cannot take (NaN and infinity are
        :func:`check_finite`'s)."""
        finite = np.isfinite(x)
        with np.errstate(invalid="ignore"):
            bad = (x < self.low) | (x > self.high) | ((x == self.low) & self.positive)
            if self.whole:
                bad |= np.floor(x) != x
        return finite & bad

    def allowed(self) -> str:
        low = f"> {self.low:g}" if self.positive else f">= {self.low:g}"
        return f"{self.what} is {'a whole number ' if self.whole else ''}{low} and " \
               f"<= {self.high:g}"


TIME = ColumnKind("a time", 0, BOUND)
RATE = ColumnKind("a rate", 0, BOUND, positive=True)
RATIO = ColumnKind("a ratio of two costs", 0, BOUND, positive=True)
FRACTION = ColumnKind("a fraction", 0, 1)
PERCENT = ColumnKind("a percentage", 0, 100)
COUNT = ColumnKind("a count", 0, BOUND, whole=True)
# Memory is often measured as a difference of system-wide counters (meminfo's KernelStack
# or Slab before and after N tasks), which another process's activity can make negative
# per task: an amount is finite and bounded, not necessarily >= 0.
AMOUNT = ColumnKind("an amount (memory, CPUs, a statistic of costs)", -BOUND, BOUND)
CPU = ColumnKind("a CPU number (-1: not pinned)", -1, 2**20, whole=True)
LIMIT = ColumnKind("a limit", 0, LIMIT_BOUND)
SIGNED = ColumnKind("a difference or a fitted coefficient", -BOUND, BOUND)
PER_OPERATION = ColumnKind("a count per operation", 0, BOUND)
# The kinds a table declares for its columns (its family's spec); None: no number.
KINDS: dict[str, ColumnKind | None] = {
    "time": TIME, "rate": RATE, "ratio": RATIO, "per_operation": PER_OPERATION,
    "fraction": FRACTION, "percent": PERCENT, "count": COUNT, "cpu": CPU, "limit": LIMIT,
    "amount": AMOUNT, "signed": SIGNED, "flag": None, "text": None,
}

# (name pattern, quantity), first match wins; names match whole. Signed quantities come
# first: differences (after - before, a touch subtracted; a gap between two costs, also
# over a third), slopes and intercepts of fits, their intervals, gains; then the kinds by
# the words of their names.
RULES: tuple[tuple[str, ColumnKind], ...] = (
    (r"c\d_ns|indirect_ns|direct_ns|net_.*|.*_net_.*|deltas_.*|.*_minus_.*|gain.*|.*ci95.*|intercept.*|.*growth.*|.*_left_.*"
     r"|.*_delta_.*|.*_after_kib|slab_kib.*|system_page_tables_kib.*|kernel_kib.*"
     r"|.*_per_(task|thread|process|goroutine|fiber|hop)_kib.*|.*_kib_per_.*"
     r"|per_process_kib|gap_over_.*", SIGNED),
    (r"cpu|cpu_a|cpu_b", CPU),
    (r"value|needed|current|threads_allowed", LIMIT),
    (r"quantile|.*_share|(.*_)?r2", FRACTION),
    (r".*_pct", PERCENT),
    (r".*_per_s|rate.*", RATE),
    (r"ratio|.*_over_.*", RATIO),
    (r"(.*_)?(ns|us|ms|s|seconds)(_.*)?|switch|single|timer_overhead.*", TIME),
    (r"n|count|.*_count|repeat|repeats|round|rounds|index|order|wave|config|task|tasks"
     r"|fiber|fibers|goroutines|threads|started|created|finished|stopped|ready|requested"
     r"|wakeups|trips|hops|iterations|batches|operations|round_trips|pairs|runs|primes"
     r"|(.*_)?switches(_(min|max))?|voluntary|involuntary|vcsw|ivcsw|dtlb_misses"
     r"|dtlb_misses_(min|max)|(threads|tasks|fds|bytes)_.*|.*_bytes|bytes|hops_per_trip"
     r"|alive_at_spawn_end|peak_(os_)?threads|cached_stacks_held|too_deep|ops_per_batch"
     r"|gomaxprocs|cpus|max_tasks|max_threads|err|status", COUNT),
)
_RULES = tuple((re.compile(pattern), kind) for pattern, kind in RULES)


def kind_of(name: str) -> ColumnKind:
    """What the number named ``name`` (a column, or a key of a run's summary) can be:
    the first rule of :data:`RULES` its name matches; else any finite number below
    :data:`BOUND` (a statistic, a size, an amount: see :data:`AMOUNT`'s rules)."""
    for pattern, found in _RULES:
        if pattern.fullmatch(name):
            return found
    if re.fullmatch(r"(.*_)?(kib|mib|gib|bytes)(_.*)?|min|max|mean|median|p\d+|.*_median"
                    r"|.*_(min|max|mean)|cpu_busy|ws_mib|scale|planned_s", name):
        return AMOUNT
    return SIGNED


def check_ranges(path: Path, frame: pd.DataFrame,
                 declared: Mapping[str, str] | None = None) -> None:
    """Every number of a table within what its column's quantity can be: the kind the
    table declares for it (``declared``), else the one its name says (:func:`kind_of`)."""
    for column in frame.columns:
        values = frame[column]
        if pd.api.types.is_bool_dtype(values) or not pd.api.types.is_numeric_dtype(values):
            continue
        kind = (declared or {}).get(str(column))
        rule = kind_of(str(column)) if kind not in KINDS else KINDS[kind]
        if rule is None:  # a text or flag column (empty cells read back as numbers)
            continue
        bad = rule.refused(values.to_numpy(dtype=float))
        if bad.any():
            raise bad_cell(path, frame, str(column), bad, f"is impossible: {rule.allowed()}")


def check_meta_numbers(meta_path: Path, meta: dict[str, Any]) -> None:
    """The numbers of a run's meta.json: every one finite and below
    :data:`LIMIT_BOUND`; those of its summary (which claims read) also within what
    their key's quantity can be."""
    for where, key, value in _numbers(meta, "", depth=0):
        if not math.isfinite(value) or abs(value) > LIMIT_BOUND:
            raise DataError(f"{meta_path}: {where} = {value:g} is beyond any measurement")
        if where.startswith("summary.") and not _within_signed(where):
            rule = kind_of(key)
            if rule.refused(np.array([value], dtype=float)).any():
                raise DataError(f"{meta_path}: {where} = {value:g} is impossible: "
                                f"{rule.allowed()}")


def _within_signed(where: str) -> bool:
    """Whether a summary number sits under a key whose quantity is signed (the values of
    ``per_process_kib`` are differences of system-wide counters, which noise can make
    negative): the key of a number alone does not say that."""
    parents = [re.sub(r"\[\d+\]$", "", part) for part in where.split(".")[1:-1]]
    return any(pattern.fullmatch(part) and found is SIGNED
               for part in parents for pattern, found in _RULES)


def _numbers(value: Any, where: str, depth: int) -> Any:
    """(dotted path, last key, number) of every number in parsed JSON (bools are not)."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _leaf(item, f"{where}.{key}" if where else str(key), str(key), depth)
    elif isinstance(value, list):
        key = where.rsplit(".", 1)[-1]
        for i, item in enumerate(value):
            yield from _leaf(item, f"{where}[{i}]", key, depth)


def _leaf(item: Any, where: str, key: str, depth: int) -> Any:
    if isinstance(item, bool):
        return
    if isinstance(item, int | float):
        try:
            yield where, key, float(item)
        except OverflowError:  # an integer of hundreds of digits
            yield where, key, math.inf
    elif isinstance(item, dict | list):
        yield from _numbers(item, where, depth + 1)
