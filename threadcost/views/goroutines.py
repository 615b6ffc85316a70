"""Text of the goroutine launch and C04 pinning-pair runs (notebook 05)."""

from __future__ import annotations

import pandas as pd

from threadcost import findings, vocabulary
from threadcost.results import Result


def not_run_text(launch: Result) -> str:
    """The goroutine launch and C04 pairs when the Go peer did not run: why, once."""
    return (f"**Goroutine launch and C04 pairs not run:** "
            f"{vocabulary.bare_reason(launch.summary['skipped'])}.")


def launch_text(launch: Result, pinning: Result) -> str:
    """The goroutine launch and C04's pinning gain, each number a named finding of these
    runs (``threadcost.findings.tasks``; the median is the headline's launch)."""
    s = launch.summary
    d = s["launch_ns"]

    def show(name: str, result: Result) -> str:
        return findings.span(findings.of_results(name, [result]))

    def gain(name: str) -> tuple[str, str]:
        """The gain, marked, and its 95% interval in words."""
        q = findings.of_results(name, [pinning])
        if not q.measured or q.low is None or q.high is None:
            return findings.span(q), "no interval"
        lo, hi = (findings.number(x, q.fmt) for x in (q.low, q.high))
        return findings.span(q), f"{lo} to {hi} points"

    tolerance = findings.parameter("c04_resolution", "±5%")
    text = (f"A goroutine's whole life (go, first run, wg.Done, Wait) took "
            f"**{show('launch_goroutine_median_ns', launch)}** at the median (p90 "
            f"{show('launch_goroutine_p90_ns', launch)}, n = {d['n']:,}; one clock read of "
            f"about {show('goroutine_launch_clock_read_median_ns', launch)} included). The "
            f"same launches, still one at a time but timed as one batch with no clock read "
            f"between them, took {show('launch_goroutine_batch_mean_ns', launch)} per launch "
            f"(the batch's mean){_batch_words(launch)}. ")
    if pinning.summary.get("skipped"):
        why = vocabulary.bare_reason(pinning.summary["skipped"])
        text += f"C04's pinning gain not run here: {why}. "
    else:
        g = pinning.summary["gain"]
        batch = gain("c04_pinning_gain_batch_mean_share_pct")
        median = gain("c04_pinning_gain_median_sample_mean_share_pct")
        text += (f"C04's pinning gain over {g['pairs']} alternating pairs: "
                 f"**{batch[0]}** by batch rate (95% interval {batch[1]}), "
                 f"{median[0]} by median round trip ({median[1]}). ")
        for row in (g, pinning.summary["gain_median_sample"]):
            if not row["resolves_5_percent"]:
                text += (f"The {row['basis']} interval is wider than {tolerance}: this "
                         f"machine's noise does not resolve a "
                         f"{findings.parameter('c04_gain', '10%')} gain that way. ")
    return text


def _batch_words(launch: Result) -> str:
    """Where the batch's mean lies against the median of the launches timed one by one,
    in words, from the two findings: what the data show, no cause they do not measure."""
    batch = findings.of_results("launch_goroutine_batch_mean_ns", [launch])
    median = findings.of_results("launch_goroutine_median_ns", [launch])
    clock = findings.of_results("goroutine_launch_clock_read_median_ns", [launch])
    if not (batch.measured and median.measured) or batch.value is None \
            or median.value is None:
        return ""
    if batch.value >= median.value:
        return (": above the median of the launches timed one by one (a mean counts the "
                "slow tail a median leaves out)")
    if clock.measured and clock.value is not None and median.value - batch.value > clock.value:
        return (": below the median of the launches timed one by one, and by more than the "
                "one clock read a timed launch includes; what makes up the rest of the "
                "difference is not measured here")
    return (": below the median of the launches timed one by one, by no more than the one "
            "clock read a timed launch includes")


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
