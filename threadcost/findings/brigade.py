"""The I/O brigade (notebook 07): its findings and what the claims read of it (C18-C23).

Findings: the brigade's net time per hop at S5's 500 tasks (C18 reads the thread's,
unpinned), S5's own runtimes' time per hop (the Rust peer) and the trends over the
brigade's length. Selectors (stored runs -> Measurement | Missing) of the claims.
"""

from __future__ import annotations

import hashlib
from typing import Any

import pandas as pd

from threadcost import findings, vocabulary
from threadcost.experiments.brigade.checks import BASELINE  # one thread alone: no switch
from threadcost.findings import Value, pooled, quantity
from threadcost.findings.context_switch import goroutine_switch_pinned_ns, yardstick
from threadcost.findings.selectors import Select, at_setup, no_run
from threadcost.findings.summary import from_run
from threadcost.measured.intervals import log_ratio, over_repeats, quotient
from threadcost.measured.measurement import Measurement, Missing
from threadcost.measured.runs import Runs, run_ids
from threadcost.vocabulary import task_label

S5_TASKS = 500  # S5's brigade length

NET_DEFINITION = ("time per hop beyond the calls themselves: in each repeat, the median "
                  "hop of the brigade minus the median hop of one thread doing the same "
                  "pipe calls alone; mean over the repeats")


def _minus_baseline(wide: pd.DataFrame, kind: str
                    ) -> tuple[float, float | None, float | None, int] | None:
    """(mean, 95% low, 95% high, repeats) over the repeats (rows) of ``kind``'s column
    minus the one-thread brigade's, or None when either is absent."""
    if kind not in wide.columns or BASELINE not in wide.columns:
        return None
    diff = (wide[kind] - wide[BASELINE]).dropna()
    if diff.empty:
        return None
    m = over_repeats(diff, "ns")
    return m.value, m.low, m.high, m.repeats


def net_per_hop(table: pd.DataFrame, kind: str, tasks: int,
                placement: str) -> tuple[float, float | None, float | None, int] | None:
    """(mean, 95% low, 95% high, repeats) of the net per hop of one brigade setup, from a
    brigade ``runs`` table (one or several runs; ``run_index`` tells runs apart), or None
    when that setup or its baseline is absent. The one definition: the paper's tables,
    text and C18 all read it."""
    index = [c for c in ("run_index", "repeat") if c in table.columns]
    if index:  # one pivot of the table serves every N (cached by content)
        every_n = _wide(table, placement, tuple(index))
        wide = every_n[every_n.index.get_level_values("tasks") == tasks].droplevel("tasks")
    else:  # no repeat column: as the table says (pandas names the problem)
        rows = table[(table.trips > 0) & (table.tasks == tasks) & (table.placement == placement)]
        wide = rows.pivot_table(index=index, columns="kind", values="per_hop_ns_p50")
    return _minus_baseline(wide, kind)


# (table's content digest, placement, index) -> the table's per-hop medians pivoted: kinds
# in columns, (N, run, repeat) in rows. Page 07's answer reads the net per hop at every N
# of a run for each kind, statistic and ratio (about a thousand readings of one table);
# the pivot is made once per table. Keyed by what the table holds, so a changed or
# another run's table is pivoted afresh; bounded (oldest dropped first).
_WIDE: dict[tuple[Any, ...], pd.DataFrame] = {}
_WIDE_MAX = 64


# the columns a net per hop is computed from (the rest of a table never changes one)
_READ = ("kind", "tasks", "placement", "trips", "per_hop_ns_p50", "run_index", "repeat")


def _digest(table: pd.DataFrame) -> bytes:
    """A digest of the columns a net per hop reads: their names, types, index and cells."""
    read = table[[c for c in _READ if c in table.columns]]
    h = hashlib.blake2b(digest_size=20)
    h.update(repr((list(read.columns), [str(t) for t in read.dtypes])).encode())
    h.update(pd.util.hash_pandas_object(read, index=True).to_numpy().tobytes())
    return h.digest()


def _wide(table: pd.DataFrame, placement: str, index: tuple[str, ...]) -> pd.DataFrame:
    key = (_digest(table), placement, index)
    if key not in _WIDE:
        rows = table[(table.trips > 0) & (table.placement == placement)]
        if len(_WIDE) >= _WIDE_MAX:
            _WIDE.pop(next(iter(_WIDE)))
        _WIDE[key] = rows.pivot_table(index=["tasks", *index], columns="kind",
                                      values="per_hop_ns_p50")
    return _WIDE[key]


def _brigade(runs: Runs) -> tuple[pd.DataFrame, list[Any]] | str:
    found = runs.matching("brigade")
    table = runs.tables(found, "runs")
    if table.empty:
        return "no brigade run stored (notebook 07)"
    return table, found


