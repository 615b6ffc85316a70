"""The CLI contract of issue 8, checked from outside (a fresh `python -m threadcost`).

Bad input exits 2 with exactly one line on stderr, no traceback and nothing on
stdout; a request beyond the machine's thread limit exits 3 within seconds, names
the limit, still prints the partial result and leaves no thread behind. A
subcommand that does not exist yet is skipped with a reason naming it, and
becomes a real check as soon as it lands.
"""

from __future__ import annotations

import json
import resource

import pytest

from tests.conftest import run_cli
from threadcost.cli import command_modules

AVAILABLE = set(command_modules())

# (argv, a word the one-line message must contain: the parameter at fault)
BAD_INPUT = [
    (["switch", "--iterations", "0"], "iterations"),
    (["switch", "--iterations", "-5"], "iterations"),
    (["switch", "--mechanism", "smoke-signals"], "mechanism"),
    (["switch", "--placement", "sideways"], "placement"),
    (["memory", "--threads", "-1"], "threads"),
    (["memory", "--threads", "abc"], "threads"),
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
    _needs(argv[0])
    proc = run_cli(*argv, timeout=60)
    assert proc.returncode == 2, (proc.returncode, proc.stdout[-500:], proc.stderr[-2000:])
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    assert word in lines[0].lower(), lines[0]
    assert proc.stdout == ""


@pytest.mark.parametrize("command", sorted(AVAILABLE))
def test_help_documents_every_option(command: str) -> None:
    proc = run_cli(command, "--help", timeout=60)
    assert proc.returncode == 0
    assert "usage:" in proc.stdout and "--json" in proc.stdout
    assert proc.stderr == ""


@pytest.mark.parametrize("command", sorted(AVAILABLE))
def test_unknown_option_exits_2(command: str) -> None:
    proc = run_cli(command, "--no-such-option", "1", timeout=60)
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert "Traceback" not in proc.stderr


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
    import subprocess
    import sys

    from tests.conftest import REPO

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
