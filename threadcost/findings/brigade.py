"""Findings of notebook 07: the net time per hop of the I/O brigade (C18)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from threadcost.claims.intervals import over_repeats
from threadcost.claims.runs import Runs
from threadcost.findings import Value, quantity

S5_TASKS = 500  # S5's brigade length
BASELINE = "one-thread"  # one thread doing a hop's calls alone: no switch

NET_DEFINITION = ("time per hop beyond the calls themselves: in each repeat, the median "
                  "hop of the brigade minus the median hop of one thread doing the same "
                  "pipe calls alone; mean over the repeats")


def net_per_hop(table: pd.DataFrame, kind: str, tasks: int,
                placement: str) -> tuple[float, float | None, float | None, int] | None:
    """(mean, 95% low, 95% high, repeats) of the net per hop of one brigade setup, from a
    brigade ``runs`` table (one or several runs; ``run_index`` tells runs apart), or None
    when that setup or its baseline is absent. The one definition: the paper's tables,
    text and C18 all read it."""
    rows = table[(table.trips > 0) & (table.tasks == tasks) & (table.placement == placement)]
    index = [c for c in ("run_index", "repeat") if c in rows.columns]
    wide = rows.pivot_table(index=index, columns="kind", values="per_hop_ns_p50")
    if kind not in wide.columns or BASELINE not in wide.columns:
        return None
    diff = (wide[kind] - wide[BASELINE]).dropna()
    if diff.empty:
        return None
    m = over_repeats(diff, "ns")
    return m.value, m.low, m.high, m.repeats


def _brigade(runs: Runs) -> tuple[pd.DataFrame, list[Any]] | str:
    found = runs.matching("brigade")
    table = runs.tables(found, "runs")
    if table.empty:
        return "no brigade run stored (notebook 07)"
    return table, found


@quantity("c18_thread_net_hop_mean_ns", "ns", "mean over repeats",
          f"C18: the thread brigade of {S5_TASKS} tasks (one blocking read per thread), "
          f"unpinned: {NET_DEFINITION}")
def c18_thread_net_hop(runs: Runs) -> Value | str:
    got = _brigade(runs)
    if isinstance(got, str):
        return got
    table, found = got
    have = sorted(set(table.tasks))
    if S5_TASKS not in have:
        return (f"the stored brigade ran {', '.join(f'{n:,}' for n in have)} tasks, not S5's "
                f"{S5_TASKS}")
    net = net_per_hop(table, "thread", S5_TASKS, "unpinned")
    if net is None:
        return f"the stored brigade has no thread and one-thread rows at {S5_TASKS} tasks"
    value, low, high, n = net
    p = found[0].meta["params"]
    return Value(value, low, high, n, found,
                 setup={"experiment": "brigade", "tasks": S5_TASKS, "placement": "unpinned",
                        "iterations": p.get("iterations"), "repeats": p.get("repeats"),
                        "channel": "pipes (S5: Unix socket pairs)"})