# the placements a finding's name and words carry
PLACES = {"unpinned": ("unpinned", "unpinned"), "same-cpu": ("one_cpu", "every task on one CPU")}
KIND_WORDS = {"thread": "thread brigade (one blocking read per thread)",
              "goroutine": "goroutine brigade (the Go poller)",
              "epoll": "epoll loop (one thread, non-blocking pipes)"}
SHOWN = dict(fmt="auto", scale=1e-3, display_unit="µs")  # ns stored, µs printed


def _net(runs: Runs, kind: str, placement: str) -> Value | str:
    got = _brigade(runs)
    if isinstance(got, str):
        return got
    table, found = got
    have = sorted(set(table.tasks))
    if S5_TASKS not in have:
        return (f"the stored brigade ran {', '.join(f'{n:,}' for n in have)} tasks, not S5's "
                f"{S5_TASKS}")
    net = net_per_hop(table, kind, S5_TASKS, placement)
    if net is None:
        why = next((r.meta["summary"].get("not_run", {}).get(kind) for r in found
                    if isinstance(r.meta["summary"].get("not_run"), dict)
                    and r.meta["summary"]["not_run"].get(kind)), None)
        return why or (f"the stored brigade has no {kind} and one-thread rows at {S5_TASKS} "
                       f"tasks, {PLACES[placement][1]}")
    value, low, high, n = net
    p = found[0].meta["params"]
    return Value(value, low, high, n, found,
                 setup={"experiment": "brigade", "tasks": S5_TASKS, "placement": placement,
                        "iterations": p.get("iterations"), "repeats": p.get("repeats"),
                        "channel": "pipes (S5: Unix socket pairs)"})


def net_name(kind: str, placement: str) -> str:
    """The finding of ``kind``'s net time per hop at S5's 500 tasks, ``placement``."""
    return f"brigade_{kind}_net_hop_{PLACES[placement][0]}_mean_ns"


def _net_quantity(kind: str, placement: str) -> None:
    c18 = "C18: " if (kind, placement) == ("thread", "unpinned") else ""
    quantity(net_name(kind, placement), "ns", "mean over repeats",
             f"{c18}the {KIND_WORDS[kind]} of {S5_TASKS} tasks, {PLACES[placement][1]}: "
             f"{NET_DEFINITION}", **SHOWN,
             reads=pooled("brigade"))(lambda runs: _net(runs, kind, placement))


for _kind in KIND_WORDS:
    for _placement in PLACES:
        _net_quantity(_kind, _placement)


# --- S5's brigade on its own runtimes (the Rust peer, peer_brigade) ------------------------

PEER_KINDS = ("rust-thread", "tokio-task", "tokio-task-mt")


def peer_transports(table: pd.DataFrame) -> list[str]:
    """The transports a peer_brigade table holds, S5's socket pairs first (a table stored
    before the transport was a choice: pipes)."""
    have = set(table.transport.fillna("pipe")) if "transport" in table else {"pipe"}
    return [t for t in ("socketpair", "pipe") if t in have]


def on_transport(table: pd.DataFrame, transport: str | None) -> pd.DataFrame:
    """The rows of ``transport`` (None: S5's socket pairs when held, else pipes)."""
    if "transport" not in table:
        table = table.assign(transport="pipe")
    table = table.assign(transport=table.transport.fillna("pipe"))
    held = peer_transports(table)
    want = transport or (held[0] if held else "socketpair")
    return table[table.transport == want]


# S5's own unit for its runtimes (C18-C20 judge it): "per task per iter", a trip's mean
# time / the tasks; the net subtracts the one-thread brigade of the same repeat; each
# a mean over the repeats
PEER_DEFINITION = ("S5's time per task per trip: each repeat's mean trip / the tasks, "
                   "minus the peer's one-thread brigade of the same repeat (its I/O "
                   "alone); mean over the repeats, as C18-C20 read it; on S5's Unix socket "
                   "pairs when stored, else on pipes")


def per_task(rows: pd.DataFrame) -> pd.Series:
    """Each row's mean trip / tasks (a run stored before the mean: its median trip)."""
    if "per_task_ns_mean" in rows and rows.per_task_ns_mean.notna().all():
        return rows.per_task_ns_mean.astype(float)
    return rows.trip_p50_ns.astype(float) / rows.tasks


def peer_hop(table: pd.DataFrame, kind: str, tasks: int, placement: str,
             transport: str | None = None
             ) -> tuple[float, float | None, float | None, int] | None:
    """(mean, 95% low, 95% high, repeats) of the peer brigade's gross time per task per
    trip of one setup (ns), pipe I/O included, S5's unit: the mean over its repeats of
    each repeat's mean trip / tasks; None when absent. Notebook 07's table of S5's
    runtimes shows it for every kind and N, the one-thread brigade too; ``transport``:
    socketpair or pipe (None: S5's socket pairs when stored, else pipes)."""
    table = on_transport(table, transport)
    rows = table[(table.kind == kind) & (table.tasks == tasks) & (table.placement == placement)
                 & (table.trips > 0)]
    values = per_task(rows).dropna() if len(rows) else pd.Series(dtype=float)
    if values.empty:
        return None
    m = over_repeats(values, "ns")
    return m.value, m.low, m.high, m.repeats


