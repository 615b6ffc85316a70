"""``python -m threadcost`` is the same as the ``threadcost`` command."""

import contextlib
import os
import signal
import sys

from threadcost.cli import EXIT_INTERRUPTED, EXIT_TERMINATED, main


def _leave_interrupted(code: int = EXIT_INTERRUPTED) -> None:
    """An interrupted command has cleaned up and printed its one line: leave now, with
    130 (143 after SIGTERM). (Finishing the interpreter's shutdown instead let a rare
    late interrupt, under load, end the process by the signal after that line.)"""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(code)


try:
    code = main()
except KeyboardInterrupt:  # an interrupt before main() could catch it: still exit 130
    _leave_interrupted()
if code in (EXIT_INTERRUPTED, EXIT_TERMINATED):
    _leave_interrupted(code)
# The command is done: an interrupt arriving while the interpreter shuts down has
# nothing left to stop, and must not turn its exit status into a death by the signal.
for _sig in (signal.SIGINT, signal.SIGTERM):
    signal.signal(_sig, signal.SIG_IGN)
sys.exit(code)
