"""Selectors reading the sources' own runtimes from the Rust peer (and Go where
the source ran Go): S1's Rust threads (C10), S4's Rust threads against
goroutines (C15, C17) and S5's Rust threads against Tokio tasks (C19, C22).

Runs read: ``peer_runtimes`` (switch, creation and memory slope per kind,
notebook 05), ``sleepers`` runs whose variants include the Rust ones (S4's
program on the Rust peer, notebook 05) and ``peer_million`` (S1's program on
Rust threads, notebook 05). Each run is one repeat.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from threadcost.claims import selectors as sel
from threadcost.claims.intervals import log_ratio, over_repeats
from threadcost.claims.model import Measurement, Missing
from threadcost.claims.runs import Runs, run_ids


def _kinds(runs: Runs, *kinds: str) -> tuple[list[dict[str, Any]], list[Any]] | Missing:
    found = [r for r in runs.matching("peer_runtimes")
             if all(not (r.meta["summary"]["kinds"].get(k) or {"not_run": "absent"})
                    .get("not_run") for k in kinds)]
    if not found:
        return Missing(f"no stored peer_runtimes run with {', '.join(kinds)} measured on this "
                       "machine (notebook 05; needs cargo)")
    return [r.meta["summary"]["kinds"] for r in found], found


def per_task_kib(kind: str, column: str) -> Any:
    """Memory per idle task of ``kind`` (slope), pooled over runs."""
    def select(runs: Runs) -> Measurement | Missing:
        got = _kinds(runs, kind)
        if isinstance(got, Missing):
            return got
        summaries, found = got
        values = [s[kind]["memory"][f"per_task_{column}"] for s in summaries]
        tasks = summaries[0][kind]["memory"]["tasks"]
        return over_repeats(values, "KiB", run_id=run_ids(found),
                            setup={"experiment": "peer_runtimes", "kind": kind,
                                   "tasks": tasks},
                            how=f"slope of {column.replace('_kib', '').upper()} over "
                                f"{tasks:,} idle {kind}s (Rust peer)",
                            where=f"(slope over {tasks:,} idle tasks)")
    return select


def ratio_of_kinds(top: str, bottom: str, what: str) -> Any:
    """top / bottom per run (``what``: "rss" memory slope or "switch" batch switch)."""
    def select(runs: Runs) -> Measurement | Missing:
        got = _kinds(runs, top, bottom)
        if isinstance(got, Missing):
            return got
        summaries, found = got
        if what == "rss":
            values = [s[top]["memory"]["per_task_rss_kib"] / s[bottom]["memory"]
                      ["per_task_rss_kib"] for s in summaries]
            how = f"per run: RSS slope per idle task, {top} / {bottom}"
        else:
            values = [s[top]["switch_ns_batch"] / s[bottom]["switch_ns_batch"]
                      for s in summaries]
            how = (f"per run: switch (batch of channel round trips / 2, pinned to one CPU), "
                   f"{top} / {bottom}")
        return log_ratio(np.asarray(values, dtype=float), run_id=run_ids(found),
                         setup={"experiment": "peer_runtimes", "top": top, "bottom": bottom},
                         how=how)
    return select


def _sleepers(runs: Runs, top: str, bottom: str
              ) -> tuple[list[dict[str, Any]], list[Any]] | Missing:
    found = []
    for r in runs.matching("sleepers"):
        v = r.meta["summary"]["variants"]
        if all(x in v and not v[x].get("not_run") for x in (top, bottom)):
            found.append(r)
    if not found:
        return Missing(f"no stored sleepers run with {top} and {bottom} measured on this "
                       "machine (notebook 05, S4's program on the Rust peer)")
    return [r.meta["summary"]["variants"] for r in found], found


def sleepers_ratio(top: str, bottom: str, column: str, cut: bool = False) -> Any:
    """S4's program: ``column`` of ``top`` / ``bottom`` per run (cut: 1 - ratio)."""
    def select(runs: Runs) -> Measurement | Missing:
        got = _sleepers(runs, top, bottom)
        if isinstance(got, Missing):
            return got
        variants, found = got

        def value(v: dict[str, Any]) -> float:
            if column == "cpu_per_wakeup":
                return float(v["cpu_s"]) / max(float(v["wakeups"]), 1.0)
            return float(v[column])

        ratios = np.asarray([value(v[top]) / value(v[bottom]) for v in variants], dtype=float)
        tasks = int(variants[0][top]["tasks"])
        setup = {"experiment": "sleepers", "tasks": tasks, "top": top, "bottom": bottom,
                 "duration_ms": found[0].meta["params"].get("duration_ms")}
        how = f"per run at {tasks:,} tasks (S4's program, Rust peer): {column}, {top} / {bottom}"
        if cut:
            return over_repeats(1 - ratios, "fraction", run_id=run_ids(found), setup=setup,
                                how=how + "; cut = 1 - pinned / unpinned",
                                where=f"(at {tasks:,} tasks)")
        m = log_ratio(ratios, run_id=run_ids(found), setup=setup, how=how)
        return Measurement(**{**m.__dict__, "where": f"(at {tasks:,} tasks)"})
    return select


