"""S8, Boost.Context's Performance page (Boost 1.87): a switch with fcontext_t at
9 ns / 19 cycles against 547 ns / 1,130 cycles with ucontext_t (each the mean
over many switches: the time of a loop divided by its switches)."""

from __future__ import annotations

from threadcost.claims import properties, whys
from threadcost.claims.model import Claim, Context, Published, Quote, Reading
from threadcost.claims.records._help import of_source
from threadcost.findings import more_sources as sel

PUBLISHED_RATIO = 547 / 9
HAND_WRITTEN = ("a hand-written register switch in C (callee-saved registers and the stack "
                "pointer) stands in for Boost's fcontext_t, which is not built here")

SOURCE_DOC = "Boost.Context documentation (Boost 1.87), Performance, Table 1.1"

claim = of_source("S8", SOURCE_DOC,
                  "dual Intel XEON E5 2620v4 2.2GHz, 16C/32T, 64GB RAM, Linux (x86_64), "
                  "gcc-6.3.1")

# the source's sentences, each reading's among them
C31_QUOTES = (Quote(("Table 1.1. Performance of context switch: callcc()/continuation "
                         "(fcontext_t) | callcc()/continuation (ucontext_t) | "
                         "callcc()/continuation (Windows-Fiber) — 9 ns / 19 CPU cycles | 547 ns "
                         "/ 1130 CPU cycles | 49 ns / 98 CPU cycles"),
                       "https://www.boost.org/doc/libs/1_87_0/libs/context/doc/html/context/performance.html"),
                  Quote(("Tests were executed on dual Intel XEON E5 2620v4 2.2GHz, 16C/32T, 64GB "
                         "RAM, running Linux (x86_64)."),
                       "https://www.boost.org/doc/libs/1_87_0/libs/context/doc/html/context/performance.html"),)

CLAIMS: tuple[Claim, ...] = (
    # one measurement, one verdict: the ratio is judged once, against the published 61x
    # (not again against a looser "much cheaper" bound of the project's own)
    claim("C31",
          words=("A context switch with callcc()/continuation takes 9 ns / 19 CPU cycles with "
                 "fcontext_t and 547 ns / 1130 CPU cycles with ucontext_t."),
          quotes=C31_QUOTES,
          published=(Published("fcontext_switch_ns", 9, "ns",
                               "callcc()/continuation (fcontext_t): 9 ns / 19 CPU cycles"),
                     Published("ucontext_switch_ns", 547, "ns",
                               "callcc()/continuation (ucontext_t): 547 ns / 1130 CPU cycles"),
                     Published("fcontext_switch_cycles", 19, "cycles"),
                     Published("ucontext_switch_cycles", 1130, "cycles"),
                     Published("ucontext_over_fcontext_ratio", 60.8, "ratio", "derived: 547 / 9"),),
          pages=("08_more_sources",), experiments=("fiber_gap",), flips_on=properties.TOOLCHAINS,
          as_published=(
        Reading("A ucontext_t switch costs about 61 times an fcontext_t one (547 ns against "
                "9 ns): swapcontext / hand-written switch", "ratio",
                PUBLISHED_RATIO * 0.8, PUBLISHED_RATIO * 1.2, sel.s8_ratio, timing=True,
                published=PUBLISHED_RATIO, tolerance_words="about 61 (+/- 20%)",
                substitute=HAND_WRITTEN,
                why=(whys.computed(whys.s8_why, whys.SIGPROCMASK_GAP),), quote=C31_QUOTES[0].text),
    ), context=(
        Context("hand-written switch (fcontext_t: 9 ns)", 9, "ns", sel.s8_ns("asm")),
        Context("swapcontext switch (ucontext_t: 547 ns)", 547, "ns", sel.s8_ns("ucontext")),
        Context("one empty rt_sigprocmask", None, "ns", sel.s8_ns("sigprocmask")),
    )),
)
