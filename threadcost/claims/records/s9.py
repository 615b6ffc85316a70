"""S9, Benoit Sigoure (tsuna), "How long does it take to make a context switch?"
(2010) and github.com/tsuna/contextswitch: how many switches one iteration of
its futex loop makes (its program assumes 4; the repository's issue 3 says 6),
and "2.5x to 3x more expensive ... when using virtualization". The count was
checked in timectxsw.c (``const int nswitches = iterations << 2;``) and issue 3's
text; the post itself could not be read, and its virtualization sentence is read in
a verbatim quotation of it (vbrownbag.com, November 2010)."""

from __future__ import annotations

from threadcost.claims import properties, whys
from threadcost.claims.model import FACTOR, Claim, Context, Published, Quote, Reading
from threadcost.claims.records._help import of_source
from threadcost.findings import more_sources as sel
from threadcost.findings.context_switch import yardstick

# the loop's counters split, and the loop without its yields counted: the reading's own
# kind of quantity (switches the kernel counted), context for an "unexplained", no cause
COUNTED = (whys.computed(whys.s9_why, whys.YIELDLESS_COUNT, explains=False),)

SOURCE_DOC = ("How long does it take to make a context switch? (2010) and "
                      "github.com/tsuna/contextswitch (timectxsw.c, issue 3)")

claim = of_source("S9", SOURCE_DOC,
                  "dual Intel E5440 (the virtualization comparison, VMware ESX Server)")

# the source's sentences, each reading's among them
C32_QUOTES = (Quote("const int nswitches = iterations << 2;",
                       "https://github.com/tsuna/contextswitch/blob/master/timectxsw.c"),
                  Quote(("It should be: const int nswitches = iterations * 6; and not: const int "
                         "nswitches = iterations << 2; If you follow through the child and "
                         "parent for loops you will see there are 6 context switches per "
                         "iteration."),
                       "https://github.com/tsuna/contextswitch/issues/3"),
                  Quote(("The result is that, on average, it's 2.5x to 3x more expensive to do a "
                         "context switch when using virtualization."),
                       ("https://vbrownbag.com/2010/11/context-switching-some-resources/ "
                         "(quoting the post)")),)

CLAIMS: tuple[Claim, ...] = (
    claim("C32",
          words=("A futex ping-pong between two processes: timectxsw.c counts 4 context switches "
                 "per iteration (nswitches = iterations << 2); the repository's open issue 3 "
                 "argues there are 6. A context switch is on average 2.5x to 3x more expensive "
                 "under virtualization."),
          quotes=C32_QUOTES,
          published=(Published("switches_per_iteration_program", 4, "switches",
                               "timectxsw.c: nswitches = iterations << 2"),
                     Published("switches_per_iteration_issue3", 6, "switches",
                               "issue 3: const int nswitches = iterations * 6"),
                     Published("virtualization_factor", 2.75, "ratio",
                               ("2.5x to 3x more expensive when using virtualization (VMware "
                                "ESX Server)"),
                               low=2.5,
                               high=3.0),),
          pages=("08_more_sources",), experiments=("switch_counts",),
          flips_on=properties.TOOLCHAINS,
          as_published=(
        Reading("One iteration of the futex loop between two processes makes 4 context "
                "switches (timectxsw.c counts iterations times 4)", "switches", 3.5, 4.5,
                sel.s9_count("futex_yield", "processes"), published=4.0,
                tolerance_words="4 (a count: +/- 0.5)", why=COUNTED, quote=C32_QUOTES[0].text),
        Reading("One iteration makes 6 (issue 3 of the repository)", "switches", 5.5, 6.5,
                sel.s9_count("futex_yield", "processes"), published=6.0,
                tolerance_words="6 (a count: +/- 0.5)", why=COUNTED, quote=C32_QUOTES[1].text),
        Reading("A context switch costs 2.5x to 3x more under virtualization", "ratio", 2.5,
                3.0, sel.s9_virtualization, timing=True, published=2.75,
                tolerance_words="the published range", quote=C32_QUOTES[2].text),
    ), shape=(
        Reading("A futex ping-pong without sched_yield makes 2 switches per round trip (one "
                "each way), for processes as for threads", "switches", 1.9, 2.1,
                sel.s9_count("futex", "processes"), published=2.0,
                tolerance_words="2 (+/- 5%)", states=FACTOR, verb="makes",
                quote=C32_QUOTES[1].text),
    ), context=(
        # the one empty system call of every why and context row: the yardsticks run's
        Context(f"{whys.YARDSTICK_WORDS[whys.SYSCALL]}, the yardsticks run "
                f"({whys.SYSCALL_STATISTIC})", None, "ns", yardstick(whys.SYSCALL)),
    )),
)
