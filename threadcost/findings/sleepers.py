"""Selectors of S4's claims (matklad's 10k_linux_threads: C15-C17) on S4's own
program: Rust threads, unpinned and pinned round-robin, against goroutines, read
from the ``sleepers`` runs of notebook 05 (the Rust and Go peers).

A run holds one row per (repeat, variant) in its ``repeats`` table: every repeat
runs each variant in a fresh process, the variants interleaved. A run stored
before the repeats holds one row per variant (its summary's ``variants``): it
counts as one repeat. Runs are pooled only at one task count.

What S4 read from ``time``, and what is read here:

- max RSS: the peak resident set of the whole program (sampled every period and
  its VmHWM), read by the program itself: wait4's max RSS would also count the
  pages of the Python process that forked it;
- CPU: user and system time of the program from the moment every task exists
  (they wait at a gate) to the last one's end, divided by the wake-ups (S4: 21 s
  over 10,000 tasks x 1000 sleeps = 10 million wake-ups). Per wake-up, a run of
  fewer sleeps than S4's 1000 is compared with his on the same footing;
- page tables (C16; ``time`` shows none: they are kernel memory outside RSS): the
  program's VmPTE at its peak (the largest reading once every thread exists and
  then every period) minus its VmPTE before the first thread, / threads. A run
  stored before the peers reported VmPTE has none (C16 then reads the C-thread
  runs instead, labelled a substitute: :mod:`threadcost.findings.runtimes`).

CPU per wake-up is judged only where the tasks kept up with their schedule: a
repeat whose CPUs were at least 80% busy, or which ran more than 1.25 times its
planned sleeping time, is saturated (the same rule as
:mod:`threadcost.experiments.user_space_tasks.sleepers`), and a CPU reading that includes one is
shown but not judged.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from threadcost import stats, vocabulary
from threadcost.measured.intervals import log_ratio, over_repeats
from threadcost.measured.measurement import Measurement, Missing
from threadcost.measured.runs import Runs, run_ids

EXPERIMENT = "sleepers"
S4_COUNT = 10_000
THREADS, PINNED, GOROUTINES = "rust_threads", "rust_threads_pinned", "goroutines"
NAMES = {THREADS: "Rust threads", PINNED: "Rust threads pinned round-robin",
         GOROUTINES: "goroutines", "threads": "C threads",
         "threads_pinned": "C threads pinned round-robin"}
PROGRAM = {THREADS: "Rust peer", PINNED: "Rust peer", GOROUTINES: "Go peer"}
CPU_COLUMNS = {"cpu_us_per_wakeup": "CPU (user + system) time / wake-ups",
               "user_us_per_wakeup": "user CPU time / wake-ups",
               "sys_us_per_wakeup": "system CPU time / wake-ups"}
# the experiment's saturation rule (threadcost.stats), for runs stored before its flags
SATURATION_SHARE, LATE_FACTOR = stats.SATURATION_SHARE, stats.LATE_FACTOR
RSS_WORDS = ("peak RSS of the whole program (sampled every period, and its VmHWM), "
             "as time's max RSS")


def _number(value: Any) -> float | None:
    """A stored number, or None for anything else (a damaged or hostile field)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _old_rows(run: Any) -> pd.DataFrame:
    """A run stored before the repeats: its per-variant summary as repeat 0 (its
    saturation computed by the experiment's rule, from the run's own fingerprint)."""
    variants = (run.meta.get("summary") or {}).get("variants")
    params = run.meta.get("params") or {}
    affinity = (run.meta.get("machine") or {}).get("affinity")
    cpus = len(affinity) if isinstance(affinity, list) else 0
    planned = ((_number(params.get("duration_ms")) or 0)
               + (_number(params.get("stagger_ms")) or 0)) / 1000
    rows = []
    for variant, row in (variants.items() if isinstance(variants, dict) else ()):
        if not isinstance(row, dict):
            continue
        row = {**row, "variant": variant, "repeat": 0}
        cpu, wall = _number(row.get("cpu_s")), _number(row.get("wall_s"))
        if not row.get("not_run") and cpus and cpu is not None and wall:
            row["saturated"] = any(stats.saturation(cpu, wall, cpus, planned))
        rows.append(row)
    return pd.DataFrame(rows)


