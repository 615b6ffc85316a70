"""Tables and a figure of the claims' verdicts (notebook 06, and each notebook's claims).

Everything here reads :func:`threadcost.claims.judge`; nothing judges on its own.
Tables carry readable headers with units, no index, about three significant
figures, and a dash with the reason where there is no number.
"""

from __future__ import annotations

import html as html_lib
import re
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from threadcost import claims, findings, vocabulary
from threadcost.claims import logic, machines, published, summary, whys
from threadcost.claims.model import UNEXPLAINED, AssertionVerdict, ClaimVerdict
from threadcost.claims.summary import underpowered
from threadcost.findings.context_switch import yardstick_name
from threadcost.host import machine
from threadcost.measured.intervals import median_over_repeats
from threadcost.measured.runs import Runs
from threadcost.views import tables

if TYPE_CHECKING:  # pyplot is imported where a figure is drawn: the index and the
    import matplotlib.pyplot as plt  # claims CLI print text without loading it

COLOURS = vocabulary.VERDICT_COLOURS  # one vocabulary: threadcost/vocabulary.py
MARKERS = vocabulary.VERDICT_MARKERS

# words for the names a run's setup stores (a cell shows words, never an identifier)
WORDS = {**vocabulary.PLACEMENT_WORDS,
         "vsz_kib": "virtual size (VmSize)", "rss_kib": "resident size (VmRSS)",
         "page_tables_kib": "page tables (VmPTE)",  # thread_memory: this process's
         **whys.YARDSTICK_WORDS}


class Text(str):
    """A table cell: its text (the ``str``), a second, smaller line (``detail``) and a
    folded note (``more``, under a ``label`` the reader opens). As a plain string it is
    its first line, so a frame of them filters, drops and prints like any other."""

    detail: str
    more: str
    label: str
    marked: str  # the first line as HTML with its number's finding span ("": escape it)

    def __new__(cls, text: str, detail: str = "", more: str = "",
                label: str = "how", marked: str = "") -> Text:
        obj = super().__new__(cls, text)
        obj.detail, obj.more, obj.label, obj.marked = detail, more, label, marked
        return obj


def _cell_html(x: Any) -> str:
    out = (x.marked if isinstance(x, Text) and x.marked
           else tables.cell_html(str(x) if isinstance(x, Text) else x))
    if isinstance(x, Text):
        if x.detail:
            out += f'<br><span class="tc-detail">{html_lib.escape(x.detail)}</span>'
        if x.more:
            out += (f'<details class="tc-detail"><summary>{html_lib.escape(x.label)}'
                    f"</summary>{html_lib.escape(x.more)}</details>")
    return out


# the task kinds a run stores ("rust-thread", "rust-threads" in a sentence), in the
# vocabulary's words, and the other identifiers of its words that cannot be English (a
# variant such as "as_published"; not "one-thread", an adjective in S5's words too)
_KINDS = {k for k in vocabulary.TASK_LABELS if "-" in k}
_IDS = {k: v for k, v in vocabulary.IDENTIFIER_WORDS.items()
        if ("-" in k or "_" in k) and k not in _KINDS | {"one-thread", "posix_spawn"}}
_TOKENS = re.compile(r"\b(?:(" + "|".join(re.escape(k) for k in sorted(
    _KINDS, key=len, reverse=True)) + r")(s?)|" + "|".join(re.escape(k) for k in sorted(
    WORDS | _IDS, key=len, reverse=True)) + r")\b")


def _token(m: re.Match[str]) -> str:
    if m.group(1):
        return vocabulary.task_label(m.group(1), plural=bool(m.group(2)))
    return WORDS.get(m.group(0)) or _IDS[m.group(0)]


def _quoted(words: str) -> str:
    """The source's words in quotation marks, unless they carry their own (a quotation
    with its attribution and a remark of ours after it)."""
    return words if words.startswith(('"', "\u201c")) else f"\u201c{words}\u201d"


def _plain(text: str) -> str:
    """A sentence with the identifiers a run stores spelled out in words."""
    return _TOKENS.sub(_token, text)


def _words(value: Any) -> str:
    """A stored setup value in words: lists joined, identifiers spelled out."""
    if isinstance(value, list | tuple):
        return ", ".join(_words(v) for v in value)
    text = str(value)
    return (WORDS.get(text) or vocabulary.IDENTIFIER_WORDS.get(text)
            or _plain(text).replace("_", " "))


