"""Measure and store, or read back what was stored: the one door a notebook takes to its runs.

Every measuring cell of a notebook goes through :meth:`Store.get`::

    store = stored.Store(measure, save, data_dir, machine_id)
    sweep = store.get("thread_memory", lambda: thread_memory.run(...))

- ``measure=True`` (``make paper``, JupyterLab): the experiment runs, the run is
  saved under ``data/<machine>/<run>/`` (``save=True``) and then **read back**, so
  the page is drawn from exactly what was stored; with ``save=False`` the page is
  drawn from the result in memory.
- ``measure=False`` (``threadcost paper --machine ID``): nothing runs. The newest
  stored run of that experiment on machine ``ID`` stands in for it. A machine whose
  runs are older than the experiment has none: ``get`` returns a :class:`MissingRun`
  placeholder, and every cell that touches it shows one line, "Not measured on this
  machine", instead of failing (:func:`install_cell_guard`).

A run carries a ``label`` (by default its experiment's name) so that one notebook
can store several runs of one experiment (one per allocator, say) and find each
again; runs stored before labels existed are found by experiment and ``match``
(parameters that must be equal).
"""

from __future__ import annotations

import ast
import dataclasses
import html
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd

from threadcost import findings, paths, vocabulary
from threadcost.experiments import specs
from threadcost.host import machine
from threadcost.measured.runs import UnreadableRun
from threadcost.results import Result
from threadcost.runsafety import isolate
from threadcost.store import datastore
from threadcost.textout import NOT_MEASURED


class NotMeasured(Exception):
    """A cell read a run that this machine's folder does not hold."""

    def __init__(self, label: str, reason: str) -> None:
        self.label, self.reason = label, reason
        super().__init__(f"{label}: {reason}")


class MissingRun:
    """Stands for a run that was not measured on this machine. False in a test;
    reading anything from it raises :class:`NotMeasured` (shown as one line)."""

    def __init__(self, label: str, reason: str) -> None:
        self._label, self._reason = label, reason

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        raise NotMeasured(self._label, self._reason)

    def __getitem__(self, key: Any) -> Any:
        raise NotMeasured(self._label, self._reason)

    def __iter__(self) -> Any:
        raise NotMeasured(self._label, self._reason)

    def __len__(self) -> int:
        raise NotMeasured(self._label, self._reason)

    def __str__(self) -> str:  # printed or formatted into a page's text: the one line
        raise NotMeasured(self._label, self._reason)

    def __format__(self, spec: str) -> str:
        raise NotMeasured(self._label, self._reason)

    def __bool__(self) -> bool:
        return False

    def __repr__(self) -> str:
        return f"<{NOT_MEASURED}: {self._label}>"


def present(*results: Any) -> list[Any]:
    """The results that were measured (neither None nor :class:`MissingRun`)."""
    return [r for r in results if r is not None and not isinstance(r, MissingRun)]


def not_measured_html(reason: str = "") -> str:
    why = f": {html.escape(reason)}" if reason else ""
    return f'<p class="tc-not-measured"><em>{NOT_MEASURED}</em>{why}.</p>'


def skipped(summary: Any) -> str | None:
    """Why a stored run's experiment did not run here (its ``summary["skipped"]``), or
    None when it ran: a skipped run reads back cleanly and its readers say "not run
    here: <why>", never 0 and never damage."""
    why = summary.get("skipped") if isinstance(summary, dict) else None
    return why if isinstance(why, str) and why else None  # (a list: parts not run)


def _params_match(params: dict[str, Any], match: dict[str, Any] | None) -> bool:
    return all(params.get(k) == v for k, v in (match or {}).items())


def _short(commit: str | None) -> str:
    return commit[:10] if commit else "unrecorded"


