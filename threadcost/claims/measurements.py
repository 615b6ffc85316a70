"""Headline measurements (per task and metric) read by the same selectors as the claims.

The summary views' headline figure uses these instead of rows experiments used
to write; each cell names the claim whose selector supplies it.
"""

from __future__ import annotations

from pathlib import Path

from threadcost.claims import selectors as sel
from threadcost.claims.model import Measurement
from threadcost.claims.runs import Runs

# (task, metric) -> (claim it belongs to, selector); first that measures wins.
HEADLINE: dict[tuple[str, str], tuple[str, sel.Any]] = {
    ("thread", "launch_ns"): ("C09", sel.launch_ns("thread")),
    ("process", "launch_ns"): ("C09", sel.launch_ns("fork")),
    ("thread", "switch_ns"): ("C01", sel.switch_pinned_ns),
    ("goroutine", "switch_ns"): ("C04", sel.goroutine_switch_ns),
    ("thread", "rss_kib"): ("C12", sel.c12_rss_slope),
    ("thread", "kernel_kib"): ("C12", sel.c12_kernel_slope),
    ("goroutine", "rss_kib"): ("C11", sel.c11_rss_per_goroutine),
}


def headline_measurements(machine_id: str,
                          data_dir: str | Path | None = None
                          ) -> dict[tuple[str, str], tuple[str, Measurement]]:
    """(task, metric) -> (claim ID, measurement) for every cell this machine measured."""
    runs = Runs.load(machine_id, data_dir)
    out = {}
    for target, (claim_id, select) in HEADLINE.items():
        try:
            got = select(runs)
        except (KeyError, ValueError, IndexError):
            continue
        if isinstance(got, Measurement):
            out[target] = (claim_id, got)
    return out
