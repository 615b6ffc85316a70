"""The claims, collected from their records (threadcost/claims/records/, one module per
source).

Each record declares its published values once, its as-published readings (every
number the source printed, read like for like or by a labelled substitute), its shape
readings (the relations the source itself states) and the why functions that name
the cause of a difference. Tolerances follow the source's words: "about X" allows
X +/- 20% unless the words say more; a published range is used as given; "within
about 1%" is 0.99..1.01; "much more" / "far below" are at least 2x.
"""

from __future__ import annotations

from threadcost.claims.model import Claim
from threadcost.claims.records._help import ABOUT, about

__all__ = ["ABOUT", "CLAIMS", "GOROUTINES_FOR_TOKIO", "GO_PINGPONG_FOR_TOKIO",
           "PUBLISHED_YARDSTICKS", "about", "by_id"]


GOROUTINES_FOR_TOKIO = ("goroutines (Go's runtime: a user-space scheduler over the epoll "
                        "poller) stand in for S5's Tokio async tasks")
GO_PINGPONG_FOR_TOKIO = ("a goroutine channel ping-pong (GOMAXPROCS=1, pinned) stands in for "
                         "S5's switch between Tokio tasks; the thread side is a pipe "
                         "ping-pong between two threads on one CPU")

from threadcost.claims.records import discover  # noqa: E402  (after what records may import)

CLAIMS: tuple[Claim, ...] = discover()

# The yardsticks with a published value (S0-code: a 64 KiB memcpy, made in no cache,
# takes about 3 us).
PUBLISHED_YARDSTICKS = {"memcpy_64kib_cold": 3000.0}


def by_id() -> dict[str, Claim]:
    return {c.id: c for c in CLAIMS}
