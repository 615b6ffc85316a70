"""CLI commands, one module each, found by :mod:`threadcost.cli`.

Adding a command is adding a module here (nothing else registers it; modules
whose names start with ``_`` are helpers, such as :mod:`._options`). It defines:

- ``NAME``: the command (``malloc-touch``);
- ``HELP``: one line for ``threadcost --help``;
- ``add_arguments(parser)``: its options, declared with the helpers of
  :mod:`threadcost.commands._options` (values stay text: the experiment's
  validation parses them, so every message reads the same; the help formatter
  appends each default; an enumerated option lists its choices and names the
  experiment's own list, which a test compares it with);
- ``execute(args) -> Result``: call the experiment's Python API. The CLI adds
  ``--json`` and ``--save`` (unless ``SAVES = False``), prints the result and
  maps errors to exit codes;
- optionally ``format_text(result) -> str`` for the human-readable output;
- optionally ``PROGRESS = True`` when ``execute`` hands ``args.progress`` (stderr
  is a terminal) to an experiment that draws its own tqdm bar; otherwise the CLI
  shows a status line with the time elapsed once the command has run 2 s.

Keep the top of a command module light: ``argparse``, ``_options`` and
``threadcost.textout`` only. Import the experiment (numpy, pandas, the C
kernels) inside ``execute``/``format_text``: ``threadcost --help`` imports every
command module and must answer in well under 0.3 s (``tests/test_cli.py``
checks that building the parser loads no experiment, numpy, pandas or scipy).
"""
