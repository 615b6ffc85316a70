"""Findings of notebook 05 (user-space tasks): S1's one million goroutines, each variant
its own name (S1's program, the median of its runs; the held variant, every goroutine
asleep at once), and the round-trip distributions of this page's rows (each sample with
one clock read). One switch, by the paper's one definition, is the headline's finding
of each task (``threadcost.findings.headline``)."""

from __future__ import annotations

from typing import Any

from threadcost.findings.summary import from_run

VARIANTS = {"as_published": ("s1_program", "S1's program as published (goroutines start "
                                           "and sleep as they come), the median of its runs"),
            "all_at_once": ("held", "every goroutine held until all existed, then asleep "
                                    "together (one run)")}
COLUMNS = {"wall_s": ("wall", "s", "wall time", ".2f", 1.0),
           "user_s": ("user", "s", "user CPU time", ".2f", 1.0),
           "sys_s": ("sys", "s", "system CPU time", ".2f", 1.0),
           "spawn_s": ("spawn", "s", "time to start them all", ".2f", 1.0),
           "max_rss_kib": ("max_rss", "MiB", "max RSS of the program (wait4's ru_maxrss)",
                           ",.0f", 1 / 1024),
           "max_rss_kib_per_goroutine": ("rss_per_goroutine", "KiB", "max RSS of the "
                                         "program / goroutines", ".2f", 1.0)}


def _median(variant: str, column: str, factor: float) -> Any:
    def read(run: Any) -> float | None:
        if run.meta["summary"].get("skipped"):
            return None
        rows = run.table("runs")
        rows = rows[rows.variant == variant]
        return None if rows.empty else float(rows[column].median()) * factor
    return read


def million_name(variant: str, column: str) -> str:
    """The finding of one variant's column (median over its runs)."""
    tag, unit = VARIANTS[variant][0], COLUMNS[column][1].lower()
    return f"million_goroutines_{tag}_{COLUMNS[column][0]}_median_{unit}"


for _variant, (_tag, _vwords) in VARIANTS.items():
    for _column, (_short, _unit, _cwords, _fmt, _factor) in COLUMNS.items():
        from_run(million_name(_variant, _column), "goroutines_million",
                 _median(_variant, _column, _factor), _unit, "median over runs",
                 f"one million goroutines each sleeping (S1's C11): {_cwords}; {_vwords}",
                 fmt=_fmt)


# --- the Go peer: round trips, goroutine launch, C04's pinning gain ---------------------------

for _key, _tag, _words in (("channel_pingpong", "pinned", "GOMAXPROCS=1, pinned"),
                           ("channel_pingpong_default", "default", "default GOMAXPROCS, "
                                                                   "unpinned")):
    from_run(f"go_pingpong_{_tag}_round_trip_median_ns", "peers",
             lambda run, k=_key: run.meta["summary"][k]["round_trip_ns"]["p50"], "ns", "median",
             f"one round trip of the Go peer's channel ping-pong ({_words}), each timed: "
             "median", fmt=",.0f")
from_run("goroutine_stack_slope_kib", "peers",
         lambda run: run.meta["summary"]["goroutine_memory"]["per_goroutine_stack_kib"], "KiB",
         "slope", "the stack the Go runtime counts per idle goroutine (StackInuse): slope over "
         "goroutine counts", fmt=",.2f")
from_run("launch_goroutine_p90_ns", "goroutine_launch",
         lambda run: run.meta["summary"]["launch_ns"]["p90"], "ns", "p90",
         "a goroutine's whole life (go, first run, wg.Done, Wait), GOMAXPROCS=1 pinned: the "
         "90th percentile", **dict(scale=1e-3, display_unit="µs", fmt="auto"))
from_run("launch_goroutine_batch_mean_ns", "goroutine_launch",
         lambda run: run.meta["summary"]["batch_launch_ns"], "ns", "mean of a batch",
         "goroutine launches timed as one batch (no clock read inside): the batch's mean per "
         "launch", **dict(scale=1e-3, display_unit="µs", fmt="auto"))
