"""The thread-memory family: what idle threads and processes cost in virtual, resident and
kernel memory, and the limits on how many a process may start (notebook 02).

Its experiments, tables, parameters and figures are declared in :mod:`.spec`; the
modules beside it run them."""
