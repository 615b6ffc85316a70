"""The gallery at scale: N machine folders (copies of the committed ones under other ids,
in a temporary folder, never committed), rendered and timed against the target of
issue #48: 100 folders in under 60 s of wall time on 2 cores.

    .venv/bin/python tools/gallery_benchmark.py            # 100 folders, honest copies
    .venv/bin/python tools/gallery_benchmark.py --copies identical
    .venv/bin/python tools/gallery_benchmark.py --folders 20 --keep build/gallery-100

Prints the wall time, the CPU time of this process and its workers, the CPU count and
the load average (on a shared machine a time means little without them), the page's
size, and whether the target was met (exit 1 when not).

Copies (``--copies``):

- ``perturbed`` (the default, the honest number): no two folders share the bytes of any
  file. Each copy's ``meta.json`` names the copy's id, and each table changes one cell of
  its last rows: a number with a fraction is scaled by ``1 - k * 1e-9`` (a value of its
  own, within what its quantity can be), else an integer is written with ``k`` leading
  zeros, else a text cell ends in ``k`` spaces (the same value in other bytes). Nothing
  kept by the content of a file can then serve one folder from another's reading;
- ``identical``: each copy is the committed folder as it is (hard links where the file
  system allows): what a cache keyed by a file's content would make of it.

Every copy's runs must read back as its source's do (the same count of unreadable
runs), or the benchmark stops saying which did not. No result is kept between folders or
runs: ``THREADCOST_CACHE_DIR`` is empty for it.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TARGET_S = 60.0  # issue #48: 100 folders on 2 cores
COPIES = ("perturbed", "identical")
_FRACTION = re.compile(r"-?\d+\.\d+")
_NUMBER = re.compile(r"-?\d+(\.\d+)?")
_FIELD = re.compile(r'("(?:[^"]|"")*"|[^,"]*)(,|$)')


def _link_or_copy(source: str, target: str) -> None:
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)


def _fields(line: str) -> list[str]:
    """A CSV line's fields as written (a quoted one with its quotes); [] when the line
    is not one this reads."""
    out, pos = [], 0
    while (m := _FIELD.match(line, pos)) is not None:
        out.append(m.group(1))
        if m.group(2) != ",":
            return out
        pos = m.end()
    return []


def perturb_csv(text: str, k: int) -> tuple[str, str]:
    """(the CSV text with one cell changed for copy ``k`` >= 1, how it was changed)."""
    lines = text.split("\n")
    rows = [i for i in range(len(lines) - 1, 0, -1) if lines[i]]
    for kind in ("value", "zeros", "spaces"):
        for i in rows:
            cells = _fields(lines[i])
            for j in range(len(cells) - 1, -1, -1):
                cell = cells[j]
                if kind == "value" and _FRACTION.fullmatch(cell) and \
                        float(cell) != int(float(cell)):
                    cells[j] = repr(float(cell) * (1 - k * 1e-9))
                elif kind == "zeros" and _NUMBER.fullmatch(cell):
                    sign = "-" if cell.startswith("-") else ""
                    cells[j] = sign + "0" * k + cell.lstrip("-")
                elif kind == "spaces" and cell and not cell.startswith('"') and \
                        not _NUMBER.fullmatch(cell) and cell not in ("True", "False"):
                    cells[j] = cell + " " * k
                else:
                    continue
                lines[i] = ",".join(cells)
                return "\n".join(lines), kind
    if len(lines) == 2 and lines[0]:  # a header alone: blank lines, which are no rows
        return text + "\n" * k, "blank lines"
    return text, "unchanged"


def _perturbed_copy(source: Path, target: Path, mid: str, k: int,
                    counts: dict[str, int]) -> None:
    """``source`` copied to ``target`` as machine ``mid``, no file's bytes shared."""
    for run in sorted(p for p in source.iterdir() if p.is_dir()):
        (target / run.name).mkdir(parents=True)
        for f in sorted(run.iterdir()):
            raw = f.read_bytes()
            if f.name == "meta.json":
                meta = json.loads(raw)
                meta["machine_id"] = mid
                out = json.dumps(meta, indent=2).encode()
                kind = "meta.json"
            elif f.name.endswith(".csv.gz"):
                text, kind = perturb_csv(gzip.decompress(raw).decode(), k)
                out = gzip.compress(text.encode(), compresslevel=6, mtime=0)
            elif f.name.endswith(".csv"):
                text, kind = perturb_csv(raw.decode(), k)
                out = text.encode()
            else:
                out, kind = raw, "unchanged"
            counts[kind] = counts.get(kind, 0) + 1
            (target / run.name / f.name).write_bytes(out)


