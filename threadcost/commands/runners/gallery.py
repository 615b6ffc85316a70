"""threadcost gallery: every machine folder side by side on one static page."""

from __future__ import annotations

import time
from pathlib import Path

from threadcost.commands.gallery import NAME
from threadcost.results import Result
from threadcost.views import gallery


def render(data_dir: str | None, out: str | None) -> Result:
    started = time.monotonic()
    index = gallery.build(Path(data_dir) if data_dir else None, Path(out) if out else None)
    return Result(NAME, {"data_dir": data_dir or "data"},
                  {"index": str(index), "seconds": round(time.monotonic() - started, 1)})
