"""The ``threadcost`` command line: ``threadcost <command> [options] [--json]``.

Exit codes (README: "Exit codes"): 0 success; 1 a kernel or the system failed;
2 bad input (one line on stderr naming the parameter, the value and what is
allowed, no traceback); 3 a system limit cut the run short (the partial result
is still printed and the limit is named on stderr); 4 a data file or folder
could not be read or written (damaged run, full disk, no permission: one line
naming the file, what is wrong and what to do); 130 interrupted (Ctrl-C) and
143 terminated (SIGTERM), with one line; 141 (128 + SIGPIPE) when the reader of stdout went away
(``| head``), quietly.

Commands are the modules of :mod:`threadcost.commands` (see its docstring for
what one defines); building the parser imports only them, never an experiment,
numpy or pandas, so ``threadcost --help`` answers at once. What a command runs is
imported by :func:`execute` once it is chosen.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import pkgutil
import sys
import threading
import time
from collections.abc import Iterator
from types import ModuleType
from typing import NoReturn

from threadcost import __version__, commands
from threadcost.commands._options import HelpFormatter
from threadcost.errors import LimitReached, ParameterError, ThreadcostError, one_line
from threadcost.results import Result

EXIT_OK, EXIT_ERROR, EXIT_BAD_INPUT, EXIT_LIMIT, EXIT_DATA = 0, 1, 2, 3, 4
EXIT_INTERRUPTED = 130  # 128 + SIGINT
EXIT_TERMINATED = 143  # 128 + SIGTERM
EXIT_BROKEN_PIPE = 141
# A command quiet for this long gets a status line on stderr (a TTY only).
PROGRESS_DELAY_S = 2.0


class _Parser(argparse.ArgumentParser):
    """argparse that reports a usage error in one line and exits 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {message} (see --help)\n")


def command_modules() -> dict[str, ModuleType]:
    """Every command module, by command name (modules named ``_*`` are helpers)."""
    found: dict[str, ModuleType] = {}
    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda i: i.name):
        if info.name.startswith("_") or info.ispkg:  # helpers, and the runners
            continue
        module = importlib.import_module(f"{commands.__name__}.{info.name}")
        if hasattr(module, "NAME") and hasattr(module, "RUNS"):
            found[module.NAME] = module
    return found


