"""``python -m threadcost.paper``: :func:`threadcost.paper.build.main`."""

from threadcost.paper.build import main

if __name__ == "__main__":
    raise SystemExit(main())
