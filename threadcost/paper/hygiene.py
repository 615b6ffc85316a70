"""What a reader must never see in the rendered paper, found in a page's HTML.

``problems(html)`` lists each piece of debris in a rendered page's visible text
(scripts, styles, folded code and attribute values are not visible text): stderr
blocks, progress bars, ``Out[n]:`` prompts, Python reprs, absolute paths of the
rendering machine, NaN/None cells, numbers in scientific notation, tables that
show a bare numeric index, identifiers a run stores (``same-cpu``, ``rust-thread``)
where words belong. The test suite runs it over a quick rendering.
"""

from __future__ import annotations

import functools
import html as html_lib
import re

from threadcost import vocabulary
from threadcost.experiments import parameters, specs

_HIDDEN = re.compile(
    r"<(script|style)\b.*?</\1>|<details class=\"tc-code\".*?</details>|<!--.*?-->",
    re.S | re.I)
_TAG = re.compile(r"<[^>]+>")

CHECKS: list[tuple[str, re.Pattern[str]]] = [
    ("Out[] prompt", re.compile(r"\b(?:Out|In)\s*\[\s*\d*\s*\]\s*:")),
    ("Python repr", re.compile(
        r"\b(?:PosixPath|WindowsPath|Path|dict_keys|dict_values|array|DataFrame|Series|"
        r"Figure|Axes|Styler|Text|Line2D|Result|Run)\((?:'|\"|\[|<|\d|\))|"
        r"<(?:Figure|matplotlib|Axes|module|function|bound method|ipywidgets|threadcost)[ .]"
        r"|\bobject at 0x[0-9a-f]+")),
    ("absolute path", re.compile(r"(?<![\w.:/])/(?:tmp|home|root|work|usr|var|opt|srv)/\S+")),
    ("saved-to line", re.compile(r"\bsaved (?:\w+ )?to\b", re.I)),
    ("progress bar", re.compile(r"\d+%\|[^|\n]*\||\d+/\d+ \[\d\d:\d\d")),
    ("traceback", re.compile(r"Traceback \(most recent call last\)|\w+Error: |failed here")),
    ("'us' for µs", re.compile(r"\d\s?us\b")),
    # 4e+05 (as Python prints it) or a bare 1e6; not hex run ids such as "-4305e6"
    ("scientific notation", re.compile(r"(?<![\w.])\d+(?:\.\d+)?[eE][+-]\d+\b|"
                                       r"(?<![\w.-])\d+(?:\.\d+)?[eE]\d+(?![\w-])")),
]
# an identifier a run stores, where the reader should read words (a notebook's prose may
# name a parameter's value in code font; a data file's path is a path)
_CODE = re.compile(r"<code\b.*?</code>", re.S | re.I)
_PRE = re.compile(r"<pre\b.*?</pre>", re.S | re.I)  # a block of commands a reader types
_IDENTIFIERS = re.compile(r"(?<![\w/-])(?:" + "|".join(re.escape(k) for k in sorted(
    (k for k in vocabulary.IDENTIFIER_WORDS
     if ("-" in k or "_" in k) and k not in ("posix_spawn", "one-thread")),
    key=len, reverse=True)) + r")(?![\w/-])")
_CELL = re.compile(r"<t[dh]\b[^>]*>(.*?)</t[dh]>", re.S | re.I)
_BAD_CELL = re.compile(r"^\s*(?:nan|NaN|None|NaT|<NA>|null|inf|-inf)\s*$")
_STDERR = re.compile(r'class="[^"]*jp-RenderedText[^"]*"[^>]*data-mime-type="application/'
                     r'vnd\.jupyter\.stderr"|jp-OutputArea-output[^"]*"\s+data-mime-type='
                     r'"application/vnd\.jupyter\.stderr"|data-mime-type="application/vnd\.'
                     r'jupyter\.stderr"')
_INDEX_ROW = re.compile(r"<tbody>\s*<tr[^>]*>\s*<th[^>]*>\s*\d+\s*</th>", re.S)


_INLINE_SPAN = re.compile(r"<span data-quantity=[^>]*>|</span>")  # a finding, inline


def visible_text(page: str) -> str:
    """The page's text as a reader sees it (scripts, styles and folded code removed;
    a finding's span adds no space around its number)."""
    text = _INLINE_SPAN.sub("", _HIDDEN.sub(" ", page))
    return html_lib.unescape(_TAG.sub(" ", text))


