"""Selectors reading the sources' own runtimes from the Rust peer (and Go where
the source ran Go): S1's Rust threads (C10) and S5's Rust threads against Tokio
tasks (C18-C22). S4's Rust threads against goroutines (C15, C17) and their page
tables (C16) are read in :mod:`threadcost.findings.sleepers`; C16 falls back here to
the C threads of notebook 02 for runs stored before the peers reported VmPTE.

Runs read: ``peer_runtimes`` (switch, creation and memory slope per kind,
notebook 05; the switch repeated in fresh processes, older runs hold one
repeat), ``peer_brigade`` (S5's brigade on Rust threads and Tokio tasks, with
S5's one-thread-brigade, notebook 07) and ``peer_million`` (S1's program on Rust
threads, notebook 05).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from threadcost import vocabulary
from threadcost.findings import brigade, context_switch, memory, sleepers
from threadcost.findings.brigade import S5_TASKS, brigade_at_s5
from threadcost.findings.selectors import at_setup
from threadcost.measured.intervals import log_ratio, over_repeats, slope
from threadcost.measured.measurement import Measurement, Missing
from threadcost.measured.runs import Runs, run_ids


def _kinds(runs: Runs, *kinds: str) -> tuple[list[dict[str, Any]], list[Any]] | Missing:
    found = [r for r in runs.matching("peer_runtimes")
             if all(not (r.meta["summary"]["kinds"].get(k) or {"not_run": "absent"})
                    .get("not_run") for k in kinds)]
    if not found:
        return Missing(f"no stored peer_runtimes run with {', '.join(kinds)} measured on this "
                       "machine (notebook 05; needs cargo)")
    return [r.meta["summary"]["kinds"] for r in found], found


def not_stored(what: str, why: str) -> Any:
    """A context row for a quantity no stored run holds: "not measured on this machine"
    with why (and what would measure it)."""
    def select(runs: Runs) -> Missing:
        return Missing(f"{what} is not measured: {why}")
    return select


KERNEL_SIDE = ("the peers' memory points record VmSize and VmRSS only; the kernel side "
               "(KernelStack, PageTables, slab in /proc/meminfo around each point, as "
               "notebook 02 reads it for C threads) is not read for them")
JAVA_SWITCH = ("the Java peer runs no ping-pong (its runtimes run the memory, launch and "
               "sleepers programs only)")
rust_kernel_side = not_stored("kernel memory per Rust thread", KERNEL_SIDE)
java_kernel_side = not_stored("kernel memory per Java platform thread", KERNEL_SIDE)
java_switch = not_stored("a switch between two Java threads", JAVA_SWITCH)


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


ARENAS_PER_CPU = 8  # glibc on 64-bit: at most 8 malloc arenas per CPU (M_ARENA_MAX unset)


def _cpus(run: Any) -> int | None:
    cpus = run.meta.get("machine", {}).get("logical_cpus")
    return int(cpus) if cpus else None


def past_arenas(kind: str, column: str) -> Any:
    """Memory per idle task of ``kind`` past glibc's one-time malloc arena reservations:
    the slope over the stored points at or beyond 8 x CPUs tasks (each thread that
    mallocs gets a new arena, 64 MiB of address space reserved at once, until 8 arenas
    per CPU exist; past that cap threads share them, so each further thread adds only
    its own stack and descriptor). Pooled over runs; a run with fewer than three points
    past the cap is left out (then the whole-range slope is not used either)."""
    def select(runs: Runs) -> Measurement | Missing:
        got = _kinds(runs, kind)
        if isinstance(got, Missing):
            return got
        summaries, found = got
        xs: list[float] = []
        ys: list[float] = []
        caps = []
        used = []
        for s, run in zip(summaries, found, strict=True):
            cpus = _cpus(run)
            points = s[kind]["memory"].get("points") or []
            if cpus is None or not points:
                continue
            cap = ARENAS_PER_CPU * cpus
            past = [p for p in points if p["tasks"] >= cap]
            if len(past) < 3:
                continue
            caps.append(cap)
            used.append(run)
            base = past[0][column]
            xs += [float(p["tasks"]) for p in past]
            ys += [float(p[column] - base) for p in past]  # each run from its own origin
        if not used:
            return Missing(f"no stored peer_runtimes run holds three memory points of {kind} "
                           "past glibc's malloc arena cap (8 x CPUs tasks)")

        cap = max(caps)
        return slope(xs, ys, "KiB", repeats=len(used), run_id=run_ids(used),
                     setup={"experiment": "peer_runtimes", "kind": kind,
                            "from tasks": cap, "arena cap": f"8 x {cap // 8} CPUs"},
                     how=(f"slope of {column.replace('_kib', '').upper()} per idle {kind} "
                          f"over the points from {cap:,} tasks on (Rust peer), past glibc's "
                          f"malloc arena cap (8 arenas per CPU: each of the first {cap} "
                          "threads to malloc reserves a 64 MiB arena once, a jump that is "
                          "not a per-thread cost)"),
                     where=f"(slope past {cap:,} tasks)")
    return select


def _switch_repeats(row: dict[str, Any]) -> list[float]:
    """Each repeat's switch (a batch mean); a run stored before the repeats holds one."""
    return [float(x) for x in row.get("switch_ns_batch_repeats") or [row["switch_ns_batch"]]]


