"""S9, Benoit Sigoure (tsuna), "How long does it take to make a context switch?"
(2010) and github.com/tsuna/contextswitch: how many switches one iteration of
its futex loop makes (its program assumes 4; the repository's issue 3 says 6),
and "2.5x to 3x more expensive ... when using virtualization". The count was
checked in timectxsw.c (``const int nswitches = iterations << 2;``) and issue 3's
text; the post itself could not be read, and its virtualization sentence is read in
a verbatim quotation of it (vbrownbag.com, November 2010)."""

from __future__ import annotations

from threadcost.claims import whys
from threadcost.claims.model import Claim, Context, Reading
from threadcost.claims.read import further as sel

COUNTED = (whys.computed(sel.s9_why, "kernel switches per iteration"),)

CLAIMS: tuple[Claim, ...] = (
    Claim("C32", as_published=(
        Reading("One iteration of the futex loop between two processes makes 4 context "
                "switches (timectxsw.c counts iterations times 4)", "switches", 3.5, 4.5,
                sel.s9_count("futex_yield", "processes"), published=4.0,
                tolerance_words="4 (a count: +/- 0.5)", why=COUNTED),
        Reading("One iteration makes 6 (issue 3 of the repository)", "switches", 5.5, 6.5,
                sel.s9_count("futex_yield", "processes"), published=6.0,
                tolerance_words="6 (a count: +/- 0.5)", why=COUNTED),
        Reading("A context switch costs 2.5x to 3x more under virtualization", "ratio", 2.5,
                3.0, sel.s9_virtualization, timing=True, published=2.75,
                tolerance_words="the published range"),
    ), shape=(
        Reading("A futex ping-pong without sched_yield makes 2 switches per round trip (one "
                "each way), for processes as for threads", "switches", 1.9, 2.1,
                sel.s9_count("futex", "processes"), published=2.0,
                tolerance_words="2 (+/- 5%)"),
    ), context=(
        Context("empty system call (getppid)", None, "ns", sel.s9_syscall_ns),
    )),
)
