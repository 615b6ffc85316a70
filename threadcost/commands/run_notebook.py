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


RUNS = "threadcost.commands.runners.run_notebook:run"
EXTRA = "notebooks"  # the extra RUNS needs (its import fails without it)


def arguments(args: argparse.Namespace) -> dict[str, Any]:
    return {"notebook": args.notebook, "parameter": args.parameter,
            "parameters_file": args.parameters_file, "parameters_yaml": args.parameters_yaml,
            "out": args.out}


def format_text(result: Result) -> str:
    return f"{result.params['notebook']} ran; the executed notebook: " \
           f"{result.summary['executed']}"
