"""Write what is generated from the parameter declarations (the families' specs,
threadcost/experiments/<family>/spec.py):
each notebook's parameters cell and params/default.yaml (`make params`).

    python tools/parameters_cells.py          # rewrite notebooks/*.py and default.yaml
    python tools/parameters_cells.py --check  # exit 1 naming any file that differs
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from threadcost.experiments import parameters  # noqa: E402

CELL = re.compile(r'(# %% tags=\["parameters"\]\n)(.*?)(\n# %%)', re.S)
DEFAULT_SET = REPO / "params" / "default.yaml"
HEADER = """\
# Generated from the declarations in the families' specs (threadcost/experiments/<family>/
# spec.py) by `make params` (tools/parameters_cells.py): do not edit. To change a default,
# change its declaration and run `make params`; tests/test_parameters.py fails while this
# file differs.
#
# Default parameters of `make paper`: the whole study in a few minutes on 2 cores.
# One flat set, as papermill takes it (`papermill -f params/default.yaml ...`):
# each notebook reads the names it declares in its `parameters` cell and
# papermill ignores the rest. Names are prefixed by experiment; each line's comment
# is its declaration's, with the unit and the range a value must be in.
"""


def current_cell(text: str) -> str:
    match = CELL.search(text)
    if match is None:
        raise ValueError("no parameters cell")
    return match.group(2) + "\n"


def rewrite(text: str, notebook: str) -> str:
    body = parameters.cell(notebook)
    return CELL.sub(lambda m: m.group(1) + body + m.group(3), text, count=1)


def _yaml(value: Any) -> str:
    """A default written as YAML, lists in flow style (``[malloc, mmap]``)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(_yaml(v) for v in value) + "]"
    if isinstance(value, str):
        plain = re.fullmatch(r"[A-Za-z][A-Za-z0-9_-]*", value) and value not in (
            "null", "true", "false", "yes", "no", "on", "off")
        return value if plain else json.dumps(value)
    return repr(value)


def _comment(p: parameters.Param) -> str:
    """The declaration's words and range (``readings taken while touching (2 .. 10,000)``)."""
    allowed = p.range_text()
    return f"  # {p.doc}" + (f" ({allowed})" if allowed else "")


def default_set() -> str:
    """params/default.yaml: every declared default a parameter set carries, grouped
    by notebook (the shared ones first), each with its declaration's comment."""
    groups: dict[str, list[parameters.Param]] = {"common": []}
    for p in parameters.DECLARATIONS:
        if p.name in parameters.NOT_IN_SETS:
            continue
        key = "common" if len(p.notebooks) > 1 else p.notebooks[0]
        groups.setdefault(key, []).append(p)
    order = ["common", *parameters.ALL]
    lines = [HEADER]
    for key in sorted(groups, key=order.index):
        lines.append(f"\n# --- {key} ---\n")
        lines += [f"{p.name}: {_yaml(p.default)}{_comment(p)}\n" for p in groups[key]]
    return "".join(lines)


def main(argv: list[str]) -> int:
    check_only = "--check" in argv
    differ = []
    outputs = {path: rewrite(path.read_text(encoding="utf-8"), path.stem)
               for path in sorted((REPO / "notebooks").glob("0*.py"))}
    outputs[DEFAULT_SET] = default_set()
    for path, new in outputs.items():
        old = path.read_text(encoding="utf-8") if path.exists() else ""
        if new != old:
            differ.append(str(path.relative_to(REPO)))
            if not check_only:
                path.write_text(new, encoding="utf-8")
    if differ:
        verb = ("differ from the families' specs (threadcost/experiments/<family>/spec.py)"
                if check_only else "rewritten")
        print(f"{verb}: {', '.join(differ)}")
    return 1 if (differ and check_only) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
