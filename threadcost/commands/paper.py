"""threadcost paper --machine ID: one machine folder's stored runs as a paper, measuring nothing."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from threadcost.commands._options import output, value

if TYPE_CHECKING:
    from threadcost.results import Result

NAME = "paper"
HELP = ("render the paper of a machine folder under data/ from its stored runs "
        "(no measuring; `make paper` measures)")
SAVES = False


def add_arguments(parser: argparse.ArgumentParser) -> None:
    value(parser, "--machine", None, "machine folder under the data folder to render "
          "(default: this machine)")
    output(parser, "--out", "output folder for notebooks/ and html/ "
          "(default: build/paper-<machine>)")
    value(parser, "--params", "params/default.yaml",
          "parameter set the notebooks read (what to draw, never what to measure)")


RUNS = "threadcost.commands.runners.paper:render"
EXTRA = "notebooks"  # the extra RUNS needs (its import fails without it)


def arguments(args: argparse.Namespace) -> dict[str, Any]:
    return {"machine_id": args.machine, "out": args.out, "params": args.params}


def format_text(result: Result) -> str:
    return (f"Paper of {result.params['machine']}, drawn from its stored runs "
            f"(works offline):\n  {result.summary['index']}")
