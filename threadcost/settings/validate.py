"""The one validation layer: every parameter is checked here before any C runs.

Used alike by the Python API, the CLI (which passes strings straight through)
and papermill parameters. Each check returns the normalised value or raises
:class:`~threadcost.errors.ParameterError` naming the parameter, the value and
what is allowed.
"""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Iterable, Sequence
from typing import Any

from threadcost.errors import ParameterError
from threadcost.host import cpus as cpu_sets
from threadcost.host import sysinfo
from threadcost.settings.parameter_input import preview


def _refused(name: str, value: Any, allowed: str) -> ParameterError:
    """The refusal of ``value``, shown bounded: a huge or deeply nested value is never
    rendered whole before it is shortened (threadcost.settings.parameter_input.preview)."""
    return ParameterError(name, preview(value), allowed)

# Numbers are written in ASCII: digits 0-9, an optional sign, no "_" separators, no
# Arabic-Indic or full-width digits (which Python's int() and float() would accept).
_INTEGER_TEXT = re.compile(r"[+-]?[0-9]+")
_NUMBER_TEXT = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")


def integer(name: str, value: Any, *, minimum: int | None = None,
            maximum: int | None = None) -> int:
    """An integer (an int, or a string of ASCII digits) within bounds.

    A float is refused even when whole (``1e3``, ``64.0``), as the CLI refuses the
    text ``1e3``: the same value gets the same answer from every entry point."""
    parsed: int
    if isinstance(value, bool):
        raise _refused(name, value, "must be an integer, not a boolean")
    if isinstance(value, numbers.Integral):
        parsed = int(value)
    elif isinstance(value, numbers.Real):
        raise _refused(name, value, _range_text(
            "must be an integer written without a decimal point or exponent", minimum,
            maximum))
    elif isinstance(value, str):
        if not _INTEGER_TEXT.fullmatch(value.strip()):
            raise _refused(name, value, _range_text(
                "must be an integer in ASCII digits (no '_', no exponent)", minimum, maximum))
        parsed = int(value.strip(), 10)
    else:
        raise _refused(name, value, f"must be an integer, not {type(value).__name__}")
    if (minimum is not None and parsed < minimum) or (maximum is not None and parsed > maximum):
        raise _refused(name, value, _range_text("must be an integer", minimum, maximum))
    return parsed


