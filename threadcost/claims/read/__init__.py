"""The selectors, by family (threadcost.claims.selectors re-exports them all)."""
