"""Claims as code: every published claim C01..C23 declared once and judged.

- :mod:`.published`: the published numbers and citations (data/published/);
- :mod:`.catalogue`: each claim's assertions, tolerances and selectors;
- :mod:`.selectors`: which stored measurement feeds each assertion (by setup);
- :mod:`.logic`: the verdict rules.

:func:`judge` is what notebook 06, ``threadcost claims`` and the summary views use.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from threadcost.claims.model import CLASSES, AssertionVerdict, ClaimVerdict
from threadcost.claims.published import claims, sources, value, values, values_for

__all__ = ["CLASSES", "AssertionVerdict", "ClaimVerdict", "claims", "judge", "sources",
           "tally", "value", "values", "values_for"]


def judge(machine_id: str | None = None, data_dir: str | Path | None = None,
          results: list[Any] | None = None) -> list[ClaimVerdict]:
    """The verdict on every published claim, from one machine's stored runs.

    ``machine_id``: a folder under the data folder (default: this machine).
    ``results``: experiment Results measured just now (saved or not); they stand
    in for the stored runs of their experiments (this machine only).
    """
    from threadcost import machine
    from threadcost.claims import catalogue, logic, selectors
    from threadcost.claims.model import Measurement
    from threadcost.claims.runs import Runs

    mid = machine_id or machine.machine_id()
    runs = Runs.load(mid, data_dir)
    if results:
        runs = runs.with_results(list(results), machine.fingerprint(include_git=False))
    yard = {}  # yardstick -> (measured here, published), for the context rows
    got = selectors.memcpy_ns(runs)
    if isinstance(got, Measurement):
        yard["memcpy_64kib"] = (got.value, catalogue.PUBLISHED_YARDSTICKS["memcpy_64kib"])
    info = claims().set_index("claim_id")
    declared = {c.id: c for c in catalogue.CLAIMS}
    out = []
    for cid, row in info.iterrows():
        claim = declared.get(str(cid))
        if claim is None:  # published, but no assertion declared yet
            continue
        out.append(logic.judge_claim(claim, runs, str(row["source"]), str(row["claim"]), yard))
    return out


def tally(verdicts: list[ClaimVerdict]) -> dict[str, int]:
    """How many claims got each verdict class (every class listed, in order)."""
    seen = Counter(v.verdict for v in verdicts)
    return {cls: seen.get(cls, 0) for cls in CLASSES}

# The per-source claim modules live in the package threadcost.claims.sources; loading it
# here, then binding the name back to the function, keeps ``claims.sources()`` callable.
import threadcost.claims.sources as _per_source  # noqa: E402,F401
from threadcost.claims.published import sources  # noqa: E402,F811
