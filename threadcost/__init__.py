"""threadcost: what does a thread cost on this machine?

The public API is one function per experiment in :mod:`threadcost.experiments`;
the CLI (``threadcost``), the notebooks and papermill all call it.
"""

from threadcost.errors import KernelError, LimitReached, ParameterError, ThreadcostError
from threadcost.results import Result

__version__ = "0.1.0"

__all__ = [
    "KernelError",
    "LimitReached",
    "ParameterError",
    "Result",
    "ThreadcostError",
    "__version__",
]