def _setup(a: AssertionVerdict) -> str:
    if not a.setup:
        return "-"
    return "; ".join(f"{_key(str(k))}: {_words(v)}" for k, v in a.setup.items())


def _key(key: str) -> str:
    """A setup key in words: "stack_kib" -> "stack (KiB)"."""
    for suffix, unit in (("_kib", " (KiB)"), ("_mib", " (MiB)"), ("_ns", " (ns)")):
        if key.endswith(suffix):
            return key.removesuffix(suffix).replace("_", " ") + unit
    return key.replace("_", " ")


def _where(where: str) -> str:
    """The setup in a few words after a value: ", at 1,000 tasks" or " (the weakest ...)"."""
    if not where:
        return ""
    return f" {_plain(where)}" if where.startswith("(") else f", {_plain(where)}"


def _why_text(a: AssertionVerdict) -> str:
    return "; ".join(w.text for w in a.why)


def tally_table(verdicts: list[ClaimVerdict]) -> pd.DataFrame:
    """How many published claims got each verdict class, and which (findings apart)."""
    counts = claims.tally(verdicts)
    rows = [{"verdict": cls, "claims": n,
             "which": ", ".join(v.id for v in verdicts
                                if v.verdict == cls and not v.finding) or "-"}
            for cls, n in counts.items()]
    return pd.DataFrame(rows)


def readings_tally_table(verdicts: list[ClaimVerdict]) -> pd.DataFrame:
    """As-published readings and shapes, counted apart (published claims only)."""
    t = claims.tally_readings(verdicts)
    rows = [{"readings": "as published (the numbers the sources printed)",
             **{k: str(n) for k, n in t["as_published"].items()}, "fails": "-"},
            {"readings": "shape (the relations and factors the sources state)",
             **{k: str(n) for k, n in t["shape"].items()}}]
    cols = ["readings", "holds", "differs", "fails", "inconclusive", "not reproducible",
            "not run here", "computed", "of them on a substitute"]
    return pd.DataFrame(rows)[cols]


def _here(a: AssertionVerdict) -> str:
    """"1,400 ns [1,380, 1,420] (S0: 1.2 to 1.5 µs): holds here"."""
    if a.measured is None:
        return f"{a.text}: {_plain(a.words)}"
    pub = ""
    if a.published is not None:
        unit = "" if a.unit in ("ratio", "fraction") else f" {a.unit}"
        pub = f"; published {logic.number(a.published)}{unit}"
    elif a.low is not None or a.high is not None:
        pub = f"; the source allows {logic.tolerance_text(a.low, a.high, a.unit)}"
    stand = " [stand-in]" if a.substitute else ""
    return f"{a.text}{stand}: {logic.measured_text(a)}{_where(a.where)}{pub}: {a.words}"


def takeaway_table(verdicts: list[ClaimVerdict]) -> pd.DataFrame:
    """One line per claim a reader can take away (what holds, what differs and by how
    much, reading by reading), before any reading; its class beside it."""
    rows = [{"claim": v.id + (" (finding)" if v.finding else ""),
             "take-away": _plain(v.takeaway.removeprefix(f"{v.id}: ")),
             "verdict": v.verdict} for v in verdicts]
    return pd.DataFrame(rows, columns=["claim", "take-away", "verdict"])


def overview_table(verdicts: list[ClaimVerdict]) -> pd.DataFrame:
    """One row per claim: the source's words, what was measured here in the same terms,
    the relations it states, and why a number differs (each why beside its reading)."""
    rows = []
    for v in verdicts:
        # one cause, once, with every reading it is given for
        whys_ = [f"{' and '.join(g.readings)}: {_plain(g.why.text)}" for g in v.whys]
        rows.append({"claim": v.id + (" (finding)" if v.finding else ""), "source": v.source,
                     "the source's words": v.claim,
                     "take-away": _plain(v.takeaway.removeprefix(f"{v.id}: ")),
                     "as published, here": "; ".join(_here(a) for a in v.as_published) or "-",
                     "shape": "; ".join(_here(a) for a in v.shape) or "-",
                     "why it differs": "; ".join(whys_) or "-",
                     "verdict": v.verdict})
    return pd.DataFrame(rows)


def power_table(verdicts: list[ClaimVerdict]) -> pd.DataFrame:
    """Timing readings that cannot resolve their tolerance with the parameters used:
    their interval against their band (measured), said before the numbers."""
    rows = [{"claim": cid, "reading": a.text,
             "kind": "as published" if a.kind == "as_published" else "shape",
             "power (measured)": a.power["text"], "what can": a.power.get("can", "-")}
            for cid, a in underpowered(verdicts) if a.power]
    return pd.DataFrame(rows, columns=["claim", "kind", "reading", "power (measured)",
                                       "what can"])