class Store:
    """Where a notebook's runs come from: measured now, or read from a machine folder."""

    def __init__(self, measure: bool = True, save: bool = True,
                 data_dir: str | Path | None = None, machine_id: str | None = None) -> None:
        self.measure = bool(measure)
        self.save = bool(save)
        # measuring: runs are written to (and read back from) your folder; drawing a
        # machine: its runs are read from yours, or the committed reference's
        self.data_dir = paths.output_folder(data_dir) if data_dir is not None else (
            paths.data_dir() if self.measure
            else paths.data_dir_for(machine_id or machine.machine_id()))
        if self.measure:
            self.fingerprint = machine.fingerprint()
            here = machine.machine_id(self.fingerprint)
            if machine_id not in (None, here):
                raise ValueError(f"machine_id={machine_id!r}: a notebook measures this machine "
                                 f"({here}); set measure=False to render another "
                                 "machine's stored runs")
            self.machine_id = here
            self._runs: list[datastore.Run] = []
            self._unreadable: list[datastore.Skipped] = []
        else:
            self.machine_id = machine_id or machine.machine_id()
            self._runs, self._unreadable = datastore.scan(self.data_dir, self.machine_id)
            if not self._runs:
                known = sorted({r.path.parent.name
                                for r in datastore.list_runs(data_dir=self.data_dir)})
                raise ValueError(f"machine_id={self.machine_id!r}: no stored run under "
                                 f"{self.data_dir} (machine folders with runs: "
                                 f"{', '.join(known) or 'none'})")
            self.fingerprint = dict(self._runs[-1].meta.get("machine") or {})
            install_cell_guard()
        findings.use_machine(None if self.measure else self.machine_id)

    # ---------------------------------------------------------------- runs
    def get(self, label: str, measure: Callable[[], Result | None], *,
            experiment: str | None = None, match: dict[str, Any] | None = None,
            announce: bool = True) -> Any:
        """The run ``label``: measured (and stored, and read back) or read from the store.

        ``experiment``: the name the run is stored under when it is not the
        result's own (an auxiliary run, see :mod:`threadcost.experiments.specs`;
        default: ``label`` when it names a registered experiment). ``match``:
        parameters an unlabelled older run must have to stand for this one.
        Returns a Result, None (when ``measure`` returned None) or :class:`MissingRun`.
        """
        if self.measure:
            # a forkserver started early (make paper) has imported its modules first: no
            # measurement runs beside it
            isolate.wait_forkserver_ready(label)
            result = measure()
            if result is None:
                return None
            name = experiment or result.experiment
            if name != result.experiment:
                result = dataclasses.replace(result, experiment=name)
            if not self.save:
                return result
            path = datastore.save_run(result, data_dir=self.data_dir,
                                      fingerprint=self.fingerprint, label=label)
            run = datastore.load_run(path)
            if announce:
                dirty = ((run.meta.get("machine") or {}).get("git") or {}).get("dirty")
                self._say(f"Measured by commit <code>{html.escape(_short(run.commit))}</code>"
                          + (" with uncommitted changes" if dirty else "")
                          + f", stored as run <code>{html.escape(run.path.name)}</code> "
                          "and drawn from what was read back.")
            return run.result()
        name = experiment or label
        run, reason = self._find(label, name, match)
        if run is None:  # the first cell that reads it says so, in one line
            return MissingRun(label, reason)
        datastore.log_run("read", run.path)
        if announce:
            dirty = ((run.meta.get("machine") or {}).get("git") or {}).get("dirty")
            self._say(f"Read from the stored run <code>{html.escape(run.path.name)}</code>, "
                      f"measured {html.escape(str(run.meta.get('created_utc', '')))} by commit "
                      f"<code>{html.escape(_short(run.commit))}</code>"
                      + (" with uncommitted changes." if dirty else "."))
        return run.result()

    def _find(self, label: str, name: str,
              match: dict[str, Any] | None) -> tuple[datastore.Run | None, str]:
        runs = [r for r in self._runs if r.experiment == name]
        labelled = [r for r in runs if r.meta.get("label") == label]
        older = [r for r in runs if "label" not in r.meta and _params_match(r.meta["params"],
                                                                            match)]
        candidates = labelled or older
        newest = candidates[-1].path.name if candidates else ""
        for bad in self._unreadable:  # a newer run that could not be read: say so
            said = bad.said or {}
            if bad.experiment in (name, "") and bad.path.name > newest \
                    and said.get("label") in (None, label):
                return None, UnreadableRun(bad).args[0]
        if not candidates:
            return None, f"this machine's folder holds no {vocabulary.words(name)} run"
        run = candidates[-1]
        lacking = specs.missing_tables(name, run.meta.get("tables", []))
        if lacking and not skipped(run.meta.get("summary")):
            # a run that says it was skipped has no tables to lack: its reader shows
            # "not run here" with the reason it stored
            return None, (f"its {vocabulary.words(name)} run was made by older code, "
                          f"before the experiment stored {vocabulary.words(lacking)}")
        return run, ""

    def commits(self) -> list[str]:
        """The commits that measured the runs of this machine folder (newest last)."""
        seen: dict[str, None] = {}
        for run in self._runs:
            if run.commit:
                seen[run.commit] = None
        return list(seen)

    # ---------------------------------------------------------------- output
    @staticmethod
    def _show(fragment: str) -> None:
        from IPython.display import HTML, display

        display(HTML(fragment))

    def _say(self, text: str) -> None:
        self._show(f'<p class="tc-run">{text}</p>')


