"""The more-sources family: the claims of the further sources, each measured by its own
experiment (notebook 08).

Its experiments, tables, parameters and figures are declared in :mod:`.spec`; the
modules beside it run them."""