def up_front_text(verdicts: list[ClaimVerdict]) -> str:
    """What a reader must know before the numbers (inconclusive by construction); a
    number in it is the claim record's own (a band it allows), marked as the claim's."""
    def claim_number(claim_id: str, text: str) -> str:
        return _PERCENT.sub(lambda m: findings.published(claim_id, m.group(0)), text)

    lines = [f"- **{v.id}**: {claim_number(v.id, v.up_front)}" for v in verdicts
             if v.up_front]
    return "\n".join(lines)


_PERCENT = re.compile(r"(?<![\w.,])\d+(?:\.\d+)?%")


def run_list(run_id: str) -> list[str]:
    """The run ids a claims-layer value names ("a, b" or "a; b"), in order."""
    return [r for r in re.split(r"[;,] ", run_id or "") if r]


def reading_html(claim_id: str, a: AssertionVerdict) -> str:
    """A reading's measured value and interval ("2.40 µs [2.35, 2.44]") as HTML, the value
    marked with the reading's name (``claims.reading_name``: the claims summary and the
    pages quoting it print the same) and its runs ("read from N runs" when several)."""
    text = logic.measured_text(a)
    runs = run_list(a.run_id)
    if len(runs) > 1:
        text += f" (read from {len(runs)} runs)"
    return findings.tag(claims.reading_name(claim_id, a.text), text.split(" ")[0], text,
                        runs)


def folklore_md(verdicts: list[ClaimVerdict]) -> str:
    """``claims.folklore`` (plain sentences, as the CLI prints them) as Markdown whose
    numbers carry their names: each reading's measured value is marked with
    ``claims.reading_name`` (the runs it reads in ``data-runs``), its published value
    with the claim, a yardstick of a why with its finding (``yardstick_*_mean_ns``, pooled
    over the yardsticks runs) and what the why derives from two of them (a ratio, a
    difference) with both names."""
    text = " ".join(claims.folklore(verdicts))
    marks: list[tuple[str, str]] = []  # (printed text, its marked text), in order

    runs = run_list

    def said(shown: str, ids: list[str], how: str = "pooled over") -> str:
        return f"{shown} ({how} {len(ids)} runs)" if len(ids) > 1 else shown

    for v in verdicts:
        for a in v.as_published:
            if a.measured is None:
                continue
            number = logic.numbers(a.measured)[0]
            shown = f"{number}{logic.scaled(a.unit, a.measured)}"
            name, ids = claims.reading_name(v.id, a.text), runs(a.run_id)
            paper = summary.paper_finding(a)  # printed in its place where one is declared
            if paper is not None:
                marks.append((f"measures {summary.finding_text(paper)}",
                              "measures " + findings.span(paper)))
            marks.append((f"measures {shown}", "measures " + findings.tag(
                name, number, said(shown, ids, "read from"), ids)))
            times = re.search(r"(\d[\d,]*(?:\.\d+)?)x", a.words)
            if times and a.published is not None:  # "differs here: 10.0x slower"
                marks.append((f"({a.words})", "(" + a.words[:times.start()] + findings.tag(
                    f"{name}/published", times.group(1), times.group(0), ids)
                    + a.words[times.end():] + ")"))
            if a.published is not None:
                pub = f"{logic.numbers(a.published)[0]}{logic.scaled(a.unit, a.published)}"
                marks.append((f"published {pub}", "published " + findings.published(v.id, pub)))
            for why in a.why:
                ids = runs(why.run_id)
                for pub_ns in published.values_for(v.id).query("unit == 'ns'").value:
                    pub = f"{logic.number(pub_ns)} ns"  # a why beside the source's own part
                    marks.append((f"published {pub}", "published " + findings.published(
                        v.id, pub)))
                # a yardstick, or a finding under its own name (a percentage, or ns)
                names = {k: k if k in findings.REGISTRY else yardstick_name(k)
                         for k in why.yardsticks}
                for key, value in why.yardsticks.items():
                    pct = key in findings.REGISTRY and findings.REGISTRY[key].unit == "%"
                    shown = f"{logic.number(value)}{'%' if pct else ' ns'}"
                    marks.append((shown, findings.tag(names[key], logic.number(value),
                                                      said(shown, ids), ids)))
                if {whys.CROSS, whys.SAME} <= set(why.yardsticks):
                    ratio = whys.wake_up_ratio(why.yardsticks[whys.CROSS],
                                               why.yardsticks[whys.SAME])
                    marks.append((f"({ratio};", "(" + findings.tag(
                        f"{names[whys.CROSS]}/{names[whys.SAME]}", ratio.removesuffix("x"),
                        said(ratio, ids), ids) + ";"))
                    extra = why.yardsticks[whys.CROSS] - why.yardsticks[whys.SAME]
                    shown = f"{logic.number(extra)} ns dearer"
                    marks.append((shown, findings.tag(
                        f"{names[whys.CROSS]}-{names[whys.SAME]}", logic.number(extra),
                        said(shown, ids), ids)))
                if {whys.CROSS, whys.BUSY} <= set(why.yardsticks):
                    idle = why.yardsticks[whys.CROSS] - why.yardsticks[whys.BUSY]
                    shown = f"adds {logic.number(idle)} ns"
                    marks.append((shown, "adds " + findings.tag(
                        f"{names[whys.CROSS]}-{names[whys.BUSY]}", logic.number(idle),
                        said(f"{logic.number(idle)} ns", ids), ids)))
    held: list[str] = []
    for printed, marked in marks:  # each printed number once, never inside a mark
        if printed in text:
            text = text.replace(printed, f"\x00{len(held)}\x00", 1)
            held.append(marked)
    return re.sub("\x00(\\d+)\x00", lambda m: held[int(m.group(1))], text)


