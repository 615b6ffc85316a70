"""Virtual vs resident memory, part one: the allocators, the stages read and the checks
of :func:`threadcost.experiments.malloc_touch.run`'s parameters (before any C runs);
re-exported by :mod:`threadcost.experiments.malloc_touch.run`.

Defaults and ranges are the notebook parameters' (:mod:`threadcost.experiments.parameters`). Loads
no kernel, so the views and ``--help`` read the names from here on a machine without
the C build."""

from __future__ import annotations

from typing import Any

from threadcost.experiments.parameters import declared
from threadcost.settings import validate

EXPERIMENT = "malloc_touch"
MIB = declared("malloc_mib")
POINTS = declared("malloc_points")
ALLOCATORS = declared("malloc_allocators").choices
MAX_POINTS = POINTS.maximum


def check_params(mib: Any = MIB.default, allocator: Any = "malloc",
                 points: Any = POINTS.default, touch_fraction: Any = 1.0) -> dict[str, Any]:
    """Validate and normalise the parameters (raises ParameterError)."""
    size = validate.integer("mib", mib, **MIB.bounds)
    validate.memory_fits("mib", mib, size * 1024)
    return {
        "mib": size,
        "allocator": validate.choice("allocator", allocator, ALLOCATORS),
        "points": validate.integer("points", points, **POINTS.bounds),
        "touch_fraction": validate.fraction("touch_fraction", touch_fraction),
    }
