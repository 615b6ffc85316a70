"""The machine in one line, as every page opens with it."""

from __future__ import annotations

from typing import Any

from threadcost import findings
from threadcost.host import machine
from threadcost.textout import md_text


def markdown(fp: dict[str, Any], name: str = "machine_memory_gib") -> str:
    """The machine in one sentence for Markdown (``machine.describe``, escaped), its RAM
    marked as the finding ``machine_memory_gib`` (every page prints the same line); the
    line of another machine (page 06's list) names it ``machine_memory_gib@<machine id>``."""
    text = md_text(machine.describe(fp))
    try:
        gib = f"{float(fp['mem_total_kib']) / 1024**2:.1f}"
    except (KeyError, TypeError, ValueError):
        return text
    return text.replace(md_text(f"{gib} GiB"),
                        findings.tag(name, gib, f"{gib} GiB", ("machine fingerprint",)), 1)
