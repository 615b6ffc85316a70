"""Progress bars that never become ipywidgets under papermill.

``tqdm.auto`` draws a widget in any Jupyter kernel. In JupyterLab that is what a
reader wants; in a kernel run by papermill (``make paper``, the tests) a widget
opens comms that can hang the run (papermill issue 723, nbclient issue 312) and
would leave a dead bar in the paper. So: JupyterLab (a kernel started by a Jupyter
server) gets tqdm.auto, other kernels no bar, and a plain process (the CLI) a text
bar on stderr.
"""

from __future__ import annotations

import os
import sys
from typing import Any


def in_kernel() -> bool:
    """Running inside an IPython kernel (JupyterLab, papermill/nbclient)."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None  # type: ignore[attr-defined]
    return shell is not None and "IPKernelApp" in getattr(shell, "config", {})


def live_kernel() -> bool:
    """A kernel a Jupyter server started (JupyterLab), not papermill or nbclient."""
    return "JPY_SESSION_NAME" in os.environ


def tqdm(*args: Any, **kwargs: Any) -> Any:
    """A tqdm bar: a widget in JupyterLab, nothing under papermill, text elsewhere."""
    if in_kernel() and not live_kernel():
        from tqdm.std import tqdm as plain

        kwargs["disable"] = True
        return plain(*args, **kwargs)
    from tqdm.auto import tqdm as auto

    return auto(*args, **kwargs)
