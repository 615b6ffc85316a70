"""The ``threadcost`` command line: ``threadcost <experiment> [options] [--json]``.

Exit codes: 0 success; 2 bad input (one line on stderr naming the parameter,
the value and what is allowed, no traceback); 3 a system limit cut the run
short (the partial result is still printed and the limit is named on stderr).
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from types import ModuleType
from typing import NoReturn

from threadcost import commands
from threadcost.errors import KernelError, LimitReached, ParameterError, RunTimeout
from threadcost.results import Result

EXIT_OK, EXIT_ERROR, EXIT_BAD_INPUT, EXIT_LIMIT = 0, 1, 2, 3


class _Parser(argparse.ArgumentParser):
    """argparse that reports a usage error in one line and exits 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {message} (see --help)\n")


def command_modules() -> dict[str, ModuleType]:
    found: dict[str, ModuleType] = {}
    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda i: i.name):
        module = importlib.import_module(f"{commands.__name__}.{info.name}")
        if hasattr(module, "NAME") and hasattr(module, "execute"):
            found[module.NAME] = module
    return found


def build_parser(modules: dict[str, ModuleType]) -> argparse.ArgumentParser:
    parser = _Parser(prog="threadcost",
                     description="What does a thread cost on this machine? "
                                 "Each subcommand runs one experiment.")
    sub = parser.add_subparsers(dest="command", metavar="<experiment>", parser_class=_Parser)
    sub.required = True
    for name, module in modules.items():
        p = sub.add_parser(name, help=module.HELP, description=module.HELP)
        module.add_arguments(p)
        p.add_argument("--json", action="store_true", help="print one JSON object on stdout")
        if getattr(module, "SAVES", True):
            p.add_argument("--save", action="store_true",
                           help="also store the result under data/<machine>/<run>/ "
                                "(THREADCOST_DATA_DIR overrides data/)")
    return parser


def emit(result: Result, module: ModuleType, as_json: bool) -> None:
    if as_json:
        print(result.to_json())
    elif hasattr(module, "format_text"):
        print(module.format_text(result))
    else:
        print(result.to_json(indent=2))


def main(argv: list[str] | None = None) -> int:
    modules = command_modules()
    args = build_parser(modules).parse_args(argv)
    module = modules[args.command]
    prog = f"threadcost {args.command}"
    try:
        result = module.execute(args)
    except ParameterError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except LimitReached as exc:
        if isinstance(exc.partial, Result):
            emit(exc.partial, module, args.json)
        print(f"{prog}: {exc}", file=sys.stderr)
        return EXIT_LIMIT
    except (KernelError, RunTimeout) as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return 130
    emit(result, module, args.json)
    if getattr(args, "save", False):
        from threadcost.datastore import save_run

        path = save_run(result)
        print(f"{prog}: saved to {path}", file=sys.stderr)
    if result.limit_hit:
        limit = result.limit_hit.get("limit")
        print(f"{prog}: system limit reached: {limit} (partial result)", file=sys.stderr)
        return EXIT_LIMIT
    return EXIT_OK


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