def switch_ns(kind: str) -> Any:
    """One switch between two tasks of ``kind`` (half a round trip of a ping-pong over
    one-slot channels, the batch timed whole: a mean), over the repeats."""
    def select(runs: Runs) -> Measurement | Missing:
        got = _kinds(runs, kind)
        if isinstance(got, Missing):
            return got
        summaries, found = got
        if any(s[kind].get("switch_ns_batch") is None for s in summaries):
            return Missing(f"the stored peer_runtimes run has no ping-pong of {kind}")
        values = [x for s in summaries for x in _switch_repeats(s[kind])]
        p = found[0].meta["params"]
        return over_repeats(values, "ns", run_id=run_ids(found),
                            setup={"experiment": "peer_runtimes", "kind": kind,
                                   "round trips": p.get("iterations"), "cpu": p.get("cpu")},
                            how="per repeat (a fresh process): a batch of round trips between "
                                "two tasks over one-slot channels, pinned to one CPU, timed "
                                "whole / round trips / 2 (a mean, as S5's programs report); "
                                "the mean over the repeats (the headline prints their "
                                "median)")
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
            values = [t / b for s in summaries
                      for t, b in zip(_switch_repeats(s[top]), _switch_repeats(s[bottom]),
                                      strict=False)]
            how = (f"per repeat (fresh processes, kinds interleaved): switch (a batch of "
                   f"channel round trips timed whole / 2, pinned to one CPU), {top} / "
                   f"{bottom}")
        return log_ratio(np.asarray(values, dtype=float), run_id=run_ids(found),
                         setup={"experiment": "peer_runtimes", "top": top, "bottom": bottom},
                         how=how)
    return select


def c10_million_scaled(runs: Runs) -> Measurement | Missing:
    """S1's program on Rust threads: peak resident at one million, computed from the
    threads this machine allows (peer_million). Past the measured count it grows by the
    RSS slope per idle Rust thread (C10's own reading, past glibc's arena cap): the
    program's fixed part is counted once, never scaled with the threads."""
    found = [r for r in runs.matching("peer_million", count=1_000_000)
             if not (r.meta["summary"]["kinds"].get("rust-thread") or {"not_run": "x"})
             .get("not_run")]
    if not found:
        return Missing("no stored peer_million run of Rust threads aimed at one million "
                       "(notebook 05 with params/large.yaml; needs cargo)")
    row = found[-1].meta["summary"]["kinds"]["rust-thread"]
    measured, peak = int(row["measured_count"]), float(row["max_rss_kib"])
    bound = vocabulary.bound_words(row["count_bound"])
    setup = {"experiment": "peer_million", "kind": "rust-thread", "threads": measured}
    if measured >= 1_000_000:
        return Measurement(peak / 1024, "MiB", setup=setup, run_id=found[-1].meta["run_id"],
                           how=f"peak RSS (VmHWM) of S1's program on {measured:,} Rust threads")
    per = past_arenas("rust-thread", "rss_kib")(runs)
    if isinstance(per, Missing):
        return Missing(f"S1's program ran {measured:,} Rust threads here (bound: "
                       f"{bound}); extrapolating to one million needs the RSS "
                       f"slope per idle Rust thread, and {per.reason}")
    extra = 1_000_000 - measured
    return Measurement((peak + extra * per.value) / 1024, "MiB", setup=setup,
                       run_id=", ".join([found[-1].meta["run_id"], per.run_id]), computed=True,
                       how=f"computed: the peak RSS (VmHWM) of S1's program on {measured:,} "
                           f"Rust threads ({peak / 1024:,.0f} MiB; bound: "
                           f"{bound}) plus {extra:,} further threads at the RSS "
                           f"slope per idle Rust thread measured here ({per.value:.2f} KiB, "
                           "the reading above)")


