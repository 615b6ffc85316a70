"""The rendered paper: running the notebooks, rendering them to static HTML, the checks
before a run and on the pages, the end summary. ``python -m threadcost.paper`` runs
:mod:`threadcost.paper.build`.
"""
