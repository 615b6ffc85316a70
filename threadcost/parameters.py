"""Notebook and CLI parameters: what a value asked for means before any experiment runs.

``interactive`` decides whether a notebook draws live ipywidgets. Its default is
False, so a batch run (papermill, nbconvert, ``make paper``) never starts widgets that
wait for a browser; ``make lab`` starts JupyterLab with ``THREADCOST_INTERACTIVE=1``,
and a notebook opened there draws them without being asked.
"""

from __future__ import annotations

import os

INTERACTIVE_ENV = "THREADCOST_INTERACTIVE"


def interactive(asked: bool | None) -> bool:
    """Live widgets: when asked (``interactive = True``), or in the JupyterLab that
    ``make lab`` started (``$THREADCOST_INTERACTIVE`` = 1); never by default."""
    return bool(asked) or os.environ.get(INTERACTIVE_ENV, "") == "1"