def peer_net(table: pd.DataFrame, kind: str, tasks: int, placement: str
             ) -> tuple[float, float | None, float | None, int] | None:
    """(mean, 95% low, 95% high, repeats) of ``kind``'s net time per task per trip: in
    each repeat, its mean trip / tasks minus the one-thread brigade's; None when either
    is absent (on S5's socket pairs when stored, else on pipes)."""
    table = on_transport(table, None)
    rows = table[(table.tasks == tasks) & (table.placement == placement) & (table.trips > 0)]
    index = [c for c in ("run_index", "repeat") if c in rows.columns]
    wide = rows.assign(value=per_task(rows)).pivot_table(index=index, columns="kind",
                                                           values="value")
    return _minus_baseline(wide, kind)


def peer_name(kind: str, placement: str) -> str:
    return f"peer_brigade_{kind.replace('-', '_')}_net_hop_{PLACES[placement][0]}_mean_ns"


def _peer(runs: Runs, kind: str, placement: str) -> Value | str:
    found = runs.matching("peer_brigade")
    table = runs.tables(found, "runs")
    if table.empty:
        skipped = next((r.meta["summary"].get("skipped") for r in found
                        if r.meta["summary"].get("skipped")), None)
        return skipped or ("no stored run of S5's brigade on the Rust peer (notebook 07; "
                           "needs cargo)")
    net = peer_net(table, kind, S5_TASKS, placement)
    if net is None:
        return (f"the stored S5 brigade has no "
                f"{task_label(kind, plural=True)} and "
                f"one-thread rows at {S5_TASKS} tasks, {PLACES[placement][1]}")
    value, low, high, n = net
    return Value(value, low, high, n, found,
                 setup={"experiment": "peer_brigade", "kind": kind, "tasks": S5_TASKS,
                        "placement": placement,
                        "transport": (peer_transports(table) or ["pipe"])[0]})


def _peer_quantity(kind: str, placement: str) -> None:
    quantity(peer_name(kind, placement), "ns", "mean over repeats",
             f"S5's brigade of {S5_TASKS} {task_label(kind, runtime=True, plural=True)} on "
             f"the Rust peer, {PLACES[placement][1]}: {PEER_DEFINITION}", **SHOWN,
             reads=pooled("peer_brigade"))(lambda runs: _peer(runs, kind, placement))


for _kind in PEER_KINDS:
    for _placement in PLACES:
        _peer_quantity(_kind, _placement)


# --- page 07's answer: the net per hop over every N measured, and its trend ---------------------

# (table's digest, kind, placement) -> _nets' answer (bounded as _WIDE): over_n and
# ratio_over_n ask for the same few series dozens of times
_NETS: dict[tuple[Any, ...], pd.Series] = {}


def _nets(run: Any, kind: str, placement: str) -> pd.Series:
    """``kind``'s net per hop (mean over repeats) at every N measured, ``placement``."""
    table = run.table("runs")
    key = (_digest(table), kind, placement)
    if key not in _NETS:
        if len(_NETS) >= _WIDE_MAX:
            _NETS.pop(next(iter(_NETS)))
        _NETS[key] = _nets_of(table, kind, placement)
    return _NETS[key].copy()


def _nets_of(table: pd.DataFrame, kind: str, placement: str) -> pd.Series:
    out = {}
    for n in sorted(set(table[(table.kind == kind) & (table.placement == placement)].tasks)):
        got = net_per_hop(table, kind, int(n), placement)
        if got is not None:
            out[int(n)] = got[0]
    return pd.Series(out, dtype=float)


def _common(run: Any, kind: str, placement: str) -> tuple[pd.Series, pd.Series]:
    thread, other = _nets(run, "thread", placement), _nets(run, kind, placement)
    common = thread.index.intersection(other.index)
    return thread[common], other[common]


def over_n(run: Any, kind: str, placement: str, stat: str) -> float | None:
    """Min or max over N of ``kind``'s net per hop, at the N where the thread brigade ran
    too (the thread: over the N any other kind shares with it)."""
    if kind == "thread":
        shared = [_common(run, k, placement)[0] for k in ("goroutine", "epoll")]
        values = pd.concat(shared) if shared else pd.Series(dtype=float)
    else:
        values = _common(run, kind, placement)[1]
    if values.empty:
        return None
    return float(values.min() if stat == "min" else values.max())


