"""``python -m threadcost.peers``: build every peer whose toolchain is here;
a note for each that is not. Exits non-zero only when a build fails."""

from __future__ import annotations

import sys

from threadcost.errors import KernelError
from threadcost.peers import PEERS


def main() -> int:
    failed = 0
    for language, peer in PEERS.items():
        reason = peer.absent_reason()
        if reason is not None:
            print(f"note: {language} peer {reason}")
            continue
        try:
            peer.ensure_built()
        except KernelError as exc:
            print(f"{language} peer: build failed: {exc}", file=sys.stderr)
            failed += 1
            continue
        print(f"{language} peer: built ({peer.version()})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
