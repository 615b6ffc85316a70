"""threadcost gallery: every machine folder side by side on one static page (make gallery)."""

from __future__ import annotations

import argparse

from threadcost.commands._options import output, value
from threadcost.results import Result

NAME = "gallery"
HELP = ("render one static page of every machine folder of a data folder: card, headline "
        "numbers and the verdict on each claim, sortable and filterable (no measuring)")
SAVES = False


def add_arguments(parser: argparse.ArgumentParser) -> None:
    value(parser, "--data-dir", None, "data folder whose machine folders to show (default: "
          "the checkout's committed data/)")
    output(parser, "--out", "output folder for index.html (default: build/gallery)")


def execute(args: argparse.Namespace) -> Result:
    import time
    from pathlib import Path

    try:
        from threadcost.views import gallery
    except ImportError as exc:  # the [notebooks] extra is not installed
        from threadcost.errors import ThreadcostError

        raise ThreadcostError(f"threadcost gallery needs the notebooks extra "
                              f"(pip install 'threadcost[notebooks]'): {exc}") from None
    started = time.monotonic()
    index = gallery.build(Path(args.data_dir) if args.data_dir else None,
                          Path(args.out) if args.out else None)
    return Result(NAME, {"data_dir": args.data_dir or "data"},
                  {"index": str(index), "seconds": round(time.monotonic() - started, 1)})


def format_text(result: Result) -> str:
    return (f"Gallery of every machine folder (works offline), rendered in "
            f"{result.summary['seconds']:,.0f} s:\n  {result.summary['index']}")
