"""Selectors of the bucket brigade (C18-C23)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from threadcost import findings
from threadcost.claims.read.common import (
    at_setup,
    no_run,
)
from threadcost.claims.read.switching import (
    goroutine_switch_pinned_ns,
    yardstick,
)
from threadcost.findings.brigade import net_name
from threadcost.measured.intervals import log_ratio, over_repeats, quotient
from threadcost.measured.measurement import Measurement, Missing
from threadcost.measured.runs import Runs, run_ids

Select = Any  # a selector: stored runs -> Measurement | Missing

# --- the bucket brigade (C18-C23) ---------------------------------------------------------------

S5_TASKS = 500


def _brigade(runs: Runs) -> tuple[pd.DataFrame, list[Any]] | Missing:
    found = runs.matching("brigade")
    table = runs.tables(found, "runs")
    if table.empty:
        return no_run("brigade", "any task count", "notebook 07")
    return table[table.trips > 0], found


def _brigade_wide(rows: pd.DataFrame, tasks: int, placement: str) -> pd.DataFrame:
    """per_hop_ns_p50 by kind, one row per (run, repeat); kinds as columns."""
    at = rows[(rows.tasks == tasks) & (rows.placement == placement)]
    return at.pivot_table(index=["run_index", "repeat"], columns="kind",
                          values="per_hop_ns_p50")


def brigade_at_s5(runs: Runs, kinds: tuple[str, ...]) -> tuple[pd.DataFrame, list[Any]] | Missing:
    got = _brigade(runs)
    if isinstance(got, Missing):
        return got
    rows, found = got
    have = sorted(set(rows.tasks))
    if S5_TASKS not in have:
        return Missing(f"the stored brigade ran {', '.join(f'{n:,}' for n in have)} tasks, "
                       f"not S5's {S5_TASKS}")
    at = rows[rows.tasks == S5_TASKS]
    absent = [k for k in kinds if k not in set(at.kind)]
    if absent:
        reasons = [r.meta["summary"].get("not_run", {}) for r in found]
        why = next((x.get(absent[0]) for x in reasons if isinstance(x, dict)
                    and x.get(absent[0])), "not measured")
        return Missing(f"the brigade did not run {', '.join(absent)} at {S5_TASKS} tasks: "
                       f"{why}")
    return rows, found


def brigade_setup(found: list[Any], placement: str, tasks: Any = S5_TASKS) -> dict[str, Any]:
    p = found[0].meta["params"]
    return {"experiment": "brigade", "tasks": tasks, "placement": placement,
            "iterations": p.get("iterations"), "repeats": p.get("repeats"),
            "channel": "pipes (S5: Unix socket pairs)"}


def c18_thread_net_ns(runs: Runs) -> Measurement | Missing:
    """Context for C18: the thread brigade's net per hop at 500 tasks, unpinned."""

    return findings.measurement(net_name("thread", "unpinned"), runs, setup={}, how="")


def c18_thread_net_over_syscall(runs: Runs) -> Measurement | Missing:
    """C18 normalised: the thread brigade's net per hop in empty system calls, computed
    from the brigade and the yardsticks (two runs): context, not a verdict."""
    net = c18_thread_net_ns(runs)
    stick = yardstick("syscall")(runs)
    if isinstance(net, Missing):
        return net
    if isinstance(stick, Missing):
        return stick
    return quotient(net, stick, "empty system calls", run_id=f"{net.run_id}; {stick.run_id}",
                    setup={"experiment": "brigade + yardsticks", "tasks": S5_TASKS,
                           "placement": "unpinned"}, computed=True,
                    unjudgeable="from two measured runs; an absolute time from another "
                                "machine is context, not a verdict",
                    how="net per hop of the thread brigade (p50 minus the one-thread p50, "
                        "per repeat) / one empty system call (yardsticks)")


def c19_thread_over_goroutine_switch(runs: Runs) -> Measurement | Missing:
    """Substitute: pinned thread switch (yardsticks pipe ping-pong) / pinned goroutine
    switch (channel ping-pong, GOMAXPROCS=1), each a mean over its own repeats."""
    thread = yardstick("pipe_switch_pinned")(runs)
    go = goroutine_switch_pinned_ns(runs)
    if isinstance(thread, Missing):
        return thread
    if isinstance(go, Missing):
        return go
    return quotient(thread, go, run_id=f"{thread.run_id}; {go.run_id}",
                    setup={"thread": "pipe ping-pong, two threads on one CPU (yardsticks)",
                           "goroutine": "channel ping-pong, GOMAXPROCS=1 pinned "
                                        "(goroutine_pinning)"},
                    how="one switch each (half a round trip, batches timed whole); the two "
                        "come from two runs, so the interval is the conservative one: the "
                        "lowest and highest ratio the two intervals allow")


