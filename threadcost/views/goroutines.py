"""Text of the goroutine launch and C04 pinning-pair runs (notebook 05)."""

from __future__ import annotations

import pandas as pd

from threadcost.results import Result


def launch_text(launch: Result, pinning: Result) -> str:
    s = launch.summary
    d = s["launch_ns"]
    text = (f"A goroutine's whole life (go, first run, wg.Done, Wait) took **{d['p50']:,.0f} ns** "
            f"at the median (p90 {d['p90']:,.0f} ns, n = {d['n']:,}; one clock read of about "
            f"{s['timer_overhead_ns']:,} ns included); timed as one batch, "
            f"{s['batch_launch_ns']:,.0f} ns per launch (the batch's mean includes the rare "
            f"launch that waited for something else on the CPU). ")
    if pinning.summary.get("skipped"):
        text += f"C04's pinning gain not run here: {pinning.summary['skipped']}. "
    else:
        g, m = pinning.summary["gain"], pinning.summary["gain_median_sample"]
        text += (f"C04's pinning gain over {g['pairs']} alternating pairs: "
                 f"**{g['gain_mean']:+.1%}** by batch rate (95% interval "
                 f"{g['ci95_low']:+.1%} to {g['ci95_high']:+.1%}), "
                 f"{m['gain_mean']:+.1%} by median round trip ({m['ci95_low']:+.1%} to "
                 f"{m['ci95_high']:+.1%}). ")
        for row in (g, m):
            if not row["resolves_5_percent"]:
                text += (f"The {row['basis']} interval is wider than ±5%: this machine's "
                         f"noise does not resolve a 10% gain that way. ")
    return text


def gain_table(pinning: Result) -> pd.DataFrame:
    """C04's pinning gain per basis, with its 95% interval, readable."""
    g = pinning.tables["gain"]
    return pd.DataFrame({
        "measured by": g["basis"], "pairs": g["pairs"],
        "gain (pinned / default - 1)": g["gain_mean"].map(lambda v: f"{v:+.1%}"),
        "95% interval": [f"{lo:+.1%} to {hi:+.1%}" for lo, hi in
                         zip(g["ci95_low"], g["ci95_high"], strict=True)],
        "interval within ±5%": g["resolves_5_percent"].map({True: "yes", False: "no"}),
    }).set_index("measured by")
