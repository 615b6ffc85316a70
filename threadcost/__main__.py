"""``python -m threadcost`` is the same as the ``threadcost`` command."""

import contextlib
import os
import sys

from threadcost.cli import EXIT_INTERRUPTED, main


def _leave_interrupted() -> None:
    """An interrupted command has cleaned up and printed its one line: leave now, with
    130. (Finishing the interpreter's shutdown instead let a rare late interrupt, under
    load, end the process by the signal after that line.)"""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(EXIT_INTERRUPTED)


try:
    code = main()
except KeyboardInterrupt:  # an interrupt before main() could catch it: still exit 130
    _leave_interrupted()
if code == EXIT_INTERRUPTED:
    _leave_interrupted()
sys.exit(code)
