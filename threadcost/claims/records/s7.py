"""S7, Baumann et al., "A fork() in the road" (HotOS 2019): fork+exec against
posix_spawn as the parent's memory grows (the paper's Figure 1).

Only the paper's abstract could be read here (the ACM page,
doi.org/10.1145/3317550.3321435); its body, Figure 1, its caption and the
sentences around it could not (the PDF at microsoft.com and its copies were not
reachable with the tools here), and the paper publishes no data. So this claim
has no published number, and its words are not quoted: the readings judge the
relation Figure 1 is cited for (fork+exec grows with the parent's memory,
posix_spawn does not) with tolerances of the project's own, said as such.
Figure 1's values, setup (machine, sizes, dirty or fragmented memory) and any
stated per-spawn time are left out.
"""

from __future__ import annotations

from threadcost.claims import whys
from threadcost.claims.model import Claim, Reading
from threadcost.claims.read import further as sel

CLAIMS: tuple[Claim, ...] = (
    Claim("C30", shape=(
        Reading("Fork+exec slows as the parent's dirty memory grows (whole life at the "
                "largest parent size / at 0 MiB)", "ratio", 1.1, None,
                sel.s7_growth("fork_exec"), timing=True, published=None,
                tolerance_words="grows: more than 10% slower at the largest size (the "
                                "project's bound; the paper's words not read here)",
                why=(whys.computed(sel.s7_why, "fork+exec growth per MiB / fork growth "
                                               "per MiB"),)),
        Reading("Posix_spawn's cost stays flat with the parent's size (largest / 0 MiB)",
                "ratio", 0.9, 1.1, sel.s7_growth("posix_spawn"), timing=True,
                published=None,
                tolerance_words="flat: within 10% (the project's bound; the paper's "
                                "words not read here)"),
    )),
)
