"""Build the cffi extension ``threadcost._native`` (out-of-line API mode).

Every ``native/*.c`` is compiled into one extension. The declarations cffi sees
are the regions between ``/* CFFI_BEGIN */`` and ``/* CFFI_END */`` of every
``native/*.h`` (the shared ``threadcost.h`` first), so a kernel family adds a
``.c`` and a ``tc_<family>.h`` and nothing else.

Used by setup.py (``cffi_modules``) and directly by ``make native``
(``python native/build_native.py`` builds in place, next to the package;
``--if-stale`` keeps a module that is newer than every input).
Set ``THREADCOST_CFLAGS`` to add flags (``make sanitize`` uses it).
"""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path

from cffi import FFI

HERE = Path(__file__).resolve().parent
REGION = re.compile(r"/\* CFFI_BEGIN \*/(.*?)/\* CFFI_END \*/", re.S)

STRICT_FLAGS = [
    "-O2",
    "-Wall",
    "-Wextra",
    "-Werror",
    "-Wno-unused-parameter",  # cffi's generated glue has unused parameters
    "-D_FORTIFY_SOURCE=2",
    "-fstack-protector-strong",
    "-pthread",
]


def headers() -> list[Path]:
    """The shared header first, then each family's header in name order."""
    shared = HERE / "threadcost.h"
    return [shared, *sorted(p for p in HERE.glob("*.h") if p != shared)]


def sources() -> list[Path]:
    return sorted(HERE.glob("*.c"))


def cdef_text() -> str:
    parts = []
    for header in headers():
        found = REGION.findall(header.read_text())
        parts.extend(found)
    return "\n".join(parts)


def make_builder(absolute: bool = False) -> FFI:
    """setuptools wants paths relative to the project; cffi's own compile() runs
    in its tmpdir and needs absolute ones."""

    def where(p: Path) -> str:
        return str(p if absolute else p.relative_to(HERE.parent))

    builder = FFI()
    builder.cdef(cdef_text())
    includes = "\n".join(f'#include "{h.name}"' for h in headers())
    extra = shlex.split(os.environ.get("THREADCOST_CFLAGS", ""))
    builder.set_source(
        "threadcost._native",
        includes,
        sources=[where(p) for p in sources()],
        include_dirs=[where(HERE)],
        extra_compile_args=STRICT_FLAGS + extra,
        extra_link_args=["-pthread", *extra],
        libraries=["pthread"],
    )
    return builder


ffibuilder = make_builder()


def build_in_place() -> Path:
    """Compile under build/native and copy the module into threadcost/."""
    import shutil

    root = HERE.parent
    os.chdir(root)
    builder = make_builder(absolute=True)
    built = Path(builder.compile(tmpdir=str(root / "build" / "native"), verbose=False))
    target = root / "threadcost" / built.name
    tmp = target.with_suffix(".tmp")
    shutil.copy2(built, tmp)
    os.replace(tmp, target)  # atomic: a running kernel keeps its old mapping
    for stale in (root / "threadcost").glob("_native*.so"):
        if stale != target:  # e.g. the abi3 copy pip's editable install built
            stale.unlink()
    return target


def built_module_is_current() -> Path | None:
    """The module in threadcost/ when it is newer than every source, header and this
    file (e.g. just built by the editable install, with the same flags), else None."""
    built = sorted((HERE.parent / "threadcost").glob("_native*.so"))
    inputs = [*sources(), *headers(), Path(__file__).resolve()]
    if len(built) != 1 or os.environ.get("THREADCOST_CFLAGS"):
        return None
    newest_input = max(p.stat().st_mtime for p in inputs)
    return built[0] if built[0].stat().st_mtime > newest_input else None


if __name__ == "__main__":
    import sys

    current = built_module_is_current() if "--if-stale" in sys.argv[1:] else None
    print(f"{current} (up to date)" if current else build_in_place())
