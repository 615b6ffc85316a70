"""Access to the compiled C kernels (``threadcost._native``).

Import ``ffi`` and ``lib`` from here, never from ``_native`` directly, so a
missing build gives one clear message instead of an ImportError deep inside.
"""

from __future__ import annotations

from typing import Any

try:
    from threadcost._native import ffi, lib
except ImportError as exc:  # pragma: no cover - exercised only without a build
    raise ImportError(
        "threadcost's C kernels are not built. Run `make setup` (or `make native`) "
        "in the repository, or `pip install -e .` with a C compiler available."
    ) from exc

__all__ = ["ffi", "lib", "proc_status_dict"]


def proc_status_dict(s: Any) -> dict[str, int]:
    """A tc_proc_status as a plain dict with the units in the key names."""
    return {
        "vsz_kib": int(s.vsz_kib),
        "rss_kib": int(s.rss_kib),
        "rss_anon_kib": int(s.rss_anon_kib),
        "pte_kib": int(s.pte_kib),
        "stk_kib": int(s.stk_kib),
        "threads": int(s.threads),
    }
