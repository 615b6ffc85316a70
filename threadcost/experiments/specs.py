"""Every experiment family's spec, discovered: the one place the study learns what it
measures.

A family is a package under ``threadcost/experiments/`` whose ``spec.py`` declares, once,
as plain data (it loads no kernel and imports none of the family's run code):

- its experiments (:class:`Experiment`): the name a stored run's ``experiment`` field
  says, the module of the family that produces it, the tables a run of it holds with the
  kind of each column (:class:`Table`), the figures its notebook draws from it;
- its notebook parameters (:class:`threadcost.settings.parameter_input.Param`, made by
  :func:`param`): default, range, unit and the argument each one feeds;
- the checks its notebook's values go through before anything runs (:class:`Check`),
  with the arguments each check is fed from those parameters.

A new family is a new package with a ``spec.py``: nothing central names it. Read by the
parameters (:mod:`threadcost.experiments.parameters`), the build's prechecks
(:mod:`threadcost.paper.prechecks`), the store (a stored run older than its experiment's
tables reads as "not measured on this machine"; a column's number is checked against its
kind) and the paper (the code a page links to: :func:`module_path`).

Runs a notebook stores only to draw from them again (``auxiliary``) carry their own
names, so the claims, which look runs up by experiment, never mistake them for the runs
they judge. ``retired`` experiments are no longer measured; their runs stay readable in
older machine folders.
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

from threadcost.settings.parameter_input import Param

PACKAGE = "threadcost.experiments"

def columns(base: Mapping[str, str] | None = None, /, drop: str = "",
            **kinds: str) -> dict[str, str]:
    """Columns by kind, ``columns(time="create_ns join_ns", count="n")``: column -> kind.
    With ``base``: another table's columns, with these (and without those in ``drop``)."""
    dropped = drop.split()
    out = {c: k for c, k in (base or {}).items() if c not in dropped}
    out.update({column: kind for kind, names in kinds.items() for column in names.split()})
    return out


@dataclass(frozen=True)
class Table:
    """A table a run stores, with the kind of each of its columns (one of
    :data:`threadcost.results.table_checks.KINDS`: what its numbers can be, against which
    a number read back is checked). ``always``: every run of the experiment holds it
    (else only some runs do)."""

    name: str
    columns: Mapping[str, str]
    always: bool = True


@dataclass(frozen=True)
class Experiment:
    """One experiment: the name its runs carry and where everything about it lives."""

    name: str
    module: str  # the module that produces it: "<family>.<module>" under threadcost.experiments
    tables: tuple[Table, ...] = ()
    figures: tuple[str, ...] = ()  # figure stems drawn from it (figures/<stem>.svg)
    auxiliary: bool = False  # stored only so its notebook can be drawn again
    retired: bool = False  # no longer measured; older runs stay readable
    notebook: str = ""  # the notebook that measures it: its family's

    @property
    def table_names(self) -> tuple[str, ...]:
        """The tables every run of it holds."""
        return tuple(t.name for t in self.tables if t.always)


@dataclass(frozen=True)
class Derived:
    """An argument the notebook derives from one of its parameters (``tasks_warmup // 10``):
    a refusal of it names that parameter and the value the reader wrote."""

    parameter: str
    how: Callable[[Any], Any]


@dataclass(frozen=True)
class Computed:
    """An argument computed from several of the notebook's values (no one parameter to
    name in a refusal)."""

    how: Callable[[Mapping[str, Any]], Any]


@dataclass(frozen=True)
class Constant:
    """A constant of the family's run code (``"sleepers.VARIANTS"``, or another family's:
    ``"context_switch.checks.MECHANISMS"``), read when the check runs, so the spec imports
    none of it."""

    where: str
    how: Callable[[Any], Any] = list

    def value(self, family_name: str) -> Any:
        """The constant, read from its module."""
        return self.how(_attribute(family_name, self.where))


Argument = str | Derived | Computed | Constant | Any  # str: the parameter it is fed by


@dataclass(frozen=True)
class Check:
    """A check the notebook's values go through before anything runs: ``function`` of the
    family (``"checks.check_params"``) called with ``arguments`` (argument -> the parameter
    feeding it, a :class:`Derived`, :class:`Computed` or :class:`Constant` one, or
    ``fixed`` literals). ``each``: an argument fed one item at a time of its list
    parameter (a call per item). ``when``: the check runs only if true of the values."""

    function: str  # "module.function" of the family, or "family.module.function"
    arguments: Mapping[str, Argument] = field(default_factory=dict)
    fixed: Mapping[str, Any] = field(default_factory=dict)
    each: str = ""
    when: Callable[[Mapping[str, Any]], bool] | None = None
    family: str = ""  # filled in by :func:`family`

    def fed(self) -> dict[str, str]:
        """argument -> the parameter that feeds it as written (not derived)."""
        return {a: p for a, p in self.arguments.items() if isinstance(p, str)}

    def resolve(self) -> Callable[..., Any]:
        """The check itself (imports the module that defines it)."""
        found: Callable[..., Any] = _attribute(self.family, self.function)
        return found


@dataclass(frozen=True)
class Family:
    """A family: its notebook, experiments, parameters and checks."""

    name: str
    notebook: str
    experiments: tuple[Experiment, ...]
    parameters: tuple[Param, ...] = ()
    checks: tuple[Check, ...] = ()
    explorers: bool = False  # its notebook draws live widgets (``interactive``)
    title: str = ""  # the notebook's short title, in the introduction's reading guide
    about: str = ""  # what it measures, in a line


