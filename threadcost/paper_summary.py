"""The paper's answer at a glance: abstract, verdict tally and references.

Every number here comes from one function, :func:`headline_numbers`, which reads
:func:`threadcost.views.headline.cells`, the function that draws notebook 00's
headline figure and table, so the index page's abstract and page 00 cannot
disagree.

The verdict tally comes from the claims layer (``threadcost.claims``).
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from threadcost import paths
from threadcost.claims.published import REFERENCES_CSV  # the one citations file


@dataclass(frozen=True)
class Headline:
    """A thread's cost on one machine (None: not measured in the stored runs), with the
    definitions of notebook 00's headline (``views.headline``)."""

    total_kib: float | None  # memory per idle thread: resident + kernel side
    rss_kib: float | None  # of which resident (RSS growth)
    launch_us: float | None  # whole life: create, first run, join, exit (median)
    switch_us: float | None  # one switch, futex ping-pong on one CPU (median)

    @property
    def kernel_kib(self) -> float | None:
        if self.rss_kib is None or self.total_kib is None:
            return None
        return self.total_kib - self.rss_kib


def _finite(x: Any) -> float | None:
    try:
        value = float(x)
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None


def headline_numbers(data_dir: str | Path | None = None,
                     machine_id: str | None = None) -> Headline:
    """The thread's row of notebook 00's headline, from the stored runs of one machine."""
    from threadcost.views import headline

    cells = headline.cells(data_dir, machine_id)
    row = {r.column: r for r in cells[cells.task == "thread"].itertuples(index=False)}

    def get(column: str, field: str = "value") -> float | None:
        return _finite(getattr(row[column], field)) if column in row else None

    launch, switch = get("launch"), get("switch")
    return Headline(total_kib=get("memory"), rss_kib=get("memory", "resident"),
                    launch_us=launch / 1000 if launch is not None else None,
                    switch_us=switch / 1000 if switch is not None else None)


def about(x: float) -> str:
    """A number as a reader says it: two significant figures, thousands separated."""
    if x == 0 or not math.isfinite(x):
        return f"{x:g}"
    digits = 1 - math.floor(math.log10(abs(x)))
    return f"{round(x, digits):,.{max(digits, 0)}f}"


def abstract(data_dir: str | Path | None = None, machine_id: str | None = None,
             machine_text: str = "") -> list[str]:
    """The answer in three sentences, from the stored runs (plain text)."""
    h = headline_numbers(data_dir, machine_id)
    if h.total_kib is not None and h.rss_kib is not None:
        memory = (f"An idle thread costs about {about(h.total_kib)} KiB of memory, of which "
                  f"only {about(h.rss_kib)} KiB is visible in its process's resident set "
                  "(RSS); the rest is kernel memory (kernel stack, task structures, page "
                  "tables) that no per-process counter shows.")
    elif h.total_kib is not None:
        memory = (f"An idle thread costs about {about(h.total_kib)} KiB of memory, resident "
                  "and kernel side together.")
    else:
        memory = "The memory of an idle thread was not measured in this run."
    if h.launch_us is not None and h.switch_us is not None:
        time = (f"It starts and ends (its whole life: create, first run, join) in about "
                f"{about(h.launch_us)} µs, and switches to another thread on the same CPU in "
                f"about {about(h.switch_us)} µs.")
    elif h.launch_us is not None:
        time = (f"It starts and ends (its whole life: create, first run, join) in about "
                f"{about(h.launch_us)} µs; its switch time was not measured in this run.")
    elif h.switch_us is not None:
        time = (f"It switches to another thread on the same CPU in about "
                f"{about(h.switch_us)} µs; its launch time was not measured in this run.")
    else:
        time = "Its launch and switch times were not measured in this run."
    where = (f"Measured on {machine_text.rstrip('.')}, and set against processes, fibers "
             "and goroutines and against every published claim below."
             if machine_text else
             "Measured on this machine, and set against processes, fibers and goroutines "
             "and against every published claim below.")
    from threadcost import claims  # which folklore holds here, which does not, and why

    return [memory, time, where, *claims.folklore(claims.judge(machine_id, data_dir))]


def verdict_tally(data_dir: str | Path | None = None,
                  machine_id: str | None = None) -> dict[str, int]:
    """How many published claims got each verdict class on one machine."""
    from threadcost import claims

    return claims.tally(claims.judge(machine_id, data_dir))


def claim_verdicts(data_dir: str | Path | None = None,
                   machine_id: str | None = None) -> Any:
    """One row per published claim on one machine: ``claim_id``, ``verdict_class``."""
    import pandas as pd

    from threadcost import claims

    return pd.DataFrame([{"claim_id": v.id, "verdict_class": v.verdict}
                         for v in claims.judge(machine_id, data_dir)])


def references(published_dir: Path | None = None) -> list[dict[str, str]]:
    """The published sources the paper cites (``data/published/references.csv``)."""
    folder = published_dir if published_dir is not None else paths.published_dir()
    with open(folder / REFERENCES_CSV, newline="", encoding="utf-8") as fh:
        return [dict(row) for row in csv.DictReader(fh)]
