"""What the claims' selectors share.

A selector is a function of a machine's stored runs that gives one
:class:`~threadcost.measured.measurement.Measurement` (or a
:class:`~threadcost.measured.measurement.Missing` saying why not): what a claim's reading
compares with its published value. The selectors sit beside the findings of the family
they read (:mod:`threadcost.findings.context_switch`, :mod:`.memory`, :mod:`.launch`,
:mod:`.cpu_bound`, :mod:`.brigade`, :mod:`.sleepers`, :mod:`.runtimes`,
:mod:`.peak_memory`, :mod:`.more_sources`); a selector used by one claim only may sit in
its record's module instead.
"""

from __future__ import annotations

from typing import Any

from threadcost.measured.measurement import Measurement, Missing

Select = Any  # a selector: stored runs -> Measurement | Missing

DEFAULT_STACK_BYTES = 8 * 1024 * 1024  # S0: ulimit -s 8192


def no_run(experiment: str, setup: str, where: str) -> Missing:
    return Missing(f"no stored {experiment.replace('_', ' ')} run with {setup} on this "
                   f"machine ({where})")


def at_setup(got: Measurement | Missing, where: str, **more: Any) -> Measurement | Missing:
    """The measurement with its setup in a few words (shown beside the value)."""
    if isinstance(got, Missing):
        return got
    return Measurement(**{**got.__dict__, "where": where, **more})


def holds_all(*items: Any) -> Any:
    """A parameter predicate: the stored list holds every item."""
    return lambda stored: isinstance(stored, list) and all(i in stored for i in items)
