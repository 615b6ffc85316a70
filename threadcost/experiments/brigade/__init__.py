"""The brigade family: a byte passed along N tasks joined by pipes (notebook 07).

Its experiments, tables, parameters and figures are declared in :mod:`.spec`; the
modules beside it run them."""
