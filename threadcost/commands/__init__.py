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
- ``RUNS``: what the command runs, ``"package.module:function"`` returning a
  Result: the experiment's Python API (``threadcost.experiments.malloc_touch.run:run``),
  or for a command that drives the study rather than one experiment a function of
  :mod:`threadcost.commands.runners`;
- ``arguments(args) -> dict``: the keyword arguments ``RUNS`` is called with (and any
  refusal due before it is imported, such as ``_options.needs_checkout``). The CLI
  imports ``RUNS`` only once the command is chosen (:func:`threadcost.cli.execute`,
  the one place commands are run), adds ``--json`` and ``--save`` (unless
  ``SAVES = False``), prints the result and maps errors to exit codes;
- optionally ``EXTRA``: the extra ``RUNS`` needs (``"notebooks"``), named in one line
  when importing it fails;
- optionally ``format_text(result) -> str`` for the human-readable output;
- optionally ``PROGRESS = True`` when ``arguments`` hands ``args.progress`` (stderr
  is a terminal) to an experiment that draws its own tqdm bar; otherwise the CLI
  shows a status line with the time elapsed once the command has run 2 s.

A command module imports only what is light, at its top: ``argparse``, ``_options``,
``threadcost.textout``, ``threadcost.results`` and the families' specs
(``threadcost.experiments.<family>.spec``, plain data). The experiment (numpy, pandas,
the C kernels) is what ``RUNS`` names: ``threadcost --help`` imports every command
module and must answer in well under 0.3 s (``tests/test_cli.py`` checks that building
the parser loads no experiment, numpy, pandas or scipy).
"""
