"""Findings: every number the paper prints, as a named quantity computed once.

A finding is a :class:`Quantity`: a name that says its statistic
(``yardstick_memcpy_64kib_median_ns`` is a mean, ``launch_thread_median_ns`` a median), its
value and unit, a 95% interval (or the range the definition states), how many
independent repeats it rests on, a definition in words, the ids of the runs it
was read from and the machine they ran on. Pages, the headline, the abstract and
the claims read a finding by name and never recompute it:

>>> findings.get("yardstick_memcpy_64kib_median_ns")  # doctest: +SKIP
>>> findings.markdown("yardstick_memcpy_64kib_median_ns")  # '<span ...>613 ns</span>'

Each finding is one function of a machine's stored runs
(:class:`threadcost.measured.runs.Runs`), registered with :func:`quantity` in one
of this package's modules. :func:`get` caches what it computed per data folder,
machine and set of stored runs (a new run invalidates it). Nothing stored gives a
Quantity whose ``value`` is None and whose ``missing`` says why ("not measured on
this machine: ..."), never an exception.

A notebook that has just measured (and not yet stored) passes its results:
``get(name, results=[result])`` reads them in place of the stored runs of the same
experiments, as the claims layer does.
"""

from __future__ import annotations

import functools
import html
import importlib
import math
import os
import pkgutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from threadcost import paths
from threadcost.experiments import specs
from threadcost.findings import folder_cache
from threadcost.host import machine
from threadcost.measured.measurement import Measurement, Missing
from threadcost.measured.runs import MemoryRun, Runs, UnreadableRun
from threadcost.store import datastore


def number(x: float, fmt: str = ",.0f") -> str:
    """A number as the paper prints it: ``fmt`` is a format spec, or "auto" (three
    significant digits, at most two decimals, thousands separated: 4.48, 25.9, 650), or
    "sig3" (three significant digits: 0.114, 1.23)."""
    if fmt not in ("auto", "sig3"):
        return format(x, fmt)
    if x == 0:
        return "0"
    digits = max(0, 2 - math.floor(math.log10(abs(x))))
    return f"{x:,.{min(digits, 2) if fmt == 'auto' else digits}f}"


@dataclass(frozen=True)
class Quantity:
    """One named number of the paper, or why it was not measured here."""

    name: str
    value: float | None
    unit: str
    statistic: str  # "median", "mean over repeats", "slope", "computed" ...
    low: float | None = None
    high: float | None = None
    n: int = 0  # independent repeats (or samples, as the definition says)
    definition: str = ""
    run_ids: tuple[str, ...] = ()
    machine_id: str = ""
    missing: str | None = None  # why there is no value
    computed: bool = False  # computed (from limits, by scaling), not measured
    setup: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)  # parts a page may also print
    fmt: str = ",.0f"  # how the paper prints it (format spec or "auto", display units)
    scale: float = 1.0  # display value = value * scale
    display_unit: str = ""  # "" : the unit
    reads: str = ""  # which stored run(s) it reads, in words (``quantity``'s ``reads``)

    @property
    def pooled(self) -> bool:
        """Read from more than one stored run (the printed value says so)."""
        return len(self.run_ids) > 1

    def runs_words(self) -> str:
        """"pooled over 3 runs" (or "read from 2 runs") when the value reads more than one
        stored run, else "": what a page prints beside a number that more than one run
        could feed, so that a figure of the newest run is not read as its source."""
        if not self.pooled:
            return ""
        how = "pooled over" if self.reads.startswith(POOLED) else "read from"
        return f"{how} {len(self.run_ids)} runs"

    @property
    def measured(self) -> bool:
        return self.value is not None and math.isfinite(self.value)

    @property
    def run_id(self) -> str:
        return ", ".join(self.run_ids)

    def number(self) -> str:
        """The value as the paper prints it, without the unit."""
        if not self.measured:
            return "not measured"
        assert self.value is not None
        return number(self.value * self.scale, self.fmt)

    def text(self) -> str:
        """The value with its unit, as every page prints it; or "not measured on this
        machine (why)"."""
        if not self.measured:
            return f"not measured on this machine ({self.missing or 'no run stored'})"
        unit = self.display_unit or ("" if self.unit == "ratio" else self.unit)
        return f"{self.number()}{'' if unit == '%' else ' '}{unit}".rstrip()

    def interval_text(self) -> str:
        """"[low to high]" in display units, or "" when there is no interval."""
        if not self.measured or self.low is None or self.high is None:
            return ""
        return f"[{number(self.low * self.scale, self.fmt)} to " \
               f"{number(self.high * self.scale, self.fmt)}]"


