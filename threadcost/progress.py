"""Progress bars that never land in the rendered paper.

``make paper`` runs each notebook in a Jupyter kernel, which captures everything a
cell writes to stderr into the notebook. The paper runner therefore names, in
``THREADCOST_PROGRESS_TO``, the terminal (or log) it writes to itself; bars drawn
under it go there, as plain text, and the notebook output stays clean. Outside the
runner a bar is ``tqdm.auto``'s: a widget in JupyterLab, text in a terminal.
"""

from __future__ import annotations

import os
from typing import IO, Any

ENV = "THREADCOST_PROGRESS_TO"
_stream: IO[str] | None = None


def _runner_stream() -> IO[str] | None:
    """The paper runner's stderr (opened once), or None when not under the runner."""
    global _stream
    target = os.environ.get(ENV)
    if not target:
        return None
    if _stream is None:
        try:
            _stream = open(target, "a", buffering=1, encoding="utf-8")  # noqa: SIM115
        except OSError:
            _stream = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115
    return _stream


def under_runner() -> bool:
    """True while ``python -m threadcost.paper`` runs this notebook."""
    return bool(os.environ.get(ENV))


def bar(iterable: Any = None, **kwargs: Any) -> Any:
    """A tqdm bar (same arguments as ``tqdm``); under the paper runner, text on its stderr."""
    stream = _runner_stream()
    if stream is not None:
        from tqdm import tqdm

        kwargs.setdefault("mininterval", 2.0)
        return tqdm(iterable, file=stream, dynamic_ncols=False, ncols=80, **kwargs)
    from tqdm.auto import tqdm as auto_tqdm

    return auto_tqdm(iterable, **kwargs)
