"""Which finding each printed number is, read back from the rendered pages.

Every number the pages compute is printed by :func:`threadcost.findings.show` (or
``span``/``tag``) inside ``<span data-quantity="NAME" data-value="NUMBER">``: an
attribute a reader never sees, added only by the project's own code (a cell of data is
escaped, so a CSV cannot forge one). This module reads the marks back, so a test can
check the two promises of the findings layer on the HTML a reader gets:

- **one name, one value**: a finding printed twice shows the same number (within the
  rounding of the less precise of the two), on every page and in the abstract;
- **no unnamed number**: each number with a unit in the prose a notebook generates
  (its ``display(Markdown(...))`` outputs) is marked: a finding, a parameter the study
  chose (``findings.parameter``: ``<span data-parameter="NAME">``) or a number a source
  published (``findings.published``: ``<span data-published="C31">``). Typed prose (a notebook's
  Markdown cells) cannot carry a measurement: it does not change with the data, so
  it quotes published values, parameters and definitions, and is not counted.

Tables and figures follow their own rule: a table that shows a run's stored table is
that table (its provenance line names the CSV under it, and each cell is the CSV's
row and column); a figure names what it draws in its provenance line (the runs and
their CSVs), and its marks, labels and tooltips print the CSV's values. A number a
table or figure shares with the prose is printed through its finding in both (the
headline's table and the abstract read the same spans).
"""

from __future__ import annotations

import html as html_lib
import math
import re

# a finding's span as threadcost.findings.tag writes it (data-runs: the runs it reads);
# the page's HTML sanitiser may sort the attributes, so their order is free
SPAN = re.compile(r'<span((?:\s+data-(?:quantity|value|runs)="[^"]*")+)\s*>(.*?)</span>', re.S)
_ATTR = re.compile(r'data-(quantity|value|runs)="([^"]*)"')


def _spans(page: str) -> list[tuple[str, str, str, str]]:
    """``(name, value, runs, shown HTML)`` of each finding's span of a page."""
    out = []
    for attrs, shown in SPAN.findall(page):
        got = dict(_ATTR.findall(attrs))
        if "quantity" in got:
            out.append((got["quantity"], got.get("value", ""), got.get("runs", ""), shown))
    return out
# generated prose: the Markdown a notebook's code displays
_GENERATED = re.compile(r'<div class="jp-RenderedHTMLCommon jp-RenderedMarkdown '
                        r'jp-OutputArea-output"[^>]*>(.*?)</div>', re.S)
_CODE = re.compile(r"<code\b.*?</code>", re.S | re.I)
# a parameter's value, marked with its name (threadcost.findings.parameter)
PARAMETER = re.compile(r'<span data-(?:parameter|published)="[^"]+">[^<]*</span>')
_TAG = re.compile(r"<[^>]+>")
UNITS = ("ns", "µs", "ms", "s", "KiB", "MiB", "GiB", "kB", "KB", "MB", "GB", "x", "%",
         "threads", "switches", "iterations/s")
# a number followed by a unit: a printed quantity
QUANTITY = re.compile(r"(?<![\w.,])(\d[\d,]*(?:\.\d+)?)\s?(?:" + "|".join(
    re.escape(u) for u in sorted(UNITS, key=len, reverse=True)) + r")(?![\w])")


def marked(page: str) -> list[tuple[str, str, str]]:
    """Every marked number of a page: ``(finding, printed value, shown text)``."""
    return [(name, html_lib.unescape(value), html_lib.unescape(_TAG.sub("", shown)))
            for name, value, _, shown in _spans(page)]


def sources(page: str) -> list[tuple[str, list[str], str]]:
    """Every marked number with the runs it reads: ``(finding, [run id, ...], shown)``
    (an empty list: the span names no run)."""
    return [(name, [r for r in html_lib.unescape(runs).split("; ") if r],
             html_lib.unescape(_TAG.sub("", shown)))
            for name, _, runs, shown in _spans(page)]


_RUNS_SAID = re.compile(r"\b(?:pooled over|read from) (\d+) runs\b")


def runs_unsaid(page: str) -> list[str]:
    """Marked numbers that read more than one stored run without saying so where they
    are printed ("2.05 µs (pooled over 3 runs)"): a figure of the newest run beside a
    number pooled over every run must not read as that number's source. Also a number
    that names no run at all. A number derived from two findings (``A/B``, ``A-B``)
    reads each one's runs: it names them, and says so only where a part is pooled
    (``findings.ratio`` does)."""
    out = []
    for name, runs, shown in sources(page):
        said = _RUNS_SAID.search(shown)
        derived = "/" in name or "-" in name.split("@")[0]
        if not runs:
            out.append(f"{name}: names no run")
        elif len(runs) > 1 and not derived and (said is None
                                                or int(said.group(1)) != len(runs)):
            out.append(f"{name}: {len(runs)} runs, shown as {shown!r}")
    return out


def _parse(text: str) -> tuple[float, float] | None:
    """(value, half its last printed digit) of a printed number, or None."""
    m = re.search(r"-?\d[\d,]*(?:\.(\d+))?", text)
    if m is None:
        return None
    decimals = len(m.group(1) or "")
    return float(m.group(0).replace(",", "")), 0.5 * 10.0 ** -decimals


def same_value(a: str, b: str) -> bool:
    """Two printed values of one finding agree: equal once the more precise is rounded
    as the less precise one ("2,763" and "2,763.4"; not "2,585" and "2,763")."""
    pa, pb = _parse(a), _parse(b)
    if pa is None or pb is None:
        return a == b
    (va, ha), (vb, hb) = pa, pb
    return math.isclose(va, vb) or abs(va - vb) <= max(ha, hb) + 1e-9


def conflicts(pages: dict[str, str]) -> dict[str, list[tuple[str, str]]]:
    """Findings shown with two values across ``pages`` (page name -> HTML):
    ``{finding: [(page, value), ...]}``; a span whose text lacks its value counts too."""
    seen: dict[str, set[tuple[str, str]]] = {}
    for page_name, text in pages.items():
        for name, value, shown in marked(text):
            if value not in shown:
                value = f"{value} (shown as {shown!r})"
            seen.setdefault(name, set()).add((page_name, value))
    out = {}
    for name, where in seen.items():
        values = sorted({v for _, v in where})
        if any("shown as" in v for v in values) or any(
                not same_value(a, b) for a in values for b in values):
            out[name] = sorted(where)
    return out


def unnamed(page: str) -> list[str]:
    """Numbers with a unit in a page's generated prose that carry no finding's name
    (code font excepted: a parameter's value as the notebook spells it)."""
    found: list[str] = []
    for block in _GENERATED.findall(page):
        text = html_lib.unescape(_TAG.sub(" ", SPAN.sub(" ", PARAMETER.sub(" ", _CODE.sub(
            " ", block)))))
        found += [" ".join(m.group(0).split()) for m in QUANTITY.finditer(text)
                  # "95% interval", "95% CI": the name of an interval, not a quantity
                  if not text.startswith((" interval", " CI"), m.end())]
    return found
