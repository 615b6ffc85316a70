"""``python -m threadcost`` is the same as the ``threadcost`` command."""

import sys

from threadcost.cli import EXIT_INTERRUPTED, main

try:
    sys.exit(main())
except KeyboardInterrupt:  # an interrupt before main() could catch it: still exit 130
    sys.exit(EXIT_INTERRUPTED)
