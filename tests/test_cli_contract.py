"""The CLI contract of issue 8, checked from outside (a fresh `python -m threadcost`).

Bad input exits 2 with exactly one line on stderr, no traceback and nothing on
stdout; a request beyond the machine's thread limit exits 3 within seconds, names
the limit, still prints the partial result and leaves no thread behind. A
subcommand that does not exist yet is skipped with a reason naming it, and
becomes a real check as soon as it lands.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import resource
import subprocess
import sys

import pytest

from tests.conftest import REPO
from threadcost.cli import command_modules, main

AVAILABLE = set(command_modules())

# (argv, a word the one-line message must contain: the parameter at fault)
BAD_INPUT = [
    (["switch", "--iterations", "0"], "iterations"),
    (["switch", "--iterations", "-5"], "iterations"),
    (["switch", "--mechanism", "smoke-signals"], "mechanism"),
    (["switch", "--placement", "sideways"], "placement"),
    (["memory", "--threads", "-1"], "thread"),
    (["memory", "--threads", "abc"], "thread"),
    (["memory", "--threads", "10", "--stack-kib", "1"], "stack"),
    (["memory", "--threads", "10", "--stack-kib", "64", "--touch-kib", "128"], "touch"),
    (["memory", "--threads", "100", "--touch-kib", "999999999"], "touch"),
    (["malloc-touch", "--mib", "0"], "mib"),
    (["malloc-touch", "--mib", "99999999"], "mib"),
    (["launch", "--iterations", "10", "--stack-kib", "3"], "stack"),
]


def _needs(command: str) -> None:
    if command not in AVAILABLE:
        pytest.skip(f"subcommand {command!r} has not landed yet "
                    f"(available: {', '.join(sorted(AVAILABLE))})")


@pytest.mark.parametrize("argv, word", BAD_INPUT, ids=[" ".join(a) for a, _ in BAD_INPUT])
def test_bad_input_exits_2_with_one_line(argv: list[str], word: str) -> None:
    """Each a fresh `python -m threadcost` (one process per case: the cases spread over
    the pytest-xdist workers and none runs twice)."""
    _needs(argv[0])
    proc = subprocess.run([sys.executable, "-m", "threadcost", *argv], capture_output=True,
                          stdin=subprocess.DEVNULL, text=True, env=os.environ.copy(),
                          timeout=120, check=False)
    code, stdout, stderr = proc.returncode, proc.stdout, proc.stderr
    assert code == 2, (code, stdout[-500:], stderr[-2000:])
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert "Traceback" not in stderr
    assert word in lines[0].lower(), lines[0]
    assert stdout == ""


def _inside(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("command", sorted(AVAILABLE))
def test_help_documents_every_option(command: str) -> None:
    code, out, err = _inside([command, "--help"])
    assert code == 0
    assert "usage:" in out and "--json" in out
    assert err == ""


@pytest.mark.parametrize("command", sorted(AVAILABLE))
def test_unknown_option_exits_2(command: str) -> None:
    code, out, err = _inside([command, "--no-such-option", "1"])
    assert code == 2
    assert len(err.strip().splitlines()) == 1, err
    assert "Traceback" not in err and out == ""


def _as_limit_then_cli(cap: int) -> None:
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))


def test_thread_limit_exits_3_quickly_naming_the_limit() -> None:
    """`memory --threads N` beyond what the address space allows.

    RLIMIT_NPROC is not enforced for root, and the machine's pid limit is shared
    with everyone, so the limit is provoked with RLIMIT_AS: 8 MiB default stacks
    run out of address space after a few dozen threads, pthread_create fails with
    EAGAIN, and the run must stop there, report, and join what it started (the
    isolated child is gone when the CLI returns).
    """
    _needs("memory")
    cap = 3 << 30  # Python + numpy/pandas fit; 1,000 x 8 MiB stacks do not
    # "within seconds": the timeout is a hang guard with a noisy machine's slack,
    # not a speed measurement
    proc = subprocess.run(
        [sys.executable, "-m", "threadcost", "memory", "--threads", "1000", "--json"],
        capture_output=True, text=True, timeout=90, stdin=subprocess.DEVNULL, cwd=REPO,
        preexec_fn=lambda: _as_limit_then_cli(cap), check=False)
    assert proc.returncode == 3, (proc.returncode, proc.stdout[-500:], proc.stderr[-2000:])
    assert "Traceback" not in proc.stderr
    assert "limit" in proc.stderr.lower()
    data = json.loads(proc.stdout)
    assert data["limit_hit"], data.get("limit_hit")
