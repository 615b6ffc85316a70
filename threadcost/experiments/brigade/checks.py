"""The brigade, part one: kinds, placements, limits and the checks of
:func:`threadcost.experiments.brigade.run`'s parameters (before any C runs);
re-exported by :mod:`threadcost.experiments.brigade.run`. Loads no kernel (the kinds' C
codes are in :mod:`threadcost.experiments.brigade.one_run`), so views read it anywhere."""

from __future__ import annotations

from typing import Any

from threadcost import paths
from threadcost.errors import ParameterError
from threadcost.experiments.parameters import declared
from threadcost.host import sysinfo
from threadcost.settings import validate
from threadcost.settings.validate import one_cpu

EXPERIMENT = "brigade"
# Defaults, ranges and choices: the notebook parameters' (threadcost.experiments.parameters).
TASKS, ITERATIONS = declared("brigade_tasks"), declared("brigade_iterations")
WARMUP, REPEATS = declared("brigade_warmup"), declared("brigade_repeats")
STACK_KIB = declared("brigade_stack_kib")
TRANSPORT = declared("brigade_transport")
TRANSPORTS = TRANSPORT.choices
KINDS = declared("brigade_kinds").choices
BASELINE = "one-thread"
PLACEMENTS = declared("brigade_placements").choices
# Threads are kernel tasks: kernel.pid_max (32768) is shared by everyone on the
# machine, so one brigade never asks for more than 10,000 (the declared maximum).
MAX_TASKS = int(TASKS.maximum or 0)
MAX_ITERATIONS = int(ITERATIONS.maximum or 0)
MAX_HOPS_PER_RUN = 200_000_000  # iterations * (tasks + 1): about 15 min at 5 us/hop
MAX_REPEATS = int(REPEATS.maximum or 0)
# Per task, what the memory check allows: a thread's touched stack, its kernel
# stack and bookkeeping, two pipes' buffers at worst.
TASK_BUDGET_KIB = 160
REFERENCE_SOURCE = paths.REPO_ROOT / "native" / "brigade_reference" / "brigade_ref.c"
REFERENCE_BINARY = paths.REPO_ROOT / "build" / "native" / "brigade_ref"


def check_params(tasks: Any = tuple(TASKS.default), kinds: Any = KINDS,
                 placement: Any = PLACEMENTS, iterations: Any = ITERATIONS.default,
                 warmup: Any = WARMUP.default, repeats: Any = REPEATS.default,
                 cpu: Any = "auto", stack_kib: Any = STACK_KIB.default,
                 timeout_s: Any = 10, max_fds: Any = None,
                 transport: Any = TRANSPORT.default) -> dict[str, Any]:
    """Validate and normalise the parameters (raises ParameterError)."""
    task_list = validate.integer_list("tasks", tasks, **TASKS.bounds, max_items=64)
    p: dict[str, Any] = {
        "tasks": sorted(set(task_list)),
        "kinds": validate.choice_list("kinds", kinds, KINDS),
        "transport": validate.choice("transport", transport, TRANSPORTS),
        "placement": validate.choice_list("placement", placement, PLACEMENTS),
        "iterations": validate.integer("iterations", iterations, **ITERATIONS.bounds),
        "warmup": validate.integer("warmup", warmup, **WARMUP.bounds),
        "repeats": validate.integer("repeats", repeats, **REPEATS.bounds),
        "stack_kib": validate.stack_kib("stack_kib", stack_kib),
        "timeout_s": validate.number("timeout_s", timeout_s, minimum=0.05, maximum=3600),
        "max_fds": None if max_fds is None else validate.integer(
            "max_fds", max_fds, minimum=16, maximum=_nofile_hard()),
    }
    biggest = max(p["tasks"])
    hops = (p["iterations"] + p["warmup"]) * (biggest + 1)
    if hops > MAX_HOPS_PER_RUN:
        raise ParameterError("iterations", iterations,
                             f"(iterations + warmup) * (largest tasks + 1) must be at most "
                             f"{MAX_HOPS_PER_RUN:,} hops per run; with {biggest:,} tasks "
                             f"at most {MAX_HOPS_PER_RUN // (biggest + 1) - p['warmup']:,} "
                             "iterations")
    p["cpu"] = one_cpu("cpu", cpu, allow_none=False)
    if "thread" in p["kinds"]:
        _check_thread_headroom(tasks, biggest)
    validate.memory_fits("tasks", tasks, biggest * TASK_BUDGET_KIB)
    return p


def _nofile_hard() -> int:
    import resource

    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    return hard if hard != resource.RLIM_INFINITY else 1 << 20


def _check_thread_headroom(value: Any, biggest: int) -> None:
    """Refuse a thread brigade that would bring the system near kernel.pid_max."""
    pid_max = sysinfo.sysctl("kernel.pid_max") or 32768
    threads_max = sysinfo.sysctl("kernel.threads-max") or pid_max
    running = sysinfo.system_threads() or 0
    room = int(min(pid_max, threads_max) * 0.75) - running
    if biggest > room:
        raise ParameterError("tasks", value,
                             f"the thread kind needs {biggest:,} threads, but only {room:,} "
                             f"fit under 75% of kernel.pid_max/threads-max with the "
                             f"{running:,} threads now running on this machine")