from_run("goroutine_launch_clock_read_median_ns", "goroutine_launch",
         lambda run: run.meta["summary"]["timer_overhead_ns"], "ns", "median",
         "one clock read in the Go peer (its timer's overhead), included in each timed launch",
         fmt=",.0f")
for _key, _tag, _words in (("gain", "batch", "the batch rate"),
                           ("gain_median_sample", "median_sample", "the median round trip")):
    from_run(f"c04_pinning_gain_{_tag}_mean_share_pct", "goroutine_pinning",
             lambda run, k=_key: 100 * run.meta["summary"][k]["gain_mean"], "%",
             "mean over pairs", f"C04's pinning gain by {_words}: pinned / default - 1, the "
             "mean over alternating pairs", fmt="+.1f",
             interval=lambda run, k=_key: (100 * run.meta["summary"][k]["ci95_low"],
                                           100 * run.meta["summary"][k]["ci95_high"]))


# --- C fibers: switch, memory and creation, per implementation ---------------------------------

for _impl, _words in (("asm", "a hand-written fiber switch"), ("ucontext", "a swapcontext "
                                                                           "fiber switch")):
    _p = {"impl": _impl}
    from_run(f"fiber_{_impl}_round_trip_median_ns", "fibers",
             lambda run: run.meta["summary"]["round_trip_ns"]["p50"], "ns", "median",
             f"one round trip between two fibers ({_words}), pinned, each timed with one clock "
             "read: median", fmt=",.0f", params=_p)
    from_run(f"fiber_{_impl}_clock_read_median_ns", "fibers",
             lambda run: run.meta["summary"]["timer_overhead_ns"], "ns", "median",
             f"one clock read in the {_impl} fiber run (its timer's overhead)", fmt=",.0f",
             params=_p)
    from_run(f"fiber_{_impl}_batch_round_trip_mean_ns", "fibers",
             lambda run: run.meta["summary"]["batch_round_trip_ns"], "ns", "mean of a batch",
             f"one round trip between two fibers ({_words}), a batch timed whole, no clock "
             "read inside", fmt=",.1f", params=_p)
    for _key, _what in (("create_ns", "create (map its stack, set the guard page, prepare "
                                      "the context)"),
                        ("start_ns", "its first switch in and back")):
        from_run(f"fiber_{_impl}_{_key[:-3]}_median_ns", "fibers",
                 lambda run, k=_key: run.meta["summary"]["per_fiber"][k]["p50"], "ns",
                 "median", f"a fiber switched by {_impl}: {_what}; median", params=_p,
                 **(dict(fmt="auto", scale=1e-3, display_unit="µs") if _key == "create_ns"
                    else dict(fmt=",.0f")))
from_run("fiber_ucontext_switch_batch_mean_ns", "fibers",
         lambda run: run.meta["summary"]["switch_ns_batch"], "ns", "mean of a batch",
         "one swapcontext fiber switch, pinned: a batch of round trips timed whole / 2",
         fmt=",.1f", params={"impl": "ucontext"})
from_run("fiber_ucontext_create_and_start_median_ns", "fibers",
         lambda run: (run.meta["summary"]["per_fiber"]["create_ns"]["p50"]
                      + run.meta["summary"]["per_fiber"]["start_ns"]["p50"]), "ns", "median",
         "a swapcontext fiber's create and first switch in and back: the sum of their "
         "medians", fmt="auto", scale=1e-3, display_unit="µs", params={"impl": "ucontext"})
from_run("fiber_asm_rss_most_touched_slope_kib", "fibers",
         lambda run: run.meta["summary"]["per_fiber_by_touch"][-1]["rss_kib"], "KiB", "slope",
         "RSS growth per idle hand-written fiber with the most stack touched in the run: "
         "slope over fiber counts", fmt=",.2f", params={"impl": "asm"})
from_run("fiber_asm_vsz_slope_kib", "fibers",
         lambda run: run.meta["summary"]["per_fiber_by_touch"][0]["vsz_kib"], "KiB", "slope",
         "virtual size growth per hand-written fiber (its stack and guard page reserved): "
         "slope over fiber counts", fmt=",.0f", params={"impl": "asm"})
