"""Plain-text tables for the CLI's human-readable output."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

NOT_MEASURED = "Not measured on this machine"  # what a page says where its run is missing


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """Columns padded to width; numbers right-aligned, text left-aligned."""
    cells = [[str(c) for c in headers]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]

    def fmt(row: list[str]) -> str:
        out = []
        for i, cell in enumerate(row):
            numeric = cell.replace(",", "").replace(".", "").replace("-", "").isdigit()
            out.append(cell.rjust(widths[i]) if numeric else cell.ljust(widths[i]))
        return "  ".join(out).rstrip()

    lines = [fmt(cells[0]), "  ".join("-" * w for w in widths)]
    lines += [fmt(r) for r in cells[1:]]
    return "\n".join(lines)


# --- Text from data files, shown in Markdown, HTML, figures or file names -------------
#
# Everything read from a data file (a machine id, a fingerprint field, a parameter, a
# table cell) is text, never markup: these helpers are the one place that makes it so.

# ASCII punctuation that Markdown (CommonMark, mistune) may read as syntax; each is
# written with a backslash, which CommonMark defines to mean the character itself.
_MD_PUNCTUATION = frozenset("\\`*_{}[]()#+-.!|~$:'")
_HTML_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}
# Longest text shown from a data file (longer values are cut, with an ellipsis).
MAX_SHOWN_CHARS = 200


def _one_line(value: object, limit: int = MAX_SHOWN_CHARS) -> str:
    """``value`` as one line of printable text, cut to ``limit`` characters."""
    text = "".join(ch if ch.isprintable() else " " for ch in str(value))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def cpu_groups(groups: object) -> str:
    """CPU groups (the SMT siblings of each core, as the fingerprint lists them) in
    words: ``[[0, 2], [1, 3]]`` -> ``{0, 2} and {1, 3}``."""
    if not isinstance(groups, list | tuple) or not groups:
        return "unknown"
    parts = ["{" + ", ".join(str(c) for c in g) + "}" if isinstance(g, list | tuple)
             else str(g) for g in groups]
    return ", ".join(parts[:-1]) + " and " + parts[-1] if len(parts) > 1 else parts[0]


_GROUPS_REPR = re.compile(r"\[\[[0-9, \[\]]*\]\]")


def groups_in_words(text: str) -> str:
    """``text`` with every CPU-group list written as :func:`cpu_groups` words (older
    runs stored the list itself in their messages)."""
    import ast

    return _GROUPS_REPR.sub(lambda m: cpu_groups(ast.literal_eval(m.group())), text)


def md_text(value: object) -> str:
    """``value`` as literal text inside Markdown: no emphasis, link, code span, math,
    HTML element or entity can come from it."""
    out = []
    for ch in _one_line(value):
        if ch in _HTML_ENTITIES:
            out.append(_HTML_ENTITIES[ch])
        elif ch in _MD_PUNCTUATION:
            out.append("\\" + ch)
        else:
            out.append(ch)
    return "".join(out)


def md_code(value: object) -> str:
    """``value`` as a Markdown code span: a fence of more backticks than the longest
    run inside it, so a backtick in the value cannot close the span."""
    text = _one_line(value)
    longest = run = 0
    for ch in text:
        run = run + 1 if ch == "`" else 0
        longest = max(longest, run)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip() else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def plain_label(value: object) -> str:
    """``value`` as a matplotlib label: a ``$`` is shown, never read as mathtext."""
    return _one_line(value, 80).replace("$", r"\$")


def safe_filename(value: object) -> str:
    """``value`` as one file-name component: letters, digits, ``-``, ``_`` and ``.``
    kept, anything else (``/``, a space, a backtick) becomes ``_``; never empty, never
    a hidden or relative name."""
    text = "".join(ch if (ch.isascii() and (ch.isalnum() or ch in "-_.")) else "_"
                   for ch in str(value))[:120]
    text = text.lstrip(".")
    return text or "_"


def skipped_markdown(skipped: Sequence[Any]) -> str:
    """Runs that could not be read (``datastore.Skipped``), as Markdown: folder and
    reason, paths shown from the machine folder on (no path of this computer)."""
    if not skipped:
        return ""
    lines = [f"**{len(skipped)} stored run(s) could not be read and were skipped**; a "
             "claim that may have read one says so:"]
    for item in skipped:
        root = str(item.path.parent.parent) + "/"
        where = f"{item.path.parent.name}/{item.path.name}"
        lines.append(f"- {md_code(where)}: {md_text(str(item.reason).replace(root, ''))}")
    return "\n".join(lines)


# --- Numbers in words: about three significant figures, never scientific -------------

MILLION = 1e6


def _decimals(x: float) -> int:
    """Decimals that give ``x`` about three significant figures (none from 100 up)."""
    ax = abs(x)
    if ax == 0 or ax >= 100:
        return 0
    return max(0, 2 - math.floor(math.log10(ax)))


def _fixed(x: float, d: int) -> str:
    text = f"{x:,.{d}f}"
    return "0" if float(x) == 0 and d == 0 else ("0" if text in ("-0", "0") else text)


def number(x: float | None) -> str:
    """About three significant figures, thousands separated, never scientific; from a
    million up in millions ("3.28 million")."""
    if x is None:
        return "-"
    if abs(x) >= MILLION:
        return f"{_fixed(x / MILLION, _decimals(x / MILLION))} million"
    return _fixed(x, _decimals(x))


def numbers(*xs: float) -> list[str]:
    """Several numbers at one precision (a value and its interval, a band's two ends):
    three significant figures of the largest; from a million up, in millions (the word
    "million" left to the caller, see :func:`scaled`)."""
    big = max(abs(x) for x in xs)
    scale = MILLION if big >= MILLION else 1.0
    d = _decimals(big / scale)
    return [_fixed(x / scale, d) for x in xs]


def scaled(unit: str, *xs: float) -> str:
    """The unit as shown after :func:`numbers` of ``xs`` ("million iterations/s")."""
    u = "" if unit in ("ratio", "fraction", "") else unit
    if max(abs(x) for x in xs) >= MILLION:
        return f" million {u}".rstrip() if u else " million"
    return f" {u}" if u else ""


def plain_number(value: float, _pos: object = None) -> str:
    """A tick label without powers of ten, to three significant digits with trailing
    zeros dropped: 0.01, 0.25, 1.2, 2, 30, 1,000, 2,000,000. Each tick is formatted
    alone, so the label keeps every digit that tells it from its neighbours (1.2 and
    1.5 stay "1.2" and "1.5", never "1" and "2")."""
    if value == 0 or not math.isfinite(value):
        return "0" if value == 0 else ""
    digits = max(0, 2 - math.floor(math.log10(abs(value)) + 1e-9))
    text = f"{value:,.{digits}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text
