"""Tables and text of S1's one-million-task runs (C10, C11)."""

from __future__ import annotations

import pandas as pd

from threadcost.results import Result


def goroutines_text(result: Result) -> str:
    s = result.summary
    if s.get("skipped"):
        return f"**C11 not run here:** {s['skipped']}."
    text = (f"{s['count']:,} goroutines each sleeping {result.params['sleep_ms']:,} ms, "
            f"measured like `/usr/bin/time`: **{s['wall_s']:.2f} s** wall, "
            f"{s['user_s']:.2f} s user, {s['sys_s']:.2f} s system, max RSS "
            f"**{s['max_rss_kib'] / 1024:,.0f} MiB** ({s['max_rss_kib_per_goroutine']:.2f} KiB "
            f"per goroutine). Starting them took {s['spawn_s']:.2f} s; ")
    if s["all_asleep_at_once"]:
        text += "all of them were asleep at once."
    else:
        text += (f"only {s['alive_at_spawn_end']:,} were still asleep when the last one "
                 "started (the first had woken and ended), so the max RSS is that of fewer "
                 "goroutines at once than the count says.")
    return text


def goroutines_table(result: Result) -> pd.DataFrame:
    return result.tables["run"].rename(columns={
        "count": "goroutines", "alive_at_spawn_end": "asleep when the last started",
        "spawn_s": "start all (s)", "wall_s": "wall (s)", "user_s": "user (s)",
        "sys_s": "system (s)", "max_rss_kib": "max RSS (KiB)",
        "max_rss_kib_per_goroutine": "max RSS per goroutine (KiB)"})


def threads_text(result: Result) -> str:
    m = result.summary["measured"]
    p = result.params
    return (f"The largest count tried here was **{p['count']:,} threads** "
            f"(set by {result.summary['count_bound']}), each with a "
            f"{p['stack_kib']:,} KiB stack, sleeping {p['sleep_ms']:,} ms: "
            f"{m['wall_s']:.2f} s wall (starting them: {m['spawn_s']:.2f} s), "
            f"{m['user_s']:.2f} s user, {m['sys_s']:.2f} s system; resident growth "
            f"{m['rss_kib_per_thread']:.1f} KiB and virtual growth "
            f"{m['vsz_kib_per_thread']:,.0f} KiB per thread. The one-million figures below "
            "are **computed** from these by scaling, not measured.")


def scaled_table(result: Result) -> pd.DataFrame:
    t = result.tables["scaled"].copy()
    t.columns = ["quantity", "value for 1,000,000 threads", "unit", "how"]
    return t.set_index("quantity")
