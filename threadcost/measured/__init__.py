"""Measurements read from stored runs: the layer below findings and claims.

- :mod:`.runs`: one machine's stored runs, looked up by experiment and setup
  (:class:`~threadcost.measured.runs.Runs`), pooled only across runs of one host;
- :mod:`.measurement`: what a reading gives (a value with its interval and repeats,
  or why none could be read);
- :mod:`.intervals`: intervals from the spread across independent repeats.

Findings (``threadcost/findings/``) import this package; claims
(``threadcost/claims/``) import it and findings. It imports neither
(``tests/test_layers.py`` checks it).
"""
