"""Security posture: no shell built from strings, no network, hardened C, no root needed."""

from __future__ import annotations

import ast
import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from threadcost import cbuild

REPO = Path(__file__).resolve().parent.parent
PACKAGE_FILES = sorted((REPO / "threadcost").rglob("*.py")) + sorted((REPO / "tools").glob("*.py"))
NETWORK_MODULES = {"socket", "ssl", "urllib", "http", "ftplib", "smtplib", "requests",
                   "httpx", "aiohttp", "xmlrpc", "telnetlib"}


def _calls(tree: ast.AST) -> list[ast.Call]:
    return [n for n in ast.walk(tree) if isinstance(n, ast.Call)]


def _name(func: ast.expr) -> str:
    parts = []
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    if isinstance(func, ast.Name):
        parts.append(func.id)
    return ".".join(reversed(parts))


@pytest.mark.parametrize("path", PACKAGE_FILES, ids=lambda p: str(p.relative_to(REPO)))
def test_no_shell_and_no_network(path: Path) -> None:
    text = path.read_text()
    tree = ast.parse(text)
    problems = []
    for call in _calls(tree):
        name = _name(call.func)
        if name in ("os.system", "os.popen", "subprocess.getoutput",
                    "subprocess.getstatusoutput", "os.spawnlp", "os.spawnvp"):
            problems.append(f"line {call.lineno}: {name}")
        for kw in call.keywords:
            if kw.arg == "shell" and not (isinstance(kw.value, ast.Constant)
                                          and kw.value.value is False):
                problems.append(f"line {call.lineno}: {name}(shell=...)")
        if name.startswith("subprocess.") and call.args and \
                isinstance(call.args[0], ast.Constant | ast.JoinedStr | ast.BinOp):
            problems.append(f"line {call.lineno}: {name} with a command string, "
                            "not an argument list")
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            mods = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            mods = [node.module]
        else:
            continue
        for mod in mods:
            if mod.split(".")[0] in NETWORK_MODULES:
                problems.append(f"line {node.lineno}: imports {mod} (no network access)")
    assert not problems, problems


@pytest.mark.skipif(cbuild.compiler() is None, reason="no C compiler")
def test_a_warning_passes_a_readers_build_and_fails_the_projects_check(
        tmp_path: Path) -> None:
    """One source with a warning (an unused variable): a reader's build (cbuild, as setup
    and a run compile) succeeds with the hardening on; the project's check (tools/cflags.py,
    as make sanitize and tests/test_build_flags.py compile) fails, quoting the warning."""
    for flag in ("-Wall", "-Wextra", "-D_FORTIFY_SOURCE=2", "-fstack-protector-strong"):
        assert flag in cbuild.FLAGS, flag
    source = tmp_path / "warns.c"
    source.write_text("int main(void) { int unused_here = 1; return 0; }\n")
    built = cbuild.compile_program([source], tmp_path / "warns", program="warns.c")
    assert subprocess.run([str(built)], check=False).returncode == 0
    cc = cbuild.compiler_command()
    assert cc is not None
    strict = subprocess.run([*cc, *_cflags().VARIANTS["plain"], "-o", str(tmp_path / "strict"),
                             str(source)], capture_output=True, text=True, check=False)
    assert strict.returncode != 0
    assert "unused_here" in strict.stderr and "-Werror" in strict.stderr


def _cflags() -> ModuleType:
    spec = importlib.util.spec_from_file_location("cflags", REPO / "tools" / "cflags.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_c_kernels_never_print_exit_or_abort() -> None:
    banned = ("printf(", "puts(", "perror(", "exit(", "abort(", "assert(")
    problems = []
    for path in sorted((REPO / "native").glob("*.c")):
        for number, line in enumerate(path.read_text().splitlines(), 1):
            code = line.split("//")[0]
            for word in banned:
                idx = code.find(word)
                # _exit( in a forked child is allowed; snprintf( is not printing
                if idx >= 0 and not (word == "exit(" and code[idx - 1:idx] == "_") \
                        and not (word == "printf(" and code[idx - 1:idx].isalpha()):
                    problems.append(f"{path.name}:{number}: {line.strip()}")
    assert not problems, problems


UNPRIVILEGED_RUNS = [
    ["malloc-touch", "--mib", "8"],
    ["memory", "--threads", "4,8", "--repeats", "1", "--pin", "0"],
    ["switch", "--iterations", "200", "--warmup", "20", "--no-baselines"],
]


def _drop_to_nobody() -> None:
    os.setgroups([])
    os.setgid(65534)
    os.setuid(65534)


def _unprivileged_prefix() -> tuple[list[str], Any]:
    """How to run a command without privileges here: as the user nobody when it
    may run this Python, else as root stripped of every capability (setpriv,
    securebits noroot: root's uid without root's powers)."""
    if os.geteuid() != 0:
        return [], None
    try:
        probe = subprocess.run([sys.executable, "-c", "import threadcost.native"],
                               capture_output=True, timeout=120, cwd="/",
                               env={"PYTHONPATH": str(REPO)}, preexec_fn=_drop_to_nobody,
                               check=False)
        if probe.returncode == 0:
            return [], _drop_to_nobody
    except PermissionError:
        pass
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("the user nobody may not run this Python, and setpriv is missing")
    return [setpriv, "--bounding-set=-all", "--inh-caps=-all",
            "--securebits=+noroot,+noroot_locked", "--no-new-privs"], None


@pytest.mark.parametrize("argv", UNPRIVILEGED_RUNS, ids=lambda a: a[0])
def test_runs_without_root(argv: list[str], tmp_path: Path) -> None:
    from threadcost.cli import command_modules

    if argv[0] not in command_modules():
        pytest.skip(f"subcommand {argv[0]!r} has not landed yet")
    prefix, preexec = _unprivileged_prefix()
    code = ("import sys; caps = [l for l in open('/proc/self/status') if "
            "l.startswith('CapEff')][0].split()[1]; sys.stderr.write('CapEff ' + caps + '\\n');"
            "from threadcost.cli import main; sys.exit(main(sys.argv[1:]))")
    proc = subprocess.run([*prefix, sys.executable, "-c", code, *argv, "--json"],
                          capture_output=True, text=True, timeout=180, cwd=REPO,
                          env={**os.environ, "THREADCOST_DATA_DIR": str(tmp_path)},
                          preexec_fn=preexec, check=False)
    assert "CapEff 0000000000000000" in proc.stderr, proc.stderr[-500:]
    assert proc.returncode == 0, proc.stderr[-2000:]


def test_shell_metacharacters_in_options_never_run(tmp_path: Path) -> None:
    """Every option of every command given a command substitution: refused
    (exit 2), and nothing was executed."""
    import contextlib
    import io

    from threadcost.cli import build_parser, command_modules, main

    marker = tmp_path / "executed"
    payloads = [f"$(touch {marker})", f"`touch {marker}`", f"; touch {marker}",
                f"| touch {marker}"]
    parser = build_parser(command_modules())
    commands = parser._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    for name, sub in commands.items():
        for action in sub._actions:
            if not action.option_strings or action.nargs == 0 or action.dest == "help":
                continue
            for payload in payloads:
                err = io.StringIO()
                with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
                    try:
                        code = main([name, action.option_strings[-1], payload])
                    except SystemExit as exc:
                        code = exc.code
                assert code == 2, (name, action.option_strings, payload, err.getvalue())
    assert not marker.exists()
