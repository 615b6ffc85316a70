"""Progress bars that never land in the rendered paper.

``make paper`` runs each notebook in a Jupyter kernel, which captures everything a
cell writes to stderr into the notebook. The paper runner therefore names, in
``THREADCOST_PROGRESS_TO``, the terminal (or log) it writes to itself; bars drawn
under it go there, as plain text, and the notebook output stays clean. In a kernel
that papermill or nbclient runs outside the runner (the tests) there is no bar: a
widget opens comms that can hang the run (papermill issue 723, nbclient issue 312).
Elsewhere a bar is ``tqdm.auto``'s: a widget in JupyterLab, text in a terminal.
"""

from __future__ import annotations

import os
import sys
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


def in_kernel() -> bool:
    """Running inside an IPython kernel (JupyterLab, papermill/nbclient)."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None  # type: ignore[attr-defined]
    return shell is not None and "IPKernelApp" in getattr(shell, "config", {})


def live_kernel() -> bool:
    """A kernel a Jupyter server started (JupyterLab), not papermill or nbclient."""
    return "JPY_SESSION_NAME" in os.environ


def bar(iterable: Any = None, **kwargs: Any) -> Any:
    """A tqdm bar (same arguments as ``tqdm``): text on the paper runner's stderr under
    ``make paper``, none in other papermill kernels, else ``tqdm.auto``'s."""
    from tqdm.std import tqdm

    stream = _runner_stream()
    if stream is not None:
        kwargs.setdefault("mininterval", 2.0)
        return tqdm(iterable, file=stream, dynamic_ncols=False, ncols=80, **kwargs)
    if in_kernel() and not live_kernel():
        kwargs["disable"] = True
        return tqdm(iterable, **kwargs)
    from tqdm.auto import tqdm as auto_tqdm

    return auto_tqdm(iterable, **kwargs)