# --- S5's brigade on its own runtimes (peer_brigade, notebook 07) --------------------------

PEER_MEAN = "per repeat: mean trip / 500 tasks (S5's \"per task per iter\")"
PEER_MEDIAN = ("per repeat: median trip / 500 tasks (this run stored no mean trip: the median "
               "stands in for S5's mean)")


S5_TRANSPORT = "socketpair"
S5_TOKIO, TOKIO_CT = "tokio-task-mt", "tokio-task"
PIPES_FOR_SOCKETS = ("pipes stand in for S5's Unix socket pairs: the stored run of S5's "
                     "brigade on the Rust peer has none on socket pairs")
CT_FOR_MT = ("Tokio's current_thread runtime stands in for S5's default multi-thread one: "
             "the stored run of S5's brigade on the Rust peer has no Tokio brigade on the "
             "multi-thread runtime")


def _peer_brigade(runs: Runs, kinds: tuple[str, ...]
                  ) -> tuple[pd.DataFrame, list[Any], str, list[str]] | Missing:
    """The peer brigade's rows at S5's 500 tasks, ``value`` = time per task per trip, on
    S5's transport (socket pairs) when stored, else on pipes; S5's Tokio (the default
    multi-thread runtime) when stored, else the current_thread runtime under its name.
    The fourth item: what still differs from S5's program (each a stand-in's words)."""
    found = runs.matching("peer_brigade")
    table = runs.tables(found, "runs")
    if table.empty:
        return Missing("no stored run of S5's brigade on the Rust peer ("
                       "notebook 07; needs cargo)")
    at = table[table.tasks == S5_TASKS]
    if at.empty:
        have = ", ".join(f"{n:,}" for n in sorted(set(table.tasks)))
        return Missing(f"the stored S5 brigade ran {have} tasks, not S5's {S5_TASKS}")
    if "transport" not in at:  # stored before the transport was a choice: pipes
        at = at.assign(transport="pipe")
    at = at.assign(transport=at.transport.fillna("pipe"))
    differs: list[str] = []
    if S5_TRANSPORT in set(at.transport):
        at = at[at.transport == S5_TRANSPORT]
    else:
        at, differs = at[at.transport == "pipe"], [PIPES_FOR_SOCKETS]
    if S5_TOKIO in kinds and S5_TOKIO not in set(at.kind) and TOKIO_CT in set(at.kind):
        at = at[at.kind != S5_TOKIO].assign(kind=at.kind.replace(TOKIO_CT, S5_TOKIO))
        differs.append(CT_FOR_MT)
    absent = [k for k in kinds if k not in set(at.kind)]
    if absent:
        return Missing(f"the stored S5 brigade did not run {', '.join(absent)} at "
                       f"{S5_TASKS} tasks")
    if "per_task_ns_mean" in at and at.per_task_ns_mean.notna().all():
        return at.assign(value=at.per_task_ns_mean), found, PEER_MEAN, differs
    return at.assign(value=at.trip_p50_ns / at.tasks), found, PEER_MEDIAN, differs


def _marked(m: Measurement, differs: list[str]) -> Measurement:
    """``m`` labelled with what still differs from S5's program (None: like for like)."""
    return Measurement(**{**m.__dict__, "substitute": "; ".join(differs)}) if differs else m


def _peer_wide(at: pd.DataFrame, placement: str) -> pd.DataFrame:
    rows = at[at.placement == placement]
    return rows.pivot_table(index=["run_index", "repeat"], columns="kind", values="value")


