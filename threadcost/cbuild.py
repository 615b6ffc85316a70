"""How threadcost compiles C: one definition of the flags, one compile function.

Every C program built on a reader's machine (the kernels' shared library at install
time, the launch helpers and the brigade reference at run time) is compiled with
:data:`FLAGS`: the warnings are shown, never turned into errors. A newer compiler or a
distribution's own defaults (Ubuntu and Fedora define ``_FORTIFY_SOURCE=3``, which
makes glibc mark ``write`` and ``read`` warn_unused_result) may warn where ours does not,
and a warning must never stop a reader's build.

The project's own checks, where every warning is an error, are not here: tools/cflags.py
holds them (each distribution's defaults, warnings as errors; the sanitizer builds), and
tests/test_build_flags.py compiles every program of :func:`programs` under them,
tools/cross_arm64.py does so for arm64 and native/tests/run_sanitizers.sh builds the C
tests with them, so a warning is fixed here before a reader meets it.

This module imports only the standard library and :mod:`threadcost.errors`:
native/build_native.py loads it at install time, before threadcost's dependencies are
installed.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from threadcost.errors import TC_ESYS, KernelError

__all__ = [
    "FLAGS", "HARDENING", "WARNINGS", "CompileError", "Program", "cffi_declarations",
    "cffi_headers", "compile_program", "compiler", "compiler_command", "first_errors", "helpers",
    "programs",
]

WARNINGS = ["-Wall", "-Wextra"]
# Our own hardening, also where the distribution sets none (-U first: a compiler or CFLAGS
# that already defines _FORTIFY_SOURCE would otherwise warn that it is redefined).
HARDENING = ["-U_FORTIFY_SOURCE", "-D_FORTIFY_SOURCE=2", "-fstack-protector-strong"]
FLAGS = ["-O2", *WARNINGS, *HARDENING, "-pthread"]


@dataclass(frozen=True)
class Program:
    """One C program the project builds: its sources (native/...), and whether it is
    the kernels' shared library."""

    name: str
    sources: tuple[Path, ...]
    shared: bool = False


def native_dir() -> Path:
    return Path(__file__).resolve().parent.parent / "native"


# What cffi sees of a header: the regions between these markers.
CFFI_REGION = re.compile(r"/\* CFFI_BEGIN \*/(.*?)/\* CFFI_END \*/", re.S)


def cffi_headers() -> list[Path]:
    """The kernels' headers: the shared one first, then each family's in name order
    (none outside a checkout: an installed package has no native/)."""
    shared = native_dir() / "threadcost.h"
    if not shared.is_file():
        return []
    return [shared, *sorted(p for p in native_dir().glob("*.h") if p != shared)]


def cffi_declarations() -> str:
    """The declarations cffi parses (native/build_native.py writes them into
    threadcost/_native.py): every header's CFFI regions, in :func:`cffi_headers` order."""
    return "\n".join(part for header in cffi_headers()
                     for part in CFFI_REGION.findall(header.read_text()))


def helpers() -> list[Program]:
    """The small programs of 03_launch: the one posix_spawn starts, and the clean
    process launches are timed from (built by the Makefile, or on first use)."""
    native = native_dir()
    return [Program("spawn_target", (native / "spawn_target" / "spawn_target.c",)),
            Program("launch_driver", (native / "launch_driver" / "launch_driver.c",
                                      native / "launch.c", native / "common.c"))]


def programs() -> list[Program]:
    """Every C program the project builds: the kernels, the launch helpers, the brigade
    reference (07_io_brigade, built at run time) and the kernels' C tests
    (native/tests/test_<family>.c with native/common.c and native/<family>.c)."""
    native = native_dir()
    found = [Program("kernels", tuple(sorted(native.glob("*.c"))), shared=True), *helpers(),
             Program("brigade_ref", (native / "brigade_reference" / "brigade_ref.c",))]
    for test in sorted((native / "tests").glob("test_*.c")):
        family = test.stem.removeprefix("test_")
        extra = () if family == "common" else (native / f"{family}.c",)
        found.append(Program(test.stem, (test, native / "common.c", *extra)))
    return found


