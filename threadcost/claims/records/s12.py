"""S12, Ulrich Drepper and Ingo Molnar, NPTL (2002): "running 100,000 concurrent
threads ... creating and destroying the threads did not take more than two
seconds" on IA-32."""

from __future__ import annotations

from threadcost.claims.model import Assertion, Claim
from threadcost.claims.read import further as sel

CLAIMS: tuple[Claim, ...] = (
    Claim("C35", (
        Assertion("As published: creating and destroying 100,000 threads takes no more than "
                  "two seconds (here in waves, the time scaled to 100,000 from each repeat's "
                  "rate)", "s", None, 2.0, sel.s12_seconds, timing=True, published=2.0,
                  tolerance_words="no more than 2 s"),
        Assertion("As published: 100,000 threads alive at once", "threads", 100_000, None,
                  sel.s12_concurrent, published=100_000.0,
                  tolerance_words="at least 100,000"),
    )),
)
