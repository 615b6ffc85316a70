"""What a user sees of stored runs, written down so two commits can be compared.

A refactoring must leave every output as it was. For one checkout (``--tree``, default
this one) and the machine folders of a data folder, this renders each folder's paper
without measuring (``python -m threadcost.paper --machine``), keeps the visible text of
every page (``threadcost.paper.hygiene.visible_text``: what a reader reads, not the
folded code) and the JSON of ``threadcost claims --json`` per folder and
``--all-machines``, one file each under ``OUT``::

    python tools/outputs_snapshot.py take OUT [--tree DIR] [--data DIR] [--machine ID ...]
    python tools/outputs_snapshot.py compare OUT_A OUT_B [--code-moved]

``make outputs-check BASE=<commit>`` takes both (``BASE`` in a temporary worktree, the
checkout as it is) for every folder of ``data/`` and any ``DATA=<folder>`` and compares
them: exit 1 naming each file that differs, with its first differing lines. Runs are
read, never written: each render works on a copy of the data folder. ``--code-moved``
(``CODE_MOVED=1``) compares the pages without the modules their provenance lines link
to (``· code: ...``), for a change that moves modules: those links name the new paths.
"""

from __future__ import annotations

import argparse
import difflib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
PAGE_TEXT = """
import sys
from pathlib import Path
from threadcost.paper import hygiene
for page in sorted(Path(sys.argv[1]).glob("*.html")):
    lines = (line.strip() for line in hygiene.visible_text(page.read_text()).splitlines())
    Path(sys.argv[2], page.stem + ".txt").write_text("\\n".join(x for x in lines if x) + "\\n")
"""


def _machines(data: Path) -> list[str]:
    return sorted(p.name for p in data.iterdir()
                  if p.is_dir() and p.name != "published" and not p.name.startswith("."))


def _run(tree: Path, args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *args], cwd=tree, env=env, text=True,
                          capture_output=True, timeout=1800, check=False)


def take(out: Path, tree: Path, data: Path, machines: list[str]) -> int:
    """Render and record each folder; returns the number of folders that failed."""
    out.mkdir(parents=True, exist_ok=True)
    failed = 0
    with tempfile.TemporaryDirectory(prefix="tc-outputs-") as scratch:
        copy = Path(scratch, "data")
        shutil.copytree(data, copy)
        env = {**os.environ, "PYTHONPATH": str(tree), "THREADCOST_DATA_DIR": str(copy),
               "MPLBACKEND": "Agg"}
        for machine in machines or _machines(copy):
            where = out / machine
            (where / "pages").mkdir(parents=True, exist_ok=True)
            paper = Path(scratch, "paper-" + machine)
            env["THREADCOST_FIGURES_DIR"] = str(Path(scratch, "figures-" + machine))
            rendered = _run(tree, ["-m", "threadcost.paper", "--machine", machine, "--params",
                                   "params/default.yaml", "--out", str(paper)], env)
            (where / "render.txt").write_text(f"exit {rendered.returncode}\n")
            if rendered.returncode == 0:
                _run(tree, ["-c", PAGE_TEXT, str(paper / "html"), str(where / "pages")], env)
            else:
                failed += 1
                print(f"{machine}: the paper did not render (exit {rendered.returncode}): "
                      f"{rendered.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
            judged = _run(tree, ["-m", "threadcost", "claims", "--json", "--machine", machine,
                                 "--data-dir", str(copy)], env)
            (where / "claims.json").write_text(f"exit {judged.returncode}\n{judged.stdout}")
            print(f"{machine}: recorded", file=sys.stderr)
        every = _run(tree, ["-m", "threadcost", "claims", "--json", "--all-machines",
                            "--data-dir", str(copy)], env)
        (out / "all-machines.json").write_text(f"exit {every.returncode}\n{every.stdout}")
    return failed


CODE_LINKS = re.compile(r"\s*· code: .*$", re.M)


def _text(path: Path, code_moved: bool) -> str:
    text = path.read_text(encoding="utf-8")
    return CODE_LINKS.sub("", text) if code_moved else text


def compare(a: Path, b: Path, code_moved: bool = False) -> int:
    """Print each file that differs between two snapshots; returns how many."""
    names = sorted({p.relative_to(a) for p in a.rglob("*") if p.is_file()}
                   | {p.relative_to(b) for p in b.rglob("*") if p.is_file()})
    differing = 0
    for name in names:
        left, right = a / name, b / name
        if not (left.is_file() and right.is_file()):
            differing += 1
            print(f"{name}: only in {a if left.is_file() else b}")
            continue
        if _text(left, code_moved) != _text(right, code_moved):
            differing += 1
            diff = difflib.unified_diff(_text(left, code_moved).splitlines(),
                                        _text(right, code_moved).splitlines(), n=0,
                                        lineterm="")
            shown = [line for line in diff if not line.startswith(("---", "+++", "@@"))]
            print(f"{name}: differs ({len(shown)} lines)")
            for line in shown[:8]:
                print("   ", line[:200])
    print(f"{len(names)} files compared, {differing} differ")
    return differing


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    taking = commands.add_parser("take", help="render and record each machine folder")
    taking.add_argument("out", type=Path)
    taking.add_argument("--tree", type=Path, default=HERE, help="the checkout to render with")
    taking.add_argument("--data", type=Path, default=HERE / "data", help="the data folder")
    taking.add_argument("--machine", action="append", default=[],
                        help="a machine folder (default: every one)")
    comparing = commands.add_parser("compare", help="compare two recorded snapshots")
    comparing.add_argument("a", type=Path)
    comparing.add_argument("b", type=Path)
    comparing.add_argument("--code-moved", action="store_true",
                           help="leave out the code links of the pages' provenance lines")
    args = parser.parse_args()
    if args.command == "take":
        # absolute: each render runs in the tree it renders with (cwd), not here
        return 1 if take(args.out.resolve(), args.tree.resolve(), args.data.resolve(),
                         args.machine) else 0
    return 1 if compare(args.a, args.b, args.code_moved) else 0


if __name__ == "__main__":
    sys.exit(main())