@dataclass(frozen=True)
class Value:
    """What a finding function returns when the runs hold its number."""

    value: float
    low: float | None = None
    high: float | None = None
    n: int = 1
    runs: Iterable[Any] = ()  # datastore.Run objects, or run ids
    setup: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)
    definition: str = ""  # overrides the registered definition (e.g. a partial run)


@dataclass(frozen=True)
class Definition:
    name: str
    unit: str
    statistic: str
    definition: str
    compute: Callable[[Runs], Value | str]
    fmt: str = ",.0f"
    scale: float = 1.0
    display_unit: str = ""
    computed: bool = False
    reads: str = ""


# How a finding declares the run(s) it reads (``quantity``'s ``reads``, in words): the
# newest stored run of one experiment, or every stored run of one pooled.
NEWEST = "the newest"
POOLED = "pooled over"


def newest(experiment: str) -> str:
    """``reads`` of a finding read from the newest stored run of ``experiment``."""
    return f"{NEWEST} {experiment} run"


def pooled(experiment: str) -> str:
    """``reads`` of a finding that pools every stored run of ``experiment``."""
    return f"{POOLED} every stored {experiment} run"


REGISTRY: dict[str, Definition] = {}


def quantity(name: str, unit: str, statistic: str, definition: str, fmt: str = ",.0f",
             scale: float = 1.0, display_unit: str = "", computed: bool = False, *,
             reads: str) -> Callable[[Callable[[Runs], Value | str]],
                                     Callable[[Runs], Value | str]]:
    """Register a finding: ``fn(runs) -> Value`` or a string saying what is missing.
    ``reads`` says which stored run(s) it reads (:func:`newest`, :func:`pooled`, or
    words starting like them: "the newest launch and sleepers runs")."""
    if not reads.startswith((NEWEST, POOLED)):
        raise ValueError(f"finding {name!r}: reads={reads!r} must start with "
                         f"{NEWEST!r} or {POOLED!r}")

    def register(fn: Callable[[Runs], Value | str]) -> Callable[[Runs], Value | str]:
        if name in REGISTRY:
            raise ValueError(f"finding {name!r} is defined twice")
        REGISTRY[name] = Definition(name, unit, statistic, definition, fn, fmt, scale,
                                    display_unit, computed, reads)
        return fn
    return register


def _ids(runs: Iterable[Any]) -> tuple[str, ...]:
    out = []
    for r in runs:
        out.append(r if isinstance(r, str) else str(r.meta["run_id"]))
    return tuple(dict.fromkeys(out))


def compute(name: str, runs: Runs) -> Quantity:
    """The finding ``name`` from these runs (no cache): a selector of the claims layer
    and a notebook's unsaved results come through here."""
    _load_modules()
    if name not in REGISTRY:
        raise KeyError(f"no finding named {name!r} (known: {', '.join(sorted(REGISTRY))})")
    d = REGISTRY[name]
    base = Quantity(name=name, value=None, unit=d.unit, statistic=d.statistic,
                    definition=d.definition, machine_id=runs.machine_id, fmt=d.fmt,
                    scale=d.scale, display_unit=d.display_unit, computed=d.computed,
                    reads=d.reads)
    try:
        got = d.compute(runs)
    except UnreadableRun as exc:  # the run it would read could not be read: say which
        return replace(base, missing=str(exc))
    except (KeyError, ValueError, TypeError, IndexError, ZeroDivisionError, AttributeError,
            datastore.DataError) as exc:
        # a stored run older than the finding's definition: say so, never raise
        return replace(base, missing=f"the stored runs cannot give it ({type(exc).__name__}: "
                                     f"{exc})")
    if isinstance(got, str):
        return replace(base, missing=_in_words(got))
    if got.value is None or not math.isfinite(float(got.value)):
        return replace(base, missing="the stored value is not a finite number",
                       run_ids=_ids(got.runs))
    return replace(base, value=float(got.value), low=_num(got.low), high=_num(got.high),
                   n=int(got.n), run_ids=_ids(got.runs), setup=dict(got.setup),
                   extra=dict(got.extra), definition=got.definition or d.definition)


@functools.cache
def _experiment_names() -> Any:
    import re

    names = sorted((e.name for e in specs.experiments() if "_" in e.name), key=len, reverse=True)
    return re.compile(r"(?<![\w/.-])(?:" + "|".join(map(re.escape, names)) + r")(?![\w/-])")


