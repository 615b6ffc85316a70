"""Findings read from one number of a run's summary: the newest stored run of an
experiment (the headline's rule), optionally the one whose parameters match.

``from_summary(name, experiment, path, ...)`` registers the finding ``name`` as
``summary[path[0]][path[1]]...`` of that run, times ``factor``. A page that prints a
summary's number prints it through its finding, so the number carries its name and the
run it was read from."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from threadcost.findings import Value, newest, quantity
from threadcost.findings.headline import latest
from threadcost.measured.runs import Runs


def _dig(summary: Any, path: Sequence[str | int]) -> Any:
    for key in path:
        summary = summary[key]
    return summary


def from_summary(name: str, experiment: str, path: Sequence[str | int], unit: str,
                 statistic: str, definition: str, factor: float = 1.0,
                 params: dict[str, Any] | None = None, fmt: str = ",.0f",
                 scale: float = 1.0, display_unit: str = "",
                 computed: bool = False) -> None:
    """Register ``name``: ``summary[path...] * factor`` of the newest ``experiment`` run
    whose parameters include ``params``."""
    def read(run: Any) -> float | None:
        value = _dig(run.meta["summary"], path)
        return None if value is None else float(value) * factor

    from_run(name, experiment, read, unit, statistic, definition, fmt=fmt, scale=scale,
             display_unit=display_unit, computed=computed, params=params,
             lacking=f"has no {'/'.join(map(str, path))}")


def from_run(name: str, experiment: str, read: Callable[[Any], float | None], unit: str,
             statistic: str, definition: str, fmt: str = "auto", scale: float = 1.0,
             display_unit: str = "", computed: bool = False,
             interval: Callable[[Any], tuple[float, float]] | None = None,
             params: dict[str, Any] | None = None, lacking: str = "cannot give it") -> None:
    """Register ``name``: ``read(run)`` of the newest ``experiment`` run whose parameters
    include ``params`` (a stored run, or a notebook's unsaved result through
    ``findings.of_results``); ``interval(run)``: its 95% interval, where the run stores
    one."""
    def where(run: Any) -> bool:
        got = run.meta.get("params", {})
        return all(got.get(k) == v for k, v in (params or {}).items())

    def compute(runs: Runs) -> Value | str:
        run = latest(runs, experiment, where)
        if run is None:
            return f"no {experiment} run stored"
        value = read(run)
        if value is None:
            return f"the stored {experiment} run {lacking}"
        low, high = interval(run) if interval is not None else (None, None)
        return Value(float(value), low, high, runs=[run],
                     setup={"experiment": experiment, **(params or {})})

    quantity(name, unit, statistic, definition, fmt=fmt, scale=scale,
             display_unit=display_unit, computed=computed, reads=newest(experiment))(compute)
