"""CLI subcommands, one module each, found by :mod:`threadcost.cli`.

A command module defines:

- ``NAME``: the subcommand (``malloc-touch``);
- ``HELP``: one line for ``threadcost --help``;
- ``add_arguments(parser)``: its options (numbers as plain strings: the
  validation layer parses them, so every message reads the same);
- ``execute(args) -> Result``: call the experiment's Python API;
- optionally ``format_text(result) -> str`` for the human-readable output.
"""