ERROR_LINES = 6  # how many of the compiler's first diagnostic lines a failure shows


class CompileError(KernelError):
    """A C program could not be compiled: the message names the file and quotes the
    compiler's first error lines (or says that no compiler was found)."""

    def __init__(self, program: str, detail: str) -> None:
        super().__init__(f"{program} build", TC_ESYS, 0, detail)
        self.program = program
        self.args = (detail,)

    def __str__(self) -> str:
        return self.detail

    def __reduce__(self) -> tuple[object, ...]:  # picklable across a child process
        return (type(self), (self.program, self.detail))


def compiler_command() -> list[str] | None:
    """The C compiler as a command: $CC when set and found (``ccache gcc`` included),
    else cc, else gcc; None when there is none."""
    wanted = shlex.split(os.environ.get("CC", ""))
    for command in ([wanted] if wanted else []) + [["cc"], ["gcc"]]:
        found = shutil.which(command[0])
        if found:
            return [found, *command[1:]]
    return None


def compiler() -> str | None:
    """The path of the C compiler (the first word of :func:`compiler_command`)."""
    command = compiler_command()
    return command[0] if command else None


def first_errors(output: str, limit: int = ERROR_LINES) -> str:
    """The compiler's first error lines (errors before warnings and notes), joined
    with " | " for a one-line message."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    errors = [line for line in lines if "error" in line.lower()]
    chosen = (errors or lines)[:limit]
    return " | ".join(chosen) or "no output"


def compile_program(sources: Sequence[Path], out: Path, *, program: str,
                    extra: Sequence[str] = (), alternatives: Sequence[Sequence[str]] = ((),),
                    timeout: float = 120) -> Path:
    """Compile ``sources`` into ``out`` with :data:`FLAGS` + ``extra``, written atomically
    (a running copy keeps its file). Each of ``alternatives`` (extra flags, such as
    ``-static`` then none) is tried in turn until one builds. Raises
    :class:`CompileError` naming ``program`` and the compiler's first error lines."""
    cc = compiler_command()
    if cc is None:
        raise CompileError(program, f"no C compiler found to build {program} (install "
                                    "gcc or clang, e.g. apt-get install build-essential)")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    failure = ""
    try:
        for alternative in alternatives:
            try:
                proc = subprocess.run([*cc, *FLAGS, *extra, *alternative, "-o", str(tmp),
                                       *map(str, sources)], capture_output=True, text=True,
                                      errors="replace", check=False,
                                      stdin=subprocess.DEVNULL, timeout=timeout)
            except subprocess.TimeoutExpired:
                failure = f"the compiler did not finish within {timeout:g} s"
                continue
            if proc.returncode == 0:
                os.replace(tmp, out)
                return out
            failure = first_errors(proc.stderr or proc.stdout)
    finally:
        tmp.unlink(missing_ok=True)
    raise CompileError(program, f"{Path(cc[-1]).name} could not compile {program}: {failure}")


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m threadcost.cbuild -o OUT [-I DIR] [--static] SOURCE...``: the Makefile's
    launch helpers, compiled as :func:`compile_program` compiles them at run time
    (``--static`` tries a static build first). A failure is one line on stderr, exit 4."""
    import argparse
    import sys

    parser = argparse.ArgumentParser(prog="python -m threadcost.cbuild")
    parser.add_argument("-o", dest="out", required=True, type=Path)
    parser.add_argument("-I", dest="include", action="append", default=[])
    parser.add_argument("--static", action="store_true")
    parser.add_argument("sources", nargs="+", type=Path)
    args = parser.parse_args(argv)
    try:
        compile_program(args.sources, args.out, program=str(args.sources[0]),
                        extra=[f"-I{d}" for d in args.include],
                        alternatives=(["-static"], []) if args.static else ((),))
    except CompileError as exc:
        print(f"build: {exc}", file=sys.stderr)
        return 4
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
