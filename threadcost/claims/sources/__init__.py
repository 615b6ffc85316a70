"""Claims C30..C35 of the sources S7..S12 (notebook 08), one module per source.

Every assertion says which reading it is, at the start of its text: "As published"
(the source's own number or words, in its terms), "Shape" (a relation the source
states, which should hold on any machine) or "Why" (a computed reading from a
yardstick measured in the same run; it explains, never decides a verdict).
"""

from __future__ import annotations

import sys
import types
from typing import Any

from threadcost.claims import published
from threadcost.claims.model import Claim


class _CallablePackage(types.ModuleType):
    """``threadcost.claims.sources()`` is the citations table (claims.published.sources).
    Importing this package rebinds that name to the package, so calling the package
    still returns the table: both keep working, whichever is imported first."""

    def __call__(self) -> Any:
        return published.sources()


sys.modules[__name__].__class__ = _CallablePackage

from threadcost.claims.sources import s7, s8, s9, s10, s11, s12  # noqa: E402

SOURCE_CLAIMS: tuple[Claim, ...] = (s7.CLAIMS + s8.CLAIMS + s9.CLAIMS + s10.CLAIMS
                                    + s11.CLAIMS + s12.CLAIMS)
