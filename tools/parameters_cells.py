"""Rewrite each notebook's parameters cell from threadcost/parameters.py.

    python tools/parameters_cells.py          # rewrite notebooks/*.py in place
    python tools/parameters_cells.py --check  # exit 1 naming any cell that differs
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from threadcost import parameters  # noqa: E402

CELL = re.compile(r'(# %% tags=\["parameters"\]\n)(.*?)(\n# %%)', re.S)


def current_cell(text: str) -> str:
    match = CELL.search(text)
    if match is None:
        raise ValueError("no parameters cell")
    return match.group(2) + "\n"


def rewrite(text: str, notebook: str) -> str:
    body = parameters.cell(notebook)
    return CELL.sub(lambda m: m.group(1) + body + m.group(3), text, count=1)


def main(argv: list[str]) -> int:
    check_only = "--check" in argv
    differ = []
    for path in sorted((REPO / "notebooks").glob("0*.py")):
        text = path.read_text(encoding="utf-8")
        new = rewrite(text, path.stem)
        if new != text:
            differ.append(path.name)
            if not check_only:
                path.write_text(new, encoding="utf-8")
    if differ:
        verb = "differ from threadcost/parameters.py" if check_only else "rewritten"
        print(f"parameters cells {verb}: {', '.join(differ)}")
    return 1 if (differ and check_only) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
