"""The gallery at scale: N machine folders (copies of the committed ones under other ids,
in a temporary folder, never committed), rendered and timed.

    .venv/bin/python tools/gallery_benchmark.py            # 100 folders, 2 workers
    .venv/bin/python tools/gallery_benchmark.py --folders 20 --keep build/gallery-100

Prints the time, the CPU count and the load average (on a shared machine a time means
little without them), and the page's size. Each copy is the committed folder as it is,
under the id ``<id>-copy<k>`` (its files hard links where the file system allows); a
copy's runs are read and judged as any folder's are (no
result is kept between folders or runs: ``THREADCOST_CACHE_DIR`` is empty for it).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def _link_or_copy(source: str, target: str) -> None:
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)


def copies(target: Path, count: int) -> list[str]:
    """``count`` machine folders under ``target``: the committed ones, then copies of
    them under other ids."""
    real = sorted(p for p in (REPO / "data").iterdir()
                  if p.is_dir() and p.name != "published" and not p.name.startswith("."))
    made = []
    for k in range(count):
        source = real[k % len(real)]
        mid = source.name if k < len(real) else f"{source.name}-copy{k // len(real)}"
        # hard links where the file system allows (the same bytes under another path:
        # read, parsed and checked as any other folder's; no disk to fill), else copies
        shutil.copytree(source, target / mid, copy_function=_link_or_copy)
        made.append(mid)
    return made


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--folders", type=int, default=100)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--keep", default=None, help="copy the rendered page here")
    args = parser.parse_args(argv)
    os.environ["THREADCOST_CACHE_DIR"] = ""  # empty: nothing kept, every folder judged
    from threadcost.views import gallery

    with tempfile.TemporaryDirectory(prefix="threadcost-gallery-") as tmp:
        data = Path(tmp) / "data"
        data.mkdir()
        copies(data, args.folders)
        started = time.monotonic()
        index = gallery.build(data, Path(tmp) / "out", workers=args.workers)
        took = time.monotonic() - started
        size = index.stat().st_size
        if args.keep:
            Path(args.keep).mkdir(parents=True, exist_ok=True)
            shutil.copy(index, Path(args.keep) / "index.html")
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"gallery of {args.folders} machine folders: {took:,.1f} s on {args.workers} "
          f"workers ({os.cpu_count()} CPUs, load average {load}); page {size / 1024:,.0f} KiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