def c10_million_scaled(runs: Runs) -> Measurement | Missing:
    """S1's program on Rust threads: peak resident at one million, computed from the
    threads this machine allows (peer_million)."""
    found = [r for r in runs.matching("peer_million", count=1_000_000)
             if not (r.meta["summary"]["kinds"].get("rust-thread") or {"not_run": "x"})
             .get("not_run")]
    if not found:
        return Missing("no stored peer_million run of Rust threads aimed at one million "
                       "(notebook 05 with params/large.yaml; needs cargo)")
    row = found[-1].meta["summary"]["kinds"]["rust-thread"]
    return Measurement(float(row["max_rss_kib_at_count"]) / 1024, "MiB",
                       setup={"experiment": "peer_million", "kind": "rust-thread",
                              "threads": int(row["measured_count"])},
                       run_id=found[-1].meta["run_id"], computed=row["scale"] != 1,
                       how=f"{row['at_count_label']}: peak RSS (VmHWM) of S1's program on "
                           f"Rust threads, bound: {row['count_bound']}")


def prefer(primary: Any, fallback: Any, substitute: str | None = None) -> Any:
    """The Rust peer's reading when stored; else the older reading (C threads, which
    are what a Rust ``std::thread`` is underneath, or goroutines standing in for Tokio
    tasks: then marked ``substitute``), so runs stored before the peer still judge."""
    def select(runs: Runs) -> Measurement | Missing:
        got = primary(runs)
        if isinstance(got, Measurement):
            return got
        old = fallback(runs)
        if isinstance(old, Measurement) and substitute:
            return Measurement(**{**old.__dict__, "substitute": substitute})
        return old
    return select


TOKIO_BY_GOROUTINES = ("goroutines (Go's runtime: a user-space scheduler over the epoll "
                       "poller) stand in for S5's Tokio async tasks: no Rust peer run stored")
TOKIO_SWITCH_BY_GO = ("a goroutine channel ping-pong (GOMAXPROCS=1, pinned) stands in for "
                      "S5's switch between Tokio tasks: no Rust peer run stored")

# claim -> the selectors above (catalogue.py applies them)
c10_vsz_per_thread = prefer(per_task_kib("rust-thread", "vsz_kib"),
                            sel.ceiling_per_thread("vsz_kib_per_thread",
                                                   sel.c10_vsz_per_thread))
c10_rss_per_thread = prefer(per_task_kib("rust-thread", "rss_kib"),
                            sel.ceiling_per_thread("rss_kib_per_thread",
                                                   sel.c10_rss_per_thread))
c10_million = prefer(c10_million_scaled, sel.c10_million_scaled)
c15_thread_over_goroutine_rss = prefer(
    sleepers_ratio("rust_threads", "goroutines", "rss_per_task_kib"),
    sel.c15_thread_over_goroutine_rss)
c17_threads_over_goroutines_cpu = prefer(
    sleepers_ratio("rust_threads", "goroutines", "cpu_per_wakeup"),
    sel.c17_threads_over_goroutines_cpu)
c17_pinning_cut = prefer(
    sleepers_ratio("rust_threads_pinned", "rust_threads", "cpu_per_wakeup", cut=True),
    sel.c17_pinning_cut)
c19_thread_over_tokio_switch = prefer(ratio_of_kinds("rust-thread", "tokio-task", "switch"),
                                      sel.c19_thread_over_goroutine_switch, TOKIO_SWITCH_BY_GO)
c22_thread_over_tokio_rss = prefer(ratio_of_kinds("rust-thread", "tokio-task", "rss"),
                                   sel.c22_thread_over_goroutine_rss, TOKIO_BY_GOROUTINES)
