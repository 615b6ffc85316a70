"""Further sources' claims, one module per source key, each exporting
``CLAIMS: tuple[Claim, ...]``; collected by :func:`threadcost.claims.records.discover`."""
