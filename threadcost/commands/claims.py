"""threadcost claims: the verdict on every published claim, from one machine's runs."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from threadcost.errors import ParameterError
from threadcost.results import Result, _json_safe

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


def execute(args: argparse.Namespace) -> Result:
    from threadcost import claims, paths
    from threadcost.store import datastore

    if args.data_dir:
        folder = Path(args.data_dir)
    elif getattr(args, "all_machines", False):  # the committed folders (where all are)
        folder = paths.reference_dir() or paths.data_dir()
    else:  # yours when you measured that machine, else the committed reference's
        from threadcost.host import machine as machine_mod

        folder = paths.data_dir_for(args.machine or machine_mod.machine_id())
        if not folder.is_dir():  # nothing measured here yet: the committed folders
            folder = paths.reference_dir() or folder
    if not folder.is_dir():
        raise ParameterError("--data-dir", str(folder), "an existing folder")
    present = datastore.machines_with_runs(folder)
    if not present:
        raise ParameterError("--data-dir", str(folder),
                             "a data folder holding <machine-id>/<run-id>/ folders; this "
                             "one has none")
    if args.machine is not None and args.machine not in present:
        raise ParameterError("--machine", args.machine,
                             f"a machine folder with runs under {folder.name}/: "
                             f"{', '.join(present)}")
    if getattr(args, "all_machines", False):
        return _all_machines(folder, present)
    from threadcost.host import machine

    mid = args.machine or machine.machine_id()
    if args.machine is None and mid not in present:
        raise ParameterError("--machine", None,
                             f"this machine has no folder under {folder.name}/; name "
                             f"one of: {', '.join(present)}")
    verdicts = claims.judge(args.machine, folder)
    rows = [v.as_dict() for v in verdicts]
    from threadcost.measured.runs import Runs

    refused = list(Runs.load(mid, folder).refused)
    if getattr(args, "json", False):  # the JSON is the list of verdicts: say it on stderr
        for line in refused:
            print(f"threadcost claims: {line}", file=sys.stderr)
    skipped = [s.as_dict() for s in datastore.skipped_runs(folder, mid)]
    rows = [{**row, "skipped": skipped} for row in rows]
    return ClaimsResult("claims", {"machine": args.machine, "data_dir": str(folder)},
                        {"tally": claims.tally(verdicts),
                         "readings": claims.tally_readings(verdicts),
                         "folklore": claims.folklore(verdicts),
                         "not_pooled": refused, "skipped": skipped}, verdicts=rows)


def _all_machines(folder: Path, present: list[str]) -> Result:
    """Every machine folder judged on its own runs: one row per claim."""
    from threadcost.claims import machines

    mids, rows = machines.across(folder, present)
    return ClaimsResult("claims", {"all_machines": True, "data_dir": str(folder)},
                        {"machines": mids, "across": True},
                        verdicts=[r.as_dict() for r in rows])


def format_text(result: Result) -> str:
    from threadcost.textout import table

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