NOT_HERE = ("not run here", "not available here")


def not_run_lines(runs: list[datastore.Run]) -> list[str]:
    """One line per thing the build's runs did not run here, and why: a run that says
    it was skipped (``summary["skipped"]``), kinds or variants it did not run
    (``not_run``, one line per reason), a tool it found missing (``<tool>_available:
    false`` and ``reason``), a counter the machine lacks (a value "not available here")."""
    found: dict[tuple[str, str], list[str]] = {}

    def note(what: str, part: str, why: str) -> None:
        short = vocabulary.bare_reason(why).split("; install")[0]
        parts = found.setdefault((what, short), [])
        if part and part not in parts:
            parts.append(part)

    def walk(what: str, part: str, value: Any) -> None:
        if not isinstance(value, dict):
            return
        if isinstance(value.get("skipped"), str) and value["skipped"]:
            note(what, part, value["skipped"])
        if any(k.endswith("_available") and v is False for k, v in value.items()) \
                and isinstance(value.get("reason"), str):
            note(what, part, value["reason"])
        not_run = value.get("not_run")
        if isinstance(not_run, str) and not_run:
            note(what, part, not_run)
        for name, why in (not_run.items() if isinstance(not_run, dict) else ()):
            if isinstance(why, str) and why:
                note(what, str(name), why)
        for key, inner in value.items():
            if key in ("not_run", "skipped"):
                continue
            if isinstance(inner, str) and inner.startswith(NOT_HERE):  # a counter, say
                note(what, str(key), vocabulary.perf_words(inner))
            else:
                walk(what, part if key in ("kinds", "variants") else str(key), inner)

    for run in runs:
        walk(str(run.meta.get("label") or run.experiment), "", run.meta.get("summary"))
    return [f"  {what}{' (' + ', '.join(parts) + ')' if parts else ''}: {why}"
            for (what, why), parts in sorted(found.items())]


# ----------------------------------------------------------- dict-shaped results

def from_dict(experiment: str, value: dict[str, Any], params: dict[str, Any] | None = None
              ) -> Result:
    """A Result holding a dict an experiment returned: DataFrame values become
    tables, the rest the summary (so it can be stored and read back)."""
    tables = {k: v for k, v in value.items() if isinstance(v, pd.DataFrame)}
    summary = {k: v for k, v in value.items() if k not in tables}
    return Result(experiment, dict(params or {}), summary, tables)


def to_dict(result: Result) -> dict[str, Any]:
    """The dict :func:`from_dict` was given, back."""
    return {**result.summary, **result.tables}


# ---------------------------------------------------------------- the cell guard

class Unmade(MissingRun):
    """A name a cell would have made had it not stopped at a :class:`MissingRun` run. A
    later cell that reads it shows the same one line without running, so every cell of a
    section its machine folder cannot feed survives (no ``NameError`` further down)."""


class _Names(ast.NodeVisitor):
    """The names a cell binds at its top level and the names it reads (function and
    class bodies, lambdas and comprehensions keep their own names)."""

    def __init__(self) -> None:
        self.bound: set[str] = set()
        self.read: set[str] = set()

    def visit_Name(self, node: ast.Name) -> None:
        (self.read if isinstance(node.ctx, ast.Load) else self.bound).add(node.id)

    def visit_arg(self, node: ast.arg) -> None:
        self.bound.add(node.arg)

    def _scope(self, node: Any) -> None:  # its own names; what it reads from outside counts
        inner = _Names()
        for child in ast.iter_child_nodes(node):
            inner.visit(child)
        self.read |= inner.read - inner.bound
        if hasattr(node, "name") and isinstance(node.name, str):
            self.bound.add(node.name)

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _scope
    visit_Lambda = visit_ListComp = visit_SetComp = visit_DictComp = _scope
    visit_GeneratorExp = _scope

    def visit_alias(self, node: ast.alias) -> None:
        if node.name != "*":
            self.bound.add((node.asname or node.name).split(".")[0])


