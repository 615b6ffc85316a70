"""What a reading of stored runs gives: a :class:`Measurement` (a value with its
interval and repeats) or a :class:`Missing` (why none could be read). Findings and
claims both hand these out."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Measurement:
    """One number read from stored runs, with the spread across its repeats.

    ``low``..``high`` is a 95% interval from the repeats (or a slope's interval);
    ``repeats`` counts independent repeats (fresh tasks or processes each time).
    ``setup`` holds the run parameters the number was read under.
    """

    value: float
    unit: str
    low: float | None = None
    high: float | None = None
    repeats: int = 1
    setup: dict[str, Any] = field(default_factory=dict)
    run_id: str = ""
    how: str = ""
    computed: bool = False
    unjudgeable: str = ""  # why this reading cannot carry a verdict (then inconclusive)
    substitute: str | None = None  # a stand-in method this reading fell back to
    where: str = ""  # the setup in a few words, shown with the value ("at 1,000 tasks")
    # why the source's setup cannot run as published on this machine (saturated CPUs, a
    # limit): then "not reproducible on this machine: <why>", never "underpowered"
    not_reproducible: str = ""
    # the interval spans a setting the source does not state (a copy's cache state), not
    # sampling error: an inconclusive verdict says so, and more repeats would not help
    spans: str = ""


@dataclass(frozen=True)
class Missing:
    """Why no measurement could be read (shown as "not run here: <reason>")."""

    reason: str