def assertions_table(verdicts: list[ClaimVerdict],
                     ids: list[str] | None = None) -> pd.DataFrame:
    """One row per reading: what it reads (the source's words below it, how it was
    measured folded), the value with its 95% interval (repeats and the verdict in words
    below it), what the words allow, the verdict (why it differs folded) and the setup
    it was read from."""
    rows = []
    for v in verdicts:
        if ids is not None and v.id not in ids:
            continue
        for a in v.assertions:
            quote = f"the source: {_quoted(a.quote)}" if a.quote else ""
            note = _plain(a.how or "")  # how it was measured; why it is judged so: verdict
            if a.measured is not None:
                repeats = f"{a.repeats:,} repeat{'s' if a.repeats != 1 else ''}"
                measured = Text(logic.measured_text(a) + _where(a.where), repeats,
                                marked=reading_html(v.id, a)
                                + html_lib.escape(_where(a.where)))
            else:
                measured = Text("-", _plain(a.reason))
            why = _why_text(a)
            # a reading with no why (inconclusive, or judged with a stated reason) folds
            # the reason its verdict rests on under the same "why"
            fold = why or (_plain(a.reason) if a.measured is not None and a.reason else "")
            explained = any(w.explains and w.text != UNEXPLAINED for w in a.why)
            rows.append({
                "claim": v.id,
                # a stand-in reads another experiment: the legend's "substitute", said
                "reading": ("as published" if a.kind == "as_published" else "shape")
                + (", by a substitute" if a.substitute else ""),
                "assertion": Text(a.text + (f" (stand-in: {a.substitute})"
                                            if a.substitute else ""), quote, note),
                "measured here [95% interval]": measured,
                "the claim allows": Text(logic.tolerance_text(a.low, a.high, a.unit),
                                         a.tolerance_words),
                "verdict": Text(a.verdict, a.words if a.words != a.verdict
                                and not a.words.startswith("not run here") else "",
                                f"{'why it differs' if explained else 'why'}: "
                                f"{fold}" if fold else "", "why"),
                "read from": _setup(a),
            })
    return pd.DataFrame(rows)


def context_table(verdicts: list[ClaimVerdict]) -> pd.DataFrame:
    """Absolute published numbers beside this machine's (context, not verdicts)."""
    rows = []
    for v in verdicts:
        for c in v.context:
            rows.append({
                "claim": v.id, "quantity": c.label,
                "published": (f"{logic.number(c.published)} {c.unit}"
                              if c.published is not None else "not published"),
                "here": (f"{logic.number(c.measured)} {c.unit}" if c.measured is not None
                         else f"- ({c.reason})"),
                "here / published": logic.number(c.ratio) if c.ratio is not None else "-",
            })  # no row is normalised by S0-code's 3 µs copy: a bar typed in a plot script
    return pd.DataFrame(rows)