def _ref(name: str) -> ast.expr:
    """``__import__("threadcost.notebook.stored").notebook.stored.<name>``: a guarded cell reaches
    the guard through the module, so a namespace reset (``%reset``) leaves every cell working."""
    module = ast.Call(func=ast.Name("__import__", ast.Load()),
                      args=[ast.Constant("threadcost.notebook.stored")], keywords=[])
    package = ast.Attribute(module, "notebook", ast.Load())
    return ast.Attribute(ast.Attribute(package, "stored", ast.Load()), name, ast.Load())


def _names(names: set[str]) -> ast.expr:
    return ast.Tuple([ast.Constant(n) for n in sorted(names)], ast.Load())


class _GuardCells(ast.NodeTransformer):
    """Wrap a cell so that a :class:`MissingRun` run it touches shows one line::

        if not _unmade((<names it reads>,)):
            try:
                <the cell, its last expression displayed by _show_last>
            except NotMeasured as exc:
                _report(exc, (<names it binds>,))

    (each reached as ``__import__("threadcost.notebook.stored").notebook.stored.<name>``)
    """

    def visit_Module(self, node: ast.Module) -> ast.Module:
        body = list(node.body)
        if not body:
            return node
        names = _Names()
        for statement in body:
            names.visit(statement)
        last = body[-1]
        if isinstance(last, ast.Expr):
            body[-1] = ast.copy_location(ast.Expr(ast.Call(
                func=_ref("_show_last"), args=[last.value],
                keywords=[])), last)
        handler = ast.ExceptHandler(
            type=_ref("NotMeasured"), name="__tc_exc__",
            body=[ast.Expr(ast.Call(func=_ref("_report"),
                                    args=[ast.Name("__tc_exc__", ast.Load()),
                                          _names(names.bound)],
                                    keywords=[]))])
        wrapped = ast.Try(body=body, handlers=[handler], orelse=[], finalbody=[])
        gate = ast.If(test=ast.UnaryOp(ast.Not(), ast.Call(
            func=_ref("_unmade"),
            args=[_names(names.read - names.bound)], keywords=[])),
            body=[wrapped], orelse=[])
        node.body = [ast.fix_missing_locations(ast.copy_location(gate, body[0]))]
        return node


def _namespace() -> dict[str, Any]:
    from IPython import get_ipython

    shell = get_ipython()
    return shell.user_ns if shell is not None else {}


def _report(exc: NotMeasured, bound: tuple[str, ...] = ()) -> None:
    """Show the one line; the names the cell did not get to make stand for it."""
    Store._show(not_measured_html(exc.reason))
    namespace = _namespace()
    for name in bound:
        if name not in namespace:
            namespace[name] = Unmade(exc.label, exc.reason)


def _unmade(read: tuple[str, ...]) -> bool:
    """True (and the one line shown) when the cell reads a name a not-measured cell
    could not make: the cell is not run."""
    namespace = _namespace()
    for name in read:
        value = namespace.get(name)
        if isinstance(value, Unmade):
            Store._show(not_measured_html(value._reason))
            return True
    return False


def _show_last(value: Any) -> None:
    import sys

    if isinstance(value, MissingRun):
        raise NotMeasured(value._label, value._reason)
    if value is not None:
        sys.displayhook(value)


def install_cell_guard() -> None:
    """In this IPython kernel, a cell that reads a :class:`MissingRun` run shows
    "Not measured on this machine: <why>" instead of a traceback, and so does every
    later cell that reads what it could not make (no-op outside IPython)."""
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython ships with the notebooks extra
        return
    shell = get_ipython()
    if shell is None:
        return
    if not any(isinstance(t, _GuardCells) for t in shell.ast_transformers):
        shell.ast_transformers.append(_GuardCells())


def machine_fingerprint(machine_id: str | None = None,
                        data_dir: str | Path | None = None) -> dict[str, Any]:
    """The fingerprint of machine ``machine_id`` (None: this machine) as its newest
    stored run recorded it, so a page describes the machine its numbers were measured
    on, whenever it is drawn; read now only when that folder holds no run yet."""
    mid = machine_id or machine.machine_id()
    runs = datastore.list_runs(data_dir=data_dir, machine_id=mid)
    if runs:
        return dict(runs[-1].meta.get("machine") or {})
    if machine_id is not None and machine_id != machine.machine_id():
        raise ValueError(f"machine_id={machine_id!r}: no stored run under "
                         f"{Path(data_dir) if data_dir is not None else paths.data_dir()}")
    return machine.fingerprint()
