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
  runs are older than the experiment has none: ``get`` returns a :class:`Missing`
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

from threadcost import datastore, findings, machine, paths
from threadcost.experiments import registry
from threadcost.results import Result

NOT_MEASURED = "Not measured on this machine"


class NotMeasured(Exception):
    """A cell read a run that this machine's folder does not hold."""

    def __init__(self, label: str, reason: str) -> None:
        self.label, self.reason = label, reason
        super().__init__(f"{label}: {reason}")


class Missing:
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

    def __bool__(self) -> bool:
        return False

    def __repr__(self) -> str:
        return f"<{NOT_MEASURED}: {self._label}>"


def present(*results: Any) -> list[Any]:
    """The results that were measured (neither None nor :class:`Missing`)."""
    return [r for r in results if r is not None and not isinstance(r, Missing)]


def not_measured_html(reason: str = "") -> str:
    title = f' title="{html.escape(reason)}"' if reason else ""
    return f'<p class="tc-not-measured"{title}><em>{NOT_MEASURED}.</em></p>'


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
        else:
            self.machine_id = machine_id or machine.machine_id()
            self._runs = datastore.list_runs(data_dir=self.data_dir,
                                             machine_id=self.machine_id)
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
        result's own (an auxiliary run, see :mod:`threadcost.experiments.registry`;
        default: ``label`` when it names a registered experiment). ``match``:
        parameters an unlabelled older run must have to stand for this one.
        Returns a Result, None (when ``measure`` returned None) or :class:`Missing`.
        """
        if self.measure:
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
            return Missing(label, reason)
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
        if not candidates:
            return None, f"no stored {name} run in {self.machine_id}"
        run = candidates[-1]
        lacking = registry.missing_tables(name, run.meta.get("tables", []))
        if lacking:
            return None, (f"the stored {name} run predates its tables "
                          f"{', '.join(lacking)}")
        return run, ""

    def commits(self) -> list[str]:
        """The commits that measured the runs of this machine folder (newest last)."""
        seen: dict[str, None] = {}
        for run in self._runs:
            if run.commit:
                seen[run.commit] = None
        return list(seen)

    def describe_machine(self) -> str:
        return machine.describe(self.fingerprint)

    # ---------------------------------------------------------------- output
    @staticmethod
    def _show(fragment: str) -> None:
        from IPython.display import HTML, display

        display(HTML(fragment))

    def _say(self, text: str) -> None:
        self._show(f'<p class="tc-run">{text}</p>')


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

class _GuardCells(ast.NodeTransformer):
    """Wrap a cell in ``try: ... except NotMeasured: <one line>``, keeping the
    display of its last expression."""

    def visit_Module(self, node: ast.Module) -> ast.Module:
        body = list(node.body)
        if not body:
            return node
        last = body[-1]
        if isinstance(last, ast.Expr):
            body[-1] = ast.copy_location(ast.Expr(ast.Call(
                func=ast.Name("__tc_show_last__", ast.Load()), args=[last.value],
                keywords=[])), last)
        handler = ast.ExceptHandler(
            type=ast.Name("__tc_not_measured__", ast.Load()), name="__tc_exc__",
            body=[ast.Expr(ast.Call(func=ast.Name("__tc_report__", ast.Load()),
                                    args=[ast.Name("__tc_exc__", ast.Load())],
                                    keywords=[]))])
        wrapped = ast.Try(body=body, handlers=[handler], orelse=[], finalbody=[])
        node.body = [ast.fix_missing_locations(ast.copy_location(wrapped, body[0]))]
        return node


def _report(exc: NotMeasured) -> None:
    Store._show(not_measured_html(exc.reason))


def _show_last(value: Any) -> None:
    import sys

    if value is not None:
        sys.displayhook(value)


def install_cell_guard() -> None:
    """In this IPython kernel, a cell that reads a :class:`Missing` run shows
    "Not measured on this machine" instead of a traceback (no-op outside IPython)."""
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython ships with the notebooks extra
        return
    shell = get_ipython()
    if shell is None:
        return
    shell.user_ns.update(__tc_not_measured__=NotMeasured, __tc_report__=_report,
                         __tc_show_last__=_show_last)
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
