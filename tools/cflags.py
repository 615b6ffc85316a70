"""The project's own C checks, in one place: the flags under which every warning is an
error. A reader's build never uses them: threadcost.cbuild compiles with cbuild.FLAGS,
which shows warnings and never fails on one (a newer compiler or a distribution's own
defaults may warn where ours does not).

    python3 tools/cflags.py plain|asan|tsan        native/tests/run_sanitizers.sh's builds
    python3 tools/cflags.py distro NAME [TARGET]    NAME's default flags with the check added

Used by native/tests/run_sanitizers.sh (make sanitize, and make test through
tests/test_sanitizers.py), tools/cross_arm64.py (make cross-arm64) and the tests
(tests/test_build_flags.py, tests/test_security.py). Imports only the standard library
and threadcost.cbuild.
"""

from __future__ import annotations

import platform
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from threadcost import cbuild  # noqa: E402

WERROR = "-Werror"
# What a distribution's defaults get added: the project's warnings, as errors.
CHECK = [*cbuild.WARNINGS, WERROR, "-pthread"]
# Each build of native/tests/run_sanitizers.sh: "plain" is a reader's build (cbuild.FLAGS)
# with debug information and every warning an error.
_SANITIZED = ["-O1", "-g", *cbuild.WARNINGS, WERROR, "-pthread", "-fno-omit-frame-pointer"]
VARIANTS: dict[str, list[str]] = {
    "plain": [*cbuild.FLAGS, "-g", WERROR],
    "asan": [*_SANITIZED, "-fsanitize=address,undefined", "-fno-sanitize-recover=all"],
    "tsan": [*_SANITIZED, "-fsanitize=thread"],
}

# What each distribution's compiler or package build adds by default (Ubuntu's gcc spec;
# Fedora's redhat-rpm-config %optflags; Debian's dpkg-buildflags), less what only tunes
# code generation. The x86-only -fcf-protection becomes arm64's
# -mbranch-protection=standard in a cross build: see distro_flags().
_COMMON_DEFAULTS = ["-O2", "-fstack-protector-strong", "-fstack-clash-protection",
                    "-fcf-protection", "-Wformat", "-Wformat-security"]
DISTRO_FLAGS: dict[str, list[str]] = {
    "ubuntu-24.04": [*_COMMON_DEFAULTS, "-D_FORTIFY_SOURCE=3"],
    "fedora": [*_COMMON_DEFAULTS, "-Werror=format-security", "-fexceptions", "-pipe",
               "-fasynchronous-unwind-tables", "-fno-omit-frame-pointer",
               "-Wp,-U_FORTIFY_SOURCE,-D_FORTIFY_SOURCE=3", "-Wp,-D_GLIBCXX_ASSERTIONS"],
    "debian-13": [*_COMMON_DEFAULTS, "-Werror=implicit-function-declaration",
                  "-Werror=format-security", "-Wdate-time", "-D_FORTIFY_SOURCE=2"],
}


def distro_flags(name: str, target: str | None = None) -> list[str]:
    """DISTRO_FLAGS[name] for ``target`` (a machine name as uname gives it; this one by
    default), with CHECK added."""
    branch_protection = {"x86_64": "-fcf-protection", "aarch64": "-mbranch-protection=standard"}
    flags = []
    for flag in DISTRO_FLAGS[name]:
        if flag == "-fcf-protection":
            flag = branch_protection.get(target or platform.machine(), "")
        if flag:
            flags.append(flag)
    return [*flags, *CHECK]


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) == 1 and args[0] in VARIANTS:
        print(" ".join(VARIANTS[args[0]]))
        return 0
    if len(args) in (2, 3) and args[0] == "distro" and args[1] in DISTRO_FLAGS:
        print(" ".join(distro_flags(args[1], args[2] if len(args) == 3 else None)))
        return 0
    print(f"usage: tools/cflags.py {'|'.join(VARIANTS)} | distro "
          f"{'|'.join(DISTRO_FLAGS)} [TARGET]", file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