def problems(page: str) -> list[str]:
    """Every piece of debris in one rendered page: ``"<kind>: <excerpt>"``."""
    found: list[str] = []
    if _STDERR.search(page):
        found.append("stderr block: an output written to stderr")
    body = _HIDDEN.sub(" ", page)
    if _INDEX_ROW.search(body):
        found.append("index column: a table shows the frame's numeric index")
    for cell in _CELL.findall(body):
        value = html_lib.unescape(_TAG.sub("", cell))
        if _BAD_CELL.match(value):
            found.append(f"missing value shown as {value.strip()!r} (use a dash and a reason)")
    for m in _IDENTIFIERS.finditer(visible_text(_CODE.sub(" ", page))):
        found.append(f"identifier for words: {m.group(0)!r} (threadcost.vocabulary.words)")
    for m in _declared().finditer(visible_text(_PRE.sub(" ", _CODE.sub(" ", page)))):
        found.append(f"a parameter's or an experiment's identifier in prose: {m.group(0)!r} "
                     "(say it in words, or in code font where the reader types it)")
    found += code_identifiers(page)
    found += [f"a column that reads '—' on every row: {name!r}" for name in dash_columns(body)]
    text = visible_text(page)
    for kind, pattern in CHECKS:
        for m in pattern.finditer(text):
            start = max(m.start() - 40, 0)
            found.append(f"{kind}: …{' '.join(text[start:m.end() + 40].split())}…")
    return found



# words before a parameter in code font that make it something the reader types or sets
_TYPED = re.compile(r"(?:\bsets?|\bparameters?|-p|papermill|\bpass|\bgive)\s+"
                    r"(?:the\s+|its\s+)?$", re.I)
_TYPED_AFTER = re.compile(r"^\s*(?:parameters?\b|=|to\s+[\d\w])", re.I)


def code_identifiers(page: str) -> list[str]:
    """A declared name in code font outside a block of commands, where it stands for
    words: an experiment's name (a reader never types it: "stored apart (as
    ``launch_python_parent``)"), or a parameter's where nothing says the reader sets it
    ("one run lasts about ``cpu_bound_run_s``")."""
    experiments = {e.name for e in specs.experiments()}
    body = _HIDDEN.sub(" ", _PRE.sub(" ", page))
    found = []
    for m in _CODE.finditer(body):
        name = html_lib.unescape(_TAG.sub("", m.group(0))).strip()
        if not _declared().fullmatch(name):
            continue
        before = visible_text(body[max(0, m.start() - 400):m.start()])[-60:]
        after = visible_text(body[m.end():m.end() + 400])[:40]
        if name in experiments or not (_TYPED.search(before) or _TYPED_AFTER.search(after)):
            found.append(f"an identifier in code font where words belong: {name!r} "
                         "(say what it is; code font only where the reader types it)")
    return found


@functools.cache
def _declared() -> re.Pattern[str]:
    """The declared parameters' and the experiments' names (``tasks_s6_count``,
    ``launch_python_parent``): identifiers a reader should read as words."""
    names = {n for n in [*parameters.BY_NAME, *(e.name for e in specs.experiments())] if "_" in n}
    return re.compile(r"(?<![\w/.-])(?:" + "|".join(
        re.escape(n) for n in sorted(names, key=len, reverse=True)) + r")(?![\w/-])")


_TABLE = re.compile(r"<table\b.*?</table>", re.S | re.I)
_ROW = re.compile(r"<tr\b.*?</tr>", re.S | re.I)
_HEAD = re.compile(r"<thead\b.*?</thead>", re.S | re.I)
_DASHES = {"—", "\u2013", "-", "— —"}


def dash_columns(page: str) -> list[str]:
    """Columns of a page's tables whose every body cell (two rows or more) is a dash:
    a column that says nothing (its header, or its position when it has none)."""
    out = []
    for table in _TABLE.findall(page):
        head = _HEAD.search(table)
        header = [html_lib.unescape(_TAG.sub("", c)).strip()
                  for c in _CELL.findall(_ROW.findall(head.group(0))[-1])] if head and \
            _ROW.findall(head.group(0)) else []
        body = _HEAD.sub("", table)
        rows = [[html_lib.unescape(_TAG.sub("", c)).strip() for c in _CELL.findall(r)]
                for r in _ROW.findall(body)]
        rows = [r for r in rows if r]
        if len(rows) < 2:
            continue
        width = min(len(r) for r in rows)
        for i in range(width):
            if all(r[-width + i] in _DASHES for r in rows):
                j = len(header) - width + i
                out.append(header[j] if 0 <= j < len(header) else f"column {i + 1}")
    return out
