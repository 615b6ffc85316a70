"""The peers' task kinds in notebook 05's table and in the headline.

:func:`peer_rows` turns a :mod:`threadcost.experiments.user_space_tasks.runtimes` result into
rows of notebook 05's table (same columns and definitions as the C thread, the
fiber and the goroutine rows). The headline's rows of the same kinds are findings
(``threadcost.findings.headline``), read by ``views.headline``.
"""

from __future__ import annotations

import math
from typing import Any

from threadcost import peers, vocabulary
from threadcost.findings.brigade import peer_hop, peer_transports
from threadcost.results import Result
from threadcost.views.user_space_tasks import _row, switch_of

# each runtime's words in the table, as its registry entry declares them (threadcost.peers)
SWITCH_HOW = {name: k.switch_how for name, k in peers.KINDS.items() if k.switch_how}
MEMORY_HOW = {name: k.memory_how for name, k in peers.KINDS.items()}


def peer_rows(result: Result) -> list[dict[str, Any]]:
    """One row per peer kind; a kind not run here says why."""
    rows = []
    for kind, s in result.summary["kinds"].items():
        name = vocabulary.task_label(kind)
        if s.get("not_run"):
            rows.append(_row(name, kind, missing=s["not_run"]))
            continue
        mem = s["memory"]
        # a kernel thread (Rust's, Java's platform thread) is switched as the OS thread is;
        # its ping-pong over a std channel (locks around the futex) is not one switch
        kernel_thread = kind in peers.KINDS and peers.KINDS[kind].kernel_task
        rows.append(_row(
            name, kind, round_trip=s.get("round_trip_ns"),
            switch=None if kernel_thread else switch_of(
                f"switch_{kind.replace('-', '_')}_batch_median_ns", [result]),
            rss_kib=mem["per_task_rss_kib"], vsz_kib=mem["per_task_vsz_kib"],
            life_ns=s["create_ns"]["p50"],  # the peers time the whole life
            switch_how=SWITCH_HOW.get(kind, "no ping-pong in this peer"),
            memory_how=f"slope over {mem['tasks']:,} {MEMORY_HOW.get(kind, 'idle tasks')}",
            kernel_thread=kernel_thread))
    return rows


# S4's program per variant (the names its runs store: each runtime's, as its registry
# entry declares them), in the vocabulary's words; the C threads of the sweep beside them
VARIANT_NAMES = {v.name: vocabulary.words(v.name) for k in peers.KINDS.values()
                 for v in k.sleepers} | {
    "threads": "C threads", "threads_pinned": "C threads (pinned round-robin)"}


def _fmt(value: Any, spec: str) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return ""
    return format(value, spec)


def sleepers_table(result: Result) -> Any:
    """S4's program per variant, the mean over its repeats (a run stored before the
    repeats: its one run): tasks, wake-ups, wall, user and system CPU, CPU per wake-up,
    the whole program's peak RSS and its growth per task, the growth of its page
    tables (VmPTE) per task (runs since the peers report them), and whether any
    repeat saturated the CPUs."""
    import pandas as pd

    rows = []
    for variant, r in result.summary["variants"].items():
        name = VARIANT_NAMES.get(variant, variant)
        if r.get("not_run"):
            rows.append({"tasks": name, "not run because": r["not_run"]})
            continue
        wakeups = r["wakeups"] or 0
        per_wakeup = r["cpu_s"] * 1e6 / wakeups if wakeups else None
        saturated = r.get("saturated")
        rows.append({"tasks": name, "repeats": _fmt(r.get("repeats", 1), "d"),
                     "count": _fmt(r["tasks"], ",d"), "wake-ups": _fmt(wakeups, ",d"),
                     "wall (s)": _fmt(r["wall_s"], ".2f"),
                     "user (s)": _fmt(r["user_s"], ".2f"), "system (s)": _fmt(r["sys_s"], ".2f"),
                     "CPU per wake-up (µs)": _fmt(per_wakeup, ".2f"),
                     "peak RSS (MiB)": _fmt(r["peak_rss_kib"] / 1024, ",.1f"),
                     "peak RSS growth (MiB)": _fmt(r["rss_growth_kib"] / 1024, ",.1f"),
                     "per task (KiB)": _fmt(r["rss_per_task_kib"], ",.2f"),
                     "page tables per task (KiB)": _fmt(r.get("page_tables_per_task_kib"),
                                                        ",.2f"),
                     "saturated": "" if saturated is None else ("yes" if saturated else "no"),
                     "not run because": ""})
    frame = _drop_empty_reason(pd.DataFrame(rows).fillna("").set_index("tasks"))
    pte = "page tables per task (KiB)"
    if pte in frame and not frame[pte].astype(bool).any():
        frame = frame.drop(columns=[pte])  # a run stored before the peers reported VmPTE
    if "saturated" in frame and not frame["saturated"].astype(bool).any():
        frame = frame.drop(columns=["saturated"])  # a run stored before the repeats
    return frame


