"""The claims, collected from their records (threadcost/claims/records/, one module per
source, and threadcost/claims/sources/ for further sources).

Each record declares its published values once, its as-published readings (every
number the source printed, measured here the way the source measured it), its shape
readings (the relations the source itself states) and the why functions that name
the cause of a difference. Tolerances follow the source's words: "about X" allows
X +/- 20% unless the words say more; a published range is used as given; "within
about 1%" is 0.99..1.01; "much more" / "far below" are at least 2x.
"""

from __future__ import annotations

from threadcost.claims.model import Claim
from threadcost.claims.records import discover
from threadcost.claims.records._help import ABOUT, about

__all__ = ["ABOUT", "CLAIMS", "PUBLISHED_YARDSTICKS", "about", "by_id"]

CLAIMS: tuple[Claim, ...] = discover()

# The yardsticks with a published value (S0-code: a 64 KiB memcpy, made in no cache,
# takes about 3 us).
PUBLISHED_YARDSTICKS = {"memcpy_64kib_cold": 3000.0}


def by_id() -> dict[str, Claim]:
    return {c.id: c for c in CLAIMS}
