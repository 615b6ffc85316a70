"""``python -m threadcost`` is the same as the ``threadcost`` command."""

import sys

from threadcost.cli import main

sys.exit(main())
