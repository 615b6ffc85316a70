"""Tables as a reader reads them: readable headers with units, about three
significant figures, no index column, a dash (and its reason) for a missing value.

``show(frame)`` returns a table for ``display``. ``install()`` makes every
DataFrame and pandas Styler a notebook displays render through the same rules
(``plotting.use_paper_theme`` calls it), so no table cell of the paper shows a raw
column name, a numeric index, ``NaN`` or ``4e+05``.

Rules:
- column names: ``stack_kib_asked`` -> ``stack asked (KiB)``; names that already
  read as words (spaces or a unit in brackets) are kept;
- numbers: integers with thousands separators; other numbers to about three
  significant figures (``8196.1749`` -> ``8,196``, ``0.04567`` -> ``0.0457``),
  never in scientific notation;
- an interval whose ends read the same (``33.8 .. 33.8``) is shown once;
- a missing value is a dash; a note under the table says what a dash means;
- a frame's meaningful index (named, or labels) becomes the first column, a plain
  0..n-1 index is dropped.
"""

from __future__ import annotations

import html as html_lib
import itertools
import math
import re
from typing import Any

import numpy as np
import pandas as pd

from threadcost.findings import Marked

DASH = "—"
DEFAULT_MISSING = "not measured in this run, or not applicable to this row"

UNITS = {
    "ns": "ns", "us": "µs", "ms": "ms", "s": "s", "sec": "s",
    "kib": "KiB", "mib": "MiB", "gib": "GiB", "kb": "KiB", "mb": "MiB", "bytes": "bytes",
    "pct": "%", "percent": "%", "hz": "Hz", "per_s": "per s",
}
WORDS = {"vsz": "VSZ", "rss": "RSS", "cpu": "CPU", "cpus": "CPUs", "ci": "CI", "pid": "PID",
         "tlb": "TLB", "smt": "SMT", "id": "ID", "p50": "p50", "p99": "p99", "r2": "R²",
         "pss": "PSS", "uss": "USS", "io": "I/O", "os": "OS", "vm": "VM"}


def readable_name(name: Any) -> str:
    """A column name as a header: words, with the unit in brackets at the end."""
    if isinstance(name, tuple):
        return " ".join(readable_name(n) for n in name if str(n))
    text = str(name)
    if " " in text or "(" in text or not text:  # already words ("warm-up, p50 (us)")
        return re.sub(r"\(us\b", "(µs", re.sub(r"\bus\)", "µs)", text))
    if "-" in text or "." in text:  # an identifier such as a machine id: as it is
        return text
    tokens = [t for t in text.split("_") if t]
    unit = None
    if len(tokens) >= 3 and tokens[-2] == "per" and tokens[-1] == "s":
        unit, tokens = "per s", tokens[:-2]
    else:
        for i, tok in enumerate(tokens):
            if tok.lower() in UNITS and len(tokens) > 1:
                unit = UNITS[tok.lower()]
                tokens = tokens[:i] + tokens[i + 1:]
                break
    words = " ".join(WORDS.get(t.lower(), t) for t in tokens)
    return f"{words} ({unit})" if unit else words


def format_number(x: Any) -> str:
    """One number for a table cell: ~3 significant figures, never ``1e+05``."""
    if x is None or isinstance(x, bool | np.bool_):
        return DASH if x is None else ("yes" if x else "no")
    if isinstance(x, int | np.integer):
        return f"{int(x):,}"
    try:
        v = float(x)
    except (TypeError, ValueError):
        return str(x)
    if math.isnan(v):
        return DASH
    if math.isinf(v):
        return "∞" if v > 0 else "-∞"
    if v == 0:
        return "0"
    if v.is_integer() and abs(v) >= 100:
        return f"{v:,.0f}"
    digits = 2 - math.floor(math.log10(abs(v)))
    return f"{v:,.{max(digits, 0)}f}"


_INTERVAL = re.compile(r"^\s*(\S+)\s*\.\.\s*(\S+)\s*$")
_MISSING_TEXT = {"nan", "none", "nat", "<na>", "null", "", "-"}  # "-": one dash for all


def format_cell(x: Any) -> str:
    """Any cell: numbers by :func:`format_number`, missing values as a dash."""
    if isinstance(x, bool | np.bool_):
        return "yes" if x else "no"
    if isinstance(x, str):
        if x.strip().lower() in _MISSING_TEXT:
            return DASH
        m = _INTERVAL.match(x)
        if m and m.group(1) == m.group(2):
            return m.group(1)
        return x
    if isinstance(x, list | tuple):
        return ", ".join(format_cell(v) for v in x)
    if isinstance(x, dict):
        return ", ".join(f"{k}: {format_cell(v)}" for k, v in x.items())
    try:
        if pd.isna(x):
            return DASH
    except (TypeError, ValueError):
        pass
    if isinstance(x, int | float | np.integer | np.floating):
        return format_number(x)
    return str(x)


def _is_number_column(column: pd.Series) -> bool:
    """Numbers (and missing values) only: right-aligned, digits in columns."""
    if pd.api.types.is_bool_dtype(column):
        return False
    if pd.api.types.is_numeric_dtype(column):
        return True
    values = [v for v in column if not (v is None or (isinstance(v, float) and math.isnan(v)))]
    return bool(values) and all(isinstance(v, int | float | np.integer | np.floating)
                                and not isinstance(v, bool) for v in values)


