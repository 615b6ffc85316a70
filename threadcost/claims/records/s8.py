"""S8, Boost.Context's Performance page (Boost 1.87): a switch with fcontext_t at
9 ns / 19 cycles against 547 ns / 1,130 cycles with ucontext_t (each the mean
over many switches: the time of a loop divided by its switches)."""

from __future__ import annotations

from threadcost.claims import whys
from threadcost.claims.model import Claim, Context, Reading
from threadcost.claims.read import further as sel

PUBLISHED_RATIO = 547 / 9
HAND_WRITTEN = ("a hand-written register switch in C (callee-saved registers and the stack "
                "pointer) stands in for Boost's fcontext_t, which is not built here")

CLAIMS: tuple[Claim, ...] = (
    # one measurement, one verdict: the ratio is judged once, against the published 61x
    # (not again against a looser "much cheaper" bound of the project's own)
    Claim("C31", as_published=(
        Reading("A ucontext_t switch costs about 61 times an fcontext_t one (547 ns against "
                "9 ns): swapcontext / hand-written switch", "ratio",
                PUBLISHED_RATIO * 0.8, PUBLISHED_RATIO * 1.2, sel.s8_ratio, timing=True,
                published=PUBLISHED_RATIO, tolerance_words="about 61 (+/- 20%)",
                substitute=HAND_WRITTEN,
                why=(whys.computed(sel.s8_why, "rt_sigprocmask calls in the gap"),)),
    ), context=(
        Context("hand-written switch (fcontext_t: 9 ns)", 9, "ns", sel.s8_ns("asm")),
        Context("swapcontext switch (ucontext_t: 547 ns)", 547, "ns", sel.s8_ns("ucontext")),
        Context("one empty rt_sigprocmask", None, "ns", sel.s8_ns("sigprocmask")),
    )),
)