def _drop_empty_reason(frame: Any) -> Any:
    """No "not run because" column when every row ran."""
    if "not run because" in frame and not frame["not run because"].astype(bool).any():
        return frame.drop(columns=["not run because"])
    return frame


def million_table(result: Result) -> Any:
    """S1's/S6's program per kind: measured count, peak RSS (the program's VmHWM), CPU,
    and the
    requested count (measured, or computed by scaling and labelled so)."""
    import pandas as pd

    rows = []
    for r in result.summary["kinds"].values():
        name = vocabulary.task_label(r["kind"])
        if r.get("not_run"):
            rows.append({"tasks": name, "not run because": r["not_run"]})
            continue
        rows.append({"tasks": name, "measured count": _fmt(r["measured_count"], ",d"),
                     "peak RSS, VmHWM (MiB)": _fmt(r["max_rss_kib"] / 1024, ",.1f"),
                     "per task (KiB)": _fmt(r["max_rss_kib_per_task"], ",.2f"),
                     "user (s)": _fmt(r["user_s"], ".2f"), "system (s)": _fmt(r["sys_s"], ".2f"),
                     f"peak RSS at {r['requested']:,} (MiB)":
                         _fmt(r["max_rss_kib_at_count"] / 1024, ",.1f"),
                     "at that count": r["at_count_label"], "not run because": ""})
    return _drop_empty_reason(pd.DataFrame(rows).fillna("").set_index("tasks"))


def brigade_table(result: Result) -> Any:
    """Gross time per task per trip, I/O calls included (S5's unit, as C18-C20 read it: the
    mean over repeats of each repeat's mean trip / N), in µs, for every kind and transport
    the peer ran (S5's Unix socket pairs, and pipes: a variant), its one-thread brigade too
    (``threadcost.findings.brigade.peer_hop``); the page's net findings subtract it."""
    import pandas as pd

    if result.summary.get("skipped"):
        return pd.DataFrame({"not run because": [result.summary["skipped"]]},
                            index=pd.Index(["Rust threads and Tokio tasks"], name="tasks"))
    runs = result.tables["runs"]
    kinds = list(dict.fromkeys(runs.kind))
    placements = list(dict.fromkeys(runs.placement))
    rows = []
    for link in peer_transports(runs):
        for kind in kinds:
            for n in sorted(set(runs[runs.kind == kind].tasks)):
                row = {"brigade": f"{vocabulary.words(kind)}, {n:,} tasks, "
                                  f"{LINK_WORDS[link]}"}
                for pl in placements:
                    hop = peer_hop(runs, kind, n, pl, link)
                    row[f"per task per trip, I/O calls included, {vocabulary.words(pl)} "
                        "(µs, mean over repeats)"] = _fmt(None if hop is None
                                                          else hop[0] / 1000, ",.2f")
                rows.append(row)
    return pd.DataFrame(rows).set_index("brigade")


LINK_WORDS = {"socketpair": "Unix socket pairs (S5's)", "pipe": "pipes (a variant)"}
