"""One machine's stored runs, looked up by experiment and setup (never by recency)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from threadcost import datastore


@dataclass(frozen=True)
class Runs:
    """The complete runs of one machine folder."""

    machine_id: str
    runs: tuple[datastore.Run, ...]

    @classmethod
    def load(cls, machine_id: str, data_dir: str | Path | None = None) -> Runs:
        return cls(machine_id, tuple(datastore.list_runs(data_dir=data_dir,
                                                         machine_id=machine_id)))

    def matching(self, experiment: str, **params: Any) -> list[datastore.Run]:
        """Runs of ``experiment`` whose parameters equal every given value.

        A value may be a callable (a predicate on the stored parameter). Runs
        are returned in run-id order; callers pool them, never pick the newest.
        """
        out = []
        for run in self.runs:
            if run.experiment != experiment:
                continue
            stored = run.meta.get("params", {})
            if all(_matches(stored.get(k, _ABSENT), v) for k, v in params.items()):
                out.append(run)
        return sorted(out, key=lambda r: r.meta["run_id"])

    def tables(self, runs: list[datastore.Run], name: str) -> pd.DataFrame:
        """One table of several runs, stacked, with ``run_id`` and ``run_index``."""
        frames = []
        for i, run in enumerate(runs):
            if name in run.meta.get("tables", []):
                frames.append(run.table(name).assign(run_id=run.meta["run_id"], run_index=i))
        return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


_ABSENT = object()


def _matches(stored: Any, wanted: Any) -> bool:
    if callable(wanted):
        return stored is not _ABSENT and bool(wanted(stored))
    return stored == wanted


def kernel_version(run: datastore.Run) -> tuple[int, int] | None:
    """(major, minor) of the kernel a run was measured on, from its fingerprint."""
    text = str(run.meta.get("machine", {}).get("kernel", ""))
    m = re.search(r"(\d+)\.(\d+)", text)
    return (int(m.group(1)), int(m.group(2))) if m else None


def run_ids(runs: list[datastore.Run]) -> str:
    return ", ".join(r.meta["run_id"] for r in runs)