def _peer_setup(found: list[Any], placement: str, kind: str,
                differs: list[str] = ()) -> dict[str, Any]:
    p = found[0].meta["params"]
    return {"experiment": "peer_brigade", "kind": kind, "tasks": S5_TASKS,
            "placement": placement, "iterations": p.get("iterations"),
            "warmup": p.get("warmup"), "repeats": p.get("repeats"),
            "channel": ("pipes (S5: Unix socket pairs)" if PIPES_FOR_SOCKETS in differs
                        else "Unix socket pairs (S5's)"),
            "Tokio runtime": ("current_thread (S5: the default multi-thread one)"
                              if CT_FOR_MT in differs else
                              "the default multi-thread runtime, one worker per usable CPU "
                              "(S5's #[tokio::main])")}


def _c_baseline(runs: Runs, placement: str) -> Measurement | Missing:
    """The C brigade's one-thread mean per task (trip / 500) at 500 tasks, over its
    repeats: the pipe-I/O baseline when the peer run holds none of its own."""
    got = brigade_at_s5(runs, ("one-thread",))
    if isinstance(got, Missing):
        return got
    rows, found = got
    at = rows[(rows.tasks == S5_TASKS) & (rows.placement == placement)
              & (rows.kind == "one-thread")]
    if at.empty or "per_hop_ns_mean" not in at:
        return Missing(f"the brigade did not run one-thread {placement} at 500 tasks")
    # the C brigade stores trip / (tasks + 1); S5's unit is trip / tasks
    per_task = at.per_hop_ns_mean * (S5_TASKS + 1) / S5_TASKS
    return over_repeats(per_task.dropna(), "ns", run_id=run_ids(found))


def _baseline(runs: Runs, wide: pd.DataFrame, placement: str
              ) -> tuple[pd.Series | float, str, Measurement | None] | Missing:
    """S5's baseline, one-thread-brigade: the peer's own in the same repeat, else the C
    brigade's mean (another run of the same paper run, taken whole)."""
    if "one-thread" in wide and wide["one-thread"].notna().any():
        return wide["one-thread"], "minus the one-thread brigade of the same repeat", None
    base = _c_baseline(runs, placement)
    if isinstance(base, Missing):
        return Missing("the stored S5 brigade has no one-thread brigade and " + base.reason)
    return base.value, ("minus the C brigade's one-thread mean (pipe I/O alone; this peer "
                        "run stored no one-thread brigade)"), base


def peer_hop(kind: str, placement: str, net: bool = False) -> Any:
    """S5's per task per iter of ``kind`` at 500 tasks; ``net``: minus S5's
    one-thread-brigade (S5's per context switch)."""
    def select(runs: Runs) -> Measurement | Missing:
        got = _peer_brigade(runs, (kind,))
        if isinstance(got, Missing):
            return got
        at, found, stat, differs = got
        wide = _peer_wide(at, placement)
        if kind not in wide:
            return Missing(f"the stored S5 brigade did not run {kind} {placement}")
        info = {"run_id": run_ids(found), "setup": _peer_setup(found, placement, kind, differs)}
        if not net:
            return _marked(at_setup(over_repeats(wide[kind].dropna(), "ns", how=stat, **info),
                                    "at 500 tasks"), differs)
        base = _baseline(runs, wide, placement)
        if isinstance(base, Missing):
            return base
        series, words, whole = base
        if whole is None:
            return _marked(at_setup(over_repeats((wide[kind] - series).dropna(), "ns",
                                                 how=f"{stat}; {words}", **info),
                                    "at 500 tasks"), differs)
        m = over_repeats(wide[kind].dropna(), "ns")
        low, high = m.low if m.low is not None else m.value, m.high or m.value
        return _marked(Measurement(m.value - whole.value, "ns",
                                   low - (whole.high or whole.value),
                                   high - (whole.low or whole.value),
                                   repeats=min(m.repeats, whole.repeats),
                                   run_id=f"{info['run_id']}; {whole.run_id}",
                                   setup=info["setup"],
                                   how=f"{stat}; {words}; conservative interval from the two",
                                   where="at 500 tasks"), differs)
    return select


