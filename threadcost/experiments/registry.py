"""Every experiment of the study, declared once: the one place a new experiment is added.

An :class:`Experiment` names what a stored run's ``experiment`` field says, the
module that produces it, the tables a run of it holds, the notebook that measures
it and the figures that notebook draws from it. The published claims judged from an
experiment's runs are declared in the claims' records (``experiments``) and listed by
:func:`threadcost.claims.for_experiment`.

Used by the paper (the code a page links to: :func:`module_path`), by
:mod:`threadcost.store.stored` (a stored run older than its experiment's tables reads as
"not measured on this machine") and by the tests, which check that every
``Result(experiment=...)`` in ``threadcost/`` and every experiment stored under
``data/`` is declared here.

Runs a notebook stores only to draw from them again (``auxiliary``) carry their own
names, so the claims, which look runs up by experiment, never mistake them for the
runs they judge. ``retired`` experiments are no longer measured; their runs stay
readable in older machine folders.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Experiment:
    """One experiment: the name its runs carry and where everything about it lives."""

    name: str
    module: str  # dotted module under threadcost.experiments that produces it
    tables: tuple[str, ...]  # tables every run of it holds
    notebook: str | None  # the notebook that measures it (file stem)
    figures: tuple[str, ...] = ()  # figure stems drawn from it (figures/<stem>.svg)
    auxiliary: bool = False  # stored only so its notebook can be drawn again
    retired: bool = False  # no longer measured; older runs stay readable


def _e(name: str, module: str, tables: tuple[str, ...], notebook: str | None,
       figures: tuple[str, ...] = (), *,
       auxiliary: bool = False, retired: bool = False) -> Experiment:
    return Experiment(name, module, tables, notebook, figures, auxiliary, retired)


NB01, NB02, NB03 = "01_malloc_touch", "02_thread_memory", "03_launch"
NB04, NB05, NB07 = "04_context_switch", "05_user_space_tasks", "07_io_brigade"
NB08 = "08_more_sources"

EXPERIMENTS: tuple[Experiment, ...] = (
    _e("malloc_touch", "malloc_touch", ("stages", "touch_curve"), NB01,
       ("malloc_touch_curve",)),
    _e("malloc_touch_grid", "explorer_grids", ("curves",), NB01, auxiliary=True),
    _e("thread_memory", "thread_memory", ("points",), NB02,
       ("thread_memory_vs_threads", "thread_memory_breakdown", "thread_vs_process_memory",
        "thread_memory_claims")),
    _e("thread_memory_stack", "thread_memory", ("points", "per_stack_size"), NB02,
       ("thread_memory_stack",)),
    _e("thread_memory_touch", "thread_memory", ("points", "per_touch_depth"), NB02,
       ("thread_memory_touch",)),
    _e("thread_memory_grid", "explorer_grids", ("points", "skipped"), NB02, auxiliary=True),
    _e("process_memory", "process_memory", ("points", "fits"), NB02,
       ("thread_vs_process_memory",)),
    _e("thread_limits", "limits", ("limits", "advice"), NB02),
    _e("thread_spawn", "limits", (), NB02),
    _e("threads_ceiling", "million", ("measured", "scaled"), NB02),
    _e("launch", "launch", ("samples", "distributions"), NB03,
       ("launch_distributions", "launch_create_distributions", "launch_vs_parent_memory",
        "launch_burst", "launch_c09")),
    _e("launch_growth", "launch", ("repeats",), NB03),
    _e("launch_python_parent", "launch", ("samples",), NB03, auxiliary=True),
    _e("context_switch", "context_switch", ("configs", "quantiles", "baselines", "skipped"),
       NB04, ("switch_distributions", "switch_claims")),
    _e("context_switch_config", "context_switch", (), NB04, auxiliary=True),
    _e("context_switch_headline", "context_switch", ("samples",), NB04,
       ("switch_unpinned_split",), auxiliary=True),
    _e("context_switch_working_set", "context_switch", ("points", "quantiles"), NB04,
       ("switch_working_set",)),
    _e("context_switch_placement", "context_switch", ("repeats",), NB04),
    _e("context_switch_perf_check", "context_switch", ("rounds",), NB04),
    _e("context_switch_timing_check", "context_switch", ("rounds",), NB04),
    _e("echo", "echo", ("repeats",), NB04, ("switch_echo_rate",)),
    _e("cpu_bound", "cpu_bound", ("tasks", "runs", "totals", "ratios"), NB04,
       ("cpu_bound_totals",)),
    _e("yardsticks", "yardsticks", ("repeats",), NB04),
    _e("fibers", "fibers", ("round_trips", "memory_points", "per_fiber", "creation"), NB05,
       ("tasks_fiber_memory", "tasks_switch_time", "tasks_memory_per_task",
        "tasks_creation")),
    _e("peers", "peers", ("round_trips", "memory_points"), NB05,
       ("tasks_switch_time", "tasks_memory_per_task")),
    _e("goroutine_launch", "peers", ("samples",), NB05, ("tasks_creation",)),
    _e("goroutine_pinning", "peers", ("runs", "gain"), NB05),
    _e("goroutines_million", "million", ("runs",), NB05),
    # C threads at several counts: the figure; the claims read S4's program (sleepers)
    _e("sleepers_sweep", "sleepers", ("points",), NB05, ("tasks_sleepers_sweep",)),
    # the kernel-task rows' switch (the headline's): a pinned futex ping-pong with its
    # bare batches, stored under names of their own (the claims read notebook 04's runs)
    _e("tasks_switch_thread", "kernel_task_switch", (), NB05, auxiliary=True),
    _e("tasks_switch_process", "kernel_task_switch", (), NB05, auxiliary=True),
    # page 05 once measured its thread row's memory and launch again; it prints notebook
    # 02's and 03's findings now (each number once)
    _e("tasks_thread_memory", "thread_memory", ("points",), NB05, auxiliary=True,
       retired=True),
    _e("tasks_launch", "launch", ("samples",), NB05, auxiliary=True, retired=True),
    # every run holds "variants"; runs since the repeats also "repeats" (older: one run)
    _e("sleepers", "sleepers", ("variants",), NB05),
    _e("brigade", "brigade", ("runs", "trips", "per_hop", "memory"), NB07,
       ("brigade_per_hop", "brigade_memory_per_task")),
    _e("brigade_reference", "brigade", ("per_round",), NB07, auxiliary=True),
    _e("peer_runtimes", "runtimes", ("samples",), NB05),
    _e("peer_brigade", "runtimes", ("runs",), NB07),
    _e("peer_million", "million", ("runs",), NB05),
    _e("peer_peak_memory", "million", ("runs",), NB05),
    _e("launch_spawn_growth", "more_sources", ("repeats",), NB08, ("sources_spawn_growth",)),
    _e("fiber_gap", "more_sources", ("repeats", "ratios"), NB08, ("sources_fiber_gap",)),
    _e("switch_counts", "indirect", ("runs", "syscall"), NB08, ("sources_switch_counts",)),
    _e("indirect_cost", "indirect", ("runs", "points", "syscall"), NB08,
       ("sources_indirect_cost",)),
    _e("go_lockosthread", "more_sources", ("runs",), NB08, ("sources_lockosthread",)),
    _e("thread_waves", "more_sources", ("waves", "repeats"), NB08, ("sources_thread_waves",)),
)

BY_NAME: dict[str, Experiment] = {e.name: e for e in EXPERIMENTS}


class UnknownExperiment(KeyError):
    """An experiment name no entry of the registry declares."""


def get(name: str) -> Experiment:
    """The registered experiment ``name``; UnknownExperiment names the known ones."""
    try:
        return BY_NAME[name]
    except KeyError:
        raise UnknownExperiment(
            f"experiment {name!r} is not in threadcost/experiments/registry.py "
            f"(known: {', '.join(sorted(BY_NAME))})") from None


def module_path(name: str) -> str | None:
    """The source file of the module that produces ``name``, relative to the
    repository (``threadcost/experiments/launch/run.py``); None when not registered."""
    entry = BY_NAME.get(name)
    if entry is None:
        return None
    return f"threadcost/experiments/{entry.module}.py"


def of_notebook(stem: str) -> list[Experiment]:
    """The experiments a notebook measures, in the order declared."""
    return [e for e in EXPERIMENTS if e.notebook == stem]


def missing_tables(name: str, tables: list[str] | tuple[str, ...]) -> list[str]:
    """Tables the registry expects of a run of ``name`` that a stored run lacks
    (a run saved before its experiment grew them)."""
    entry = BY_NAME.get(name)
    if entry is None:
        return []
    return [t for t in entry.tables if t not in tables]


def column_kinds(name: str, table: str) -> dict[str, str]:
    """The kind of each column of table ``table`` of a run of ``name``, as declared in
    :mod:`threadcost.experiments.table_kinds` (``{"create_ns": "time", ...}``); empty
    for a table not declared there (its columns are then judged by their names)."""
    from threadcost.experiments.table_kinds import COLUMNS

    return COLUMNS.get(name, {}).get(table, {})
