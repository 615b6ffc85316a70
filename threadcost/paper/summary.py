"""The paper's answer at a glance: abstract, verdict tally and references.

Every number here is a finding (``threadcost.findings``), read by name: the same
findings notebook 00's headline figure and table read, so the index page's
abstract and page 00 cannot disagree. :func:`abstract_html` wraps each number in
its ``data-quantity`` span.

The verdict tally comes from the claims layer (``threadcost.claims``).
"""

from __future__ import annotations

import csv
import html
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from threadcost import claims, findings, paths
from threadcost.claims.published import REFERENCES_CSV  # the one citations file
from threadcost.views import claims as claims_view
from threadcost.views import headline as headline_view


@dataclass(frozen=True)
class Headline:
    """A thread's cost on one machine (None: not measured in the stored runs), with the
    definitions of notebook 00's headline: the findings it reads (``quantities``)."""

    total_kib: float | None  # memory per idle thread: resident + kernel side
    rss_kib: float | None  # of which resident (RSS growth)
    launch_us: float | None  # whole life: create, first run, join, exit (median)
    switch_us: float | None  # one switch: half a pinned futex batch's mean round trip
    quantities: dict[str, findings.Quantity] = field(default_factory=dict)

    @property
    def kernel_kib(self) -> float | None:
        if self.rss_kib is None or self.total_kib is None:
            return None
        return self.total_kib - self.rss_kib


# The abstract's numbers: findings, read by name (the headline's cells read the same).
MEMORY, RESIDENT = "memory_thread_slope_kib", "memory_thread_rss_slope_kib"
LAUNCH, SWITCH = "launch_thread_median_ns", "switch_thread_batch_median_ns"


def headline_numbers(data_dir: str | Path | None = None,
                     machine_id: str | None = None) -> Headline:
    """The thread's row of notebook 00's headline, from the stored runs of one machine."""
    q = {name: findings.get(name, data_dir, machine_id)  # (each computed once a folder)
         for name in (MEMORY, RESIDENT, LAUNCH, SWITCH)}

    def value(name: str, scale: float = 1.0) -> float | None:
        return q[name].value * scale if q[name].measured and q[name].value is not None \
            else None

    return Headline(total_kib=value(MEMORY), rss_kib=value(RESIDENT),
                    launch_us=value(LAUNCH, 1e-3), switch_us=value(SWITCH, 1e-3),
                    quantities=q)


def about(x: float) -> str:
    """A number as a reader says it: two significant figures, thousands separated."""
    if x == 0 or not math.isfinite(x):
        return f"{x:g}"
    digits = 1 - math.floor(math.log10(abs(x)))
    return f"{round(x, digits):,.{max(digits, 0)}f}"


def abstract(data_dir: str | Path | None = None, machine_id: str | None = None,
             machine_text: str = "") -> list[str]:
    """The answer in three sentences, from the stored runs (plain text)."""
    return [_plain(s) for s in abstract_html(data_dir, machine_id, machine_text)]


def _plain(text: str) -> str:
    """An abstract sentence without its markup."""
    return html.unescape(re.sub(r"<[^>]+>", "", text))


def abstract_html(data_dir: str | Path | None = None, machine_id: str | None = None,
                  machine_text: str = "") -> list[str]:
    """The answer in three sentences (HTML: each number in its finding's span, the same
    value page 00's headline prints)."""
    h = headline_numbers(data_dir, machine_id)
    q = h.quantities
    mem, rss, launch, switch = (findings.span(q[n]) for n in (MEMORY, RESIDENT, LAUNCH, SWITCH))
    if h.total_kib is not None and h.rss_kib is not None:
        memory = (f"An idle thread costs about {mem} of memory, of which only {rss} is "
                  "visible in its process's resident set (RSS); the rest is kernel memory "
                  "(kernel stack, task structures, page tables) that RSS does not count "
                  "(only the page tables show per process, in VmPTE).")
    elif h.total_kib is not None:
        memory = (f"An idle thread costs about {mem} of memory, resident and kernel side "
                  "together.")
    else:
        memory = "The memory of an idle thread was not measured in this run."
    if h.launch_us is not None and h.switch_us is not None:
        time = (f"It starts and ends (its whole life: create, first run, join) in about "
                f"{launch}, and switches to another thread on the same CPU in about "
                f"{switch}.")
    elif h.launch_us is not None:
        time = (f"It starts and ends (its whole life: create, first run, join) in about "
                f"{launch}; its switch time was not measured in this run.")
    elif h.switch_us is not None:
        time = (f"It switches to another thread on the same CPU in about {switch}; its "
                "launch time was not measured in this run.")
    else:
        time = "Its launch and switch times were not measured in this run."
    time += _contrast(data_dir, machine_id)
    against = ("processes, fibers, goroutines, Rust and Tokio tasks and Java's platform and "
               "virtual threads, and against every published claim below.")
    where = (f"Measured on {html.escape(machine_text.rstrip('.'))}, and set against {against}"
             if machine_text else f"Measured on this machine, and set against {against}")
    return [memory, time, where,
            claims_view.folklore_md(claims.judge(machine_id, data_dir))]


def _contrast(data_dir: str | Path | None, machine_id: str | None) -> str:
    """Page 00's sentence of ratios (process vs thread, thread vs goroutine), as HTML:
    the abstract's thread set against its alternatives, from the same headline cells."""
    text = headline_view.sentence(headline_view.cells(data_dir, machine_id))
    if text.startswith("Too few"):
        return ""
    # the sentence is the project's words and findings' spans (which escape their text)
    return " " + re.sub(r"\*\*(.+?)\*\*", r"<b>\1</b>", text)


def verdict_tally(data_dir: str | Path | None = None,
                  machine_id: str | None = None) -> dict[str, int]:
    """How many published claims got each verdict class on one machine."""
    return claims.tally(claims.judge(machine_id, data_dir))


def claim_verdicts(data_dir: str | Path | None = None,
                   machine_id: str | None = None) -> Any:
    """One row per published claim on one machine: ``claim_id``, ``verdict_class``."""
    import pandas as pd

    return pd.DataFrame([{"claim_id": v.id, "verdict_class": v.verdict}
                         for v in claims.judge(machine_id, data_dir)])


def references(published_dir: Path | None = None) -> list[dict[str, str]]:
    """The published sources the paper cites (``data/published/references.csv``)."""
    folder = published_dir if published_dir is not None else paths.published_dir()
    with open(folder / REFERENCES_CSV, newline="", encoding="utf-8") as fh:
        return [dict(row) for row in csv.DictReader(fh)]