def peer_ratio(top: tuple[str, str], bottom: tuple[str, str]) -> Any:
    """(kind, placement) over (kind, placement), per repeat of the peer brigade."""
    def select(runs: Runs) -> Measurement | Missing:
        got = _peer_brigade(runs, (top[0], bottom[0]))
        if isinstance(got, Missing):
            return got
        at, found, stat, differs = got
        a, b = _peer_wide(at, top[1]), _peer_wide(at, bottom[1])
        if top[0] not in a or bottom[0] not in b:
            return Missing(f"the stored S5 brigade lacks {top[0]} {top[1]} or "
                           f"{bottom[0]} {bottom[1]}")
        return _marked(at_setup(log_ratio(
            (a[top[0]] / b[bottom[0]]).dropna(), run_id=run_ids(found),
            setup={**_peer_setup(found, f"{top[1]} / {bottom[1]}",
                                 f"{top[0]} / {bottom[0]}", differs)},
            how=f"{stat}; {top[0]} {top[1]} / {bottom[0]} {bottom[1]} "
                "(kinds and placements interleaved in each repeat)"), "at 500 tasks"), differs)
    return select


def peer_net_ratio(top: str, bottom: str, placement: str) -> Any:
    """Net per task (minus S5's one-thread-brigade), top / bottom, per repeat."""
    def select(runs: Runs) -> Measurement | Missing:
        got = _peer_brigade(runs, (top, bottom))
        if isinstance(got, Missing):
            return got
        at, found, stat, differs = got
        wide = _peer_wide(at, placement)
        base = _baseline(runs, wide, placement)
        if isinstance(base, Missing):
            return base
        series, words, whole = base
        ratio = ((wide[top] - series) / (wide[bottom] - series)).dropna()
        if whole is not None:
            words += " (taken as a constant: the interval is over the peer's repeats)"
        return _marked(at_setup(log_ratio(ratio, run_id=run_ids(found) + (
                                 f"; {whole.run_id}" if whole is not None else ""),
                             setup=_peer_setup(found, placement, f"{top} / {bottom}", differs),
                             how=f"{stat}; each {words}; {top} / {bottom}"),
                   "at 500 tasks"), differs)
    return select


def _not_run_here(runs: Runs, kind: str) -> Missing | None:
    """Why ``kind`` was not run here, when a stored peer_runtimes run says so."""
    for run in runs.matching("peer_runtimes"):
        why = (run.meta["summary"].get("kinds", {}).get(kind) or {}).get("not_run")
        if why:
            return Missing(vocabulary.bare_reason(why))
    return None


def prefer(primary: Any, fallback: Any, substitute: str | None = None,
           not_run_kind: str | None = None) -> Any:
    """The Rust peer's reading when stored; else the older reading (C threads, which
    are what a Rust ``std::thread`` is underneath, or goroutines standing in for Tokio
    tasks: then marked ``substitute``), so runs stored before the peer still judge.
    ``not_run_kind``: when the peer ran here without that kind (no toolchain), the
    claim reads "not run here" with the peer's reason, not the stand-in's number."""
    def select(runs: Runs) -> Measurement | Missing:
        got = primary(runs)
        if isinstance(got, Measurement):
            return got
        absent = _not_run_here(runs, not_run_kind) if not_run_kind else None
        if absent is not None:
            return absent
        old = fallback(runs)
        if isinstance(old, Measurement) and substitute:
            return Measurement(**{**old.__dict__, "substitute": substitute})
        return old
    return select


TOKIO_BY_GOROUTINES = ("goroutines (Go's runtime: a user-space scheduler over the epoll "
                       "poller) stand in for S5's Tokio async tasks: no Rust peer run stored")
TOKIO_SWITCH_BY_GO = ("a goroutine channel ping-pong (GOMAXPROCS=1, pinned) stands in for "
                      "S5's switch between Tokio tasks: no Rust peer run stored")
TOKIO_BY_EPOLL = ("the C brigade's epoll loop (stackless tasks in one thread) stands in for "
                  "S5's Tokio async tasks: no Rust peer run stored")
RUST_BY_C = ("the C brigade's pthreads stand in for S5's Rust std::thread brigade: no Rust "
             "peer brigade stored")
RUST_RSS_BY_C = ("the C brigade's pthreads (RSS slope over the brigade's length) stand in for "
                 "S5's Rust threads: no Rust peer memory run stored")
PAGE_TABLES_BY_C = ("C threads on glibc's default 8 MiB stacks (notebook 2's thread-memory "
                    "runs: the change of VmPTE with 10,000 idle threads / threads) stand in "
                    "for S4's Rust threads on 2 MiB stacks: no stored sleepers run of S4's "
                    "program holds the page tables (VmPTE)")

