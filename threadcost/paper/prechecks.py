"""Every notebook's parameters checked before the first measurement of a build.

``make paper`` runs the notebooks one after another; a value only an experiment can
judge (a size that does not fit in memory, a thread count the system cannot hold, a
CPU this process may not use) used to be refused when its notebook ran, after the
earlier notebooks had measured for minutes. :func:`check_all` asks every experiment a
notebook runs to judge the values the notebook will pass it, with the same arguments
(each experiment's ``check_*`` function is the one its run calls first), before
anything runs. A refusal names the notebook and its parameter
(``02_thread_memory: memory_repeats``), the value the reader wrote and what is allowed.
``tests/test_prechecks_all.py`` gives every declared parameter a value no experiment
accepts and asserts this refusal.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from threadcost import native
from threadcost.errors import ParameterError
from threadcost.settings import parameters

FOLDER_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")  # a machine folder's name


@dataclass(frozen=True)
class N:
    """The notebook parameter ``name`` passed to a check, through ``how`` when the
    notebook derives the argument from it (``tasks_warmup // 10``)."""

    name: str
    how: Callable[[Any], Any] | None = None


class _Checks:
    """One notebook's values, and the calls judging them."""

    def __init__(self, stem: str, values: Mapping[str, Any]) -> None:
        self.stem = stem
        self.values = values

    def __getitem__(self, name: str) -> Any:
        return self.values[name]

    def __call__(self, check: Callable[..., Any], **arguments: Any) -> None:
        """``check(**arguments)``, a refusal renamed to the notebook parameter it came
        from (an :class:`N` argument) and showing the value the reader wrote."""
        fed = {api: arg for api, arg in arguments.items() if isinstance(arg, N)}
        given = {api: (self.values[arg.name] if arg.how is None
                       else arg.how(self.values[arg.name])) if isinstance(arg, N) else arg
                 for api, arg in arguments.items()}
        try:
            check(**given)
        except ParameterError as exc:
            source = fed.get(exc.name)
            if source is None and len(fed) == 1:  # a check naming its argument otherwise
                source = next(iter(fed.values()))
            if source is None:
                raise ParameterError(f"{self.stem}: {exc.name}", exc.value,
                                     exc.allowed) from None
            value = exc.value if source.how is None else self.values[source.name]
            raise ParameterError(f"{self.stem}: {source.name}", value, exc.allowed) from None


def _00(c: _Checks) -> None:
    _machine(c, "intro_machine_id")


def _06(c: _Checks) -> None:
    _machine(c, "claims_machine_id")


def _machine(c: _Checks, name: str) -> None:
    """A machine named to summarise or judge has a folder of stored runs."""
    wanted = c[name]
    if wanted is None:
        return
    from threadcost.host import machine
    from threadcost.store import datastore

    known = datastore.machines_with_runs()
    if not isinstance(wanted, str) or not FOLDER_NAME.fullmatch(wanted) or (
            wanted not in known and wanted != machine.machine_id()):
        listed = ", ".join(known[:8]) + (f" and {len(known) - 8} more" if len(known) > 8
                                         else "")
        raise ParameterError(f"{c.stem}: {name}", wanted,
                             "must be None (this machine) or a machine folder with stored "
                             f"runs ({listed or 'none stored'})")


def _01(c: _Checks) -> None:
    from threadcost.experiments.malloc_touch import run as malloc_touch

    for allocator in c["malloc_allocators"] or [None]:
        c(malloc_touch.check_params, mib=N("malloc_mib"),
          allocator=N("malloc_allocators", lambda _, a=allocator: a),
          points=N("malloc_points"))


def _02(c: _Checks) -> None:
    from threadcost.experiments.thread_memory import limits, process_memory
    from threadcost.experiments.thread_memory import run as thread_memory
    from threadcost.experiments.user_space_tasks import million

    c(thread_memory.check_params, thread_counts=N("memory_thread_counts"),
      stack_kib=N("memory_stack_kib_requested"), touch_kib=N("memory_touch_kib"),
      pin=N("memory_pin"), repeats=N("memory_repeats"))
    c(process_memory.check_params, counts=N("memory_process_counts"),
      touch_kib=N("memory_process_touch_kib"), repeats=N("memory_process_repeats"))
    c(thread_memory.check_stack_grid, stack_sizes_kib=N("memory_stack_sizes_kib"),
      threads=N("memory_grid_threads"), pin=N("memory_pin"),
      repeats=N("memory_grid_repeats"))
    c(thread_memory.check_touch_grid, touch_depths_kib=N("memory_touch_depths_kib"),
      threads=N("memory_grid_threads"), pin=N("memory_pin"),
      repeats=N("memory_grid_repeats"))
    c(limits.check_params, stack_kib=N("memory_stack_kib_requested"),
      touch_kib=N("memory_touch_kib"))
    c(limits.check_spawn_until_failure, max_threads=N("memory_spawn_max"),
      stack_kib=N("memory_stack_kib_requested"))
    c(million.check_threads, cap=N("memory_c10_cap"), stack_kib=2048,
      sleep_ms=N("memory_c10_sleep_ms"))


def _03(c: _Checks) -> None:
    from threadcost.experiments.launch import run as launch

    c(launch.check_params, kinds=N("launch_kinds"), iterations=N("launch_iterations"),
      warmup=N("launch_warmup"), stack_kib=N("launch_stack_kib"), pin=N("launch_pin"),
      parent_touch_mib=N("launch_parent_touch_mib"), burst_sizes=N("launch_burst_sizes"),
      burst_repeats=N("launch_burst_repeats"), memcpy_kib=N("launch_memcpy_kib"))
    if c["launch_python_parent_iterations"]:  # 0 skips it
        c(launch.check_params, kinds="fork", iterations=N("launch_python_parent_iterations"),
          warmup=min(c["launch_warmup"], c["launch_python_parent_iterations"]),
          pin=N("launch_pin"), parent_touch_mib=0, memcpy_kib=0, parent="python")
    c(launch.check_growth_repeats, kinds=["thread", "fork"],
      parent_touch_mib=N("launch_growth_parent_touch_mib"),
      repeats=N("launch_growth_repeats"), iterations=N("launch_growth_iterations"),
      warmup=N("launch_warmup"), pin=N("launch_pin"))


def _04(c: _Checks) -> None:
    from threadcost.experiments.context_switch import cpu_bound, echo, yardsticks
    from threadcost.experiments.context_switch import run as cs

    c(cs.check_sweep, mechanisms=N("switch_mechanisms"), placements=N("switch_placements"),
      tasks=N("switch_tasks"), iterations=N("switch_iterations"), warmup=N("switch_warmup"),
      baseline_scale=N("switch_baseline_scale"))
    c(cpu_bound.check_params, tasks=N("cpu_bound_tasks"), limit=N("cpu_bound_limit"),
      ws_limit=N("cpu_bound_ws_limit"), ws_ints=N("cpu_bound_ws_ints"),
      repeats=N("cpu_bound_repeats"), run_s=N("cpu_bound_run_s"),
      ws_run_s=N("cpu_bound_ws_run_s"))
    c(cs.check_working_set_sweep, working_sets_kib=N("switch_working_sets_kib"),
      tasks=N("switch_tasks"), iterations=N("switch_ws_iterations"),
      seconds_per_point=N("switch_ws_seconds_per_point"))
    c(echo.check_params, placements=["same-cpu", "unpinned"],
      iterations=N("switch_echo_iterations"), message_bytes=N("switch_echo_message_bytes"),
      repeats=N("switch_echo_repeats"))
    c(cs.check_placement_repeats, mechanisms=list(cs.CLAIM_MECHANISMS),
      repeats=N("switch_placement_repeats"), iterations=N("switch_placement_iterations"),
      warmup=N("switch_warmup"))
    c(cs.check_rounds, rounds=N("switch_perf_rounds"), iterations=N("switch_perf_iterations"))
    c(cs.check_rounds, rounds=N("switch_timing_rounds"), iterations=N("switch_iterations"),
      minimum=1)
    c(yardsticks.check_params, repeats=N("switch_echo_repeats", lambda r: max(r, 1)),
      scale=N("switch_iterations", lambda n: min(1.0, n / yardsticks.SWITCH_ROUND_TRIPS)))


def _05(c: _Checks) -> None:
    from threadcost.experiments.user_space_tasks import (
        fibers,
        kernel_task_switch,
        million,
        runtimes,
        sleepers,
    )
    from threadcost.experiments.user_space_tasks import goroutines as peers

    for impl in c["tasks_fiber_impls"] or [None]:
        c(fibers.check_params, switch_iterations=N("tasks_switch_iterations"),
          count=N("tasks_fiber_count"), stack_kib=N("tasks_fiber_stack_kib"),
          touch_kib=N("tasks_touch_kib"), impl=N("tasks_fiber_impls", lambda _, i=impl: i),
          warmup=N("tasks_warmup"), cpu=N("tasks_cpu"), points=N("tasks_memory_points"))
    c(peers.check_params, iterations=N("tasks_go_iterations"), warmup=N("tasks_warmup"),
      cpu=N("tasks_cpu"), memory_count=N("tasks_goroutines"),
      memory_points=N("tasks_memory_points"), sleepers_count=0)
    c(peers.check_launch_run, iterations=N("tasks_go_launch_iterations"),
      warmup=N("tasks_warmup", lambda w: w // 10), cpu=N("tasks_cpu"))
    c(peers.check_pinning_run, repeats=N("tasks_go_pinning_repeats"),
      iterations=N("tasks_go_pinning_iterations"), warmup=N("tasks_warmup"),
      cpu=N("tasks_cpu"))
    c(runtimes.check_params, kinds=N("tasks_peer_kinds"), iterations=N("tasks_peer_iterations"),
      warmup=N("tasks_peer_iterations", lambda n: n // 10),
      launch_iterations=N("tasks_peer_launch_iterations"), task_count=N("tasks_peer_tasks"),
      thread_count=N("tasks_peer_threads"), repeats=N("tasks_peer_repeats"),
      points=N("tasks_memory_points", lambda n: min(n, 6)), cpu=N("tasks_cpu"))
    # the kernel-task rows' switch (experiments.kernel_task_switch)
    for kind in kernel_task_switch.EXPERIMENTS:
        c(kernel_task_switch.check_params, kind=kind,
          iterations=N("tasks_kernel_switch_iterations"))
    c(sleepers.check_sweep, counts=N("tasks_sleep_counts"), variants=list(sleepers.VARIANTS),
      period_ms=N("tasks_sleep_period_ms"), duration_ms=N("tasks_sleep_sweep_duration_ms"),
      stagger_ms=N("tasks_sleep_stagger_ms"), repeats=N("tasks_sleep_sweep_repeats"))
    c(million.check_goroutines, count=N("tasks_c11_goroutines"),
      sleep_ms=N("tasks_c11_sleep_ms"), variants=list(million.MILLION_VARIANTS),
      repeats=N("tasks_c11_repeats"))
    c(sleepers.check_params, count=N("tasks_s4_count"), period_ms=N("tasks_sleep_period_ms"),
      duration_ms=N("tasks_s4_duration_ms"), stagger_ms=N("tasks_sleep_stagger_ms"),
      variants=["rust_threads", "rust_threads_pinned", "tokio", "goroutines"],
      repeats=N("tasks_s4_repeats"))
    c(million.check_peer_tasks, kinds=["rust-thread", "tokio-task"],
      count=N("tasks_s1_peer_count"), sleep_ms=N("tasks_c11_sleep_ms"),
      thread_cap=N("tasks_s1_thread_cap"))
    c(million.check_peer_tasks, kinds=["rust-thread", "tokio-task"],
      count=N("tasks_s6_count"), sleep_ms=N("tasks_s6_sleep_ms"),
      thread_cap=N("tasks_s6_count", lambda n: max(n, 1)))


def _07(c: _Checks) -> None:
    from threadcost.experiments.brigade import run as brigade
    from threadcost.experiments.user_space_tasks import runtimes

    c(brigade.check_params, tasks=N("brigade_tasks"), kinds=N("brigade_kinds"),
      placement=N("brigade_placements"), iterations=N("brigade_iterations"),
      warmup=N("brigade_warmup"), repeats=N("brigade_repeats"), cpu=N("brigade_cpu"),
      stack_kib=N("brigade_stack_kib"))
    if c["brigade_reference_rounds"] != 0:  # 0 skips the reference check
        c(brigade.check_reference, tasks=100, iterations=N("brigade_reference_iterations"),
          warmup=N("brigade_reference_iterations", lambda n: max(n // 10, 1)),
          rounds=N("brigade_reference_rounds"), cpu=N("brigade_cpu"))
    c(runtimes.check_brigade, tasks=N("brigade_peer_tasks"), kinds=N("brigade_peer_kinds"),
      placements=N("brigade_placements"), iterations=N("brigade_iterations"),
      warmup=N("brigade_warmup"), repeats=N("brigade_repeats"), cpu=N("brigade_cpu"))


def _08(c: _Checks) -> None:
    from threadcost.experiments.launch import run as launch
    from threadcost.experiments.more_sources import indirect
    from threadcost.experiments.more_sources import run as more_sources

    c(launch.check_growth_repeats, kinds=list(more_sources.SPAWN_KINDS),
      parent_touch_mib=N("sources_spawn_mib"), repeats=N("sources_repeats"),
      iterations=N("sources_spawn_iterations"), warmup=3, pin="auto")
    c(more_sources.check_fiber_gap, repeats=N("sources_repeats"),
      iterations=N("sources_fiber_iterations"),
      warmup=N("sources_fiber_iterations", lambda n: n // 10), cpu=N("sources_cpu"))
    c(more_sources.check_go_lockosthread, repeats=N("sources_repeats"),
      iterations=N("sources_go_iterations"),
      warmup=N("sources_go_iterations", lambda n: n // 10))
    c(indirect.check_switch_counts, mechanisms=list(indirect.cs.MECHANISMS),
      tasks=list(indirect.cs.TASKS), repeats=N("sources_repeats"),
      iterations=N("sources_switch_iterations"))
    c(indirect.check_indirect_cost, array_kib=N("sources_array_kib"),
      strides=N("sources_strides"), repeats=N("sources_repeats"), cpu=N("sources_cpu"),
      target_accesses=N("sources_target_accesses"))
    c(more_sources.check_thread_waves, total=N("sources_threads"), wave=N("sources_wave"),
      repeats=N("sources_repeats"))


CHECKS: dict[str, Callable[[_Checks], None]] = {
    "00_introduction": _00, "01_malloc_touch": _01, "02_thread_memory": _02,
    "03_launch": _03, "04_context_switch": _04, "05_user_space_tasks": _05,
    "06_claims": _06, "07_io_brigade": _07, "08_more_sources": _08,
}


def check_all(stems: list[str], values: Mapping[str, Any]) -> None:
    """Each notebook in ``stems`` with ``values`` (its declared names; defaults for the
    rest): ParameterError (or LimitReached) naming the notebook's parameter."""
    saved = dict(ParameterError.aliases)
    try:
        for stem in stems:
            check = CHECKS.get(stem)
            if check is None:
                continue
            mine = {p.name: values.get(p.name, p.default) for p in parameters.for_notebook(stem)}
            try:
                parameters.check(stem, mine)  # types and minimums
            except ParameterError as exc:
                raise ParameterError(f"{stem}: {exc.name}", exc.value, exc.allowed) from None
            ParameterError.aliases = {}  # refusals name the API's argument; renamed here
            check(_Checks(stem, mine))
    finally:
        ParameterError.aliases = saved


def kernels() -> None:
    """A measuring build needs the compiled kernels: without them, one line naming what
    to run (:class:`threadcost.native.KernelsNotBuilt`), before the first notebook."""
    native.require_kernels()