def param(name: str, annotation: str, default: Any, doc: str, unit: str = "",
          minimum: float | None = None, maximum: float | None = None,
          choices: tuple[str, ...] = (), *, api: str = "", feeds: tuple[str, ...] = (),
          narrowed: bool = False, notebooks: tuple[str, ...] = ()) -> Param:
    """A notebook parameter of a family (its notebook filled in by :func:`family`); ``api``:
    the argument it feeds where that is not its name without the family's prefix;
    ``feeds``: the functions whose argument takes its default (``"run.run"``,
    ``"checks.check_params:n"`` where that argument is not ``api``);
    ``narrowed``: the machine (memory, pids) or another argument (a stack size, the
    tasks) may narrow its maximum."""
    return Param(name, annotation, default, notebooks, doc, unit, minimum, maximum, choices,
                 api, feeds, narrowed)


def family(name: str, notebook: str, experiments: tuple[Experiment, ...],
           parameters: tuple[Param, ...] = (), checks: tuple[Check, ...] = (),
           prefixes: tuple[str, ...] = (), explorers: bool = False, title: str = "",
           about: str = "") -> Family:
    """A family's spec: its parameters and experiments told their notebook, each
    parameter the argument it feeds (its name less the first of ``prefixes`` it starts
    with, unless declared), each check its family; ``explorers``: its notebook draws
    live widgets when asked (the ``interactive`` parameter); ``title`` and ``about``: its
    row of the introduction's reading guide."""

    def api(p: Param) -> str:
        if p.api_name:
            return p.api_name
        for prefix in prefixes:
            if p.name.startswith(prefix):
                return p.name[len(prefix):]
        return p.name

    return Family(
        name, notebook,
        tuple(dataclasses.replace(e, notebook=e.notebook or notebook) for e in experiments),
        tuple(dataclasses.replace(p, notebooks=p.notebooks or (notebook,), api_name=api(p))
              for p in parameters),
        tuple(dataclasses.replace(c, family=name) for c in checks), explorers, title, about)


def fed_function(family_name: str, feed: str) -> tuple[Callable[..., Any], str]:
    """A parameter's feed (``"run.run"``, ``"checks.check_params:n"``): the function and
    the argument's name ("" when it is the parameter's api name)."""
    where, _, argument = feed.partition(":")
    found: Callable[..., Any] = _attribute(family_name, where)
    return found, argument


def module_of(family_name: str, module: str) -> ModuleType:
    """A module of a family's run code (``module_of("launch", "run")``)."""
    return importlib.import_module(f"{PACKAGE}.{family_name}.{module}")


def _attribute(family_name: str, where: str) -> Any:
    """``module.name`` of the family ``family_name``, or ``family.module.name``."""
    parts = where.split(".")
    if len(parts) == 3:
        family_name = parts.pop(0)
    module, name = parts
    return getattr(module_of(family_name, module), name)


@cache
def families() -> tuple[Family, ...]:
    """Every family, in the order of their notebooks."""
    found = []
    for path in Path(__file__).parent.glob("*/spec.py"):  # a folder with a spec is a family
        spec = importlib.import_module(f"{PACKAGE}.{path.parent.name}.spec")
        found.append(spec.FAMILY)
    return tuple(sorted(found, key=lambda f: (f.notebook, f.name)))


class UnknownExperiment(KeyError):
    """An experiment name no family's spec declares."""


@cache
def _by_name() -> dict[str, Experiment]:
    return {e.name: e for f in families() for e in f.experiments}


def experiments() -> tuple[Experiment, ...]:
    """Every experiment, by notebook, in the order its family declares them."""
    return tuple(_by_name().values())


def known(name: str) -> bool:
    """Whether a family declares experiment ``name``."""
    return name in _by_name()


def get(name: str) -> Experiment:
    """The declared experiment ``name``; UnknownExperiment names the known ones."""
    try:
        return _by_name()[name]
    except KeyError:
        raise UnknownExperiment(
            f"experiment {name!r} is declared by no family's spec "
            f"(threadcost/experiments/<family>/spec.py; known: "
            f"{', '.join(sorted(_by_name()))})") from None


def module_path(name: str) -> str | None:
    """The source file of the module that produces ``name``, relative to the repository
    (``threadcost/experiments/launch/run.py``); None when not declared."""
    entry = _by_name().get(name)
    if entry is None:
        return None
    return f"threadcost/experiments/{entry.module.replace('.', '/')}.py"


def of_notebook(stem: str) -> list[Experiment]:
    """The experiments a notebook measures, in the order declared."""
    return [e for e in experiments() if e.notebook == stem]


def missing_tables(name: str, tables: list[str] | tuple[str, ...]) -> list[str]:
    """Tables every run of ``name`` holds that a stored run lacks (a run saved before its
    experiment grew them)."""
    entry = _by_name().get(name)
    if entry is None:
        return []
    return [t for t in entry.table_names if t not in tables]


def column_kinds(name: str, table: str) -> dict[str, str]:
    """The kind of each column of table ``table`` of a run of ``name``, as its spec
    declares them (``{"create_ns": "time", ...}``); empty for a table not declared (its
    columns are then judged by their names)."""
    entry = _by_name().get(name)
    if entry is None:
        return {}
    for t in entry.tables:
        if t.name == table:
            return dict(t.columns)
    return {}


def checks_of(notebook: str) -> list[Check]:
    """The checks a notebook's values go through, family by family."""
    return [c for f in families() if f.notebook == notebook for c in f.checks]
