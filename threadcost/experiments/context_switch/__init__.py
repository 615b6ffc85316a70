"""The context-switch family: a token passed between two threads or processes, with its
yardsticks, the echo and the CPU-bound runs (notebook 04).

Its experiments, tables, parameters and figures are declared in :mod:`.spec`; the
modules beside it run them."""
