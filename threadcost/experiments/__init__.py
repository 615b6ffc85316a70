"""One module per experiment; each exposes ``run(...) -> Result``.

Every ``run`` validates all of its parameters with :mod:`threadcost.settings.validate`
before any C runs, and returns a partial :class:`~threadcost.results.Result`
with ``limit_hit`` set when a system limit cut the run short.

Every experiment name a run is stored under is declared once, in
:mod:`threadcost.experiments.registry` (its module, tables, notebook, figures and
claims): the one place a new experiment is added.
"""
