"""The launch family: starting a thread or a process, timed as distributions (notebook 03).

Its experiments, tables, parameters and figures are declared in :mod:`.spec`; the
modules beside it run them."""
