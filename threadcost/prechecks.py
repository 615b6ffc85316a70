"""Every notebook's parameters checked before the first measurement of a build.

``make paper`` runs the notebooks one after another; a value only an experiment can
judge (a size that does not fit in memory, a thread count the system cannot hold, a
CPU this process may not use) used to be refused when its notebook ran, after the
earlier notebooks had measured for minutes. :func:`check_all` asks each notebook's
main experiments to validate the values the notebook will pass them, with the same
arguments, before anything runs. A refusal names the notebook's parameter
(``memory_thread_counts``), as the notebook itself would.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from threadcost import parameters
from threadcost.errors import ParameterError


def _01(v: Mapping[str, Any]) -> None:
    from threadcost.experiments import malloc_touch

    for allocator in v["malloc_allocators"]:
        malloc_touch.check_params(v["malloc_mib"], allocator, v["malloc_points"])


def _02(v: Mapping[str, Any]) -> None:
    from threadcost.experiments import process_memory, thread_memory

    thread_memory.check_params(v["memory_thread_counts"], v["memory_stack_kib_requested"],
                               v["memory_touch_kib"], v["memory_pin"], v["memory_repeats"])
    process_memory.check_params(v["memory_process_counts"], v["memory_process_touch_kib"],
                                v["memory_process_repeats"])


def _03(v: Mapping[str, Any]) -> None:
    from threadcost.experiments import launch

    launch.check_params(kinds=v["launch_kinds"], iterations=v["launch_iterations"],
                        warmup=v["launch_warmup"], stack_kib=v["launch_stack_kib"],
                        pin=v["launch_pin"], parent_touch_mib=v["launch_parent_touch_mib"],
                        burst_sizes=v["launch_burst_sizes"],
                        burst_repeats=v["launch_burst_repeats"],
                        memcpy_kib=v["launch_memcpy_kib"])


def _05(v: Mapping[str, Any]) -> None:
    from threadcost.experiments import fibers

    for impl in v["tasks_fiber_impls"]:
        fibers.check_params(v["tasks_switch_iterations"], v["tasks_fiber_count"],
                            v["tasks_fiber_stack_kib"], v["tasks_touch_kib"], impl,
                            v["tasks_warmup"], v["tasks_cpu"], v["tasks_memory_points"])


CHECKS: dict[str, Callable[[Mapping[str, Any]], None]] = {
    "01_malloc_touch": _01, "02_thread_memory": _02, "03_launch": _03,
    "05_user_space_tasks": _05,
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
            parameters.check(stem, mine)  # types, minimums, and the names refusals use
            try:
                check(mine)
            except ParameterError as exc:
                raise ParameterError(f"{stem}: {ParameterError.aliases.get(exc.name, exc.name)}",
                                     exc.value, exc.allowed) from None
    finally:
        ParameterError.aliases = saved
