"""The value every experiment returns."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pandas loads in ~0.3 s: `import threadcost` and the CLI's --help skip it
    import pandas as pd


@dataclass
class Result:
    """What one experiment measured.

    ``summary`` is JSON-ready and is what ``threadcost <experiment> --json``
    prints; ``tables`` are tidy DataFrames, one CSV each when the run is saved;
    ``limit_hit`` is set when a system limit cut the run short (the rest is the
    partial result) and names the limit and errno.
    """

    experiment: str
    params: dict[str, Any]
    summary: dict[str, Any]
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    limit_hit: dict[str, Any] | None = None

    @property
    def partial(self) -> bool:
        return self.limit_hit is not None

    def as_json_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"experiment": self.experiment, "params": self.params}
        out.update(self.summary)
        out["limit_hit"] = self.limit_hit
        return _json_safe(out)

    def to_json(self, indent: int | None = None) -> str:
        return json.dumps(self.as_json_dict(), indent=indent, allow_nan=False)


def _json_safe(value: Any) -> Any:
    """Replace NaN/inf by None and numpy scalars by Python ones, recursively."""
    if isinstance(value, dict):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_safe(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, str | bytes):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value
