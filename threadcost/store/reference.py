"""``make reference``: this machine's runs of the last paper become the committed reference.

Your runs are written under ``runs/<machine-id>/`` (git-ignored, :mod:`threadcost.paths`);
the committed reference lives under ``data/<machine-id>/`` and changes only here. The
runs that ``make paper`` stored (listed in its ``html/_static/build.json``) are copied
into the reference folder, whole and atomically (a temporary name, then one rename),
never over a run already there.

    python -m threadcost.store.reference build/paper   # prints the reference folder
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

from threadcost import paths


def promote(paper_dir: Path) -> Path:
    """Copy the runs the paper in ``paper_dir`` stored into the committed folder."""
    build = json.loads((paper_dir / "html" / "_static" / "build.json").read_text("utf-8"))
    mid = str(build["machine_id"])
    ref = paths.reference_dir()
    if ref is None:
        raise SystemExit("reference: only a checkout has a committed reference (data/)")
    source = paths.data_dir() / mid
    target = ref / mid
    target.mkdir(parents=True, exist_ok=True)
    for name in build.get("runs", []):
        run = source / str(name)
        if Path(str(name)).name != name or not run.is_dir():
            raise SystemExit(f"reference: run {name} of {paper_dir} is not in {source}")
        if (target / name).exists():
            continue
        staging = target / f".{name}.partial"
        shutil.rmtree(staging, ignore_errors=True)
        shutil.copytree(run, staging, symlinks=False)
        staging.rename(target / name)
    return target


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m threadcost.store.reference <paper folder>", file=sys.stderr)
        return 2
    print(promote(Path(argv[0])))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