def why_yardsticks_table(machine_id: str | None = None,
                         data_dir: str | Path | None = None) -> pd.DataFrame:
    """The yardsticks the why column reads, from the same machine's stored runs."""
    runs = Runs.load(machine_id or machine.machine_id(), data_dir)
    rows = []
    for name, m in whys.yardsticks_of(runs).items():
        interval = (f"{logic.number(m.low)} to {logic.number(m.high)}"
                    if m.low is not None and m.high is not None and m.low != m.high else "-")
        runs_ = run_list(m.run_id)
        shown = logic.number(m.value) + (f" (pooled over {len(runs_)} runs)"
                                         if len(runs_) > 1 else "")
        rows.append({"yardstick": whys.YARDSTICK_WORDS.get(name, name.replace("_", " ")),
                     f"ns ({whys.SYSCALL_STATISTIC})": findings.tag(
                         yardstick_name(name), logic.number(m.value), shown, runs_),
                     "95% interval (ns)": interval, "repeats": str(m.repeats)})
    return _without_empty_interval(pd.DataFrame(
        rows, columns=["yardstick", f"ns ({whys.SYSCALL_STATISTIC})", "95% interval (ns)",
                       "repeats"]))


def yardsticks_table(result: Any) -> pd.DataFrame:
    """One row per yardstick of a yardsticks run: ns per operation over the repeats."""
    frame = result.tables["repeats"]
    rows = []
    for name, what in ((n, d["what"]) for n, d in result.summary["yardsticks"].items()):
        sub = frame[frame.yardstick == name].ns_median
        m = median_over_repeats(sub, "ns")
        interval = (f"{logic.number(m.low)} to {logic.number(m.high)}"
                    if m.low is not None and m.low != m.high else "-")
        rows.append({"yardstick": whys.YARDSTICK_WORDS.get(name, name.replace("_", " ")),
                     "what one operation is": what,
                     f"{whys.SYSCALL_STATISTIC} (ns)": logic.number(m.value),
                     "95% interval (ns)": interval, "repeats": str(m.repeats)})
    return _without_empty_interval(pd.DataFrame(rows))


def _without_empty_interval(frame: pd.DataFrame) -> pd.DataFrame:
    """The interval column left out where no row has one (a run of one repeat: its
    ``repeats`` column says why), rather than a column of dashes."""
    column = "95% interval (ns)"
    if column in frame and not frame.empty and (frame[column] == "-").all():
        return frame.drop(columns=column)
    return frame


def _slug(verdict: str) -> str:
    return "tc-" + verdict.replace(" ", "-")


CSS = ("td.tc-cell, th.tc-head {text-align: left; vertical-align: top;} "
       ".tc-detail {font-size: 0.85em; color: #555;} "
       "details.tc-detail summary {cursor: pointer;}")


class ClaimsTable:
    """A claims table for ``display``: rows tinted by their verdict (a class per cell,
    one rule per verdict), no index, every text escaped, a cell's second line and
    folded note (:class:`Text`) shown beneath it."""

    def __init__(self, frame: pd.DataFrame, column: str = "verdict") -> None:
        self.frame = frame.reset_index(drop=True)
        self.column = column

    def _repr_html_(self) -> str:
        rules = " ".join(f"td.{_slug(v)} {{background-color: {c};}}"
                         for v, c in COLOURS.items())
        head = "".join(f'<th class="tc-head">{html_lib.escape(str(c))}</th>'
                       for c in self.frame.columns)
        rows = []
        for _, row in self.frame.iterrows():
            slug = _slug(str(row.get(self.column, "")))
            tds = "".join(f'<td class="tc-cell {slug}">{_cell_html(x)}</td>' for x in row)
            rows.append(f"<tr>{tds}</tr>")
        return (f"<style>{rules} {CSS}</style>"
                f'<table class="dataframe tc-table tc-claims"><thead><tr>{head}</tr></thead>'
                f"<tbody>{''.join(rows)}</tbody></table>")

    def __repr__(self) -> str:
        def plain(x: Any) -> str:
            if isinstance(x, Text):
                return str(x) + (f" ({x.detail})" if x.detail else "")
            return tables.format_cell(x)
        return self.frame.map(plain).to_string(index=False) if len(self.frame) else ""


def style(frame: pd.DataFrame, column: str = "verdict") -> ClaimsTable:
    """The frame as the claims pages show it (see :class:`ClaimsTable`)."""
    return ClaimsTable(frame, column)


