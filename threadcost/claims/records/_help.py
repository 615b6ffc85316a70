"""Small helpers the record modules share: tolerances from the source's words."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from threadcost.claims.logic import number
from threadcost.claims.model import Claim, Published, Reading

ABOUT = 0.20  # "about X": X +/- 20% unless the words say more


def about(x: float, share: float = ABOUT) -> tuple[float, float]:
    return x * (1 - share), x * (1 + share)


def about_reading(text: str, unit: str, x: float, select: Any, quote: str = "",
                  **kw: Any) -> Reading:
    lo, hi = about(x)
    return Reading(text, unit, lo, hi, select, published=x, quote=quote,
                   tolerance_words=f"about {number(x)} (+/- 20%)", **kw)


def values(*rows: Published) -> dict[str, float]:
    return {p.quantity: p.value for p in rows}


def of_source(source: str, source_doc: str = "", their_machine: str = "") -> Callable[..., Claim]:
    """``Claim(...)`` with what its source module shares typed once: the source's key (in
    ``data/published/references.csv``), its document in a few words and the machine it
    measured on (a claim may still give its own)."""
    return functools.partial(Claim, source=source, source_doc=source_doc,
                             their_machine=their_machine)
