"""The experiment families: one package each (``threadcost/experiments/<family>/``).

A family's ``spec.py`` declares its experiments, their tables and column kinds, its
notebook's parameters and their checks, once (:mod:`threadcost.experiments.specs`
discovers them); the modules beside it run the experiments. Every run function validates
all of its parameters with :mod:`threadcost.settings.validate` before any C runs, and
returns a partial :class:`~threadcost.results.Result` with ``limit_hit`` set when a
system limit cut the run short.
"""