def _table(runs: Runs) -> tuple[pd.DataFrame, list[Any]] | Missing:
    """Every stored sleepers run's rows (one per repeat and variant), with the task
    count the run asked for (``count``), ``run_id`` and ``run_index``."""
    found = runs.matching(EXPERIMENT)
    frames = []
    for i, run in enumerate(found):
        if "repeats" in (run.meta.get("tables") or []):
            frame = run.table("repeats")
        else:
            frame = _old_rows(run)
        if frame.empty or "variant" not in frame:
            continue
        count = (run.meta.get("params") or {}).get("count")
        frames.append(frame.assign(run_id=run.meta["run_id"], run_index=i, count=count))
    if not frames:
        return Missing("no stored sleepers run on this machine (notebook 05: S4's program "
                       "on the Rust and Go peers)")
    table = pd.concat(frames, ignore_index=True)
    if "not_run" not in table:
        table["not_run"] = None
    if "saturated" not in table:
        table["saturated"] = False
    table["saturated"] = table["saturated"].fillna(False).astype(bool)
    tasks = pd.to_numeric(table["tasks"], errors="coerce").where(lambda n: n > 0) \
        if "tasks" in table else np.nan
    table["page_tables_per_task_kib"] = (
        (pd.to_numeric(table["peak_page_tables_kib"], errors="coerce")
         - pd.to_numeric(table["page_tables_before_kib"], errors="coerce")) / tasks
        if {"peak_page_tables_kib", "page_tables_before_kib"} <= set(table) else np.nan)
    # a run where no variant ran stores no wake-ups: every CPU reading is then not run
    wakeups = (pd.to_numeric(table["wakeups"], errors="coerce").where(lambda w: w > 0)
               if "wakeups" in table else np.nan)
    for column, seconds in (("cpu_us_per_wakeup", "cpu_s"), ("user_us_per_wakeup", "user_s"),
                            ("sys_us_per_wakeup", "sys_s")):
        if seconds in table:
            table[column] = pd.to_numeric(table[seconds], errors="coerce") * 1e6 / wakeups
    return table, found


def _rows(runs: Runs, *variants: str) -> tuple[pd.DataFrame, list[Any], int] | Missing:
    """The measured rows of ``variants`` at one count: S4's 10,000 when stored, else
    the largest count at which all of them ran."""
    got = _table(runs)
    if isinstance(got, Missing):
        return got
    table, found = got
    mine = table[table.variant.isin(variants)]
    measured = mine[mine.not_run.isna()]
    absent = [v for v in variants if v not in set(measured.variant)]
    if absent:
        why = mine[mine.variant.isin(absent) & mine.not_run.notna()]
        if not why.empty:  # the variant named is the one whose reason is given
            first = why.iloc[0]
            return Missing(f"{NAMES.get(first.variant, first.variant)} not run: "
                           f"{vocabulary.bare_reason(first.not_run)}")
        return Missing(f"no stored sleepers run with {', '.join(NAMES.get(v, v) for v in absent)}"
                       " measured on this machine (notebook 05, S4's program on the peers)")
    counts = [int(n) for n, g in measured.groupby("count") if set(variants) <= set(g.variant)]
    if not counts:
        return Missing(f"no stored sleepers run has {' and '.join(variants)} at one count")
    count = S4_COUNT if S4_COUNT in counts else max(counts)
    rows = measured[measured["count"] == count]
    used = sorted(set(rows.run_index))
    return rows, [found[i] for i in used], count


def _where(count: int) -> str:
    return "at 10,000 tasks" if count == S4_COUNT else f"(at {count:,} tasks)"


def _setup(found: list[Any], count: int, **more: Any) -> dict[str, Any]:
    p = found[0].meta.get("params") or {}
    return {"experiment": EXPERIMENT, **more, "tasks": count, "period_ms": p.get("period_ms"),
            "duration_ms": p.get("duration_ms"), "stagger_ms": p.get("stagger_ms")}


SWEEP = "sleepers_sweep"
SWEEP_KIND = {THREADS: "threads", PINNED: "threads_pinned", GOROUTINES: "goroutines"}
# saturation is shown not to change a CPU per wake-up when the sweep's unsaturated
# points all lie within this factor of its saturated one (either way)
SATURATION_FACTOR = 1.25


