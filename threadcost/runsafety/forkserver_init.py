"""The forkserver's first preload (``threadcost.runsafety.isolate``): in the forkserver only
(it is started with ``THREADCOST_FORKSERVER=1``), SIGINT is ignored before the
forkserver records the handlers its children start with. A child then ignores an
interrupt that arrives while multiprocessing is still setting it up (one that would
have printed a traceback from its bootstrap) until ``isolate._child`` restores
Python's handler, so an interrupt reaches it only inside the work it runs. SIGINT is
also blocked (children inherit the mask): one sent to a child before it restores the
handler stays pending instead of being lost, and stops the child as soon as
``isolate._child`` unblocks it (an interrupt that came while the child was being
started, passed on at once). Imported anywhere else, it does nothing."""

from __future__ import annotations

import os
import signal

if os.environ.get("THREADCOST_FORKSERVER") == "1":
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
