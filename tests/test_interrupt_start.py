"""#37 item 4: an interrupt that lands while an isolated child is being started.

multiprocessing's start-up cannot be interrupted safely, so threadcost.runsafety.isolate notes
SIGINT/SIGTERM meanwhile and delivers the first one to the handler in place once the
child exists. The moment is made deterministic: ``isolate._start`` is wrapped so that
the process signals itself right after the child has started (while the signals are
still deferred). Each case asserts the exit code (130 Ctrl-C, 143 SIGTERM), one line
on stderr and no traceback, the stop within 2 s of the signal, the measuring child
gone, and (for a build) no ``.partial`` left and the previous paper intact.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

# Signals itself once the child exists; writes the child's pid and the moment first.
PRELUDE = """
import os, signal, sys, time
from pathlib import Path
from threadcost.runsafety import isolate
SIG, OUT = int(sys.argv[1]), Path(sys.argv[2])
real_start = isolate._start
def start_then_signal(proc, name):
    real_start(proc, name)
    (OUT / "child").write_text(str(proc.pid))
    (OUT / "signalled").write_text(repr(time.monotonic()))
    os.kill(os.getpid(), SIG)
isolate._start = start_then_signal
"""

COMMAND = PRELUDE + """
import runpy
sys.argv = ["threadcost", "malloc-touch", "--mib", "4", "--points", "2"]
runpy.run_module("threadcost", run_name="__main__")  # python -m threadcost, as typed
"""

BUILD = PRELUDE + """
from threadcost.runsafety import interrupts
interrupts.install("make paper", "; the previous paper (if any) is unchanged")
partial = OUT / "paper.partial"
(partial / "notebooks").mkdir(parents=True)
interrupts.remove_on_stop(partial)
isolate.run_isolated(os.getpid, {})
print("not stopped")
"""

PLAIN = PRELUDE + """
isolate.run_isolated(os.getpid, {})
print("not stopped")
"""


def _run(script: str, sig: int, out: Path) -> tuple[subprocess.CompletedProcess[str], float]:
    env = {**os.environ, "THREADCOST_DATA_DIR": str(out / "runs")}
    proc = subprocess.run([sys.executable, "-c", script, str(int(sig)), str(out)],
                          capture_output=True, text=True, timeout=300, env=env, cwd=REPO,
                          stdin=subprocess.DEVNULL, check=False)
    ended = time.monotonic()
    signalled = float((out / "signalled").read_text())
    return proc, ended - signalled


def _child_gone(out: Path, within_s: float = 2.0) -> bool:
    pid = int((out / "child").read_text())
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()[0]
        except (OSError, IndexError):
            return True
        if state in (b"Z", b"X"):
            return True
        time.sleep(0.02)
    return False


def _one_quiet_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err[-3000:]
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err[-3000:]
    return lines[0]


@pytest.mark.parametrize("sig,code,word", [(signal.SIGTERM, 143, "terminated"),
                                           (signal.SIGINT, 130, "interrupted")],
                         ids=["SIGTERM", "SIGINT"])
def test_a_command_stopped_while_its_child_starts(sig: int, code: int, word: str,
                                                  tmp_path: Path) -> None:
    proc, after = _run(COMMAND, sig, tmp_path)
    assert proc.returncode == code, proc.stderr[-3000:]
    assert word in _one_quiet_line(proc.stderr)
    assert after < 2.0
    assert _child_gone(tmp_path)
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").rglob("*"))


@pytest.mark.parametrize("sig,code,word", [(signal.SIGTERM, 143, "terminated (SIGTERM)"),
                                           (signal.SIGINT, 130, "interrupted")],
                         ids=["SIGTERM", "SIGINT"])
def test_a_build_stopped_while_a_child_starts(sig: int, code: int, word: str,
                                              tmp_path: Path) -> None:
    previous = tmp_path / "paper" / "html" / "index.html"
    previous.parent.mkdir(parents=True)
    previous.write_text("the previous paper")
    proc, after = _run(BUILD, sig, tmp_path)
    assert proc.returncode == code, proc.stderr[-3000:]
    assert _one_quiet_line(proc.stderr) == f"make paper: {word}; the previous paper (if any) " \
                                           "is unchanged"
    assert proc.stdout == ""
    assert after < 2.0
    assert _child_gone(tmp_path)
    assert not (tmp_path / "paper.partial").exists()
    assert not [p for p in tmp_path.iterdir() if "partial" in p.name or "stopped" in p.name]
    assert previous.read_text() == "the previous paper"


def test_default_sigterm_ends_the_process_after_stopping_the_child(tmp_path: Path) -> None:
    # no handler installed (a library user's script): SIGTERM's default action, exit
    # status 143 in a shell, but only once the measuring child is stopped
    proc, after = _run(PLAIN, signal.SIGTERM, tmp_path)
    assert proc.returncode == -signal.SIGTERM, proc.stderr[-3000:]
    assert proc.stdout == "" and proc.stderr == ""
    assert after < 2.0 + 5.0  # the child is given its exit grace
    assert _child_gone(tmp_path, within_s=0.5)


def test_an_ignored_signal_stays_ignored(tmp_path: Path) -> None:
    script = PLAIN.replace("isolate.run_isolated", "signal.signal(SIG, signal.SIG_IGN)\n"
                                                   "isolate.run_isolated", 1)
    proc, _ = _run(script, signal.SIGTERM, tmp_path)
    assert proc.returncode == 0 and proc.stdout.strip() == "not stopped", proc.stderr[-3000:]
