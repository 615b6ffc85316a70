"""Threads vs processes vs fibers vs goroutines: the one table and its prose (notebook 05).

Every row is drawn from stored runs: the user-space tasks' rows here, the kernel-task rows
(thread, process) in :mod:`threadcost.views.kernel_task_rows`, the runtimes' rows in
:mod:`threadcost.views.runtimes`; the figures are in
:mod:`threadcost.views.user_space_tasks_figures`. A row whose run is not stored says why
instead of holding a number.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from threadcost import findings, vocabulary
from threadcost.results import Result
from threadcost.textout import NOT_MEASURED

NOT_STORED = NOT_MEASURED.lower()  # a number whose run this machine's folder does not hold

# ------------------------------------------------------------ rows of the table

def switch_of(name: str, results: list[Any]) -> findings.Quantity | None:
    """One switch of a row, the paper's one definition (half a pinned batch's mean round
    trip; the median of runs where there are several): the finding ``name`` of the row's
    own runs, or None when no finding of that name exists (a row without a ping-pong)."""
    try:
        return findings.of_results(name, [r for r in results if r is not None])
    except KeyError:
        return None


def _row(task: str, kind: str, *, round_trip: dict[str, float] | None = None,
         switch: findings.Quantity | None = None, rss_kib: float | None = None,
         vsz_kib: float | None = None, kernel_kib: float | None = None,
         create_ns: float | None = None, life_ns: float | None = None,
         switch_how: str = "", memory_how: str = "",
         missing: str | None = None, kernel_thread: bool = False,
         switches_per_round_trip: float | None = None) -> dict[str, Any]:
    rt = round_trip or {}
    return {
        "task": task, "kind": kind,
        "round_trip_p50_ns": rt.get("p50"), "round_trip_p99_ns": rt.get("p99"),
        "round_trip_min_ns": rt.get("min"),
        # one switch: the finding's value (None: not measured, or no ping-pong pinned to
        # one CPU in this row); ``switch``: the finding itself, for the prose
        "switch_ns": switch.value if switch is not None and switch.measured else None,
        "switch": switch,
        "switches_per_round_trip": switches_per_round_trip,
        "rss_per_task_kib": rss_kib, "vsz_per_task_kib": vsz_kib,
        # create alone (pthread_create; a fiber's stack and context) and the whole life
        # (create, first run, exit, join: the runtimes' launch), two quantities
        "kernel_per_task_kib": kernel_kib, "create_ns": create_ns, "life_ns": life_ns,
        "switch_how": switch_how, "memory_how": memory_how, "missing": missing,
        # a language's kernel thread (Rust's, Java's platform thread): no one-switch cell
        "kernel_thread": kernel_thread,
        "round_trip": dict(rt),
    }


def measured_value(q: findings.Quantity) -> float | None:
    return q.value if q.measured else None


def fiber_rows(results: dict[str, Result]) -> list[dict[str, Any]]:
    """One row per fiber implementation (memory: the first touch depth)."""
    rows = []
    for impl, result in results.items():
        s = result.summary
        pf = s["per_fiber"] or {}
        fiber = vocabulary.TASK_LABELS["fiber"]
        name = f"{fiber}, hand-written switch" if impl == "asm" else f"{fiber}, ucontext"
        if impl == "asm" and not s["asm_native"]:
            name = f"{fiber}, asm requested (ucontext fallback)"
        switch = ("switch_fiber_batch_mean_ns" if impl == "asm"
                  else f"fiber_{impl}_switch_batch_mean_ns")
        rows.append(_row(
            name, "fiber", round_trip=s["round_trip_ns"],
            switch=switch_of(switch, [result]), rss_kib=pf.get("rss_kib"),
            vsz_kib=pf.get("vsz_kib"), kernel_kib=None,
            create_ns=fiber_create(result)["create_ns"],
            life_ns=measured_value(findings.of_results("launch_fiber_median_ns", [result]))
            if impl == "asm" else None,
            switches_per_round_trip=s.get("switches_per_round_trip"),
            switch_how="A->B->A on one thread pinned to one CPU",
            memory_how=f"slope over {pf.get('fibers', 0):,} idle fibers, "
                       f"{result.params['stack_kib']} KiB stacks, "
                       f"{pf.get('touch_kib', 0)} KiB touched; kernel side: one VMA pair, "
                       f"no kernel task"))
    return rows


def goroutine_rows(result: Result, pinning: Any = None) -> list[dict[str, Any]]:
    """The Go peer's two ping-pongs. One switch (pinned, GOMAXPROCS=1 only: the default
    runtime is not pinned to one CPU) is the headline's finding: the median of the C04
    pairs' pinned runs (``pinning``, the goroutine_pinning run), else this run's batch."""
    s = result.summary
    if s.get("skipped"):
        return [_row(vocabulary.TASK_LABELS["goroutine"], "goroutine", missing=s["skipped"])]
    mem = s["goroutine_memory"]
    rows = []
    goroutine = vocabulary.TASK_LABELS["goroutine"]
    for key, name in (("channel_pingpong", f"{goroutine}, GOMAXPROCS=1 pinned"),
                      ("channel_pingpong_default", f"{goroutine}, default GOMAXPROCS")):
        m = s[key]
        pinned = key == "channel_pingpong"
        runs = [pinning, result] if isinstance(pinning, Result) else [result]
        rows.append(_row(
            name, "goroutine", round_trip=m["round_trip_ns"],
            switch=switch_of("switch_goroutine_median_ns", runs) if pinned else None,
            rss_kib=mem["per_goroutine_rss_kib"], vsz_kib=mem["per_goroutine_vsz_kib"],
            switch_how="channel send + receive, unbuffered, " + m["mode"],
            memory_how=f"slope over {mem['goroutines']:,} goroutines blocked on a channel"))
    return rows


SWITCH_COLUMN = "one switch: half a pinned batch's mean round trip (ns)"


def comparison_table(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """The one table: switch time and memory per task, readable units."""
    frame = pd.DataFrame(rows)
    out = pd.DataFrame({
        "task": frame.task,
        "round trip p50 (ns)": frame.round_trip_p50_ns,
        "round trip p99 (ns)": frame.round_trip_p99_ns,
        SWITCH_COLUMN: frame.switch_ns,
        # two decimals: the kernel counts whole switches, and a count of 1 in 200,000
        # round trips (a fiber's) reads as 0.00, not as 0.00000500
        "switches per round trip (kernel's count)": frame.switches_per_round_trip.map(
            lambda v: v if pd.isna(v) else f"{v:.2f}"),
        "RSS per task (KiB)": frame.rss_per_task_kib,
        "VSZ per task (KiB)": frame.vsz_per_task_kib,
        "kernel memory per task (KiB)": frame.kernel_per_task_kib,
        "create alone p50 (ns)": frame.create_ns,
        "whole life p50 (ns): create, first run, exit, join": frame.life_ns,
        "not measured because": frame.missing.fillna(""),
    }).set_index("task")
    out = out.astype({c: float for c in out.columns if c != "not measured because"})
    if not out["not measured because"].astype(bool).any():  # every row measured
        out = out.drop(columns=["not measured because"])
    return out


def switch_distribution_table(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """Round-trip distribution of every task kind (ns; each sample one round trip, two
    switches, timed with one clock read), with how it was measured."""
    out = []
    for row in rows:
        d = row.get("round_trip") or {}
        if not d:
            continue
        out.append({"task": row["task"],
                    **{k: d.get(k) for k in ("min", "p50", "p90", "p99", "max", "mean")},
                    "round trips": d.get("n"),
                    "how": row["switch_how"]})
    return pd.DataFrame(out).set_index("task")


def switch_note_text(rows: list[dict[str, Any]]) -> str:
    """What the one-switch column is, and each row whose value is partial (a batch that
    also timed each round trip) or absent (no ping-pong pinned to one CPU)."""
    partial = [r["task"] for r in rows if r.get("switch") is not None
               and r["switch"].measured and r["switch"].extra.get("partial")]
    kernel = [r["task"] for r in rows if r.get("kernel_thread")
              and r.get("round_trip_p50_ns") is not None]
    unpinned = [r["task"] for r in rows if r.get("switch") is None
                and r.get("round_trip_p50_ns") is not None and r["task"] not in kernel]
    text = ("One switch, the paper's one definition (page 0's headline reads the same "
            "findings): half the mean round trip of a batch of round trips timed whole, "
            "with no clock read inside, both tasks pinned to one CPU; the median of runs "
            "where there are several.")
    if partial:
        text += (" Partial here: " + "; ".join(f"*{t}*" for t in partial) + " (the stored "
                 "run also timed each round trip, so one clock read and a CPU note are "
                 "inside every round trip of its batch; a run measured now adds batches "
                 "without them).")
    if unpinned:
        text += (" None for " + "; ".join(f"*{t}*" for t in unpinned) + ": not pinned to "
                 "one CPU, so a round trip is not two switches on one CPU.")
    if kernel:
        text += (" None for " + "; ".join(f"*{t}*" for t in kernel) + ": a kernel thread, "
                 "switched by the kernel as the OS thread is (the first row); its ping-pong "
                 "over its language's standard channel adds the channel's own locking around "
                 "each wake-up, so half its round trip is not one switch (the round-trip "
                 "columns show it).")
    return text


# ------------------------------------------------------- sentences for the prose

def fiber_switch_text(result: Result) -> str:
    s = result.summary
    d = s["round_trip_ns"]
    impl = s["impl"]

    def show(name: str) -> str:
        return findings.span(findings.of_results(name, [result]))

    switch = ("switch_fiber_batch_mean_ns" if impl == "asm"
              else f"fiber_{impl}_switch_batch_mean_ns")
    return (f"**{impl}**, {s['impl_description']}: round trip p50 "
            f"**{show(f'fiber_{impl}_round_trip_median_ns')}** "
            f"(min {d['min']:,.0f}, p90 {d['p90']:,.0f}, p99 {d['p99']:,.0f}, max {d['max']:,.0f}; "
            f"{d['n']:,} round trips, each including one clock read of about "
            f"{show(f'fiber_{impl}_clock_read_median_ns')}). Without clock reads: "
            f"{show(f'fiber_{impl}_batch_round_trip_mean_ns')} per round trip, i.e. "
            f"**{show(switch)} per switch**.")


def fiber_memory_text(results: dict[str, Result]) -> str:
    impl, result = next(iter(results.items()))
    rows = result.summary["per_fiber_by_touch"]
    lo, hi = rows[0], rows[-1]
    if lo["rss_kib"] is None:
        return "Too few readings for a per-fiber slope."
    def show(name: str) -> str:
        return findings.span(findings.of_results(name, [result]))

    low = (findings.span(findings.of_results("memory_fiber_slope_kib", [result]))
           if impl == "asm" else f"{lo['rss_kib']:,.2f} KiB")
    touched = [findings.parameter("tasks_fiber_touch_kib", f"{r['touch_kib']} KiB")
               for r in (lo, hi)]
    most = (show("fiber_asm_rss_most_touched_slope_kib") if impl == "asm"
            else f"{hi['rss_kib']:,.2f} KiB")
    vsz = show("fiber_asm_vsz_slope_kib") if impl == "asm" else f"{lo['vsz_kib']:,.0f} KiB"
    return (f"With `{impl}`, a fiber that has touched {touched[0]} of its stack costs "
            f"**{low}** of resident memory (95% CI {lo['rss_ci95'][0]:,.2f} "
            f"to {lo['rss_ci95'][1]:,.2f}, R² {lo['rss_r2']:.4f}): its first stack page plus "
            f"its share of the fiber records (each holds a "
            f"{findings.parameter('ucontext_size', '~1 KiB')} `ucontext_t`). At {touched[1]} "
            f"touched it costs {most}. Virtual size "
            f"grows {vsz} per fiber whatever the touch: the whole stack and "
            f"its guard page are reserved. Resident memory is what a fiber has used, not what "
            f"it was given.")


def goroutine_text(result: Result) -> str:
    g = result.summary
    if g.get("skipped"):
        why = vocabulary.bare_reason(g["skipped"])
        return (f"**Goroutine rows not run here:** {why}. Install Go (for example "
                f"conda-forge `go`, as `environment.yml` does) and rerun.")
    a, b = g["channel_pingpong"], g["channel_pingpong_default"]

    def show(name: str) -> str:
        return findings.span(findings.of_results(name, [result]))

    memory = findings.of_results("memory_goroutine_slope_kib", [result])
    pinned = show("go_pingpong_pinned_round_trip_median_ns")
    version = str(g["go_version"]).removeprefix("go version ").strip()  # `go version`'s
    return (f"Built with {version}. Round trip p50: **{pinned}"
            f"** ({a['mode']}) and **{show('go_pingpong_default_round_trip_median_ns')}** "
            f"({b['mode']}); over a batch without clock reads "
            f"{a['round_trips_per_s'] / 1e6:,.2f} and {b['round_trips_per_s'] / 1e6:,.2f} "
            "million round trips per second. An idle goroutine costs "
            f"**{findings.span(memory)}** resident (95% CI "
            f"{memory.interval_text().strip('[]') or 'not stored'}), of which the runtime "
            f"counts {show('goroutine_stack_slope_kib')} as stack.")


def fiber_create(result: Result) -> dict[str, Any]:
    """The one source of a fiber's creation numbers (table, prose and headline agree).

    The medians of the touch depth the headline uses (``summary["per_fiber"]``):
    ``create_ns`` (map the stack, guard page, context), ``start_ns`` (first switch
    in and back), ``launch_ns`` (their sum: the headline's "launch"), ``touch_kib``.
    """
    per = result.summary.get("per_fiber") or result.summary["per_fiber_by_touch"][0]
    create, start = per["create_ns"]["p50"], per["start_ns"]["p50"]
    return {"create_ns": create, "start_ns": start, "touch_kib": per.get("touch_kib"),
            "launch_ns": (create + start) if create is not None and start is not None
            else None}


def creation_text(results: dict[str, Result], thread: dict[str, findings.Quantity]) -> str:
    parts = []
    for impl, result in results.items():
        f = fiber_create(result)
        # the headline's launch is the finding (create + first run + unmapping the stack)
        life = findings.of_results("launch_fiber_median_ns", [result])
        def show(name: str, r: Result = result) -> str:
            return findings.span(findings.of_results(name, [r]))

        together = (show("fiber_ucontext_create_and_start_median_ns") if impl == "ucontext"
                    else f"{f['launch_ns'] / 1000:,.2f} µs")
        whole = (f"its whole life, with the unmapping of its stack (the headline's launch): "
                 f"{findings.span(life)}" if impl == "asm" and life.measured else
                 f"the two together: {together}")
        touched = findings.parameter("tasks_fiber_touch_kib", f"{f['touch_kib']} KiB")
        create = show(f"fiber_{impl}_create_median_ns")
        parts.append(f"a fiber switched by `{impl}` takes **{create}"
                     f"** to create (map its stack, set the guard page, prepare the context) and "
                     f"{show(f'fiber_{impl}_start_median_ns')} for its first switch in and back "
                     f"(with {touched} of stack touched); {whole}")
    text = "Medians: " + "; ".join(parts)
    create = thread.get("create_ns")
    if create is not None and create.measured:
        text += (f"; `pthread_create` takes **{findings.span(create)}** (notebook 3's "
                 f"run, glibc may reuse a cached stack).")
    else:
        text += ("; `pthread_create` was not measured on this machine ("
                 f"{create.missing if create is not None else NOT_STORED}).")
    return text + (" A fiber's create maps its stack and sets its guard page (`mmap`, "
                   "`mprotect`), as a thread's stack needs, without a `clone`; how its time "
                   "divides between those calls is not measured here.")


def switch_ratio_text(rows: list[dict[str, Any]]) -> str:
    """The thread switch against the hand-written fiber switch, both by the paper's one
    definition (their findings, divided as printed)."""
    thread = next((r.get("switch") for r in rows if r["kind"] == "thread"), None)
    asm = next((r.get("switch") for r in rows if "hand-written" in r["task"]), None)
    got = (findings.ratio(thread, asm, fmt=",.0f")
           if thread is not None and asm is not None else None)
    if got is None or thread is None or asm is None:
        return ("The thread/fiber switch ratio needs both rows' switches; what is missing "
                "from the table, and why, is said above it.")
    stamped = ("; the thread's stored batch also timed each round trip" if
               thread.extra.get("partial") else "")
    return (f"On this machine a thread switch through the kernel (futex, same CPU) takes "
            f"**{got[1]}** as long as a hand-written fiber switch ({findings.span(thread)} "
            f"vs {findings.span(asm)}, each half a pinned batch's mean round trip, no clock "
            f"read inside{stamped}).")