def ratio_over_n(run: Any, kind: str, placement: str, stat: str) -> float | None:
    """Min or max over N of the thread's net per hop / ``kind``'s (``kind`` at least 1 ns)."""
    thread, other = _common(run, kind, placement)
    if thread.empty:
        return None
    ratios = (thread / other.clip(lower=1.0)).astype(float)
    return float(ratios.min() if stat == "min" else ratios.max())


def _trend(kind: str, placement: str, what: str) -> Any:
    def read(run: Any) -> float | None:
        sub = run.table("runs")
        sub = sub[(sub.kind == kind) & (sub.placement == placement) & (sub.trips > 0)]
        if sub.tasks.nunique() < 2:
            return None
        summary = {(r["kind"], r["tasks"], r["placement"]): r.get("per_hop_ns")
                   for r in run.meta["summary"]["results"]}
        ns = sorted(set(sub.tasks))
        first = (summary.get((kind, ns[0], placement)) or {}).get("p50")
        last = (summary.get((kind, ns[-1], placement)) or {}).get("p50")
        if first is None or last is None:
            return None
        return {"smallest": first, "largest": last, "change": (last / first - 1) * 100}[what]
    return read


def _register_answer() -> None:
    for placement, (tag, words) in PLACES.items():
        for kind in KIND_WORDS_ALL:
            _register_trend(from_run, kind, placement, tag, words)
        for kind in KIND_WORDS:
            for stat in ("min", "max"):
                from_run(f"brigade_{kind}_net_hop_{tag}_{stat}_over_n_mean_ns", "brigade",
                         lambda run, k=kind, p=placement, s=stat: over_n(run, k, p, s), "ns",
                         "mean over repeats", f"the {KIND_WORDS[kind]}, {words}: the "
                         f"{stat}imum over the brigade lengths N of its net time per hop "
                         f"({NET_DEFINITION})", fmt=",.0f")
                if kind != "thread":
                    from_run(f"brigade_thread_over_{kind}_net_hop_{tag}_{stat}_over_n_ratio",
                             "brigade", lambda run, k=kind, p=placement, s=stat:
                             ratio_over_n(run, k, p, s), "ratio", "ratio of means",
                             f"the thread brigade's net time per hop / the {KIND_WORDS[kind]}'s, "
                             f"{words}, at each N both ran: the {stat}imum over N", fmt=",.1f")


def trend_name(kind: str, placement: str, what: str) -> str:
    """The finding of ``kind``'s median hop at the smallest/largest N, or its change."""
    key = kind.replace("-", "_")
    tag = PLACES[placement][0]
    return (f"brigade_{key}_hop_{tag}_change_over_n_share_pct" if what == "change"
            else f"brigade_{key}_hop_{tag}_{what}_n_median_ns")


def _register_trend(from_run: Any, kind: str, placement: str, tag: str, words: str) -> None:
    label = KIND_WORDS_ALL[kind]
    for what in ("smallest", "largest", "change"):
        if what == "change":
            from_run(trend_name(kind, placement, what), "brigade", _trend(kind, placement, what),
                     "%", "share", f"the {label}, {words}: how much its median time per hop "
                     "changes from the smallest N measured to the largest (share of the first)",
                     fmt="+.0f")
        else:
            from_run(trend_name(kind, placement, what), "brigade", _trend(kind, placement, what),
                     "ns", "median", f"the {label}, {words}: the median time per hop (p50 of "
                     f"the trip / hops) at the {what} N measured", fmt=",.0f")


KIND_WORDS_ALL = {**KIND_WORDS, "one-thread": "one thread doing a hop's calls alone (baseline)"}
_register_answer()


# --- selectors of the claims (C18-C23) ---------------------------------------------------

def _brigade_trips(runs: Runs) -> tuple[pd.DataFrame, list[Any]] | Missing:
    """The stored brigade rows that made trips (:func:`_brigade`'s), or why there are none."""
    got = _brigade(runs)
    if isinstance(got, str):
        return no_run("brigade", "any task count", "notebook 07")
    table, found = got
    return table[table.trips > 0], found


def _brigade_wide(rows: pd.DataFrame, tasks: int, placement: str) -> pd.DataFrame:
    """per_hop_ns_p50 by kind, one row per (run, repeat); kinds as columns."""
    at = rows[(rows.tasks == tasks) & (rows.placement == placement)]
    return at.pivot_table(index=["run_index", "repeat"], columns="kind",
                          values="per_hop_ns_p50")


def brigade_at_s5(runs: Runs, kinds: tuple[str, ...]) -> tuple[pd.DataFrame, list[Any]] | Missing:
    got = _brigade_trips(runs)
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
                       f"{vocabulary.bare_reason(why)}")
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
    got = _brigade_trips(runs)
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
