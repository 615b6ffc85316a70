"""The readers (selectors) of the claims, one module per family of experiments they
read (one axis: what is read, never which source or runtime asks):

- :mod:`.switching`: context switches, the echo, the yardsticks, the Go ping-pong;
- :mod:`.memory`: thread memory, the limits, the million-thread ceiling, malloc/touch;
- :mod:`.launch_cpu`: launch times and the CPU-bound tasks;
- :mod:`.brigade`: the C I/O brigade;
- :mod:`.sleepers`: S4's sleepers program on the peers;
- :mod:`.runtimes`: the peers' runtimes (switch, launch, memory, their brigade, a million);
- :mod:`.peak_memory`: the peers' peak memory of N tasks;
- :mod:`.more_sources`: the experiments of notebook 08;
- :mod:`.common`: the helpers they share.

A record imports the readers its readings use; a reader used by one claim only may
sit in its record's module instead.
"""