# A finding as threadcost.findings.tag prints it (its text already escaped): kept as is
# in a cell the project's code marked (a findings.Marked string), escaped anywhere else.
_FINDING = re.compile(r'<span data-quantity="[\w/@.\-]+" data-value="[^"<>]*"'
                      r'(?: data-runs="[^"<>]*")?>[^<>]*</span>')


def _breakable(text: str, long: bool) -> str:
    text = html_lib.escape(text)
    return re.sub(r"_(?=\w)", "_<wbr>", text) if long else text


def cell_html(x: Any) -> str:
    """A cell as HTML: formatted, escaped, and breakable after each ``_`` of a long
    identifier (``goroutine_iterations_per_s``), so a narrow column wraps it. A
    finding's ``data-quantity`` span is kept only in a cell the project's code made
    with ``threadcost.findings`` (a ``Marked`` string): a value read from data is
    escaped whole, so it can never pass for a finding."""
    text = format_cell(x)
    if not isinstance(x, Marked):
        return _breakable(text, len(text) > 14)
    long = len(_FINDING.sub("", text)) > 14
    out, pos = [], 0
    for m in _FINDING.finditer(text):
        out += [_breakable(text[pos:m.start()], long), m.group(0)]
        pos = m.end()
    return "".join(out) + _breakable(text[pos:], long)


def tidy(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame as shown: meaningful index as a column, readable names, text cells."""
    df = frame.copy()
    if isinstance(df.index, pd.MultiIndex) or df.index.name is not None or not (
            isinstance(df.index, pd.RangeIndex) or pd.api.types.is_integer_dtype(df.index)):
        names = [n if n is not None else "" for n in (df.index.names or [None])]
        df.index = df.index.set_names(names)
        df = df.reset_index()
    else:
        df = df.reset_index(drop=True)
    df.columns = [readable_name(c) for c in df.columns]
    return df


class Table:
    """A table for ``display``: HTML in notebooks and in the paper, text elsewhere."""

    def __init__(self, frame: pd.DataFrame, missing: str = DEFAULT_MISSING,
                 note: str = "") -> None:
        self.frame = tidy(frame)
        self.missing = missing
        self.note = note

    def _cells(self) -> pd.DataFrame:
        return self.frame.map(format_cell) if len(self.frame) else self.frame.astype(str)

    def _repr_html_(self) -> str:
        cells = self._cells()
        numeric = [_is_number_column(self.frame[c]) for c in self.frame.columns]
        num = ' class="tc-num"'
        head = "".join(f"<th{num if n else ''}>{html_lib.escape(str(c))}</th>"
                       for c, n in zip(self.frame.columns, numeric, strict=True))
        rows = []
        for values in self.frame.itertuples(index=False):
            tds = "".join(f"<td{num if n else ''}>{cell_html(v)}</td>"
                          for v, n in zip(values, numeric, strict=True))
            rows.append(f"<tr>{tds}</tr>")
        body = (f'<table class="dataframe tc-table"><thead><tr>{head}</tr></thead>'
                f"<tbody>{''.join(rows)}</tbody></table>")
        notes = []
        if (cells == DASH).any().any():
            notes.append(f"{DASH}: {self.missing}.")
        if self.note:
            notes.append(self.note)
        foot = (f'<p class="tc-table-note">{" ".join(notes)}</p>' if notes else "")
        return body + foot

    def __repr__(self) -> str:
        return self._cells().to_string(index=False)


def show(frame: pd.DataFrame, missing: str = DEFAULT_MISSING, note: str = "") -> Table:
    """``display(tables.show(df))``: the frame by the paper's table rules.

    ``missing``: what a dash means in this table (said once, under it)."""
    return Table(frame, missing=missing, note=note)


_STYLED = itertools.count(1)


def style(styler: Any) -> Any:
    """A pandas Styler (kept for its colours) with the same rules: numbers, dashes,
    readable headers, no bare index."""
    data = styler.data
    # its CSS ids numbered in the order the tables are shown, not drawn at random: the
    # same runs, the same page
    styler = styler.set_uuid(f"tc{next(_STYLED)}")
    styler = styler.format(cell_html)
    styler = styler.format_index(lambda c: html_lib.escape(readable_name(c)), axis=1)
    styler = styler.format_index(lambda c: html_lib.escape(str(c)), axis=0)
    if isinstance(data.index, pd.RangeIndex) and data.index.name is None:
        styler = styler.hide(axis="index")
    return styler


def _styler_html(styler: Any) -> str:
    html = style(styler).to_html()
    if (styler.data.isna().any().any()
            or styler.data.astype(str).isin(["None", "nan", "NaN"]).any().any()):
        html += f'<p class="tc-table-note">{DASH}: {DEFAULT_MISSING}.</p>'
    return html


def install() -> bool:
    """Render every DataFrame and Styler the notebook displays by these rules.

    Returns False outside IPython (nothing to install)."""
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    if shell is None:
        return False
    html = shell.display_formatter.formatters["text/html"]
    html.for_type(pd.DataFrame, lambda df: Table(df)._repr_html_())
    from pandas.io.formats.style import Styler

    html.for_type(Styler, _styler_html)
    plain = shell.display_formatter.formatters["text/plain"]
    plain.for_type(pd.DataFrame, lambda df, p, cycle: p.text(repr(Table(df))))
    return True