def build_parser(modules: dict[str, ModuleType]) -> argparse.ArgumentParser:
    parser = _Parser(prog="threadcost",
                     description="What does a thread cost on this machine? "
                                 "Each command runs one experiment.")
    parser.add_argument("--version", action="version", version=f"threadcost {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="<command>", parser_class=_Parser)
    sub.required = True
    for name, module in modules.items():
        p = sub.add_parser(name, help=module.HELP, description=module.HELP,
                           formatter_class=HelpFormatter)
        module.add_arguments(p)
        p.add_argument("--json", action="store_true", help="print one JSON object on stdout")
        if getattr(module, "SAVES", True):
            p.add_argument("--save", action="store_true",
                           help="also store the result under data/<machine>/<run>/ "
                                "(THREADCOST_DATA_DIR overrides data/)")
    return parser


def emit(result: Result, module: ModuleType, as_json: bool) -> None:
    if as_json:
        text = result.to_json()
    elif hasattr(module, "format_text"):
        text = module.format_text(result)
    else:
        text = result.to_json(indent=2)
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def _stdout_gone() -> None:
    """The reader closed the pipe: point stdout at /dev/null so the interpreter's
    final flush does not raise again, and say nothing."""
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


@contextlib.contextmanager
def status_line(desc: str, enabled: bool) -> Iterator[None]:
    """A tqdm line on stderr, from ``PROGRESS_DELAY_S`` on, with the time elapsed.

    For commands whose experiment draws no bar of its own (it measures inside
    one C call or a child process, so there is no fraction done to show). A
    helper thread wakes once a second to redraw it; nothing runs when disabled.
    """
    if not enabled:
        yield
        return
    from tqdm import tqdm

    stop = threading.Event()
    started = time.time()  # tqdm's clock

    def show() -> None:
        if stop.wait(PROGRESS_DELAY_S):
            return  # done before the delay: nothing is drawn
        with tqdm(desc=desc, total=None, file=sys.stderr, leave=False,
                  bar_format="{desc}: running, {elapsed} elapsed") as bar:
            bar.start_t = started  # the command's time, not the line's
            while not stop.wait(1.0):
                bar.refresh()

    thread = threading.Thread(target=show, name="threadcost-status", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()  # the line is cleared before the result is printed


def execute(module: ModuleType, args: argparse.Namespace) -> Result:
    """Run a command: the function its ``RUNS`` names (``package.module:function``),
    imported only now, called with the keyword arguments ``arguments(args)`` gives."""
    kwargs = module.arguments(args)
    where, _, name = module.RUNS.partition(":")
    try:
        runs = importlib.import_module(where)
    except ImportError as exc:
        extra = getattr(module, "EXTRA", None)
        if extra is None:
            raise
        raise ThreadcostError(f"threadcost {module.NAME} needs the {extra} extra "
                              f"(pip install 'threadcost[{extra}]'): {exc}") from None
    result: Result = getattr(runs, name)(**kwargs)
    return result


def _run(module: ModuleType, args: argparse.Namespace) -> Result:
    if getattr(module, "PROGRESS", False):  # the experiment draws its own bar
        return execute(module, args)
    with status_line(f"threadcost {args.command}", args.progress):
        return execute(module, args)


def main(argv: list[str] | None = None) -> int:
    modules = command_modules()
    args = build_parser(modules).parse_args(argv)
    module = modules[args.command]
    prog = f"threadcost {args.command}"
    # Progress goes to stderr, on a terminal only (never into a pipe, a log or a test).
    args.progress = sys.stderr.isatty()
    try:
        with stop_on_sigterm():
            return _main(module, args, prog)
    except KeyboardInterrupt:
        _ignore_further_interrupts()
        terminated = _TERMINATED.pop() if _TERMINATED else False
        _quiet_interrupt(prog, terminated)
        return EXIT_TERMINATED if terminated else EXIT_INTERRUPTED


def _ignore_further_interrupts() -> None:
    """After the first interrupt the command is ending: a second SIGINT or SIGTERM (a
    repeated Ctrl-C, or one that lands during interpreter shutdown) must not turn the
    clean exit 130 into a death by signal."""
    import signal

    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(ValueError, OSError):  # not the main thread
            signal.signal(sig, signal.SIG_IGN)


def _main(module: ModuleType, args: argparse.Namespace, prog: str) -> int:
    try:
        result = _run(module, args)
    except ParameterError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except LimitReached as exc:
        code = EXIT_LIMIT
        if isinstance(exc.partial, Result):
            try:
                emit(exc.partial, module, args.json)
            except BrokenPipeError:
                _stdout_gone()
                code = EXIT_BROKEN_PIPE
        print(f"{prog}: {exc}", file=sys.stderr)
        return code
    except (OSError, ThreadcostError) as exc:
        text, data = one_line(exc)
        if text is None:
            raise
        print(f"{prog}: error: {text}", file=sys.stderr)
        return EXIT_DATA if data else EXIT_ERROR
    for line in getattr(module, "warnings", lambda _r: [])(result):
        print(f"{prog}: {line}", file=sys.stderr)
    code = EXIT_OK
    try:
        emit(result, module, args.json)
    except BrokenPipeError:
        _stdout_gone()
        code = EXIT_BROKEN_PIPE
    if getattr(args, "save", False):  # saved even when nobody read stdout to the end
        from threadcost.store.datastore import save_run

        try:
            path = save_run(result)
        except OSError as exc:
            text, _ = one_line(exc)
            print(f"{prog}: error: {text}; the result above was not stored", file=sys.stderr)
            return EXIT_DATA
        print(f"{prog}: saved to {path}", file=sys.stderr)
    if result.limit_hit:
        limit = result.limit_hit.get("limit")
        print(f"{prog}: system limit reached: {limit} (partial result)", file=sys.stderr)
        return EXIT_LIMIT
    return code


def _quiet_interrupt(prog: str, terminated: bool = False) -> None:
    """One line for an interrupt, even when stderr itself is gone."""
    with contextlib.suppress(OSError, ValueError):
        print(f"{prog}: {'terminated (SIGTERM)' if terminated else 'interrupted'}",
              file=sys.stderr)


# Set when SIGTERM (not Ctrl-C) raised the KeyboardInterrupt that ends a command.
_TERMINATED: list[bool] = []


@contextlib.contextmanager
def stop_on_sigterm() -> Iterator[None]:
    """SIGTERM ends a command as Ctrl-C does: KeyboardInterrupt, cleanup, then exit 143."""
    import signal

    def handler(signum: int, frame: object) -> None:
        _TERMINATED[:] = [True]
        raise KeyboardInterrupt

    try:
        previous = signal.signal(signal.SIGTERM, handler)
    except ValueError:  # not the main thread (tests calling main() from a thread)
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
