"""What the commands that drive the study rather than one experiment run (the verdicts,
the paper, the gallery, sharing and importing runs, one notebook).

Each module imports what it needs at its top and is imported only when its command is
chosen: the command names its function in ``RUNS`` (:mod:`threadcost.commands`), so
``threadcost --help`` never loads one.
"""
