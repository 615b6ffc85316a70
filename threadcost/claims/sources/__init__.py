"""Claims C30..C35 of the sources S7..S12 (notebook 08), one module per source.

Every assertion says which reading it is, at the start of its text: "As published"
(the source's own number or words, in its terms), "Shape" (a relation the source
states, which should hold on any machine) or "Why" (a computed reading from a
yardstick measured in the same run; it explains, never decides a verdict).
"""

from __future__ import annotations

from threadcost.claims.model import Claim
from threadcost.claims.sources import s7, s8, s9, s10, s11, s12

SOURCE_CLAIMS: tuple[Claim, ...] = (s7.CLAIMS + s8.CLAIMS + s9.CLAIMS + s10.CLAIMS
                                    + s11.CLAIMS + s12.CLAIMS)
