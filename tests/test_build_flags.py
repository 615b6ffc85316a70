"""Every C program the project builds compiles warning-free under the distributions'
default flags (-Werror here: the project's own check), while a reader's build never
turns a warning into an error; a failed compile names the file and the first errors;
the kernels' struct layouts as cffi's ABI mode sees them are the compiler's; and the
same programs build for arm64 with Debian's cross compiler where it is installed."""

from __future__ import annotations

import importlib.util
import platform
import re
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from threadcost import cbuild
from threadcost.native import ffi

REPO = Path(__file__).resolve().parent.parent
CROSS_CC = "aarch64-linux-gnu-gcc"
# The project's checks (-Werror under each distribution's defaults): tools/cflags.py.
_SPEC = importlib.util.spec_from_file_location("cflags", REPO / "tools" / "cflags.py")
assert _SPEC is not None and _SPEC.loader is not None
cflags = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(cflags)


def _sources() -> list[Path]:
    """Every C source of every program, once."""
    return sorted({src for program in cbuild.programs() for src in program.sources})


def _compile_all(cc: str, flags: list[str], out: Path) -> subprocess.CompletedProcess[str]:
    """One compiler run over every source (-c: the warnings are the compiler's, the
    link adds none), objects into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    return subprocess.run([cc, *flags, "-fPIC", f"-I{cbuild.native_dir()}", "-c",
                           *map(str, _sources())], cwd=out, capture_output=True, text=True,
                          errors="replace", check=False, stdin=subprocess.DEVNULL, timeout=300)


@pytest.mark.skipif(cbuild.compiler() is None, reason="no C compiler")
def test_every_c_program_is_warning_free_under_each_distributions_defaults(
        tmp_path: Path) -> None:
    """Fedora's (_FORTIFY_SOURCE=3; they hold Ubuntu 24.04's) and Debian 13's
    (_FORTIFY_SOURCE=2), each with -Wall -Wextra -Werror; the two compile at once."""
    cc = cbuild.compiler()
    assert cc is not None
    names = ["fedora", "debian-13"]
    assert set(cflags.DISTRO_FLAGS["ubuntu-24.04"]) - {"-D_FORTIFY_SOURCE=3"} \
        <= set(cflags.DISTRO_FLAGS["fedora"])
    with ThreadPoolExecutor(max_workers=len(names)) as pool:
        runs = list(pool.map(lambda n: _compile_all(cc, cflags.distro_flags(n), tmp_path / n),
                             names))
    failures = {n: cbuild.first_errors(r.stderr, 10) for n, r in zip(names, runs, strict=True)
                if r.returncode != 0}
    assert not failures, failures
    assert {"-D_FORTIFY_SOURCE=3", "-D_FORTIFY_SOURCE=2"} <= {
        f.rsplit(",", 1)[-1] for n in names for f in cflags.DISTRO_FLAGS[n]}


def test_the_catalogue_holds_every_c_file_the_repository_builds() -> None:
    listed = set(_sources())
    on_disk = {p for p in (REPO / "native").rglob("*.c") if "peers" not in p.parts}
    assert on_disk == listed


def test_no_build_on_a_readers_machine_turns_warnings_into_errors() -> None:
    """-Werror appears only in the project's checks (tools/cflags.py, which the sanitizer
    script reads, and the tests); never in what setup, a run or a peer build compiles."""
    assert "-Werror" not in cbuild.FLAGS
    user_facing = [REPO / "Makefile", REPO / "setup.py", REPO / "native" / "build_native.py",
                   *(REPO / "threadcost").rglob("*.py")]
    found = [f"{p.relative_to(REPO)}:{n}" for p in user_facing
             for n, line in enumerate(p.read_text().splitlines(), 1)
             if re.search(r"-Werror(?!=)", line.split("#")[0])]  # code, not comments
    assert not found, found


@pytest.mark.skipif(cbuild.compiler() is None, reason="no C compiler")
def test_a_failed_compile_names_the_file_and_the_first_errors(tmp_path: Path) -> None:
    source = tmp_path / "broken.c"
    source.write_text("int main(void) { return undeclared_name; }\n")
    with pytest.raises(cbuild.CompileError) as caught:
        cbuild.compile_program([source], tmp_path / "broken", program="native/broken.c")
    message = str(caught.value)
    assert "native/broken.c" in message and "undeclared_name" in message
    assert "error" in message and "\n" not in message
    assert not list(tmp_path.glob(".*tmp"))  # nothing half-written is left


@pytest.mark.skipif(cbuild.compiler() is None, reason="no C compiler")
def test_a_warning_does_not_stop_a_readers_build(tmp_path: Path) -> None:
    source = tmp_path / "warns.c"
    source.write_text("#include <unistd.h>\nint main(void) { int unused; "
                      "write(1, \"\", 0); return 0; }\n")
    built = cbuild.compile_program([source], tmp_path / "warns", program="warns.c",
                                   extra=["-D_FORTIFY_SOURCE=3"])
    assert subprocess.run([str(built)], check=False).returncode == 0


def _struct_types() -> list[str]:
    typedefs, _structs, _unions = ffi.list_types()
    found = []
    for name in typedefs:
        if ffi.typeof(name).kind != "struct":
            continue
        try:  # an opaque struct (used only through a pointer) has no layout to compare
            ffi.sizeof(name)
        except ffi.error:
            continue
        found.append(name)
    return found


@pytest.mark.skipif(cbuild.compiler() is None, reason="no C compiler")
def test_abi_mode_struct_layouts_are_the_compilers(tmp_path: Path) -> None:
    """cffi's ABI mode lays out each declared struct itself: every size and field offset
    must be what the compiler gives the kernels."""
    lines = ["#include <stddef.h>", "#include <stdio.h>",
             *(f'#include "{h.name}"' for h in sorted(cbuild.native_dir().glob("tc_*.h"))),
             '#include "threadcost.h"', "int main(void) {"]
    expected = []
    for name in _struct_types():
        lines.append(f'printf("{name} %zu\\n", sizeof({name}));')
        expected.append(f"{name} {ffi.sizeof(name)}")
        for field, info in ffi.typeof(name).fields:
            if info.bitsize == -1:
                lines.append(f'printf("{name}.{field} %zu\\n", offsetof({name}, {field}));')
                expected.append(f"{name}.{field} {info.offset}")
    lines.append("return 0; }")
    source = tmp_path / "layout.c"
    source.write_text("\n".join(lines) + "\n")
    binary = cbuild.compile_program([source], tmp_path / "layout", program="layout.c",
                                    extra=[f"-I{cbuild.native_dir()}"])
    got = subprocess.run([str(binary)], capture_output=True, text=True, check=True).stdout
    assert len(expected) > 20
    assert got.splitlines() == expected


@pytest.mark.skipif(shutil.which(CROSS_CC) is None,
                    reason=f"no arm64 cross compiler ({CROSS_CC}: apt-get install "
                           "gcc-aarch64-linux-gnu); tools/cross_arm64.py also runs the C tests "
                           "under qemu-user")
def test_every_c_program_compiles_for_arm64(tmp_path: Path) -> None:
    run = _compile_all(CROSS_CC, cflags.distro_flags("ubuntu-24.04", "aarch64"), tmp_path)
    assert run.returncode == 0, cbuild.first_errors(run.stderr, 10)


def test_java_peer_build_shows_warnings_without_failing_on_them() -> None:
    from threadcost.peers import java

    source = Path(java.__file__).read_text()
    assert '"-Xlint:all"' in source and '"-Werror"' not in source


@pytest.mark.skipif(platform.system() != "Linux", reason="Linux only")
def test_java_peer_is_warning_free_with_werror(tmp_path: Path) -> None:
    """The project's own check of the Java peer: javac -Xlint:all -Werror."""
    from threadcost.peers import java

    tool, why = java._find()
    if tool is None:
        pytest.skip(why or "no JDK")
    proc = subprocess.run([tool["javac"], "--release", str(java.MIN_RELEASE), "-Xlint:all",
                           "-Werror", "-d", str(tmp_path),
                           str(java.JAVA.source_dir / "Peers.java")],
                          capture_output=True, text=True, check=False, timeout=120)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-2000:]