def _parse_number(name: str, value: Any, allowed: str) -> float:
    """A real number from a number or ASCII decimal text; else ParameterError."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real | str):
        raise _refused(name, value, allowed)
    if isinstance(value, str) and not _NUMBER_TEXT.fullmatch(value.strip()):
        raise _refused(name, value, allowed + " (ASCII digits, no '_')")
    return float(value)


def _range_text(head: str, minimum: int | None, maximum: int | None) -> str:
    if minimum is not None and maximum is not None:
        return f"{head} from {minimum:,} to {maximum:,}"
    if minimum is not None:
        return f"{head} >= {minimum:,}"
    if maximum is not None:
        return f"{head} <= {maximum:,}"
    return head


def integer_list(name: str, value: Any, *, minimum: int | None = None,
                 maximum: int | None = None, max_items: int = 1000,
                 unique: bool = True) -> list[int]:
    """A non-empty list of integers; a string may hold them comma-separated.

    No entry may be empty (``"100,"``), and with ``unique`` (the default: a repeated
    value would only measure the same thing twice) none may repeat."""
    items: Sequence[Any]
    if isinstance(value, str):
        items = value.split(",")
        if any(not v.strip() for v in items) and value.strip():
            raise _refused(name, value, "every comma-separated entry must be an "
                                 "integer (one is empty)")
        items = [v for v in items if v.strip()]
    elif isinstance(value, Iterable):
        items = list(value)
    else:
        items = [value]
    if not items:
        raise _refused(name, value, "must hold at least one integer")
    if len(items) > max_items:
        raise _refused(name, value, f"must hold at most {max_items} values")
    out = []
    for item in items:
        try:
            out.append(integer(name, item, minimum=minimum, maximum=maximum))
        except ParameterError as exc:
            raise _refused(name, value, f"every entry {exc.allowed}") from None
    if unique and len(set(out)) != len(out):
        twice = sorted({v for v in out if out.count(v) > 1})
        raise _refused(name, value, f"must not repeat a value ({twice[0]} is given "
                             "more than once)")
    return out


def choice(name: str, value: Any, allowed: Iterable[str]) -> str:
    options = list(allowed)
    if not isinstance(value, str) or value not in options:
        raise _refused(name, value, "must be one of " + ", ".join(options))
    return value


def choice_list(name: str, value: Any, allowed: Iterable[str]) -> list[str]:
    """A non-empty list of choices, without repeats, in the order given.

    Accepts a list/tuple/set or a comma-separated string ("pipe,futex").
    """
    options = list(allowed)
    items: list[Any]
    if isinstance(value, str):
        items = [v.strip() for v in value.split(",") if v.strip()]
    elif isinstance(value, list | tuple | set | frozenset):
        items = list(value)
    else:
        raise _refused(name, value, "must be a list of " + ", ".join(options))
    if not items:
        raise _refused(name, value, "must name at least one of " + ", ".join(options))
    out: list[str] = []
    for item in items:
        if not isinstance(item, str) or item not in options:
            raise _refused(name, value, "every entry must be one of " + ", ".join(options))
        if item not in out:
            out.append(item)
    return out


def fraction(name: str, value: Any) -> float:
    """A number from 0 to 1 inclusive."""
    parsed = _parse_number(name, value, "must be a number from 0 to 1")
    if not math.isfinite(parsed) or not 0.0 <= parsed <= 1.0:
        raise _refused(name, value, "must be a number from 0 to 1")
    return parsed


def number(name: str, value: Any, *, minimum: float, maximum: float) -> float:
    """A finite real number (or a decimal string) from ``minimum`` to ``maximum``."""
    allowed = f"must be a number from {minimum:g} to {maximum:g}"
    parsed = _parse_number(name, value, allowed)
    if not math.isfinite(parsed) or not minimum <= parsed <= maximum:
        raise _refused(name, value, allowed)
    return parsed


def memory_fits(name: str, value: Any, need_kib: int, *, share: float = 0.8) -> None:
    """Refuse a request for more than ``share`` of MemAvailable right now."""
    available = sysinfo.mem_available_kib()
    allowed = int(available * share)
    if need_kib > allowed:
        raise _refused(
            name, value,
            f"needs {need_kib / 1024:,.0f} MiB but only {allowed / 1024:,.0f} MiB "
            f"({share:.0%} of MemAvailable) may be used on this machine now")


def cpus(name: str, value: Any) -> list[int] | None:
    """A CPU list ("0", "0,1", "0-3,8", [0, 1]) inside this process's affinity mask.

    None, "" and "none" mean no pinning; "auto" is the first CPU this process may use.
    """
    if value is None or (isinstance(value, str) and value.strip().lower() in ("", "none")):
        return None
    if isinstance(value, str) and value.strip().lower() == "auto":
        return [cpu_sets.first()]
    mask = cpu_sets.usable()
    if isinstance(value, str) and re.fullmatch(r"\s*\d+\s*-\s*\d+\s*(,\s*\d+(\s*-\s*\d+)?\s*)*",
                                                value):
        ranges = [part.split("-") for part in value.replace(" ", "").split(",")]
        if any(len(r) == 2 and int(r[0]) > int(r[1]) for r in ranges):
            raise ParameterError(name, value, "a range must run from low to high (e.g. 0-3)")
        listed = integer_list(name, cpu_sets.parse_list(value.replace(" ", "")), minimum=0,
                              maximum=1 << 20, max_items=1 << 16)
    else:
        listed = integer_list(name, value, minimum=0, maximum=1 << 20, max_items=1 << 16)
    outside = [c for c in listed if c not in mask]
    if outside:
        raise _refused(
            name, value,
            f"CPUs {outside} are outside this process's affinity mask: it may use "
            f"{cpu_sets.in_words(mask)}")
    cpu_sets.check_settable(name, value, listed)
    return listed


FIBER_STACK_MIN_KIB = 16  # native/fibers.c's floor: its own mmap'd stacks, not pthread's


def stack_kib(name: str, value: Any, *, allow_default: bool = True) -> int:
    """A thread stack size in KiB (``allow_default``: 0 for the system default), at least
    this machine's smallest thread stack (sysinfo.thread_stack_min_kib: 16 KiB on x86-64,
    128 KiB on arm64); or, with ``allow_default=False``, a fiber's stack of at least
    16 KiB. Either is a whole number of pages."""
    page_kib = sysinfo.PAGE_SIZE // 1024
    if allow_default:
        floor = sysinfo.thread_stack_min_kib()
        why = "this machine's smallest thread stack, sysconf(_SC_THREAD_STACK_MIN)"
    else:
        floor, why = FIBER_STACK_MIN_KIB, "the fibers' smallest stack"
    minimum = 0 if allow_default else floor
    size = integer(name, value, minimum=minimum, maximum=1024 * 1024)
    if size == 0 and allow_default:
        return 0
    if size < floor:
        default = "0 (the system default) or " if allow_default else ""
        raise _refused(name, value, f"must be {default}at least {floor} KiB ({why})")
    if size % page_kib:
        raise _refused(
            name, value, f"must be a multiple of the page size ({page_kib} KiB)")
    return size


def one_cpu(name: str, value: Any, *, allow_none: bool) -> int | None:
    """One CPU of this process's affinity mask; "auto" is the first of them
    (:func:`threadcost.host.cpus.first`); None/"none" means no pinning when ``allow_none``."""
    if isinstance(value, str) and value.strip().lower() == "auto":
        return cpu_sets.first()
    pinned = cpus(name, value)
    if pinned is None and allow_none:
        return None
    if pinned is None or len(pinned) != 1:
        mask = cpu_sets.usable()
        raise ParameterError(name, value, "must be one CPU this process may use "
                             f"({cpu_sets.in_words(mask)}), or 'auto' "
                             f"(CPU {cpu_sets.first(mask)}, the first of them)"
                             + (", or None (no pinning)" if allow_none else ""))
    return pinned[0]
