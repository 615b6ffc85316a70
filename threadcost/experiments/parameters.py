"""Every notebook parameter, declared once: name, type, default, unit, doc and range
(minimum, maximum, or the choices a string may take).

From these declarations come the notebooks' parameters cells and ``params/default.yaml``
(``make params`` runs ``tools/parameters_cells.py``; tests fail while either differs),
the checks of ``params/*.yaml`` (:func:`check_file`: an unknown key, a value of the wrong
type or out of its range is refused naming the file and the key), the experiments'
defaults and ranges (``declared("malloc_points").default``, ``.bounds``) and the CLI's
(``threadcost.commands._options.declared``). In a notebook,
:func:`check` refuses a bad value naming the notebook's parameter (``malloc_mib``),
and a refusal further down names it too, not the API's (``mib``).

``interactive`` decides whether a notebook draws live ipywidgets. Its default is
False, so a batch run (papermill, nbconvert, ``make paper``) never starts widgets that
wait for a browser; ``make lab`` starts JupyterLab with ``THREADCOST_INTERACTIVE=1``,
and a notebook opened there draws them without being asked.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from threadcost.errors import ParameterError
from threadcost.experiments import specs
from threadcost.experiments.specs import param
from threadcost.settings import parameter_input
from threadcost.settings.parameter_input import Param

INTERACTIVE_ENV = "THREADCOST_INTERACTIVE"
# The notebooks: the two pages declared here, and each family's (its spec), in order.
MEASURING = tuple(f.notebook for f in specs.families())  # measure, or draw stored runs
EXPERIMENTS = tuple(f.notebook for f in specs.families() if f.explorers)  # live widgets
# The parameters of the two pages that measure nothing, and those every notebook (or every
# measuring one) takes; the families' own are declared in their specs
# (threadcost/experiments/<family>/spec.py).
PAGES: tuple[Param, ...] = (
    param('intro_machine_id', 'Optional[str]', None,
          'machine folder under data/ to summarise, None: this machine',
          notebooks=('00_introduction',), api='machine_id'),
    param('claims_machine_id', 'Optional[str]', None,
          'machine folder under data/ to judge, None: this machine',
          notebooks=('06_claims',), api='machine_id'),
    param('claims_include_reference', 'bool', True,
          'compare with the committed reference runs (data/)', notebooks=('06_claims',),
          api='include_reference'),
)
ALL = tuple(sorted({*MEASURING, *(p.notebooks[0] for p in PAGES)}))
COMMON: tuple[Param, ...] = (
    # every notebook (interactive: those with explorers)
    param('data_dir', 'Optional[str]', None,
          "None: your runs/ (git-ignored; $THREADCOST_DATA_DIR), then the committed data/",
          notebooks=ALL, api='data_dir'),
    param('figures_dir', 'Optional[str]', None,
          "None: build/figures/ ($THREADCOST_FIGURES_DIR); relative: inside build/",
          notebooks=ALL, api='figures_dir'),
    param('save', 'bool', True,
          'store what this notebook makes: runs under runs/<machine>/<run>/, figures under '
          'build/figures/', notebooks=ALL, api='save'),
    param('measure', 'bool', True,
          'False: measure nothing, draw from the stored runs of machine_id',
          notebooks=MEASURING, api='measure'),
    param('machine_id', 'Optional[str]', None,
          'with measure False: the machine folder to draw (runs/, else data/), None: this one',
          notebooks=MEASURING, api='machine_id'),
    param('interactive', 'bool', False,
          'True: live ipywidgets; False: static Vega-Lite charts (paper, papermill), live in '
          '`make lab`', notebooks=EXPERIMENTS, api='interactive'),
)


def _declarations() -> tuple[Param, ...]:
    """Every parameter, notebook by notebook, each in its cell's order, then the common
    ones."""
    own = [*PAGES, *(p for f in specs.families() for p in f.parameters)]
    return (*sorted(own, key=lambda p: ALL.index(p.notebooks[0])), *COMMON)


DECLARATIONS = _declarations()
BY_NAME = {p.name: p for p in DECLARATIONS}
# Where and what to draw, given per run (papermill -p, threadcost.paper.build): never in a
# parameter set, so params/default.yaml leaves them out.
NOT_IN_SETS = ("intro_machine_id", "claims_machine_id", "claims_include_reference",
               "data_dir", "figures_dir", "measure", "machine_id")


def declared(name: str) -> Param:
    """The declaration of one parameter: what an experiment's checks, a CLI option
    and a parameter set read its default, unit and range from."""
    return BY_NAME[name]


def for_notebook(notebook: str) -> list[Param]:
    """The parameters of a notebook (its file stem), in cell order."""
    return [p for p in DECLARATIONS if notebook in p.notebooks]


def cell(notebook: str) -> str:
    """The text of the notebook's parameters cell (jupytext percent format, without
    the ``# %%`` line)."""
    params = for_notebook(notebook)
    hints = sorted({h for p in params for h in ("Optional", "Union") if h in p.type})
    lines = ["# Parameters (papermill: -p NAME VALUE, a list as YAML: -p NAME '[1, 2]', "
             "or -f params/<set>.yaml)"]
    if hints:
        lines.append(
            f"from typing import {', '.join(hints)}  # papermill reads these "
            'annotations, not "X | None"'
        )
    lines.append("")
    lines += [p.line() for p in params]
    return "\n".join(lines) + "\n"


