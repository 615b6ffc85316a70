"""The forkserver's last preload (``threadcost.runsafety.isolate``): in the forkserver only
(started with ``THREADCOST_FORKSERVER=1``), it creates the file named by
``THREADCOST_FORKSERVER_READY`` once every module before it in the preload list is
imported. The parent waits for that file, with a deadline of its own, before it asks the
forkserver for a child: so a forkserver that takes long to import numpy and pandas (a
machine under load) is told apart from one that is stuck, and one started early (while a
notebook still imports and draws) is known to be done before a measurement begins.
Imported anywhere else, it does nothing."""

from __future__ import annotations

import os

if os.environ.get("THREADCOST_FORKSERVER") == "1":
    _path = os.environ.get("THREADCOST_FORKSERVER_READY")
    if _path:
        try:
            with open(_path, "x"):
                pass
        except OSError:  # the parent's folder is gone (it ended): nobody waits
            pass
