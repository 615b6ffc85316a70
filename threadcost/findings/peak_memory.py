"""Selectors of S6's claims (Kołaczkowski 2023): peak memory of a program whose
N tasks all sleep, per runtime, read from the ``peer_peak_memory`` runs
(:func:`threadcost.experiments.user_space_tasks.million.peer_tasks`). Peak = the program's
VmHWM, in MB of 10^6 bytes: the post labels its axis "memory [MB]" without
saying 10^6 or 2^20 bytes, nor which tool read the peak (the two units differ
by 4.9%; no ratio the claims judge depends on it)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from threadcost.experiments import parameters
from threadcost.measured.intervals import over_repeats, quotient
from threadcost.measured.measurement import Measurement, Missing
from threadcost.measured.runs import Runs, run_ids
from threadcost.vocabulary import task_label

EXPERIMENT = "peer_peak_memory"
KIB_TO_MB = 1024 / 1e6


def _rows(runs: Runs, kind: str, count: int) -> tuple[pd.DataFrame, list[Any]] | Missing:
    found = runs.matching(EXPERIMENT, count=count)
    table = runs.tables(found, "runs")
    if table.empty or "kind" not in table:
        default = parameters.BY_NAME["tasks_s6_count"].default
        return Missing(f"no run of S6's program at {count:,} tasks is stored on this machine: "
                       "notebook 05 runs as many tasks as its parameter for S6's count says "
                       f"({default:,} by default; params/large.yaml runs one million)")
    rows = table[table.kind == kind]
    if "not_run" in rows:
        why = rows.not_run.dropna()
        rows = rows[rows.not_run.isna()]
        if rows.empty and not why.empty:
            return Missing(str(why.iloc[0]))
    if rows.empty:
        return Missing(f"no row of {task_label(kind, plural=True)} in the stored {EXPERIMENT} "
                       f"runs at {count:,} tasks")
    return rows, found


def peak_mb(kind: str, count: int) -> Any:
    """A selector: peak memory (MB) of ``count`` sleeping tasks of ``kind``; a run
    that measured fewer (a thread kind under this machine's limits) is scaled
    to ``count`` and marked computed."""
    def select(runs: Runs) -> Measurement | Missing:
        got = _rows(runs, kind, count)
        if isinstance(got, Missing):
            if count == MILLION:
                stand_in = million_stand_in(runs, kind)
                if isinstance(stand_in, Measurement):
                    return stand_in
                return Missing(f"{got.reason}; {stand_in.reason}")
            return got
        rows, found = got
        computed = bool((rows.measured_count < count).any())
        m = over_repeats(rows.max_rss_kib_at_count * KIB_TO_MB, "MB", run_id=run_ids(found),
                         setup={"experiment": EXPERIMENT, "kind": kind, "count": count,
                                "gate": "all asleep at once"},
                         how="peak resident (VmHWM) of the program, all tasks asleep at once"
                             + ("; scaled from the threads this machine allows" if computed
                                else ""), where=f"at {count:,} tasks")
        return Measurement(**{**m.__dict__, "computed": computed})
    return select


MILLION = 1_000_000
S1_AT_A_MILLION = ("S1's program at one million, every task asleep at once (the Rust peer's "
                   "Tokio tasks held until all exist; the Go program's all-at-once "
                   "goroutines), stands in for S6's program: the same N sleeping tasks, "
                   "without S6's 10 s sleep; the peak is the program's max RSS")


def million_stand_in(runs: Runs, kind: str) -> Measurement | Missing:
    """One million sleeping tasks of ``kind`` from S1's program as this project runs it
    with every task asleep at once (peer_million for Tokio, goroutines_million's
    all-at-once variant for Go), when no run of S6's program at one million is stored."""
    if kind == "goroutine":
        found = runs.matching("goroutines_million")
        table = runs.tables(found, "runs")
        if table.empty or "variant" not in table:
            return Missing("no one-million goroutine run is stored either")
        rows = table[(table.variant == "all_at_once") & (table["count"] == MILLION)]
        if rows.empty:
            return Missing("the stored one-million goroutine runs hold no all-at-once variant")
        values = rows.max_rss_kib * KIB_TO_MB
    else:
        values = []
        found = []
        for run in runs.matching("peer_million"):
            row = (run.meta.get("summary", {}).get("kinds") or {}).get(kind) or {}
            if not row.get("not_run") and row.get("measured_count") == MILLION:
                values.append(float(row["max_rss_kib"]) * KIB_TO_MB)
                found.append(run)
        if not values:
            return Missing(f"no one-million run of {task_label(kind, plural=True)} is stored "
                           "either (the peers' one-million run measures Rust threads and Tokio "
                           "tasks)")
    m = over_repeats(values, "MB", run_id=run_ids(found),
                     setup={"experiment": "peer_million" if kind != "goroutine" else
                            "goroutines_million", "kind": kind, "count": MILLION,
                            "program": "S1's, every task asleep at once"},
                     how="peak resident of S1's program with every task asleep at once",
                     where="at 1,000,000 tasks")
    return Measurement(**{**m.__dict__, "substitute": S1_AT_A_MILLION})


def ratio(top: str, bottom: str, count: int) -> Any:
    """A selector: peak of ``top`` / peak of ``bottom`` at ``count`` tasks."""
    def select(runs: Runs) -> Measurement | Missing:
        a, b = peak_mb(top, count)(runs), peak_mb(bottom, count)(runs)
        if isinstance(a, Missing):
            return a
        if isinstance(b, Missing):
            return b
        q = quotient(a, b, setup={"experiment": EXPERIMENT, "count": count,
                                  "top": top, "bottom": bottom},
                     run_id=a.run_id if a.run_id == b.run_id else f"{a.run_id}; {b.run_id}",
                     how=f"peak of the {task_label(top, plural=True)} / peak of the "
                         f"{task_label(bottom, plural=True)}",
                     where=f"at {count:,} tasks")
        stand_in = a.substitute or b.substitute
        return Measurement(**{**q.__dict__, "substitute": stand_in}) if stand_in else q
    return select


def threads_reached(runs: Runs) -> Measurement | Missing:
    """How many Rust threads the largest stored S6 run started (S6 could not start
    100,000 on its system)."""
    found = runs.matching(EXPERIMENT)
    table = runs.tables(found, "runs")
    if table.empty or "kind" not in table:
        return Missing(f"no stored {EXPERIMENT.replace('_', ' ')} run on this machine "
                       "(notebook 05)")
    rows = table[(table.kind == "rust-thread")]
    if "measured_count" not in rows or rows.measured_count.dropna().empty:
        return Missing("no Rust-thread row in the stored peak-memory runs")
    best = rows.loc[rows.measured_count.idxmax()]
    return Measurement(float(best.measured_count), "threads", repeats=1,
                       setup={"experiment": EXPERIMENT, "kind": "rust-thread"},
                       run_id=str(best.run_id),
                       how=f"Rust threads started, bound: {best.count_bound}")
