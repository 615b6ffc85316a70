"""Memory per thread, part one: the counters' names and labels and the checks of
:func:`threadcost.experiments.thread_memory.run`'s parameters (before any C runs);
re-exported by :mod:`threadcost.experiments.thread_memory.run`. Loads no kernel, so the
views read the labels from here on a machine without the C build."""

from __future__ import annotations

from typing import Any

from threadcost.errors import ParameterError
from threadcost.experiments.parameters import declared
from threadcost.host import sysinfo
from threadcost.runsafety.syslimits import default_stack_kib
from threadcost.settings import validate

EXPERIMENT = "thread_memory"
EXPERIMENT_STACK = "thread_memory_stack"
EXPERIMENT_TOUCH = "thread_memory_touch"
# Defaults and ranges: the notebook parameters' (threadcost.experiments.parameters).
COUNTS, REPEATS = declared("memory_thread_counts"), declared("memory_repeats")
GRID_REPEATS = declared("memory_grid_repeats")
MAX_THREADS = int(COUNTS.maximum or 0)
MAX_REPEATS = int(REPEATS.maximum or 0)
SAFETY_KIB = 32  # stack a thread keeps untouched for its own frames, TLS and libc
S2_SWEEP = list(range(100, 1001, 50))  # claim C12's sweep
DEFAULT_COUNTS = list(COUNTS.default)
DEFAULT_STACK_SIZES = list(declared("memory_stack_sizes_kib").default)
DEFAULT_TOUCH_DEPTHS = list(declared("memory_touch_depths_kib").default)



# ---------------------------------------------------------------- validation

def check_address_space(name: str, value: Any) -> int | None:
    """None, or MiB of address space the measuring process may add (RLIMIT_AS)."""
    if value is None or (isinstance(value, str) and value.strip().lower() in ("", "none")):
        return None
    return validate.integer(name, value, minimum=1, maximum=1 << 30)


def effective_stack_kib(stack_kib: int) -> int:
    return stack_kib or default_stack_kib()


def check_touch(name: str, value: Any, stack_kib: int, max_threads: int) -> int:
    """Touch depth: below the stack size minus a safety margin, and N x touch
    must fit in memory."""
    touch = validate.integer(name, value, minimum=0, maximum=1024 * 1024)
    if touch == 0:
        return 0
    stack = effective_stack_kib(stack_kib)
    room = stack - SAFETY_KIB
    if touch > room:
        what = "the default stack" if stack_kib == 0 else "a stack"
        raise ParameterError(
            name, value,
            f"must be at most {max(room, 0):,} KiB for {what} of {stack:,} KiB (the "
            f"stack size minus a {SAFETY_KIB} KiB safety margin), else the thread "
            "would overflow its stack")
    page_kib = sysinfo.PAGE_SIZE // 1024
    validate.memory_fits(name, value, max_threads * (touch + page_kib))
    return touch


def check_params(thread_counts: Any = None, stack_kib: Any = 0, touch_kib: Any = 0,
                 pin: Any = None, repeats: Any = REPEATS.default,
                 address_space_mib: Any = None) -> dict[str, Any]:
    """Validate and normalise the sweep's parameters (raises ParameterError)."""
    counts = validate.integer_list("thread_counts",
                                   DEFAULT_COUNTS if thread_counts is None else thread_counts,
                                   **COUNTS.bounds)
    stack = validate.stack_kib("stack_kib", stack_kib)
    return {
        "thread_counts": counts,
        "stack_kib": stack,
        "touch_kib": check_touch("touch_kib", touch_kib, stack, max(counts)),
        "pin": validate.cpus("pin", pin),
        "repeats": validate.integer("repeats", repeats, **REPEATS.bounds),
        "address_space_mib": check_address_space("address_space_mib", address_space_mib),
    }
