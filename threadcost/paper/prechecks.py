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
from threadcost.experiments import parameters, specs
from threadcost.host import machine
from threadcost.store import datastore

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
    known = datastore.machines_with_runs()
    if not isinstance(wanted, str) or not FOLDER_NAME.fullmatch(wanted) or (
            wanted not in known and wanted != machine.machine_id()):
        listed = ", ".join(known[:8]) + (f" and {len(known) - 8} more" if len(known) > 8
                                         else "")
        raise ParameterError(f"{c.stem}: {name}", wanted,
                             "must be None (this machine) or a machine folder with stored "
                             f"runs ({listed or 'none stored'})")


def _family_checks(c: _Checks) -> None:
    """The checks the notebook's families declare (their specs' ``CHECKS``), each called
    as the notebook calls it."""
    for check in specs.checks_of(c.stem):
        if check.when is not None and not check.when(c.values):
            continue
        function = check.resolve()
        items = (c[check.arguments[check.each]] or [None]) if check.each else [None]
        for item in items:
            arguments: dict[str, Any] = {}
            for argument, source in check.arguments.items():
                if argument == check.each:
                    arguments[argument] = N(source, lambda _, i=item: i)
                elif isinstance(source, str):
                    arguments[argument] = N(source)
                elif isinstance(source, specs.Derived):
                    arguments[argument] = N(source.parameter, source.how)
                elif isinstance(source, specs.Computed):
                    arguments[argument] = source.how(c.values)
                else:
                    arguments[argument] = source.value(check.family)
            c(function, **arguments, **check.fixed)


PAGES: dict[str, Callable[[_Checks], None]] = {"00_introduction": _00, "06_claims": _06}


def check_all(stems: list[str], values: Mapping[str, Any]) -> None:
    """Each notebook in ``stems`` with ``values`` (its declared names; defaults for the
    rest): ParameterError (or LimitReached) naming the notebook's parameter."""
    saved = dict(ParameterError.aliases)
    try:
        for stem in stems:
            check = PAGES.get(stem, _family_checks)
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
