"""threadcost run-notebook: one notebook with your parameters, checked first, refusals
in one line (:mod:`threadcost.commands.run_notebook` says why)."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from threadcost import paths
from threadcost.commands.run_notebook import NAME
from threadcost.errors import DataError, LimitReached, ParameterError, ThreadcostError
from threadcost.experiments import parameters
from threadcost.paper import build as paper
from threadcost.paper import notebook_sources
from threadcost.paper.notebook_run import NotebookTimeout
from threadcost.results import Result
from threadcost.settings import parameter_input

# the exception a notebook ended with (papermill reports its class name) -> exit status
_LIMIT = ("LimitReached",)
_PARAMETER = ("ParameterError", "NotebookParameterError")
_DATA = ("DataError",)


def _typed(text: str) -> Any:
    """A ``-p`` value as papermill types it: True/False/None, an int, a float, else text."""
    if text in ("True", "False", "None"):
        return {"True": True, "False": False, "None": None}[text]
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def _source(name: str) -> Path:
    books = sorted(notebook_sources.NOTEBOOKS_DIR.glob("0*.py"))
    hits = [b for b in books if b.stem == name or b.stem.startswith(f"{name}_")
            or b.stem.split("_", 1)[0] == name]
    if len(hits) != 1:
        raise ParameterError("notebook", name, "one of " + ", ".join(b.stem for b in books))
    return hits[0]


def checked(stem: str, parameter: list[list[str]], parameters_file: list[str],
            parameters_yaml: list[str]) -> dict[str, Any]:
    """Every parameter given (``-p``, ``-f``, ``-y``), checked against the notebook's
    declarations, before anything runs (ParameterError otherwise)."""
    declared = {p.name: p for p in parameters.for_notebook(stem)}
    values: dict[str, Any] = {}
    for path in parameters_file:  # a shared set: this notebook's names only
        values.update({k: v for k, v in parameters.check_file(path).items() if k in declared})
    for text in parameters_yaml:
        try:
            loaded = parameter_input.load_yaml(text) or {}
        except parameter_input.InputError as exc:
            raise ParameterError("-y", parameter_input.preview(text), str(exc)) from None
        if not isinstance(loaded, dict):
            raise ParameterError("-y", parameter_input.preview(text),
                                 "must map parameter names to values")
        values.update(loaded)
    values.update({name: _typed(text) for name, text in parameter})
    for name, value in values.items():
        if name not in declared:
            raise parameters.unknown(str(name), value, among=list(declared))
        values[name] = declared[name].check(declared[name].coerce(value))
    return values


def run(notebook: str, parameter: list[list[str]], parameters_file: list[str],
        parameters_yaml: list[str], out: str | None) -> Result:
    source = _source(notebook)
    params = checked(source.stem, parameter, parameters_file, parameters_yaml)
    target = Path(out) if out else paths.build_dir() / "run" / f"{source.stem}.ipynb"
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="threadcost-run-") as folder:
        staged = notebook_sources.write_ipynb(source, Path(folder))
        try:
            paper.run_notebook(staged, target, params, progress_bar=False)
        except NotebookTimeout as exc:
            raise ThreadcostError(str(exc)) from None
        except Exception as exc:  # papermill's PapermillExecutionError: a cell raised
            if type(exc).__name__ != "PapermillExecutionError":
                raise
            _raise_one_line(source.stem, exc)
    return Result(NAME, {"notebook": source.stem, **params}, {"executed": str(target)})


def _raise_one_line(stem: str, exc: Any) -> None:
    """The notebook's own refusal, as the exception the CLI turns into its exit status."""

    class Refused(ParameterError):
        def __init__(self, text: str) -> None:
            Exception.__init__(self, text)
            self.name, self.value, self.allowed = stem, None, text

    first = str(exc.evalue or "").strip().splitlines()
    text = first[0] if first else exc.ename
    where = f"{stem} cell {exc.exec_count}"
    if exc.ename in _PARAMETER:
        raise Refused(f"{stem}: {text}")
    if exc.ename in _LIMIT:
        raise LimitReached(f"{text.removeprefix('system limit reached: ')} ({where})", 0)
    if exc.ename in _DATA:
        raise DataError(f"{where}: {text}")
    raise ThreadcostError(f"{where} failed: {exc.ename}: {text}")
