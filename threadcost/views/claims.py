"""Tables and a figure of the claims' verdicts (notebook 06, and each notebook's claims).

Everything here reads :func:`threadcost.claims.judge`; nothing judges on its own.
Tables carry readable headers with units, no index, about three significant
figures, and a dash with the reason where there is no number.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from threadcost import claims
from threadcost.claims import logic
from threadcost.claims.model import AssertionVerdict, ClaimVerdict

COLOURS = {"supported": "#d8f0d8", "contradicted": "#f8d0d0", "inconclusive": "#fff3c4",
           "not reproduced": "#f3dcc4", "computed": "#e4ecf7", "substitute": "#e8def3",
           "not run here": "#eeeeee"}
MARKERS = {"supported": "#2e7d32", "contradicted": "#c62828", "inconclusive": "#b08900",
           "not reproduced": "#a65c00", "computed": "#3b6ea8", "substitute": "#6a4c93",
           "not run here": "#888888"}


def _setup(a: AssertionVerdict) -> str:
    if not a.setup:
        return "-"
    return ", ".join(f"{k} {v}" for k, v in a.setup.items())


def tally_table(verdicts: list[ClaimVerdict]) -> pd.DataFrame:
    """How many claims got each verdict class, and which."""
    counts = claims.tally(verdicts)
    rows = [{"verdict": cls, "claims": n,
             "which": ", ".join(v.id for v in verdicts if v.verdict == cls) or "-"}
            for cls, n in counts.items()]
    return pd.DataFrame(rows)


def overview_table(verdicts: list[ClaimVerdict]) -> pd.DataFrame:
    """One row per claim: the claim as published, its verdict, and why in one sentence."""
    return pd.DataFrame([{"claim": v.id, "source": v.source,
                          "claim (as published)": v.claim, "verdict": v.verdict,
                          "why": v.sentence} for v in verdicts])


def assertions_table(verdicts: list[ClaimVerdict],
                     ids: list[str] | None = None) -> pd.DataFrame:
    """One row per assertion: measured value with its interval, tolerance, repeats."""
    rows = []
    for v in verdicts:
        if ids is not None and v.id not in ids:
            continue
        for a in v.assertions:
            unit = "" if a.unit in ("ratio", "fraction") else a.unit
            rows.append({
                "claim": v.id,
                "assertion": a.text + (f" (stand-in: {a.substitute})" if a.substitute else ""),
                "measured [95% interval]": (logic.measured_text(a)
                                            + (f" {a.where}" if a.where else "")
                                            if a.measured is not None else f"- ({a.reason})"),
                "the claim allows": logic.tolerance_text(a.low, a.high, a.unit),
                "unit": unit or a.unit,
                "repeats": str(a.repeats) if a.measured is not None else "-",
                "verdict": a.verdict,
                "note": (a.reason if a.measured is not None and a.reason else a.how) or "-",
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
                "64 KiB memcpy, here / published": (logic.number(c.yardstick_ratio)
                                                     if c.yardstick_ratio is not None
                                                     else "-"),
                "normalised by the memcpy": (logic.number(c.normalised_ratio)
                                             if c.normalised_ratio is not None else "-"),
            })
    return pd.DataFrame(rows)


def yardsticks_table(result: Any) -> pd.DataFrame:
    """One row per yardstick of a yardsticks run: ns per operation over the repeats."""
    from threadcost.claims.intervals import over_repeats

    frame = result.tables["repeats"]
    rows = []
    for name, what in ((n, d["what"]) for n, d in result.summary["yardsticks"].items()):
        sub = frame[frame.yardstick == name].ns_median
        m = over_repeats(sub, "ns")
        interval = (f"{logic.number(m.low)} to {logic.number(m.high)}"
                    if m.low is not None and m.low != m.high else "-")
        rows.append({"yardstick": name.replace("_", " "), "what one operation is": what,
                     "mean of repeats (ns)": logic.number(m.value),
                     "95% interval (ns)": interval, "repeats": str(m.repeats)})
    return pd.DataFrame(rows)


def style(frame: pd.DataFrame, column: str = "verdict") -> Any:
    """A Styler: rows tinted by their verdict, no index, text left-aligned."""
    def tint(row: pd.Series) -> list[str]:
        colour = COLOURS.get(str(row.get(column, "")), "")
        return [f"background-color: {colour}" if colour else ""] * len(row)

    return (frame.style.apply(tint, axis=1).hide(axis="index")
            .set_properties(**{"text-align": "left", "vertical-align": "top"}))


def claims_section(ids: list[str], data_dir: str | Path | None = None,
                   results: list[Any] | None = None, machine_id: str | None = None) -> Any:
    """The assertions of some claims, as a notebook on one topic shows them.

    ``results``: the notebook's own runs, which stand in for stored runs of the same
    experiments (so the table shows what this notebook just measured).
    ``machine_id``: whose stored runs (default: this machine's).
    """
    verdicts = claims.judge(machine_id, data_dir, results)
    return style(assertions_table(verdicts, ids).drop(columns=["read from"]))


def figure(verdicts: list[ClaimVerdict], ids: list[str] | None = None) -> plt.Figure:
    """Each measured assertion against its tolerance, both divided by the published value.

    A bar is the tolerance band, a dot the measured value with its 95% interval;
    log scale, 1 = the published value.
    """
    items = [(v.id, a) for v in verdicts for a in v.assertions
             if (ids is None or v.id in ids) and a.measured is not None
             and a.published and a.published > 0 and a.measured > 0
             and a.verdict != "computed"]
    fig, ax = plt.subplots(figsize=(8.5, 1.4 + 0.34 * max(len(items), 3)))
    if not items:
        ax.text(0.5, 0.5, "no claim measured here yet", ha="center", va="center",
                transform=ax.transAxes, color="grey")
        ax.set_axis_off()
        return fig
    ys = np.arange(len(items))
    for y, (_, a) in zip(ys, items, strict=True):
        pub = float(a.published or 1.0)
        lo = (a.low if a.low is not None and a.low > 0 else pub / 100) / pub
        hi = (a.high if a.high is not None else pub * 100) / pub
        ax.barh(y, hi - lo, left=lo, height=0.6, color=COLOURS[a.verdict],
                edgecolor="#999999", lw=0.5)
        x = a.measured / pub
        err_lo = x - (a.ci_low or a.measured) / pub
        err_hi = (a.ci_high or a.measured) / pub - x
        ax.errorbar(x, y, xerr=[[max(err_lo, 0)], [max(err_hi, 0)]], fmt="o",
                    color=MARKERS[a.verdict], ms=5, capsize=2)
    ax.set_yticks(ys, [f"{cid} {a.text[:48]}{'...' if len(a.text) > 48 else ''}"
                       for cid, a in items], fontsize=8)
    ax.invert_yaxis()
    ax.axvline(1.0, color="grey", lw=0.8)
    ax.set_xscale("log")
    ax.set_xlabel("measured here / published value (log scale)\n"
                  "bar: what the claim's words allow; dot: measured, with its 95% interval")
    handles = [plt.Line2D([], [], marker="o", ls="", color=MARKERS[c], label=c)
               for c in MARKERS if any(a.verdict == c for _, a in items)]
    ax.legend(handles=handles, loc="lower center", bbox_to_anchor=(0.5, 1.0),
              ncol=min(len(handles), 4), frameon=False, fontsize=8)
    ax.set_title("Each assertion against its tolerance", pad=34)
    fig.tight_layout()
    return fig
