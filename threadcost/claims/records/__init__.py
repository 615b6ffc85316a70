"""One record per claim, one module per source: every module in this package that
defines ``CLAIMS`` is collected, so a new source adds a module here and touches no
shared list (a module whose name starts with ``_`` holds helpers and is skipped).

A record (a :class:`threadcost.claims.model.Claim`) is the one declaration of a claim:
its words, source, quotes and published values (``data/published/`` is written from
them: ``make published``), the pages that show it and the experiments it reads, its
as-published and shape readings, each with the source's sentence, and the why
functions that explain a difference.
"""

from __future__ import annotations

import importlib
import pkgutil
import re

from threadcost.claims.model import Claim

PACKAGES = ("threadcost.claims.records",)


def _order(claim: Claim) -> tuple[int, str]:
    m = re.fullmatch(r"C(\d+)", claim.id)
    return (int(m.group(1)), claim.id) if m else (10_000, claim.id)


def discover() -> tuple[Claim, ...]:
    """Every claim of every record module, ordered by number (C01, C02, ...)."""
    found: dict[str, Claim] = {}
    for name in PACKAGES:
        package = importlib.import_module(name)
        for info in pkgutil.iter_modules(package.__path__):
            if info.name.startswith("_"):
                continue
            module = importlib.import_module(f"{name}.{info.name}")
            for claim in getattr(module, "CLAIMS", ()):
                if claim.id in found:
                    raise ValueError(f"claim {claim.id} is declared twice "
                                     f"({name}.{info.name})")
                found[claim.id] = claim
    return tuple(sorted(found.values(), key=_order))
