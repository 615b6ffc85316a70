"""threadcost gallery: every machine folder side by side on one static page (make gallery)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from threadcost.commands._options import output, value

if TYPE_CHECKING:
    from threadcost.results import Result

NAME = "gallery"
HELP = ("render one static page of every machine folder of a data folder: card, headline "
        "numbers and the verdict on each claim, sortable and filterable (no measuring)")
SAVES = False


def add_arguments(parser: argparse.ArgumentParser) -> None:
    value(parser, "--data-dir", None, "data folder whose machine folders to show (default: "
          "the checkout's committed data/)")
    output(parser, "--out", "output folder for index.html (default: build/gallery)")


RUNS = "threadcost.commands.runners.gallery:render"
EXTRA = "notebooks"  # the extra RUNS needs (its import fails without it)


def arguments(args: argparse.Namespace) -> dict[str, Any]:
    return {"data_dir": args.data_dir, "out": args.out}


def format_text(result: Result) -> str:
    return (f"Gallery of every machine folder (works offline), rendered in "
            f"{result.summary['seconds']:,.0f} s:\n  {result.summary['index']}")