def _in_words(text: str) -> str:
    """A reason a finding is missing, each experiment's name in words ("no thread limits
    run stored"): the page prints it to a reader (a run's folder name is kept)."""
    return _experiment_names().sub(lambda m: m.group(0).replace("_", " "), text)


def _num(x: Any) -> float | None:
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


class _Folder:
    """One machine folder's stored runs (read when a finding first needs them) and the
    findings computed from them so far (kept across processes: :func:`get_many`)."""

    def __init__(self, root: Path, machine_id: str) -> None:
        self.root, self.machine_id = root, machine_id
        self._runs: Runs | None = None
        self.done: dict[str, Quantity] = {}
        self.kept_key: str | None = None  # the key they are kept under (folder_cache)
        self._looked_up = False

    @property
    def runs(self) -> Runs:
        if self._runs is None:
            self._runs = Runs.load(self.machine_id, self.root)
        return self._runs

    def look_up_kept(self) -> None:
        """Take the findings another process computed from the same folder (once)."""
        if self._looked_up or folder_cache.directory() is None:
            return
        self._looked_up = True
        self.kept_key = folder_cache.key(_KEPT, self.root, self.machine_id)
        if self.kept_key is None:
            return
        found, kept = folder_cache.load(_KEPT, self.kept_key, _KEPT_TYPES)
        if found and isinstance(kept, dict):
            for name, q in kept.items():
                if isinstance(q, Quantity):
                    self.done.setdefault(name, q)

    def keep(self) -> None:
        """Keep what is computed so far for other processes, when the folder is as it was
        when they were looked up."""
        if self.kept_key is not None and \
                folder_cache.key(_KEPT, self.root, self.machine_id) == self.kept_key:
            folder_cache.store(_KEPT, self.kept_key, dict(self.done), _KEPT_TYPES)


_KEPT = "findings"
_KEPT_TYPES = {"Quantity": Quantity}
_CACHE: dict[tuple[str, str, tuple[str, ...]], _Folder] = {}
# A page reads its own machine's findings, and the claims page every committed machine's
# (its "across machines" section): a few machines' sets are kept, each machine folder's
# newest set only, so drawing another machine's column does not evict the page's own.
_CACHE_MACHINES = 8


def _root(data_dir: str | Path | None, machine_id: str | None = None) -> Path:
    return Path(data_dir) if data_dir is not None else paths.data_dir_for(machine_id)


def _listing(root: Path, mid: str) -> tuple[str, ...]:
    try:
        return tuple(sorted(os.listdir(root / mid)))
    except OSError:
        return ()


_RENDERED_MACHINE: list[str] = []  # set while a notebook draws another machine's runs


def use_machine(machine_id: str | None) -> None:
    """Make ``machine_id`` the default machine of every finding read in this process
    (a notebook drawing a stored machine folder); None: this machine again."""
    _RENDERED_MACHINE[:] = [machine_id] if machine_id else []


@functools.cache
def _measuring_machine() -> str:
    return machine.machine_id()  # the same for the life of a process


def _this_machine() -> str:
    return _RENDERED_MACHINE[0] if _RENDERED_MACHINE else _measuring_machine()


def _cached(data_dir: str | Path | None, machine_id: str | None) -> _Folder:
    """One machine folder's runs and the findings computed from them so far; a new run
    folder (or a removed one) starts afresh."""
    mid = machine_id or _this_machine()
    root = _root(data_dir, mid)
    key = (str(root.resolve()), mid, _listing(root, mid))
    entry = _CACHE.get(key)
    if entry is None:
        entry = _Folder(root, mid)
        for old in [k for k in _CACHE if k[:2] == key[:2]]:  # that folder's older set
            del _CACHE[old]
        while len(_CACHE) >= _CACHE_MACHINES:  # the oldest machine's
            del _CACHE[next(iter(_CACHE))]
        _CACHE[key] = entry
    return entry


def runs_of(data_dir: str | Path | None = None, machine_id: str | None = None,
            results: list[Any] | None = None,
            fingerprint: dict[str, Any] | None = None) -> Runs:
    """The stored runs of one machine (this one by default), with ``results`` (unsaved
    Results) in place of the stored runs of their experiments."""
    runs = _cached(data_dir, machine_id).runs
    if results:
        runs = _stored_back(runs.with_results(list(results), fingerprint or {}), runs)
    return runs


