"""The notebooks' door: what a page's cells call to get a run (:mod:`.stored`: measure
and store it, or read this machine's stored run) and to show figures the paper's way
(:mod:`.plotting`). It sits above the views and imports nothing above it."""
