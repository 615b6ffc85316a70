"""The readers of the claims (selectors), one module per family of experiments; each
record imports the ones its readings use."""
