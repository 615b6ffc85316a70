"""Context switch, part one: the names of mechanisms, placements and tasks, and the
checks of :func:`threadcost.experiments.context_switch.run`'s parameters (before any
C runs); re-exported by :mod:`threadcost.experiments.context_switch.run`.

Defaults and ranges are the notebook parameters' (:mod:`threadcost.experiments.parameters`). Loads
no kernel (the C codes of these names are in
:mod:`threadcost.experiments.context_switch.kernels`), so the views and ``--help`` read
the names from here on a machine without the C build."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from threadcost import textout
from threadcost.errors import ParameterError
from threadcost.experiments.parameters import declared
from threadcost.host import cpus
from threadcost.settings import validate

EXPERIMENT = "context_switch"
ITERATIONS = declared("switch_iterations")
WARMUP = declared("switch_warmup")
MECHANISMS = declared("switch_mechanisms").choices
PLACEMENTS = declared("switch_placements").choices
TASKS = declared("switch_tasks").choices
MAX_ITERATIONS = ITERATIONS.maximum
MAX_MESSAGE = 4096
BASELINE_TEXT = {
    "timer": "one clock_gettime(CLOCK_MONOTONIC) through the vDSO",
    "getcpu": "one sched_getcpu()",
    "empty_syscall": "one empty system call (getppid)",
    "lock_unlock": "an uncontended pthread mutex lock + unlock",
    "self_hop": "one hop's calls made by one task alone (no partner, no switch)",
    "touch": "writing the working set once with warm caches (one word per 64-byte line)",
}
# C01/C02 were published for pipe and condvar ping-pong between two threads.
CLAIM_MECHANISMS = ("pipe", "condvar")


# --------------------------------------------------------------- parameters

def choose_cpus(placement: str, mask: Sequence[int] | None = None,
                siblings: Sequence[Sequence[int]] | None = None,
                packages: Mapping[int, int | None] | None = None) -> tuple[int, int]:
    """The CPUs of sides A and B for a placement (-1: not pinned), from this
    process's affinity mask (``mask``, ``siblings``, ``packages`` stand in for it).

    same-cpu: both on the last CPU of the mask. cross-cpu: :func:`threadcost.host.cpus.pair`
    (two cores of one package where the mask has them, else SMT siblings).
    smt-siblings: two hardware threads of one core. Raises ParameterError when this
    process may not run on enough CPUs for the placement.
    """
    allowed = sorted(mask if mask is not None else cpus.usable())
    groups = [list(g) for g in (siblings if siblings is not None
                                else cpus.smt_siblings(allowed))]
    if placement == "unpinned":
        return -1, -1
    if placement == "same-cpu":
        return cpus.last(allowed), cpus.last(allowed)
    if placement == "cross-cpu":
        two = cpus.pair(allowed, groups, packages)
        if two is None:
            raise ParameterError("placement", placement, str(cpus.two_cpus_reason(allowed)))
        return two.a, two.b
    if placement == "smt-siblings":
        for group in groups:
            usable = [c for c in group if c in allowed]
            if len(usable) >= 2:
                return usable[0], usable[1]
        raise ParameterError("placement", placement,
                             "needs two SMT siblings (hardware threads of one core) in "
                             f"this process's affinity mask; this machine's cores are "
                             f"{textout.cpu_groups(groups)}")
    raise ParameterError("placement", placement, "must be one of " + ", ".join(PLACEMENTS))


def check_params(mechanism: Any = "pipe", placement: Any = "same-cpu",
                 tasks: Any = "threads", iterations: Any = ITERATIONS.default,
                 warmup: Any = WARMUP.default,
                 working_set_kib: Any = 0, message_bytes: Any = 1,
                 timeout_s: Any = 10.0) -> dict[str, Any]:
    """Validate and normalise the parameters of :func:`run` (raises ParameterError)."""
    mech = validate.choice("mechanism", mechanism, MECHANISMS)
    place = validate.choice("placement", placement, PLACEMENTS)
    kind = validate.choice("tasks", tasks, TASKS)
    n = validate.integer("iterations", iterations, **ITERATIONS.bounds)
    warm = validate.integer("warmup", warmup, **WARMUP.bounds)
    ws = validate.integer("working_set_kib", working_set_kib, minimum=0, maximum=1 << 40)
    msg = validate.integer("message_bytes", message_bytes, minimum=1, maximum=MAX_MESSAGE)
    if msg != 1 and mech != "pipe":
        raise ParameterError("message_bytes", message_bytes,
                             "only the pipe mechanism carries a message; must be 1 for "
                             f"{mech}")
    timeout = validate.number("timeout_s", timeout_s, minimum=0.01, maximum=3600.0)
    # both sides' working sets, plus 16 bytes of samples and CPUs per round trip
    validate.memory_fits("working_set_kib", working_set_kib, 2 * ws + (16 * n) // 1024)
    cpu_a, cpu_b = choose_cpus(place)
    return {"mechanism": mech, "placement": place, "tasks": kind, "iterations": n,
            "warmup": warm, "working_set_kib": ws, "message_bytes": msg,
            "timeout_s": timeout, "cpu_a": cpu_a, "cpu_b": cpu_b}



# The checks of the sweeps and cross-checks built on run(), so that a build can judge a
# notebook's values before anything runs (threadcost.paper.prechecks) with the same bounds.

def check_choices(mechanisms: Sequence[Any], placements: Sequence[Any],
                  tasks: Sequence[Any]) -> None:
    """Every mechanism, placement and task kind of a sweep is one this module knows."""
    for place in placements:
        validate.choice("placements", place, PLACEMENTS)
    for mech in mechanisms:
        validate.choice("mechanisms", mech, MECHANISMS)
    for kind in tasks:
        validate.choice("tasks", kind, TASKS)


def check_sweep(mechanisms: Sequence[Any], placements: Sequence[Any], tasks: Sequence[Any],
                iterations: Any, warmup: Any, baseline_scale: Any = 1.0) -> float:
    """What ``sweep`` refuses (a placement this machine lacks is skipped, not refused);
    returns the baseline scale."""
    check_choices(mechanisms, placements, tasks)
    check_params("pipe", "unpinned", "threads", iterations, warmup)
    return float(validate.number("baseline_scale", baseline_scale, minimum=0.001,
                                 maximum=100.0))


def check_working_set_sweep(working_sets_kib: Any, tasks: Any, iterations: Any,
                            seconds_per_point: Any) -> tuple[list[int], float, int]:
    """What ``working_set_sweep`` refuses: (sizes, seconds per point, iterations)."""
    sizes = validate.integer_list("working_sets_kib", working_sets_kib, minimum=0,
                                  maximum=1 << 40, max_items=64)
    validate.memory_fits("working_sets_kib", working_sets_kib, 2 * max(sizes))
    seconds = validate.number("seconds_per_point", seconds_per_point, minimum=0.01,
                              maximum=3600)
    n_max = validate.integer("iterations", iterations, minimum=1, maximum=MAX_ITERATIONS)
    for kind in tasks:
        validate.choice("tasks", kind, TASKS)
    return sizes, float(seconds), n_max


def check_rounds(rounds: Any, iterations: Any, minimum: int = 100) -> tuple[int, int]:
    """The rounds and round trips of a cross-check (perf, per-sample timing)."""
    return (validate.integer("rounds", rounds, minimum=1, maximum=100),
            validate.integer("iterations", iterations, minimum=minimum,
                             maximum=MAX_ITERATIONS))


def check_placement_repeats(mechanisms: Any, repeats: Any, iterations: Any,
                            warmup: Any) -> dict[str, Any]:
    """What ``placement_repeats`` refuses."""
    return {"mechanisms": validate.choice_list("mechanisms", mechanisms, MECHANISMS),
            "repeats": validate.integer("repeats", repeats, minimum=1, maximum=1000),
            "iterations": validate.integer("iterations", iterations, minimum=100,
                                           maximum=MAX_ITERATIONS),
            "warmup": validate.integer("warmup", warmup, minimum=0, maximum=MAX_ITERATIONS)}
