"""threadcost claims: the verdict on every published claim, from one machine's runs."""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass, field
from typing import Any

from threadcost.results import Result, _json_safe
from threadcost.textout import table

NAME = "claims"
HELP = ("judge the published claims on one machine's stored runs, or on every machine's "
        "with --all-machines (no measuring)")
SAVES = False


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--machine", default=None,
                        help="machine folder under the data folder (default: this machine)")
    parser.add_argument("--all-machines", action="store_true",
                        help="judge every machine folder of the data folder: each claim's "
                             "verdict per machine, and the property that explains a flip")
    parser.add_argument("--data-dir", default=None,
                        help="data folder (default: the repository's data/ or "
                             "$THREADCOST_DATA_DIR)")


@dataclass
class ClaimsResult(Result):
    """A Result whose JSON is the list of claim objects (one per published claim)."""

    verdicts: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self, indent: int | None = None) -> str:
        return json.dumps(_json_safe(self.verdicts), indent=indent, allow_nan=False)


RUNS = "threadcost.commands.runners.claims:judge"


def arguments(args: argparse.Namespace) -> dict[str, Any]:
    return {"machine_id": args.machine, "data_dir": args.data_dir,
            "all_machines": getattr(args, "all_machines", False),
            "as_json": getattr(args, "json", False)}


def format_text(result: Result) -> str:
    assert isinstance(result, ClaimsResult)
    if result.summary.get("across"):
        mids = result.summary["machines"]
        lines = [table(["claim", *mids], [[r["claim"], *(r["verdicts"][m].split(" (")[0][:60]
                                                         for m in mids)]
                                          for r in result.verdicts]), ""]
        for r in result.verdicts:
            if r["flips"] and r["property"]:
                values = "; ".join(f"{m}: {v}" for m, v in r["property_values"].items())
                lines.append(f"{r['claim']} differs between machines; {r['property']}: "
                             f"{values}")
        return "\n".join(lines)
    rows = [[v["id"] + (" (finding)" if v.get("finding") else ""),
             v["verdict"].split(" (")[0]] for v in result.verdicts]
    lines = [table(["claim", "verdict"], rows), ""]
    lines += [v["takeaway"] for v in result.verdicts]  # each claim in one line, first
    lines.append("")
    lines += [v["sentence"] for v in result.verdicts]
    tally = result.summary["tally"]
    lines.append("")
    lines.append("published claims: " + ", ".join(f"{n} {cls}" for cls, n in tally.items()
                                                  if n))
    for kind, counts in result.summary.get("readings", {}).items():
        lines.append(f"{kind.replace('_', ' ')} readings: "
                     + ", ".join(f"{n} {k}" for k, n in counts.items() if n))
    lines.append("")
    lines += result.summary.get("folklore", [])
    lines += [line[0].upper() + line[1:] + "." for line in result.summary.get("not_pooled", [])]
    return "\n".join(lines)


def warnings(result: Result) -> list[str]:
    """Lines for stderr: every run that could not be read, with why."""
    return [f"skipped {s['path']}: {s['reason']}" for s in result.summary.get("skipped", [])]