def _stored_back(runs: Runs, stored: Runs) -> Runs:
    """``runs`` with each in-memory result that is a stored run read back (a notebook
    drawing stored runs) replaced by that stored run: a value then names the run it was
    read from, not "this notebook's run (unsaved)"."""
    def same(memory: Any, run: Any) -> bool:
        return (run.experiment == memory.experiment and run.meta.get("params") ==
                memory.meta.get("params") and run.meta.get("summary") ==
                memory.meta.get("summary"))

    out = []
    for run in runs.runs:
        if isinstance(run, MemoryRun):
            run = next((r for r in stored.runs if same(run, r)), run)
        out.append(run)
    return replace(runs, runs=tuple(out))


def of_results(name: str, results: list[Any], machine_id: str = "") -> Quantity:
    """The finding computed from these (unsaved) results alone."""
    fresh = Runs(machine_id or "this notebook",
                 tuple(MemoryRun.of(r, i, {}) for i, r in enumerate(results)))
    try:  # a stored run read back names its id
        stored: Runs | None = _cached(None, machine_id or None).runs
    except (OSError, ValueError, KeyError, datastore.DataError):
        stored = None
    return compute(name, fresh if stored is None else _stored_back(fresh, stored))


def of_this_run(name: str, results: list[Any], machine_id: str = "") -> Quantity:
    """The finding from these results alone, under its own name (``NAME_this_run``): what
    a figure of this run draws, beside the finding pooled over every stored run."""
    return replace(of_results(name, results, machine_id), name=f"{name}_this_run")


def get(name: str, data_dir: str | Path | None = None, machine_id: str | None = None,
        results: list[Any] | None = None) -> Quantity:
    """The finding ``name`` on one machine (this one by default), from its stored runs
    (plus ``results``, not yet stored, in place of their experiments' stored runs).
    Computed once per set of stored runs."""
    if results:
        return compute(name, runs_of(data_dir, machine_id, results))
    entry = _cached(data_dir, machine_id)
    if name not in entry.done:
        entry.look_up_kept()
    if name not in entry.done:
        entry.done[name] = compute(name, entry.runs)
    return entry.done[name]


def get_many(names: Iterable[str], data_dir: str | Path | None = None,
             machine_id: str | None = None) -> dict[str, Quantity]:
    """Several findings of one machine's stored runs at once (:func:`get` each): what is
    computed here is kept for the other processes of a paper build, which read the same
    folder (``threadcost.findings.folder_cache``)."""
    entry = _cached(data_dir, machine_id)
    wanted = list(dict.fromkeys(names))
    if any(name not in entry.done for name in wanted):
        entry.look_up_kept()
    missing = [name for name in wanted if name not in entry.done]
    for name in missing:
        entry.done[name] = compute(name, entry.runs)
    if missing:
        entry.keep()
    return {name: entry.done[name] for name in wanted}


def all(data_dir: str | Path | None = None,
        machine_id: str | None = None) -> dict[str, Quantity]:
    """Every registered finding on one machine, each computed once per set of stored runs."""
    _load_modules()
    return get_many(REGISTRY, data_dir, machine_id)


def clear_cache() -> None:
    _CACHE.clear()


# --- printing: every printed number says which finding it is ------------------------------

class Marked(str):
    """Text the project's own code wrote around findings' spans (``tag`` returns one):
    a table keeps the spans of a Marked cell and escapes every other cell whole, so a
    value read from data can never carry a mark."""

    def __add__(self, other: str) -> Marked:  # plain text after a span: still Marked
        return Marked(str.__add__(self, other))


def tag(name: str, number_text: str, shown: str | None = None,
        runs: Iterable[str] = ()) -> Marked:
    """``<span data-quantity="NAME" data-value="NUMBER" data-runs="RUN; ...">shown</span>``:
    the printed ``number_text`` of finding ``name`` (``shown`` defaults to it: a table
    whose header holds the unit prints the number alone), and the ids of the stored
    runs it was read from (``data-runs``; "machine fingerprint" for what the machine
    recorded, "this notebook" for results not yet stored)."""
    ids = "; ".join(dict.fromkeys(str(r) for r in runs))
    said = f' data-runs="{html.escape(ids)}"' if ids else ""  # none: names no run
    return Marked(f'<span data-quantity="{html.escape(name)}" '
                  f'data-value="{html.escape(number_text)}"{said}>'
                  f"{html.escape(shown if shown is not None else number_text)}</span>")


