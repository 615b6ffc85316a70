"""Build threadcost's C kernels: a plain shared library, opened by cffi in ABI mode.

Every ``native/*.c`` is compiled into one shared library, ``threadcost/_kernels<suffix>.so``
(plain C: no Python header is needed, so a machine without python3-dev builds it). The
declarations cffi sees are the regions between ``/* CFFI_BEGIN */`` and ``/* CFFI_END */``
of every ``native/*.h`` (the shared ``threadcost.h`` first), written once into the pure
Python module ``threadcost/_native.py`` (cffi's out-of-line ABI mode: the declarations
are parsed here, not at each import); :mod:`threadcost.native` opens the library with
``ffi.dlopen``. A kernel family adds a ``.c`` and a ``tc_<family>.h`` and nothing else.
The headers declare every struct whole, so cffi's layout is the compiler's
(tests/test_build_flags.py checks each size and offset against the compiler's).

Used by setup.py (``ext_modules`` and ``cffi_modules``) and directly by ``make native``
(``python native/build_native.py`` builds in place, next to the package; ``--if-stale``
keeps a build that is newer than every input). The flags are threadcost.cbuild's
user-facing ones (warnings shown, never errors); set ``THREADCOST_CFLAGS`` to add flags.
"""

from __future__ import annotations

import importlib.machinery
import os
import shlex
import sys
from pathlib import Path

from cffi import FFI

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
if str(ROOT) not in sys.path:  # threadcost.cbuild, at install time too (stdlib only)
    sys.path.insert(0, str(ROOT))

from threadcost import cbuild  # noqa: E402

MODULE = "threadcost._native"  # the declarations (pure Python)
LIBRARY = "threadcost._kernels"  # the compiled kernels (a plain shared library)


def sources() -> list[Path]:
    return sorted(HERE.glob("*.c"))


def extra_flags() -> list[str]:
    return shlex.split(os.environ.get("THREADCOST_CFLAGS", ""))


def make_builder() -> FFI:
    builder = FFI()
    builder.cdef(cbuild.cffi_declarations())
    builder.set_source(MODULE, None)  # ABI mode: a Python module, no C glue
    return builder


def kernels_extension() -> object:
    """The kernels as a setuptools Extension (a shared library with no Python code:
    setuptools only compiles and places it)."""
    from setuptools import Extension

    return Extension(LIBRARY, sources=[str(p.relative_to(ROOT)) for p in sources()],
                     include_dirs=[str(HERE.relative_to(ROOT))],
                     extra_compile_args=[*cbuild.FLAGS, *extra_flags()],
                     extra_link_args=["-pthread", *extra_flags()])


ffibuilder = make_builder()


def library_path() -> Path:
    """Where the in-place build puts the kernels (the name setuptools gives them)."""
    return ROOT / "threadcost" / f"_kernels{importlib.machinery.EXTENSION_SUFFIXES[0]}"


def build_in_place() -> Path:
    """Compile the kernels into threadcost/ and write threadcost/_native.py."""
    target = library_path()
    cbuild.compile_program(sources(), target, program="native/*.c (the kernels)",
                           extra=["-shared", "-fPIC", f"-I{HERE}", *extra_flags()])
    module = ROOT / "threadcost" / "_native.py"
    tmp = module.with_name(f".{module.name}.{os.getpid()}.tmp")
    ffibuilder.emit_python_code(str(tmp))
    os.replace(tmp, module)  # atomic: a running kernel keeps its old mapping
    for stale in (ROOT / "threadcost").glob("_kernels*.so"):
        if stale != target:  # e.g. built by another Python version
            stale.unlink()
    for old in (ROOT / "threadcost").glob("_native*.so"):
        old.unlink()  # the API-mode extension of earlier versions
    return target


def built_module_is_current() -> Path | None:
    """The kernels in threadcost/ when they and the declarations are newer than every
    source, header and this file (e.g. just built by the editable install, with the same
    flags), else None."""
    built = sorted((ROOT / "threadcost").glob("_kernels*.so"))
    module = ROOT / "threadcost" / "_native.py"
    inputs = [*sources(), *cbuild.cffi_headers(), Path(__file__).resolve(),
              ROOT / "threadcost" / "cbuild.py"]
    if len(built) != 1 or not module.is_file() or os.environ.get("THREADCOST_CFLAGS"):
        return None
    newest_input = max(p.stat().st_mtime for p in inputs)
    oldest_output = min(built[0].stat().st_mtime, module.stat().st_mtime)
    return built[0] if oldest_output > newest_input else None


if __name__ == "__main__":
    current = built_module_is_current() if "--if-stale" in sys.argv[1:] else None
    try:
        print(f"{current} (up to date)" if current else build_in_place())
    except cbuild.CompileError as exc:  # one line, the README's code for the system: 4
        print(f"build_native: {exc}", file=sys.stderr)
        sys.exit(4)
