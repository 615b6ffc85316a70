"""S7, Baumann et al., "A fork() in the road" (HotOS 2019): fork+exec against
posix_spawn as the parent's memory grows. Figure 1's values could not be read
from the source here, so this claim has no "as published" number, only its shape."""

from __future__ import annotations

from threadcost.claims.model import Assertion, Claim
from threadcost.claims.read import further as sel

CLAIMS: tuple[Claim, ...] = (
    Claim("C30", (
        Assertion("Shape: fork+exec slows as the parent's dirty memory grows (whole life at "
                  "the largest parent size / at 0 MiB)", "ratio", 1.1, None,
                  sel.s7_growth("fork_exec"), timing=True, published=None,
                  tolerance_words="grows: more than 10% slower at the largest size"),
        Assertion("Shape: posix_spawn's cost stays flat with the parent's size (largest / "
                  "0 MiB)", "ratio", 0.9, 1.1, sel.s7_growth("posix_spawn"), timing=True,
                  published=1.0, tolerance_words="flat: within 10%"),
        Assertion("Why: fork+exec's growth per MiB, in a bare fork's growth per MiB",
                  "ratio", None, None, sel.s7_why),
    )),
)