def copies(target: Path, count: int, how: str = "perturbed") -> tuple[list[str], dict[str, int]]:
    """``count`` machine folders under ``target``: the committed ones, then copies of
    them under other ids (``how``: see the module's text); and how many files of the
    copies were changed in which way."""
    real = sorted(p for p in (REPO / "data").iterdir()
                  if p.is_dir() and p.name != "published" and not p.name.startswith("."))
    made, counts = [], {}  # type: ignore[var-annotated]
    for k in range(count):
        source = real[k % len(real)]
        copy = k // len(real)
        mid = source.name if copy == 0 else f"{source.name}-copy{copy}"
        if copy == 0 or how == "identical":
            # hard links where the file system allows (the same bytes under another path),
            # else copies
            shutil.copytree(source, target / mid, copy_function=_link_or_copy)
        else:
            _perturbed_copy(source, target / mid, mid, copy, counts)
        made.append(mid)
    return made, counts


def _cpu_s() -> float:
    me = resource.getrusage(resource.RUSAGE_SELF)
    workers = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + workers.ru_utime + workers.ru_stime


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--folders", type=int, default=100)
    parser.add_argument("--workers", type=int, default=None,
                        help="worker processes (default: the gallery's, one per usable CPU)")
    parser.add_argument("--copies", choices=COPIES, default="perturbed")
    parser.add_argument("--keep", default=None, help="copy the rendered page here")
    args = parser.parse_args(argv)
    if args.folders < 1:
        parser.error(f"--folders {args.folders}: at least 1")
    os.environ["THREADCOST_CACHE_DIR"] = ""  # empty: nothing kept, every folder judged
    from threadcost.views import gallery

    with tempfile.TemporaryDirectory(prefix="threadcost-gallery-") as tmp:
        data = Path(tmp) / "data"
        data.mkdir()
        _, changed = copies(data, args.folders, args.copies)
        cpu, started = _cpu_s(), time.monotonic()
        machines = gallery.collect(data, args.workers)
        index = gallery.write(gallery.page(machines, Path(tmp) / "out", "data/"),
                              Path(tmp) / "out")
        took, cpu = time.monotonic() - started, _cpu_s() - cpu
        size = index.stat().st_size
        if args.keep:
            Path(args.keep).mkdir(parents=True, exist_ok=True)
            shutil.copy(index, Path(args.keep) / "index.html")
    skipped = {m.machine_id: m.skipped for m in machines}
    wrong = [mid for mid, n in skipped.items() if n != skipped[mid.split("-copy")[0]]]
    if wrong:
        print(f"copies whose runs did not read back as their source's: {', '.join(wrong)}")
        return 2
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    workers = args.workers or gallery.default_workers()
    how = ", ".join(f"{n} {kind}" for kind, n in sorted(changed.items()))
    print(f"gallery of {args.folders} machine folders ({args.copies} copies"
          + (f": files changed {how}" if how else "") + f"): {took:,.1f} s wall, "
          f"{cpu:,.1f} s CPU on {workers} workers ({len(os.sched_getaffinity(0))} usable "
          f"CPUs, load average {load}); page {size / 1024:,.0f} KiB")
    met = took < TARGET_S * args.folders / 100
    print(f"target ({TARGET_S * args.folders / 100:,.0f} s for {args.folders} folders, "
          f"{TARGET_S:.0f} s per 100): {'met' if met else 'NOT met'}")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
