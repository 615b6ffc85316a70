"""threadcost run-notebook: one notebook with your parameters, refusals in one line.

papermill itself only warns about a name the notebook does not declare, cannot pass
a list with ``-p``, and ends every refusal with its own traceback and exit status 1.
This runs the notebook the same way (papermill, a kernel over IPC, bounded waits) after
checking every parameter first: an unknown name is refused naming the closest declared
one, a list is given as YAML/JSON text (``-p malloc_allocators '[mmap]'``), and a
refusal inside the notebook ends the command with the README's exit status (2: a
parameter, 3: a system limit, 4: a data file, 1: anything else) in one line.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from threadcost.results import Result

NAME = "run-notebook"
HELP = "run one notebook with papermill, parameters checked first (-p NAME VALUE, -f FILE)"
SAVES = False

# the exception a notebook ended with (papermill reports its class name) -> exit status
_LIMIT = ("LimitReached",)
_PARAMETER = ("ParameterError", "NotebookParameterError")
_DATA = ("DataError",)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("notebook", help="the notebook: its number or name (01, "
                                         "01_malloc_touch)")
    parser.add_argument("-p", "--parameter", nargs=2, action="append", default=[],
                        metavar=("NAME", "VALUE"),
                        help="a parameter, typed as papermill types it (a list: YAML or "
                             "JSON text, e.g. '[100, 200]')")
    parser.add_argument("-f", "--parameters-file", action="append", default=[],
                        metavar="FILE", help="a parameter set (params/<set>.yaml); only "
                                             "the names this notebook declares are used")
    parser.add_argument("-y", "--parameters-yaml", action="append", default=[],
                        metavar="YAML", help="parameters as YAML text")
    parser.add_argument("--out", default=None, metavar="FILE",
                        help="the executed notebook (default: build/run/<notebook>.ipynb)")


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


def _source(name: str) -> Any:
    from threadcost.errors import ParameterError
    from threadcost.paper import notebook_sources

    books = sorted(notebook_sources.NOTEBOOKS_DIR.glob("0*.py"))
    hits = [b for b in books if b.stem == name or b.stem.startswith(f"{name}_")
            or b.stem.split("_", 1)[0] == name]
    if len(hits) != 1:
        raise ParameterError("notebook", name, "one of " + ", ".join(b.stem for b in books))
    return hits[0]


def checked(stem: str, args: argparse.Namespace) -> dict[str, Any]:
    """Every parameter given, checked against the notebook's declarations, before
    anything runs (ParameterError otherwise)."""
    from threadcost.errors import ParameterError
    from threadcost.experiments import parameters
    from threadcost.settings import parameter_input

    declared = {p.name: p for p in parameters.for_notebook(stem)}
    values: dict[str, Any] = {}
    for path in args.parameters_file:  # a shared set: this notebook's names only
        values.update({k: v for k, v in parameters.check_file(path).items() if k in declared})
    for text in args.parameters_yaml:
        try:
            loaded = parameter_input.load_yaml(text) or {}
        except parameter_input.InputError as exc:
            raise ParameterError("-y", parameter_input.preview(text), str(exc)) from None
        if not isinstance(loaded, dict):
            raise ParameterError("-y", parameter_input.preview(text),
                                 "must map parameter names to values")
        values.update(loaded)
    values.update({name: _typed(text) for name, text in args.parameter})
    for name, value in values.items():
        if name not in declared:
            raise parameters.unknown(str(name), value, among=list(declared))
        values[name] = declared[name].check(declared[name].coerce(value))
    return values


def execute(args: argparse.Namespace) -> Result:
    from pathlib import Path

    from threadcost import paths
    from threadcost.errors import ThreadcostError
    from threadcost.results import Result

    source = _source(args.notebook)
    params = checked(source.stem, args)
    out = Path(args.out) if args.out else paths.build_dir() / "run" / f"{source.stem}.ipynb"
    out.parent.mkdir(parents=True, exist_ok=True)
    try:
        from threadcost.paper import build as paper
        from threadcost.paper import notebook_sources
    except ImportError as exc:
        raise ThreadcostError(f"run-notebook needs the notebooks extra (pip install "
                              f"'threadcost[notebooks]'): {exc}") from None
    import tempfile

    from threadcost.paper.notebook_run import NotebookTimeout

    with tempfile.TemporaryDirectory(prefix="threadcost-run-") as folder:
        staged = notebook_sources.write_ipynb(source, Path(folder))
        try:
            paper.run_notebook(staged, out, params, progress_bar=False)
        except NotebookTimeout as exc:
            raise ThreadcostError(str(exc)) from None
        except Exception as exc:  # papermill's PapermillExecutionError: a cell raised
            if type(exc).__name__ != "PapermillExecutionError":
                raise
            _raise_one_line(source.stem, exc)
    return Result(NAME, {"notebook": source.stem, **params}, {"executed": str(out)})


def _raise_one_line(stem: str, exc: Any) -> None:
    """The notebook's own refusal, as the exception the CLI turns into its exit status."""
    from threadcost.errors import DataError, LimitReached, ParameterError, ThreadcostError

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


def format_text(result: Result) -> str:
    return f"{result.params['notebook']} ran; the executed notebook: " \
           f"{result.summary['executed']}"