def sweep_evidence(runs: Runs, variant: str, column: str) -> tuple[bool, str] | None:
    """What page 05's sweep (S4's program in C: C threads, not the peers' Rust threads)
    says of saturation for ``variant``'s C counterpart: (does saturation leave the CPU per
    wake-up within SATURATION_FACTOR?, the evidence in words); None without a sweep that
    has both unsaturated counts and a saturated one."""
    kind = SWEEP_KIND.get(variant)
    found = runs.matching(SWEEP)
    table = runs.tables(found, "points") if found and kind else pd.DataFrame()
    if table.empty or column not in table or "saturated" not in table:
        return None
    rows = table[(table.variant == kind) & pd.to_numeric(table[column], errors="coerce")
                 .notna()]
    by = rows.groupby("count").agg(value=(column, "mean"), saturated=("saturated", "any"),
                                   n=(column, "size"))
    calm, busy = by[~by.saturated], by[by.saturated]
    if calm.empty or busy.empty:
        return None
    top = int(busy.index.max())
    sat = float(busy.loc[top, "value"])
    ratios = calm.value / sat
    same = bool(((ratios <= SATURATION_FACTOR) & (ratios >= 1 / SATURATION_FACTOR)).all())
    counts = [int(c) for c in calm.index]
    values = " and ".join(f"{v:,.1f}" for v in calm.value)
    repeats = int(by.n.min())
    what = CPU_COLUMNS[column].replace(" time / wake-ups", "")
    said = (f"page 05's sweep of S4's program in C ({NAMES[kind]}, not the peers' "
            f"{NAMES[variant]}) costs {values} µs of {what} per wake-up unsaturated at "
            f"{' and '.join(f'{c:,}' for c in counts)} tasks against {sat:,.1f} µs saturated "
            f"at {top:,} (means over {repeats} repeat{'s' if repeats != 1 else ''})")
    return same, said


def _saturated(rows: pd.DataFrame, count: int, runs: Runs | None = None,
               column: str = "") -> tuple[str, str]:
    """(why a CPU reading over ``rows`` cannot be judged, or "" when every repeat kept up
    or the sweep shows saturation leaves the cost alone; the sweep's evidence)."""
    busy = sorted({v for v in rows[rows.saturated].variant})
    if not busy:
        return "", ""
    held, notes, held_notes = [], [], []
    for v in busy:
        got = sweep_evidence(runs, v, column) if runs is not None and column else None
        if got is not None:
            notes.append(got[1])
        if got is None or not got[0]:
            held.append(NAMES.get(v, v))
            held_notes += [got[1]] if got is not None else []
    if not held:  # saturated, but the sweep shows it leaves the cost per wake-up alone
        return "", (f"saturated at {count:,} tasks, which does not change the cost per "
                    f"wake-up here (within {SATURATION_FACTOR}x): " + "; ".join(notes))
    evidence = f"; {'; '.join(held_notes)}" if held_notes else ""
    return (f"{' and '.join(held)} saturated this machine's CPUs at {count:,} tasks (CPUs at "
            f"least {SATURATION_SHARE:.0%} busy, or the run more than {LATE_FACTOR}x its "
            "schedule): the tasks could not wake on S4's schedule, so their CPU per wake-up "
            "is not the cost of a wake-up; more repeats would not change that, a machine "
            f"with more CPUs would{evidence}"), ""


def _per_repeat(found: list[Any]) -> str:
    """How the repeats were run, in words (older runs: one run each)."""
    old = sum("repeats" not in (r.meta.get("tables") or []) for r in found)
    if old == len(found):
        return "per run (stored before the repeats: each variant run once, in its own process)"
    return ("per repeat (each variant a fresh process, variants interleaved"
            + ("; a run stored before the repeats counts as one" if old else "") + ")")


def at_s4(variant: str, column: str, unit: str) -> Any:
    """One variant's ``column`` (peak_rss_kib, or a CPU per wake-up) at S4's 10,000
    tasks, over the repeats."""
    def select(runs: Runs) -> Measurement | Missing:
        got = _rows(runs, variant)
        if isinstance(got, Missing):
            return got
        rows, found, count = got
        if count != S4_COUNT:
            return Missing(f"the stored sleepers runs ran {NAMES[variant]} at {count:,} tasks,"
                           " not S4's 10,000 (notebook 05's sleeper count for S4)")
        cpu = column in CPU_COLUMNS
        words = CPU_COLUMNS[column] if cpu else RSS_WORDS
        m = over_repeats(rows[column].dropna(), unit, run_id=run_ids(found),
                         setup=_setup(found, count, variant=variant),
                         how=f"{_per_repeat(found)} at 10,000 tasks, S4's program on the "
                             f"{PROGRAM.get(variant, 'peer')}: {words}",
                         where=_where(count))
        reason, note = _saturated(rows, count, runs, column) if cpu else ("", "")
        return _marked(m, reason, note)
    return select


def _marked(m: Measurement, reason: str, note: str) -> Measurement:
    """``m`` not reproducible for ``reason``, or judged with the sweep's ``note`` on how."""
    if reason:
        return Measurement(**{**m.__dict__, "not_reproducible": reason})
    return Measurement(**{**m.__dict__, "how": f"{m.how}; {note}"}) if note else m


