"""The claims across machines: each claim's verdict on every machine folder of a data
folder, and the machine property that explains a verdict which flips between them (the
one its record names, read from each folder's own runs: :mod:`.properties`). A folder
that cannot feed a claim says "not measured on this machine: <why>" in its cell, never
a blank.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from threadcost import claims, paths, vocabulary
from threadcost.claims import catalogue
from threadcost.claims.model import NOT_RUN, ClaimVerdict, MachineProperty
from threadcost.findings import folder_cache
from threadcost.measured.runs import Runs
from threadcost.store import datastore


@dataclass(frozen=True)
class Row:
    """One claim across the machine folders."""

    claim: str
    cells: dict[str, str]  # machine id -> the verdict there, or "not measured ..."
    classes: dict[str, str]  # machine id -> the verdict class (measured folders only)
    flips: bool
    property_name: str = ""
    property_values: dict[str, str] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {"claim": self.claim, "verdicts": dict(self.cells),
                "classes": dict(self.classes), "flips": self.flips,
                "property": self.property_name,
                "property_values": dict(self.property_values)}


def _cell(v: ClaimVerdict) -> str:
    if v.verdict == NOT_RUN and v.reason.startswith("no verdict"):
        return v.reason
    if v.verdict == NOT_RUN:
        reason = vocabulary.bare_reason(v.reason)
        return f"not measured on this machine: {reason}" if reason else \
            "not measured on this machine: no run of its experiment is stored"
    return v.label or v.verdict


def across(data_dir: str | Path | None = None,
           machine_ids: list[str] | None = None) -> tuple[list[str], list[Row]]:
    """(the machine folders, one row per claim): every folder judged on its own runs."""

    mids = machine_ids if machine_ids is not None else datastore.machines_with_runs(data_dir)
    per = {mid: claims.judge(mid, data_dir) for mid in mids}
    return list(mids), rows(per, lambda mid: properties(mid, data_dir))


def rows(judged: dict[str, list[ClaimVerdict]],
         values_of: Callable[[str], dict[str, str | None]]) -> list[Row]:
    """One row per claim from each machine's verdicts (``judged``: machine id -> its
    :func:`claims.judge`), a flip's property read with ``values_of`` (machine id -> its
    :func:`properties`): what :func:`across` returns, for verdicts judged elsewhere (the
    gallery judges its folders in worker processes)."""
    mids = list(judged)
    values_of = functools.cache(values_of)  # one reading per folder, not one per claim
    per = {mid: {v.id: v for v in judged[mid]} for mid in mids}
    ids = list(dict.fromkeys(cid for mid in mids for cid in per[mid]))
    records = catalogue.by_id()
    out = []
    for cid in ids:
        cells = {mid: _cell(per[mid][cid]) if cid in per[mid] else
                 "not measured on this machine: the claim is not in its catalogue"
                 for mid in mids}
        classes = {mid: per[mid][cid].verdict for mid in mids
                   if cid in per[mid] and per[mid][cid].verdict != NOT_RUN}
        # a flip: the verdict as shown (every judged reading's class) differs between two
        # machines that measured the claim
        shown = {cells[mid] for mid in classes}
        flips = len(shown) > 1
        name, values = "", {}
        prop = records[cid].flips_on if cid in records else None
        if flips and prop is not None:
            name = prop.words
            for mid in mids:
                values[mid] = values_of(mid).get(cid) or "not recorded on this machine"
        out.append(Row(cid, cells, classes, flips, name, values))
    return out


def _read_properties(mid: str, data_dir: str | Path | None) -> dict[str, str | None]:
    """Claim -> the value on folder ``mid`` of the machine property its record says a
    flip of its verdict turns on (None: not recorded there), for every claim that names
    one."""
    runs = Runs.load(mid, data_dir)
    out: dict[str, str | None] = {}
    read: dict[MachineProperty, str | None] = {}  # a property many claims name: read once
    for record in catalogue.CLAIMS:
        prop = record.flips_on
        if prop is None:
            continue
        if prop not in read:
            try:
                got = prop.read(runs)
            except (KeyError, ValueError, IndexError, TypeError):
                got = None
            read[prop] = None if got is None else str(got)
        out[record.id] = read[prop]
    return out


def properties(mid: str, data_dir: str | Path | None = None) -> dict[str, str | None]:
    """:func:`_read_properties`, once per folder's contents: kept across the processes of
    a paper build (``threadcost.findings.folder_cache``) with the folder's verdicts."""
    root = Path(data_dir) if data_dir is not None else paths.data_dir_for(mid)
    return folder_cache.memo("properties", root, mid, lambda: _read_properties(mid, data_dir))
