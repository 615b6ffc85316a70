"""S0-code (the code accompanying S0): launch times and the 64 KiB memcpy (C09)."""

from __future__ import annotations

from typing import Any

from threadcost.claims import properties, whys
from threadcost.claims.model import FACTOR, WORDS, Claim, Published, Reading
from threadcost.claims.records._help import about_reading, of_source, values
from threadcost.findings.context_switch import memcpy_either
from threadcost.findings.launch import c09_thread_growth
from threadcost.findings.selectors import at_setup, holds_all
from threadcost.measured.intervals import over_repeats, quotient
from threadcost.measured.measurement import Measurement, Missing
from threadcost.measured.runs import Runs, run_ids

C09 = (Published("thread_launch_ns", 5250, "ns", "thread launch as timed by S0-code (the "
                 "launch call, measured from the parent); independent of touched memory",
                 5000, 5500),
       Published("fork_launch_ns_0mb", 22_300, "ns", "fork launch with 0 MB touched in the "
                 "parent"),
       Published("fork_launch_ns_2mb", 34_500, "ns", "fork launch with 2 MB touched"),
       Published("fork_launch_ns_4mb", 44_700, "ns", "fork launch with 4 MB touched"),
       Published("fork_launch_ns_8mb", 66_800, "ns", "fork launch with 8 MB touched"),
       Published("memcpy_64kib_ns", 3000, "ns", "a 64 KiB memcpy: published as a bar typed "
                 "in S0-code's plot script (not measured by S0-code's programs); its cache "
                 "state is not stated"))
V = values(*C09)
GROWTH_QUOTE = "22.3 / 34.5 / 44.7 / 66.8 µs at 0 / 2 / 4 / 8 MB (S0-code's plot data)"


def create_ns(kind: str, mib: int) -> Any:
    """The launch call timed from the parent (S0-code's launch time): per repeat of
    launch_growth when it ran this touch, else the one series of the launch run."""
    def select(runs: Runs) -> Measurement | Missing:
        found = runs.matching("launch_growth", kinds=holds_all(kind),
                              parent_touch_mib=holds_all(mib))
        table = runs.tables(found, "repeats")
        if not table.empty:
            rows = table[(table.kind == kind) & (table.parent_touch_mib == mib)]
            return at_setup(over_repeats(rows.create_ns_p50, "ns", run_id=run_ids(found),
                                    setup={"experiment": "launch_growth", "kind": kind,
                                           "parent_touch_mib": mib},
                                    how="per repeat: median create time (the launch call, "
                                        "timed from the parent), a fresh process each"),
                       f"at {mib} MB touched")
        found = runs.matching("launch", kinds=holds_all(kind), parent_touch_mib=holds_all(mib))
        table = runs.tables(found, "distributions")
        rows = table[(table.get("metric") == "create_ns") & (table.get("kind") == kind)
                     & (table.get("parent_touch_mib") == mib)
                     & (table.get("phase") == "steady")] if not table.empty else table
        if rows.empty:
            return Missing(f"no stored launch of {kind} with {mib} MB touched")
        return at_setup(over_repeats(rows.p50, "ns", run_id=run_ids(found),
                                setup={"experiment": "launch", "kind": kind,
                                       "parent_touch_mib": mib},
                                how="median create time of one series (the launch run): "
                                    "the launch growth run with this touch gives repeats"),
                   f"at {mib} MB touched")
    return select


def fork_growth(mib: int) -> Any:
    """Fork launch at ``mib`` / at 0 MB: the published growth's own terms."""
    def select(runs: Runs) -> Measurement | Missing:
        top, bottom = create_ns("fork", mib)(runs), create_ns("fork", 0)(runs)
        if isinstance(top, Missing):
            return top
        if isinstance(bottom, Missing):
            return bottom

        return quotient(top, bottom, run_id=top.run_id, setup={**top.setup},
                        how=f"median fork create time at {mib} MB / at 0 MB; conservative "
                            "interval from the two")
    return select


# S0-code times launches unpinned and prints their mean; the stored launch_growth runs
# are pinned to one CPU and keep each repeat's median: a labelled stand-in
LAUNCH_STAND_IN = ("launches pinned to one CPU, each repeat's median (the launch growth run stores "
                   "medians), stand in for S0-code's mean of unpinned launches")


def _fork(mib: int) -> Reading:
    return about_reading(f"Fork launch with {mib} MB touched in the parent", "ns",
                         V[f"fork_launch_ns_{mib}mb"], create_ns("fork", mib), GROWTH_QUOTE,
                         timing=True, why=whys.CPU_BOUND, substitute=LAUNCH_STAND_IN)


SOURCE_DOC = "Code accompanying S0 (threadoverhead and clone folders), plot scripts"

claim = of_source("S0-code", SOURCE_DOC, "16 GB RAM machine")

CLAIMS: tuple[Claim, ...] = (
    claim("C09",
          words=("Thread launch about 5 to 5.5 µs independent of touched memory; fork launch "
                 "about 22 µs growing with the parent's touched memory (22.3/34.5/44.7/66.8 µs "
                 "at 0/2/4/8 MB); a 64 KiB memcpy takes about 3 µs (a bar typed in a plot "
                 "script, cache state not stated)."),
          pages=("03_launch",), experiments=("launch", "launch_growth", "yardsticks",),
          flips_on=properties.COPY_CACHE,
          published=C09, as_published=(
        Reading("Thread launch (the launch call, timed from the parent), 0 MB touched", "ns",
                5000, 5500, create_ns("thread", 0), timing=True, published=5250,
                tolerance_words="the published range, 5 to 5.5 µs",
                quote="thread launch about 5 to 5.5 µs (S0-code's plot data)",
                why=whys.CPU_BOUND, substitute=LAUNCH_STAND_IN),
        _fork(0), _fork(2), _fork(4), _fork(8),
        about_reading("A 64 KiB memcpy (published in a plot script; cache state not "
                      "stated, so measured in cache and in no cache)", "ns",
                      V["memcpy_64kib_ns"], memcpy_either,
                      "memcpy, which takes 3 µs for 64 KiB on the same machine", timing=True,
                      why=(whys.cache_state,))),
        shape=(
        Reading("Thread launch does not depend on the parent's touched memory (8 MB / 0)",
                "ratio", 0.9, 1.1, c09_thread_growth, timing=True, published=1.0,
                tolerance_words="within 10%", quote="independent of touched memory",
                substitute=LAUNCH_STAND_IN, states=WORDS),
        # the relation in words ("growing with"), judged by those words; then each factor
        # S0-code's plot data publishes, judged as a factor
        Reading("Fork launch grows with the parent's touched memory (8 MB / 0 MB above 1)",
                "ratio", 1.0, None, fork_growth(8), timing=True,
                published=V["fork_launch_ns_8mb"] / V["fork_launch_ns_0mb"],
                tolerance_words="grows: above 1x", quote=GROWTH_QUOTE,
                substitute=LAUNCH_STAND_IN, states=WORDS),
        *(about_reading(f"Fork launch's growth factor from 0 MB to {m} MB touched (the "
                        f"published {V[f'fork_launch_ns_{m}mb'] / 1000:.1f} µs / "
                        f"{V['fork_launch_ns_0mb'] / 1000:.1f} µs)",
                        "ratio", V[f"fork_launch_ns_{m}mb"] / V["fork_launch_ns_0mb"],
                        fork_growth(m), GROWTH_QUOTE, timing=True,
                        substitute=LAUNCH_STAND_IN, states=FACTOR, verb="grows",
                        directions=("steeper here", "flatter here")) for m in (2, 4, 8)))),
)
