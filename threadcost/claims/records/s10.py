"""S10, Li, Ding and Shen, "Quantifying the cost of context switch" (ExpCS 2007):
a direct cost of 3.8 µs, and a total cost per switch that ranges "from several
microseconds to more than one thousand microseconds" with the data size.

The sentences (data/published/quotes.csv) were read in a copy of the paper's text
(studylib.net); the authors' page (cs.rochester.edu/u/cli/research/switch.htm) gives
the abstract and the venue only, and the paper's text could not be reached again to
check them a second time."""

from __future__ import annotations

from threadcost.claims import properties, whys
from threadcost.claims.model import WORDS, Claim, Published, Quote, Reading
from threadcost.claims.records._help import of_source
from threadcost.findings import more_sources as sel

SOURCE_DOC = "Quantifying the cost of context switch (ExpCS 2007)"

claim = of_source("S10", SOURCE_DOC,
                  "not stated here (Linux 2.6.17, Redhat 9, gcc 3.2.2; 512 KB L2 cache, "
                  "128 B lines)")

# the source's sentences, each reading's among them
C33_QUOTES = (Quote(("The average direct context switch cost (c1) in our system is 3.8 "
                         "microsecond."),
                       ("https://www.cs.rochester.edu/u/cli/research/switch.htm (paper; text "
                         "read at https://studylib.net/doc/14025379/)")),
                  Quote(("In general, c2 ranges from several microseconds to more than one "
                         "thousand microseconds. The indirect context switch cost can be "
                         "estimated as c2 - c1."),
                       ("https://www.cs.rochester.edu/u/cli/research/switch.htm (paper; text "
                         "read at https://studylib.net/doc/14025379/)")),
                  Quote(("we get the total time cost per context switch as c2 = s1/20000 - "
                         "s2/10000."),
                       ("https://www.cs.rochester.edu/u/cli/research/switch.htm (paper; text "
                         "read at https://studylib.net/doc/14025379/)")),)

CLAIMS: tuple[Claim, ...] = (
    claim("C33",
          words=("The average direct context switch cost (c1) is 3.8 microseconds; the total "
                 "cost per context switch (c2 = s1/20000 - s2/10000) ranges from several "
                 "microseconds to more than one thousand microseconds with the array size and "
                 "access stride; the indirect cost is c2 - c1."),
          quotes=C33_QUOTES,
          published=(Published("direct_cost_us", 3.8, "µs",
                               "average direct context switch cost c1"),),
          pages=("08_more_sources",), experiments=("indirect_cost",), flips_on=properties.SYSCALL,
          as_published=(
        Reading("The direct cost of a switch is about 3.8 µs (two processes, a pipe pair, no "
                "array)", "µs", 3.8 * 0.8, 3.8 * 1.2, sel.s10_direct_us, timing=True,
                published=3.8, tolerance_words="about 3.8 (+/- 20%)",
                # 2007's machine published no system-call cost: the call here is context
                why=(whys.syscalls,), quote=C33_QUOTES[0].text),
    ), shape=(
        Reading("The total cost per switch grows with the data each process walks (largest "
                "array within the last-level cache, smallest stride / no array; theirs: "
                "from several µs to over a thousand)", "ratio", 2.0, None, sel.s10_growth,
                timing=True, published=None, tolerance_words="grows: at least 2x",
                states=WORDS, quote=C33_QUOTES[1].text),
    )),
)
