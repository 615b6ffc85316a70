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
from threadcost.claims.model import WORDS, Claim, Context, Quote, Reading
from threadcost.claims.records._help import of_source
from threadcost.findings import more_sources as sel
from threadcost.measured.measurement import Missing

# No verdict on words not read: the relation is measured and shown (context), never judged
UNREAD = ("no verdict: Figure 1's words, numbers and setup could not be read here (only the "
          "paper's abstract), so no tolerance of the source's can be set; the measurements "
          "are shown beside the claim")


def _unread(runs: object) -> Missing:
    return Missing(UNREAD)


SOURCE_DOC = ("A fork() in the road (HotOS 2019), Figure 1: fork+exec vs posix_spawn as "
                      "the parent grows")

claim = of_source("S7", SOURCE_DOC, "not read here (only the abstract could be read)")

# the source's sentences, each reading's among them
C30_QUOTES = (Quote(("In this paper, we argue that fork was a clever hack for machines and "
                         "programs of the 1970s that has long outlived its usefulness and is now "
                         "a liability."),
                       "https://doi.org/10.1145/3317550.3321435 (abstract)"),)

CLAIMS: tuple[Claim, ...] = (
    claim("C30",
          words=("fork+exec slows down as the parent's memory grows, while posix_spawn's cost "
                 "stays flat with the parent's size (the relation Figure 1 is cited for). Figure "
                 "1, its values and the paper's words about it could not be read here and are "
                 "left out."),
          quotes=C30_QUOTES,
          pages=("08_more_sources",), experiments=("launch_spawn_growth",),
          shape=(
        Reading("Fork+exec slows as the parent's dirty memory grows, and posix_spawn stays "
                "flat (the relation Figure 1 is cited for)", "ratio", None, None, _unread,
                published=None, tolerance_words="none: the paper's words not read here",
                states=WORDS, quote=C30_QUOTES[0].text),
    ), context=(
        Context("Fork+exec: whole life at the largest parent size / at 0 MiB", None, "ratio",
                sel.s7_growth("fork_exec")),
        Context("Posix_spawn: whole life at the largest parent size / at 0 MiB", None,
                "ratio", sel.s7_growth("posix_spawn")),
        Context("Fork+exec growth per MiB / bare fork growth per MiB (same run)", None,
                "ratio", whys.s7_why),
    )),
)