# claim -> the selectors above (catalogue.py applies them)
c10_vsz_per_thread = prefer(past_arenas("rust-thread", "vsz_kib"),
                            memory.ceiling_per_thread("vsz_kib_per_thread",
                                                   memory.c10_vsz_per_thread))
c10_rss_per_thread = prefer(past_arenas("rust-thread", "rss_kib"),
                            memory.ceiling_per_thread("rss_kib_per_thread",
                                                   memory.c10_rss_per_thread))
c10_million = prefer(c10_million_scaled, memory.c10_million_scaled)
c16_page_tables_per_thread = prefer(sleepers.page_tables_per_thread,
                                    memory.c16_page_tables_per_thread, PAGE_TABLES_BY_C)
c19_thread_over_tokio_switch = prefer(ratio_of_kinds("rust-thread", "tokio-task", "switch"),
                                      brigade.c19_thread_over_goroutine_switch, TOKIO_SWITCH_BY_GO)
c22_thread_over_tokio_rss = prefer(ratio_of_kinds("rust-thread", "tokio-task", "rss"),
                                   brigade.c22_thread_over_goroutine_rss, TOKIO_BY_GOROUTINES)

# S5 (C18-C22): the Rust peer's brigade and switch; before the peer ran, the C brigade
# (threads, goroutines, epoll) and the goroutine ping-pong, labelled
THREAD, TOKIO = "rust-thread", S5_TOKIO  # S5's Tokio: the default multi-thread runtime
c18_thread_net = prefer(peer_hop(THREAD, "unpinned", net=True),
                        brigade.brigade_hop("thread", "unpinned", net=True), RUST_BY_C)
c18_thread_gross = prefer(peer_hop(THREAD, "unpinned"), brigade.brigade_hop("thread", "unpinned"),
                          RUST_BY_C)
c19_tokio_switch = prefer(switch_ns(TOKIO_CT), context_switch.goroutine_switch_pinned_ns,
                          TOKIO_SWITCH_BY_GO)
c20_tokio_gross = prefer(peer_hop(TOKIO, "unpinned"), brigade.brigade_hop("goroutine", "unpinned"),
                         TOKIO_BY_GOROUTINES)
c20_tokio_net = prefer(peer_hop(TOKIO, "unpinned", net=True),
                       brigade.brigade_hop("goroutine", "unpinned", net=True), TOKIO_BY_GOROUTINES)
c20_tokio_over_thread = prefer(peer_ratio((TOKIO, "unpinned"), (THREAD, "unpinned")),
                               brigade.c20_goroutine_over_thread_gross, TOKIO_BY_GOROUTINES)
c20_thread_over_tokio_net = prefer(peer_net_ratio(THREAD, TOKIO, "unpinned"),
                                   brigade.c20_thread_over_goroutine_net, TOKIO_BY_GOROUTINES)
c21_pinned_thread = prefer(peer_hop(THREAD, "same-cpu"), brigade.brigade_hop("thread", "same-cpu"),
                           RUST_BY_C)
c21_pinned_thread_over_tokio = prefer(peer_ratio((THREAD, "same-cpu"), (TOKIO, "unpinned")),
                                      brigade.c21_pinned_thread_over_goroutine,
                                      TOKIO_BY_GOROUTINES)
# S5's "I don't know why": the thread brigade pinned against unpinned (the Rust peer only:
# no brigade before it ran S5's runtimes judges S5's own threads)
c21_pinned_over_unpinned_thread = peer_ratio((THREAD, "same-cpu"), (THREAD, "unpinned"))
# S5 weighs each side with RSS over the task count: Rust threads and Tokio tasks alike
# from the Rust peer's idle tasks (the C brigade's threads and epoll loop before it ran)
c22_thread_rss = prefer(per_task_kib(THREAD, "rss_kib"), brigade.brigade_rss_slope("thread"),
                        RUST_RSS_BY_C)
c22_tokio_rss = prefer(per_task_kib(TOKIO_CT, "rss_kib"), brigade.brigade_rss_slope("epoll"),
                       TOKIO_BY_EPOLL, not_run_kind=TOKIO_CT)