def unknown(name: str, value: Any, where: str = "", among: list[str] | None = None
            ) -> ParameterError:
    """The refusal of a name no notebook declares, naming the closest declared one."""
    if name in BY_NAME:  # another notebook's
        return ParameterError(name, parameter_input.preview(value), "is not a parameter of "
                              f"this notebook but of {', '.join(BY_NAME[name].notebooks)}")
    near = parameter_input.closest(name, among if among is not None else list(BY_NAME))
    hint = f"; did you mean {near!r}?" if near else " (see threadcost/experiments/<family>/spec.py)"
    if near is None and among is not None:
        near = parameter_input.closest(name, list(BY_NAME))
        if near is not None:
            hint = (f"; did you mean {near!r} (a parameter of "
                    f"{', '.join(BY_NAME[near].notebooks)})?")
    return ParameterError(f"{where}: {name}" if where else name, parameter_input.preview(value),
                          "is not a parameter of any notebook" + hint)

def check_values(values: Mapping[str, Any], where: str = "") -> dict[str, Any]:
    """Every value checked against its declaration; an unknown name is refused."""
    for key, value in values.items():
        param = BY_NAME.get(str(key))
        if param is None:
            raise unknown(str(key), value, where)
        param.check(value, where)
    return dict(values)


def check_file(path: str | Path) -> dict[str, Any]:
    """A ``params/*.yaml`` file, read within bounds (threadcost.settings.parameter_input) and
    checked: a refusal is one ParameterError naming the file and the key."""
    path = Path(path)
    try:
        values = parameter_input.load_yaml(parameter_input.read_file(path)) or {}
    except OSError as exc:
        raise parameter_input.FileRefused(path, f"cannot be read ({exc.strerror})") from None
    except parameter_input.InputError as exc:
        raise parameter_input.FileRefused(path, f"cannot be used: it {exc}") from None
    if not isinstance(values, dict):
        raise parameter_input.FileRefused(path, "must map parameter names to values")
    for key in values:
        if not isinstance(key, str):
            raise ParameterError(str(path), parameter_input.preview(key),
                                 "keys must be parameter names")
    for key in OUTPUT_FOLDERS:  # from a file: inside the build folder
        folder = values.get(key)
        if isinstance(folder, str) and not parameter_input.inside_build(folder):
            raise ParameterError(f"{path}: {key}", folder,
                                 "a folder inside the build folder, given relative to it "
                                 "(name any other folder on the command line: papermill -p, "
                                 "THREADCOST_FIGURES_DIR, THREADCOST_DATA_DIR)")
    return check_values(values, str(path))


OUTPUT_FOLDERS = ("figures_dir", "data_dir")  # from a file: inside the build folder


def check(notebook: str, namespace: dict[str, Any]) -> None:
    """In a notebook, right after its parameters: every value checked, refusals
    naming the notebook parameter; later refusals by the API name it too.

    A name papermill injected that no notebook declares is refused, naming the closest
    declared one (papermill itself only warns, and would run the defaults); another
    notebook's (a shared -f set) is left alone. A list typed with ``-p`` as YAML/JSON
    text is parsed. A refusal shows as one line in the notebook (no traceback)."""
    params = for_notebook(notebook)
    declared = [p.name for p in params]
    try:
        for name in parameter_input.injected_names():  # a shared set (-f) is fine
            if name not in BY_NAME:
                raise unknown(name, namespace.get(name), among=declared)
        for p in params:
            if p.name in namespace:
                namespace[p.name] = p.check(p.coerce(namespace[p.name]))
    except ParameterError as exc:
        raise parameter_input.NotebookParameterError(exc.name, exc.value, exc.allowed) from None
    # An API name that only one of this notebook's parameters feeds names it instead.
    counts: dict[str, int] = {}
    for p in params:
        counts[p.api_name] = counts.get(p.api_name, 0) + 1
    ParameterError.aliases = {
        p.api_name: p.name for p in params if counts[p.api_name] == 1 and p.api_name != p.name
    }


def cli_default(name: str) -> str:
    """A parameter's declared default as CLI text (a list: comma-separated)."""
    value = BY_NAME[name].default
    if isinstance(value, list):
        return ",".join(str(v) for v in value)
    return str(value)


def interactive(asked: bool | None) -> bool:
    """Live widgets: when asked (``interactive = True``), or in the JupyterLab that
    ``make lab`` started (``$THREADCOST_INTERACTIVE`` = 1); never by default."""
    return bool(asked) or os.environ.get(INTERACTIVE_ENV, "") == "1"
