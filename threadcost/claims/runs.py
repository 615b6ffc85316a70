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

    def with_results(self, results: list[Any], fingerprint: dict[str, Any]) -> Runs:
        """These runs with in-memory results (not yet saved) in place of the stored runs
        of the same experiments: a notebook judges what it has just measured."""
        fresh = [MemoryRun.of(r, i, fingerprint) for i, r in enumerate(results)]
        replaced = {r.experiment for r in fresh}
        kept = tuple(r for r in self.runs if r.experiment not in replaced)
        return Runs(self.machine_id, kept + tuple(fresh))

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


@dataclass(frozen=True)
class MemoryRun(datastore.Run):
    """A Result not (yet) saved, looked at as a stored run."""

    frames: dict[str, pd.DataFrame] | None = None

    @classmethod
    def of(cls, result: Any, index: int, fingerprint: dict[str, Any]) -> MemoryRun:
        meta = {"experiment": result.experiment,
                "run_id": f"this notebook's {result.experiment} run ({index + 1}, unsaved)",
                "params": result.params, "summary": result.summary,
                "tables": list(result.tables), "machine": fingerprint, "complete": True}
        return cls(path=Path("."), meta=meta, frames=dict(result.tables))

    def table(self, name: str) -> pd.DataFrame:
        if self.frames is None or name not in self.frames:
            raise datastore.DataError(f"no table {name!r} in this unsaved run")
        return self.frames[name]


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