def c20_goroutine_over_thread_gross(runs: Runs) -> Measurement | Missing:
    got = brigade_at_s5(runs, ("thread", "goroutine"))
    if isinstance(got, Missing):
        return got
    rows, found = got
    wide = _brigade_wide(rows, S5_TASKS, "unpinned")
    return at_setup(log_ratio((wide["goroutine"] / wide["thread"]).dropna(), run_id=run_ids(found),
                     setup=brigade_setup(found, "unpinned"),
                     how="per repeat (kinds interleaved): p50 time per hop, pipe I/O "
                         "included, goroutines / threads"), "at 500 tasks")


def c20_thread_over_goroutine_net(runs: Runs) -> Measurement | Missing:
    got = brigade_at_s5(runs, ("thread", "goroutine", "one-thread"))
    if isinstance(got, Missing):
        return got
    rows, found = got
    wide = _brigade_wide(rows, S5_TASKS, "unpinned")
    net_t = wide["thread"] - wide["one-thread"]
    net_g = wide["goroutine"] - wide["one-thread"]
    return at_setup(log_ratio((net_t / net_g).dropna(), run_id=run_ids(found),
                     setup=brigade_setup(found, "unpinned"),
                     how="per repeat: net per hop (p50 minus the one-thread p50 of the same "
                         "repeat), threads / goroutines"), "at 500 tasks")


def c21_pinned_thread_over_goroutine(runs: Runs) -> Measurement | Missing:
    got = brigade_at_s5(runs, ("thread", "goroutine"))
    if isinstance(got, Missing):
        return got
    rows, found = got
    pinned = _brigade_wide(rows, S5_TASKS, "same-cpu")
    free = _brigade_wide(rows, S5_TASKS, "unpinned")
    if "thread" not in pinned or "goroutine" not in free:
        return Missing("the brigade at 500 tasks lacks threads pinned or goroutines unpinned")
    ratio = (pinned["thread"] / free["goroutine"]).dropna()
    return at_setup(log_ratio(ratio, run_id=run_ids(found),
                     setup={**brigade_setup(found, "threads on one CPU, goroutines unpinned")},
                     how="per repeat: p50 time per hop, threads pinned to one CPU / "
                         "goroutines unpinned (placements interleaved in each repeat)"),
               "at 500 tasks")


def brigade_memory(runs: Runs) -> tuple[pd.DataFrame, list[Any]] | Missing:
    found = runs.matching("brigade")
    table = runs.tables(found, "memory")
    if table.empty:
        return no_run("brigade", "memory slopes", "notebook 07")
    placement = "unpinned" if "unpinned" in set(table.placement) else "same-cpu"
    return table[table.placement == placement], found


def slope_measurement(row: Any, prefix: str, found: list[Any], how: str) -> Measurement:
    value = float(getattr(row, f"{prefix}_per_task_kib"))
    lo, hi = getattr(row, f"{prefix}_ci95_low"), getattr(row, f"{prefix}_ci95_high")
    lo = value if lo is None or pd.isna(lo) else float(lo)
    hi = value if hi is None or pd.isna(hi) else float(hi)
    return Measurement(value, "KiB", lo, hi, repeats=int(row.runs), run_id=run_ids(found),
                       setup={"experiment": "brigade", "kind": row.kind,
                              "placement": row.placement, "tasks": f"up to {row.max_tasks:,}"},
                       how=how)


def c22_thread_over_goroutine_rss(runs: Runs) -> Measurement | Missing:
    got = brigade_memory(runs)
    if isinstance(got, Missing):
        return got
    table, found = got
    by = {r.kind: r for r in table.itertuples(index=False)}
    if "thread" not in by or "goroutine" not in by or pd.isna(by["goroutine"].rss_per_task_kib):
        return Missing("the brigade's memory table lacks threads or goroutines")
    t = slope_measurement(by["thread"], "rss", found, "")
    g = slope_measurement(by["goroutine"], "rss", found, "")
    if g.value <= 0:
        return Missing(f"the goroutines' RSS slope is {g.value:.2f} KiB per task, not above "
                       "zero: no ratio")
    if (g.low or 0) <= 0:
        return Measurement(t.value / g.value, "ratio",
                           repeats=t.repeats, run_id=t.run_id,
                           unjudgeable="the interval of the goroutines' RSS slope reaches "
                                       "zero, so the ratio's interval is unbounded",
                           how="slope of RSS over the task count, threads / goroutines")
    return quotient(t, g, run_id=t.run_id, setup={**t.setup, "kind": "thread vs goroutine"},
                    how=f"slope of RSS over the task count: threads {t.value:.1f} KiB, "
                        f"goroutines {g.value:.2f} KiB per task; conservative interval from "
                        "the two slopes' intervals")