def saturation_why(variant: str, column: str) -> Any:
    """The sweep's evidence as a why's text (a Measurement whose ``how`` is the why):
    only where the reading was saturated and judged all the same."""
    def select(runs: Runs) -> Measurement | Missing:
        got = _rows(runs, variant)
        if isinstance(got, Missing):
            return got
        rows, _, count = got
        reason, note = _saturated(rows, count, runs, column)
        if reason or not note:
            return Missing("not saturated, or saturation decides it")
        evidence = sweep_evidence(runs, variant, column)
        text = ("why: unexplained: the run saturated the CPUs at "
                f"{count:,} tasks, yet saturation does not account for the difference: "
                + (evidence[1] if evidence else note))
        return Measurement(float(count), "tasks", how=text, computed=True)
    return select


def ratio(top: str, bottom: str, column: str, cut: bool = False) -> Any:
    """``column`` of ``top`` / ``bottom``, paired by repeat (the geometric mean of the
    ratios); ``cut``: 1 - top / bottom, over the repeats. A CPU per wake-up is read at
    S4's 10,000 tasks when stored, else at the largest count with both (and said so);
    the whole program's peak RSS only at S4's 10,000 (at fewer tasks the program's own
    baseline weighs more)."""
    def select(runs: Runs) -> Measurement | Missing:
        got = _rows(runs, top, bottom)
        if isinstance(got, Missing):
            return got
        rows, found, count = got
        if column not in CPU_COLUMNS and count != S4_COUNT:
            return Missing(f"the stored sleepers runs ran {count:,} tasks, not S4's 10,000 "
                           "(notebook 05's sleeper count for S4): the whole program's peak RSS "
                           "is compared at S4's count only")
        wide = rows.pivot_table(index=["run_index", "repeat"], columns="variant",
                                values=column)
        ratios = (wide[top] / wide[bottom]).replace([np.inf, -np.inf], np.nan).dropna()
        if ratios.empty:
            return Missing(f"no repeat holds both {NAMES[top]} and {NAMES[bottom]}")
        cpu = column in CPU_COLUMNS
        words = CPU_COLUMNS[column].replace(" time / wake-ups", " per wake-up") if cpu \
            else RSS_WORDS
        info = {"run_id": run_ids(found), "where": _where(count),
                "setup": _setup(found, count, top=top, bottom=bottom),
                "how": f"{_per_repeat(found)} at {count:,} tasks, S4's program on the Rust "
                       f"and Go peers: {words}, {NAMES[top]} / {NAMES[bottom]}"}
        if cut:
            info["how"] += "; cut = 1 - pinned / unpinned"
            m = over_repeats(1 - ratios, "fraction", **info)
        else:
            m = log_ratio(ratios, **info)
        reason, note = _saturated(rows, count, runs, column) if cpu else ("", "")
        return _marked(m, reason, note)
    return select


c15_max_rss_ratio = ratio(THREADS, GOROUTINES, "peak_rss_kib")
c17_threads_over_goroutines_cpu = ratio(THREADS, GOROUTINES, "cpu_us_per_wakeup")
c17_pinning_cut = ratio(PINNED, THREADS, "cpu_us_per_wakeup", cut=True)


PAGE_TABLES_WORDS = ("page tables per thread of S4's program on the Rust peer (std::thread's "
                     "default 2 MiB stacks): the program's VmPTE (its page tables, every "
                     "level, outside RSS) at its peak (read once every thread exists, then "
                     "every period) minus its VmPTE before the first thread, / threads")


def page_tables_per_thread(runs: Runs) -> Measurement | Missing:
    """C16 on S4's program: the Rust threads' page tables per thread at 10,000 threads,
    over the repeats; Missing for runs stored before the peers reported VmPTE."""
    got = _rows(runs, THREADS)
    if isinstance(got, Missing):
        return got
    rows, found, count = got
    if count != S4_COUNT:
        return Missing(f"the stored sleepers runs ran {NAMES[THREADS]} at {count:,} tasks, "
                       "not S4's 10,000 (notebook 05's sleeper count for S4)")
    rows = rows[pd.to_numeric(rows["page_tables_per_task_kib"], errors="coerce").notna()]
    if rows.empty:
        return Missing("no stored sleepers run holds the Rust threads' page tables (VmPTE): "
                       "runs stored before the peers reported them")
    found = [r for r in found if r.meta["run_id"] in set(rows.run_id)]
    return over_repeats(rows["page_tables_per_task_kib"].astype(float), "KiB",
                        run_id=run_ids(found),
                        setup=_setup(found, count, variant=THREADS,
                                     stack="std::thread default (2 MiB)"),
                        how=f"{_per_repeat(found)} at 10,000 tasks: {PAGE_TABLES_WORDS}",
                        where=_where(count))
