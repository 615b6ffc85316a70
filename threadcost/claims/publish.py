"""Write ``data/published/{claims,values,quotes}.csv`` from the claims' records.

``make published`` (``python -m threadcost.claims.publish``) writes them; ``--check``
says which are stale, and so does ``tests/test_claims_declared_once.py``.
"""

from __future__ import annotations

import argparse
import csv
import io
from collections.abc import Callable
from pathlib import Path

import pandas as pd

from threadcost import paths
from threadcost.claims import published

TABLES: dict[str, Callable[[], pd.DataFrame]] = {
    "claims.csv": published.claims, "values.csv": published.values,
    "quotes.csv": published.quotes}


def _cell(x: object) -> str:
    """A number as typed (400, 2.5), never 400.0; empty for None."""
    if x is None or (isinstance(x, float) and pd.isna(x)):
        return ""
    if isinstance(x, float) and x.is_integer():
        return str(int(x))
    return str(x)


def as_csv(name: str) -> str:
    """The text of ``data/published/<name>`` as the records give it."""
    table = TABLES[name]()
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(table.columns)
    for row in table.itertuples(index=False):
        writer.writerow([_cell(x) for x in row])
    return out.getvalue()


def write(folder: Path | None = None) -> list[Path]:
    """Write the published tables from the records; returns the files written."""
    folder = folder if folder is not None else paths.published_dir()
    written = []
    for name in TABLES:
        path = folder / name
        path.write_text(as_csv(name), encoding="utf-8")
        written.append(path)
    return written


def stale(folder: Path | None = None) -> list[str]:
    """The tables in ``folder`` that differ from what the records give."""
    folder = folder if folder is not None else paths.published_dir()
    return [name for name in TABLES if not (folder / name).is_file()
            or (folder / name).read_text(encoding="utf-8") != as_csv(name)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m threadcost.claims.publish",
        description="write data/published/{claims,values,quotes}.csv from the claims' records")
    parser.add_argument("--check", action="store_true",
                        help="only say which tables are stale (exit 1 if any)")
    args = parser.parse_args(argv)
    if args.check:
        old = stale()
        for name in old:
            print(f"data/published/{name} is stale: run make published")
        return 1 if old else 0
    for path in write():
        print(f"wrote {path.relative_to(paths.REPO_ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