def claims_section(ids: list[str], data_dir: str | Path | None = None,
                   results: list[Any] | None = None, machine_id: str | None = None,
                   without: tuple[str, ...] = ()) -> Any:
    """The assertions of some claims, as a notebook on one topic shows them.

    ``results``: the notebook's own runs, which stand in for stored runs of the same
    experiments (so the table shows what this notebook just measured).
    ``machine_id``: whose stored runs (default: this machine's).
    ``without``: readings (words of their text) a later notebook measures and shows:
    left out here, so that a page never depends on what was stored after it was drawn.
    """
    verdicts = claims.judge(machine_id, data_dir, results)
    table = assertions_table(verdicts, ids).drop(columns=["read from"])
    for words in without:
        table = table[~table["assertion"].str.contains(words, regex=False)]
    return style(table.reset_index(drop=True))


def figure(verdicts: list[ClaimVerdict], ids: list[str] | None = None) -> plt.Figure:
    """Each measured assertion against its tolerance, both divided by the published value.

    A bar is the tolerance band, a dot the measured value with its 95% interval;
    log scale, 1 = the published value.
    """
    import matplotlib.pyplot as plt

    items = [(v.id, a) for v in verdicts for a in v.assertions
             if (ids is None or v.id in ids) and a.measured is not None
             and a.published and a.published > 0 and a.measured > 0
             and a.verdict != "computed"]
    # every label whole, wrapped over lines (never cut short)
    labels = [textwrap.fill(f"{cid} {a.text}", 58) for cid, a in items]
    most = max((label.count("\n") + 1 for label in labels), default=1)
    fig, ax = plt.subplots(figsize=(10.5, 1.6 + (0.14 * most + 0.12) * max(len(items), 3)))
    if not items:
        ax.text(0.5, 0.5, "no claim measured here yet", ha="center", va="center",
                transform=ax.transAxes, color="grey")
        ax.set_axis_off()
        return fig
    ys = np.arange(len(items))
    # every band in one call, every verdict's dots in one (one artist per row is slow)
    lows, highs, dots = [], [], []
    for _, a in items:
        pub = float(a.published or 1.0)
        lows.append((a.low if a.low is not None and a.low > 0 else pub / 100) / pub)
        highs.append((a.high if a.high is not None else pub * 100) / pub)
        x = a.measured / pub
        dots.append((x, max(x - (a.ci_low or a.measured) / pub, 0),
                     max((a.ci_high or a.measured) / pub - x, 0)))
    ax.barh(ys, np.subtract(highs, lows), left=lows, height=0.6,
            color=[COLOURS[a.verdict] for _, a in items], edgecolor="#999999", lw=0.5)
    for verdict, colour in MARKERS.items():
        rows = [i for i, (_, a) in enumerate(items) if a.verdict == verdict]
        if rows:
            ax.errorbar([dots[i][0] for i in rows], ys[rows],
                        xerr=[[dots[i][1] for i in rows], [dots[i][2] for i in rows]],
                        fmt="o", color=colour, ms=5, capsize=2)
    ax.set_yticks(ys, labels, fontsize=8)
    ax.set_ylim(len(items) - 0.5, -0.5)  # the first row on top, no empty band above it
    ax.axvline(1.0, color="grey", lw=0.8)
    ax.set_xscale("log")
    ax.tick_params(axis="x", top=True, labeltop=True)  # a tall figure: the scale at both ends
    ax.set_xlabel("measured here / published value (log scale)\n"
                  "bar: what the claim's words allow; dot: measured, with its 95% interval")
    handles = [plt.Line2D([], [], marker="o", ls="", color=MARKERS[c], label=c)
               for c in MARKERS if any(a.verdict == c for _, a in items)]
    ax.legend(handles=handles, loc="lower center", bbox_to_anchor=(0.5, 1.0),
              ncol=min(len(handles), 4), frameon=False, fontsize=8, borderaxespad=2.2)
    ax.set_title("Each assertion against its tolerance", pad=52)
    fig.tight_layout()
    return fig


def across_machines_table(data_dir: str | Path | None = None) -> pd.DataFrame:
    """Each claim's verdict on every machine folder of the data folder (each judged on
    its own runs). Where it differs between them, each cell adds the value there of the
    machine property the flip is put down to, and the last column names that property."""
    mids, rows = machines.across(data_dir)
    out = []
    for r in rows:
        row: dict[str, Any] = {"claim": r.claim}
        for mid in mids:
            value = r.property_values.get(mid, "") if r.flips else ""
            row[mid] = r.cells[mid] + (f" ({value})" if value and mid in r.classes else "")
        row["what decides it"] = ("-" if not r.flips else r.property_name or "unexplained")
        out.append(row)
    return pd.DataFrame(out, columns=["claim", *mids, "what decides it"])
