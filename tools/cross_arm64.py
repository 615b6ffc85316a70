"""arm64, as far as this machine allows: every C program of the project (threadcost.cbuild
.programs(): the kernels' shared library, the launch helpers, the brigade reference, the
kernels' C tests) compiled with Debian's aarch64 cross compiler, -Werror under Ubuntu
24.04's default flags for arm64; then each C test run under qemu-user, where it runs here.

    python tools/cross_arm64.py [--no-run] [test_name ...]     (make cross-arm64)

Needs gcc-aarch64-linux-gnu (and libc6-dev-arm64-cross); running needs qemu-user-static
(or qemu-user). Without qemu the compile check still runs and says so. Exit 0 when every
build (and run) passed, 1 on a failure, 4 without the cross compiler.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from threadcost import cbuild  # noqa: E402
from tools import cflags  # noqa: E402

CROSS_CC = os.environ.get("CROSS_CC", "aarch64-linux-gnu-gcc")
SYSROOT = Path(os.environ.get("CROSS_SYSROOT", "/usr/aarch64-linux-gnu"))
OUT = ROOT / "build" / "arm64"
RUN_TIMEOUT_S = 600  # a test under emulation runs several times slower than natively


def cross_compiler() -> str | None:
    return shutil.which(CROSS_CC)


def qemu() -> str | None:
    for name in (os.environ.get("QEMU", ""), "qemu-aarch64-static", "qemu-aarch64"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


def build(cc: str, program: cbuild.Program) -> tuple[str, Path | None, str]:
    """(name, the built file or None, what went wrong)."""
    flags = cflags.distro_flags("ubuntu-24.04", "aarch64")
    out = OUT / (f"lib{program.name}.so" if program.shared else program.name)
    shape = ["-shared", "-fPIC"] if program.shared else []
    proc = subprocess.run([cc, *flags, *shape, f"-I{cbuild.native_dir()}", "-o", str(out),
                           *map(str, program.sources)], capture_output=True, text=True,
                          errors="replace", check=False, stdin=subprocess.DEVNULL)
    if proc.returncode != 0:
        return program.name, None, cbuild.first_errors(proc.stderr or proc.stdout)
    return program.name, out, ""


# The largest signal frame qemu can give an arm64 thread: SVE registers of 2048 bits
# (the architecture's maximum; a thread that used SVE has them saved in every frame).
# test_thread_memory runs a second time under it: the thread stack floor (128 KiB, glibc's
# PTHREAD_STACK_MIN on arm64) must still hold a signal frame and its handler.
LARGEST_FRAME_CPU = "max,sve-default-vector-length=256"
LARGEST_FRAME_TESTS = ("test_thread_memory",)


def run(emulator: str, binary: Path, cpu: str | None = None) -> tuple[bool, str]:
    # glibc's cache of joined threads' stacks off, as native/tests/run_sanitizers.sh has it:
    # the tests count mappings.
    env = {**os.environ, "QEMU_LD_PREFIX": str(SYSROOT), "TC_TEST_EMULATED": "1",
           "GLIBC_TUNABLES": "glibc.pthread.stack_cache_size=0"}
    command = [emulator, *(["-cpu", cpu] if cpu else []), str(binary)]
    try:
        proc = subprocess.run(command, capture_output=True, text=True,
                              errors="replace", env=env, timeout=RUN_TIMEOUT_S, check=False,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return False, f"did not finish within {RUN_TIMEOUT_S} s"
    lines = (proc.stdout + proc.stderr).strip().splitlines() or ["no output"]
    if proc.returncode != 0:
        return False, f"exit {proc.returncode}: " + " | ".join(lines[-8:])
    notes = [line.removeprefix("note: ") for line in lines if line.startswith("note: ")]
    return True, "; ".join([lines[-1], *notes])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tools/cross_arm64.py", description=__doc__)
    parser.add_argument("--no-run", action="store_true", help="compile only")
    parser.add_argument("tests", nargs="*", help="C tests to run (default: all)")
    args = parser.parse_args(argv)
    cc = cross_compiler()
    if cc is None:
        print(f"cross-arm64: no {CROSS_CC} here (apt-get install gcc-aarch64-linux-gnu)",
              file=sys.stderr)
        return 4
    OUT.mkdir(parents=True, exist_ok=True)
    programs = cbuild.programs()
    with ThreadPoolExecutor(max_workers=2) as pool:
        built = list(pool.map(lambda p: build(cc, p), programs))
    failed = [(name, why) for name, out, why in built if out is None]
    for name, why in failed:
        print(f"FAIL build {name}: {why}")
    print(f"arm64 builds: {len(built) - len(failed)} of {len(built)} C programs compiled "
          f"with {Path(cc).name} -Werror under Ubuntu 24.04's defaults for arm64")
    emulator = None if args.no_run else qemu()
    if args.no_run or emulator is None:
        why = ("--no-run" if args.no_run
               else "no qemu-aarch64 here (apt-get install qemu-user-static)")
        print(f"SKIP runs: {why}")
        return 1 if failed else 0
    if not (SYSROOT / "lib" / "ld-linux-aarch64.so.1").exists():
        print(f"SKIP runs: no arm64 C library at {SYSROOT} (apt-get install libc6-arm64-cross)")
        return 1 if failed else 0
    wanted = {t.removesuffix(".c") for t in args.tests}
    tests = [out for name, out, _ in built if out is not None and name.startswith("test_")
             and (not wanted or name in wanted)]
    runs: list[tuple[Path, str | None]] = [(b, None) for b in tests]
    runs += [(b, LARGEST_FRAME_CPU) for b in tests if b.name in LARGEST_FRAME_TESTS]
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(
            lambda r: (r[0].name + (f" (-cpu {r[1]})" if r[1] else ""), *run(emulator, *r)),
            runs))
    for name, ok, line in results:
        print(f"{'ok  ' if ok else 'FAIL'} qemu-aarch64 {name} ({line})")
    passed = sum(ok for _, ok, _ in results)
    print(f"arm64 runs under {Path(emulator).name}: {passed} of {len(results)} C tests passed")
    return 1 if failed or passed < len(results) else 0


if __name__ == "__main__":
    raise SystemExit(main())