def parameter(name: str, shown: str) -> Marked:
    """A number the study chose, not measured (a parameter: ``shown`` is its value as the
    page prints it), marked with the parameter's name: ``<span data-parameter="NAME">``."""
    return Marked(f'<span data-parameter="{html.escape(name)}">{html.escape(shown)}</span>')


def published(claim_id: str, shown: str) -> Marked:
    """A number a source published (``shown`` as the page quotes it), marked with the claim
    it belongs to: ``<span data-published="C31">547 ns</span>``; measured here it is not."""
    return Marked(f'<span data-published="{html.escape(claim_id)}">{html.escape(shown)}</span>')


def span(q: Quantity, text: str | None = None) -> str:
    """The finding as every page prints it ("613 ns"), in its span (Markdown and the
    rendered HTML keep the attributes), or the plain "not measured on this machine"
    text when there is no value. ``text`` replaces what is shown; it must contain the
    printed number."""
    if not q.measured:
        return html.escape(q.text())
    shown = q.text() if text is None else text
    if q.pooled:
        shown = f"{shown} ({q.runs_words()})"
    return tag(q.name, q.number(), shown, q.run_ids)


def markdown(name: str | Quantity, data_dir: str | Path | None = None,
             machine_id: str | None = None, results: list[Any] | None = None,
             bold: bool = False) -> str:
    """The finding's printed value with its unit, wrapped in its span, for Markdown."""
    q = name if isinstance(name, Quantity) else get(name, data_dir, machine_id, results)
    out = span(q)
    return f"**{out}**" if bold and q.measured else out


def show(name: str | Quantity, data_dir: str | Path | None = None,
         machine_id: str | None = None, results: list[Any] | None = None,
         text: str | None = None) -> str:
    """The finding as a page prints it, marked with its name (``<span
    data-quantity="switch_thread_median_ns" data-value="2,465">2,465 ns</span>``): the one
    way a page, a table cell or the abstract prints a number (``text`` replaces the shown
    text and must contain the number). Only the project's code makes the span; a value
    read from data is escaped."""
    q = name if isinstance(name, Quantity) else get(name, data_dir, machine_id, results)
    return span(q, text)


def ratio(a: str | Quantity, b: str | Quantity, data_dir: str | Path | None = None,
          machine_id: str | None = None, fmt: str = ".1f") -> tuple[float, str] | None:
    """The ratio of two findings (``a / b``, from their values) and its marked text
    ("<span data-quantity="A/B" ...>4.0x</span>"): a derived number is named by the two
    findings it divides, so two pages that print it print one value. None when either
    is missing."""
    qa = a if isinstance(a, Quantity) else get(a, data_dir, machine_id)
    qb = b if isinstance(b, Quantity) else get(b, data_dir, machine_id)
    if not (qa.measured and qb.measured) or not qb.value:
        return None
    assert qa.value is not None and qb.value is not None
    value = qa.value / qb.value
    text = f"{number(value, fmt)}x"
    ids = tuple(dict.fromkeys(qa.run_ids + qb.run_ids))
    if qa.pooled or qb.pooled:
        text += f" (read from {len(ids)} runs)"
    return value, tag(f"{qa.name}/{qb.name}", number(value, fmt), text, ids)


# --- the claims layer reads findings ------------------------------------------------------

def measurement(name: str | Quantity, runs: Runs | None = None,
                **overrides: Any) -> Measurement | Missing:
    """A finding as the claims layer's ``Measurement`` (or ``Missing`` with the reason):
    a selector that judges a quantity the paper prints reads it here, so the claim and
    the pages print one value. ``overrides`` set Measurement fields (``how``, ``where``,
    ``unjudgeable`` ...); ``how`` defaults to the finding's definition."""
    if isinstance(name, Quantity):
        q = name
    else:
        if runs is None:
            raise ValueError("measurement(): give the runs, or a computed Quantity")
        q = compute(name, runs)
    if not q.measured or q.value is None:
        return Missing(q.missing or f"{q.name} not measured on this machine")
    fields: dict[str, Any] = {"low": q.low, "high": q.high, "repeats": max(q.n, 1),
                              "setup": dict(q.setup), "run_id": q.run_id,
                              "how": q.definition, "computed": q.computed}
    fields.update(overrides)
    return Measurement(q.value, q.unit, **fields)


_LOADED = False


def _load_modules() -> None:
    """Import every module of this package once: each registers its findings with
    :func:`quantity` as it is imported, so a new module is found without a list."""
    global _LOADED
    if _LOADED:
        return
    _LOADED = True
    for info in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{info.name}")