def c22_thread_kernel_kib(runs: Runs) -> Measurement | Missing:
    """Kernel memory per thread beyond the pipes: thread kind's slope minus one-thread's."""
    got = brigade_memory(runs)
    if isinstance(got, Missing):
        return got
    table, found = got
    by = {r.kind: r for r in table.itertuples(index=False)}
    if "thread" not in by or "one-thread" not in by:
        return Missing("the brigade's memory table lacks threads or the one-thread baseline")
    t = slope_measurement(by["thread"], "kernel", found, "")
    o = slope_measurement(by["one-thread"], "kernel", found, "")
    return Measurement(t.value - o.value, "KiB", (t.low or t.value) - (o.high or o.value),
                       (t.high or t.value) - (o.low or o.value), repeats=t.repeats,
                       run_id=t.run_id, setup=t.setup,
                       how="slope over the task count of KernelStack + PageTables + "
                           "SUnreclaim (system-wide) for threads minus the one-thread "
                           "brigade's (the pipes); conservative interval")


def c23_thread_net_minus_user_tasks(runs: Runs) -> Measurement | Missing:
    """Direction at every N and placement: thread net - goroutine net and thread net -
    epoll net, per repeat; the smallest of those differences (and its interval) decides."""
    got = _brigade(runs)
    if isinstance(got, Missing):
        return got
    rows, found = got
    worst: Measurement | None = None  # the cell whose interval reaches lowest
    cells = 0
    for (tasks, placement), _ in rows.groupby(["tasks", "placement"]):
        wide = _brigade_wide(rows, int(tasks), str(placement))
        if "thread" not in wide or "one-thread" not in wide:
            continue
        for other in ("goroutine", "epoll"):
            if other not in wide:
                continue
            diff = (wide["thread"] - wide[other]).dropna()  # the baseline cancels
            if diff.empty:
                continue
            m = over_repeats(diff, "ns")
            cells += 1
            low = m.low if m.low is not None else m.value
            if worst is None or low < (worst.low if worst.low is not None else worst.value):
                worst = Measurement(m.value, "ns", m.low, m.high, repeats=m.repeats,
                                    setup={"tasks": int(tasks), "placement": placement,
                                           "other": other})
    if worst is None:
        return Missing("the brigade has no thread and user-space kind measured side by side")
    kinds = sorted(set(rows.kind) & {"goroutine", "epoll"})
    cell = (f"{worst.setup['other']} at {worst.setup['tasks']:,} tasks, "
            f"{worst.setup['placement']}")
    return Measurement(worst.value, "ns", worst.low, worst.high, repeats=worst.repeats,
                       run_id=run_ids(found), where=f"(the weakest cell: {cell})",
                       setup={"experiment": "brigade", "tasks": sorted(set(rows.tasks)),
                              "placements": sorted(set(rows.placement)),
                              "user-space kinds": ", ".join(kinds)},
                       how=f"per repeat: thread net per hop minus {' / '.join(kinds)} net per "
                           f"hop, at each of {cells} (N, placement, kind) cells; shown: the "
                           f"cell whose interval reaches lowest ({cell}), with its own "
                           "interval (every other cell lies above it)")


def brigade_hop(kind: str, placement: str, net: bool = False) -> Select:
    """Mean time per hop at 500 tasks (S5: a trip's mean time / tasks); ``net``: minus
    the one-thread brigade's of the same repeat (S5's per switch)."""
    def select(runs: Runs) -> Measurement | Missing:
        kinds = (kind, "one-thread") if net else (kind,)
        got = brigade_at_s5(runs, kinds)
        if isinstance(got, Missing):
            return got
        rows, found = got
        at = rows[(rows.tasks == S5_TASKS) & (rows.placement == placement)]
        wide = at.pivot_table(index=["run_index", "repeat"], columns="kind",
                              values="per_hop_ns_mean")
        if kind not in wide or (net and "one-thread" not in wide):
            return Missing(f"the brigade did not run {kind} {placement} at 500 tasks")
        values = (wide[kind] - wide["one-thread"]) if net else wide[kind]
        # the C brigade stores trip / (tasks + 1); S5's unit is trip / tasks
        values = values * (S5_TASKS + 1) / S5_TASKS
        return at_setup(over_repeats(values.dropna(), "ns", run_id=run_ids(found),
                                setup=brigade_setup(found, placement),
                                how="per repeat: mean trip / 500 tasks (S5's \"per task per "
                                    "iter\")"
                                    + ("; minus the one-thread brigade's (pipe I/O alone)"
                                       if net else "")), "at 500 tasks")
    return select


def brigade_rss_slope(kind: str) -> Select:
    def select(runs: Runs) -> Measurement | Missing:
        got = brigade_memory(runs)
        if isinstance(got, Missing):
            return got
        table, found = got
        by = {r.kind: r for r in table.itertuples(index=False)}
        if kind not in by or pd.isna(by[kind].rss_per_task_kib):
            return Missing(f"the brigade's memory table lacks {kind}")
        return slope_measurement(by[kind], "rss", found,
                                  "slope of RSS over the task count (S5's method)")
    return select
