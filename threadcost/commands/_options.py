"""Options the subcommands share, declared once.

Values stay text: the experiment's ``check_params`` parses and validates them,
so a refusal reads the same from the CLI, the API and a notebook. The help
formatter appends each option's default, so help strings do not repeat it.

An enumerated option names the tuple or mapping it is drawn from (``source``,
``"module:ATTRIBUTE"``); ``tests/test_cli.py`` checks every such list against its
source, so ``--help`` can list the choices without importing the experiment
(which would load numpy and the C kernels and slow ``threadcost --help``).
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Sequence

from threadcost import paths
from threadcost.errors import ThreadcostError
from threadcost.experiments.parameters import cli_default
from threadcost.experiments.parameters import declared as declaration

# A thread stack size's rule beside its declared range (threadcost.settings.validate.stack_kib).
STACK_KIB_HELP = ("stack size per thread in KiB: 0 = the system default (RLIMIT_STACK), else at "
                  "least this machine's smallest stack and a multiple of the page size")
# The placements of the context switch, as declared (threadcost.experiments.parameters).
PLACEMENTS = declaration("switch_placements").choices
PLACEMENTS_SOURCE = "threadcost.experiments.context_switch.run:PLACEMENTS"


class HelpFormatter(argparse.HelpFormatter):
    """Appends ``(default: X)`` to an option's help unless it has none to show."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        default = action.default
        if ("%(default)" in text or default in (None, False, "", argparse.SUPPRESS)
                or not action.option_strings):
            return text
        return f"{text} (default: {_readable(default)})"


def _readable(value: object) -> str:
    text = str(value).replace("%", "%%")
    return f"{int(text):,}" if text.isdigit() and len(text) > 4 else text


def value(parser: argparse.ArgumentParser, flag: str, default: str | None, help: str,
          *, required: bool = False, metavar: str | None = None) -> argparse.Action:
    """An option taking one value, kept as text for the experiment to validate."""
    if required:
        return parser.add_argument(flag, required=True, help=help, metavar=metavar)
    return parser.add_argument(flag, default=default, help=help, metavar=metavar)


# A path a command writes to is plain: POSIX's portable file name characters and "/", and
# not a number (a value meant for another option). Anything else (a space, a quote, a
# pasted shell fragment such as ``--out "$(...)"``) is refused before anything is written.
PLAIN_PATH = re.compile(r"[A-Za-z0-9._/-]+")


def _reads_as_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        try:
            int(text, 0)
        except ValueError:
            return False
    return True


def _written_path(text: str) -> str:
    if not PLAIN_PATH.fullmatch(text) or text.startswith("-") or _reads_as_number(text):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a plain path: letters, digits, '.', '_', '-' and '/', not "
            "starting with '-', not a number")
    return text


def output(parser: argparse.ArgumentParser, flag: str, help: str) -> argparse.Action:
    """An option naming where a command writes (a folder or a file): a plain path."""
    return parser.add_argument(flag, default=None, type=_written_path, help=help)


def declared(parser: argparse.ArgumentParser, flag: str, name: str, help: str,
             *, metavar: str | None = None) -> argparse.Action:
    """An option whose default, unit and range are the notebook parameter ``name``'s
    declaration (threadcost.experiments.parameters): ``help`` says what it is, the range is
    appended, and ``tests/test_parameters.py`` finds it by ``declared_name``."""
    allowed = declaration(name).range_text().replace("%", "%%")
    action = value(parser, flag, cli_default(name), f"{help}, {allowed}" if allowed else help,
                   metavar=metavar)
    action.declared_name = name  # type: ignore[attr-defined]
    return action


def switch(parser: argparse.ArgumentParser, flag: str, help: str) -> argparse.Action:
    """An on/off flag (off by default)."""
    return parser.add_argument(flag, action="store_true", help=help)


def choice(parser: argparse.ArgumentParser, flag: str, choices: Sequence[str], default: str,
           help: str, *, source: str, several: bool = False) -> argparse.Action:
    """An enumerated option; ``several``: a comma-separated list of the choices.

    ``--help`` shows the choices as the metavar (``{pipe,condvar}``), the
    experiment validates (same message as its API), and ``source`` names the
    experiment's own list for the test that keeps the two equal.
    """
    metavar = "{" + ",".join(choices) + "}" + ("[,...]" if several else "")
    action = parser.add_argument(flag, default=default, metavar=metavar,
                                 help=help + ("; several comma-separated" if several else ""))
    action.choices_source = source  # type: ignore[attr-defined]
    action.listed_choices = tuple(choices)  # type: ignore[attr-defined]
    return action


def needs_checkout(command: str, what: str) -> None:
    """Refuse, in one line, a command that builds helpers from the repository's
    sources when threadcost was installed from a wheel (no checkout around it)."""
    if not paths.in_checkout():
        raise ThreadcostError(f"{command} builds {what} from native/ of a threadcost checkout, "
                              "and this installation has none: clone the repository and run "
                              "`make setup`, then use its .venv/bin/threadcost")


# ------------------------------------------------------------ the common ones

def pin(parser: argparse.ArgumentParser, what: str) -> argparse.Action:
    return value(parser, "--pin", None,
                 f"CPUs to pin {what} to, e.g. 0 or 0,1 (default: not pinned)")


def cpu(parser: argparse.ArgumentParser, what: str, none: bool = False) -> argparse.Action:
    extra = ", 'none'" if none else ""
    return value(parser, "--cpu", "auto",
                 f"CPU to pin {what} to, or 'auto' (the first CPU this process may use){extra}")


def message_bytes(parser: argparse.ArgumentParser, default: str, what: str) -> argparse.Action:
    allowed = declaration("switch_echo_message_bytes").range_text()  # the pipe's bound
    return value(parser, "--message-bytes", default, f"{what}, {allowed}")


def timeout(parser: argparse.ArgumentParser, default: str, what: str) -> argparse.Action:
    return value(parser, "--timeout", default,
                 f"watchdog: seconds without {what} before the run is stopped with an error")
