"""Data, disk and permission errors reach the terminal as one line, never a traceback
(#26 item 3); nothing measured is lost (the result is printed before it is stored)."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from threadcost import cli
from threadcost.store import datastore


def _save_fails(monkeypatch: pytest.MonkeyPatch, err: int, path: str) -> None:
    def refuse(*args: object, **kwargs: object) -> Path:
        raise OSError(err, os.strerror(err), path)

    monkeypatch.setattr(datastore, "save_run", refuse)


@pytest.mark.parametrize("err,advice", [(errno.ENOSPC, "free space"),
                                        (errno.EACCES, "writable"),
                                        (errno.EROFS, "read-only")])
def test_save_error_is_one_line_and_the_result_is_printed(
        err: int, advice: str, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    _save_fails(monkeypatch, err, "/data/machine/.run.partial/meta.json")
    code = cli.main(["malloc-touch", "--mib", "4", "--points", "2", "--json", "--save"])
    out, errtext = capsys.readouterr()
    assert code == cli.EXIT_DATA
    assert json.loads(out)["experiment"] == "malloc_touch"  # nothing measured is lost
    lines = errtext.strip().splitlines()
    assert len(lines) == 1, errtext
    assert "/data/machine/.run.partial/meta.json" in lines[0]
    assert errno.errorcode[err] in lines[0] and advice in lines[0]
    assert "not stored" in lines[0]


def test_unwritable_data_folder_in_a_real_process(tmp_path: Path) -> None:
    target = "/proc/threadcost-data"  # no one, root included, may create a folder here
    env = {**os.environ, "THREADCOST_DATA_DIR": target}
    proc = subprocess.run([sys.executable, "-m", "threadcost", "malloc-touch", "--mib", "4",
                           "--points", "2", "--save"], capture_output=True, text=True,
                          env=env, timeout=120, check=False, stdin=subprocess.DEVNULL)
    assert proc.returncode == cli.EXIT_DATA, proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stdout.strip()  # the result was printed
    errors = [ln for ln in proc.stderr.splitlines() if "error" in ln]
    assert len(errors) == 1 and target in errors[0]


def test_data_error_is_one_line(monkeypatch: pytest.MonkeyPatch,
                                capsys: pytest.CaptureFixture[str]) -> None:
    from threadcost.experiments.malloc_touch import run as malloc_touch

    def damaged(**kwargs: object) -> None:
        raise datastore.DataError("/data/m/run/t.csv: column 'ns' missing (truncated?)")

    monkeypatch.setattr(malloc_touch, "run", damaged)
    code = cli.main(["malloc-touch", "--mib", "4"])
    _, errtext = capsys.readouterr()
    assert code == cli.EXIT_DATA
    assert errtext.count("\n") == 1 and "/data/m/run/t.csv" in errtext


# --- make paper (python -m threadcost.paper): the README's exit codes, one line (#37) ---

def test_refused_parameter_set_exits_2_in_one_line(tmp_path: Path) -> None:
    params = tmp_path / "bad.yaml"
    params.write_text("no_such_parameter: 3\n")
    proc = subprocess.run([sys.executable, "-m", "threadcost.paper", "--only", "01",
                           "--params", str(params), "--out", str(tmp_path / "p")],
                          capture_output=True, text=True, timeout=120, check=False,
                          stdin=subprocess.DEVNULL)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "no_such_parameter" in lines[0] and str(params) in lines[0]
    assert not (tmp_path / "p").exists() and not (tmp_path / "p.partial").exists()


def test_disk_full_while_copying_is_one_line_naming_enospc() -> None:
    """shutil.copytree reports a list of (source, destination, why) and no errno: the
    line names the first file and ENOSPC, never "(errno 0)" or the list."""
    import shutil

    from threadcost.errors import one_line

    why = "[Errno 28] No space left on device: '/repo/vendor/vega.js' -> '/out/vega.js'"
    text, data = one_line(shutil.Error([("/repo/vendor/vega.js", "/out/vega.js", why)] * 5))
    assert data and text is not None
    assert text.startswith("/out/vega.js: No space left on device (ENOSPC); free space")
    assert "errno 0" not in text and "\n" not in text and "[(" not in text


@pytest.mark.parametrize("message,code", [
    ("OSError: [Errno 28] No space left on device: '/out/figures/x.png'", 4),
    ("PermissionError: [Errno 13] Permission denied: '/out/figures'", 4),
    ("ValueError: a cell failed\nwith a second line", 1),
])
def test_failed_notebook_is_one_line_with_the_readmes_code(
        message: str, code: int, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    from threadcost.paper import build as paper

    def failing(*args: object, **kwargs: object) -> Path:
        raise paper.NotebookFailed("01_malloc_touch.py", "cell 7", message)

    monkeypatch.setattr(paper, "build", failing)
    assert paper.main(["--out", str(tmp_path / "p")]) == code
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and "01_malloc_touch.py" in lines[0] and "cell 7" in lines[0]
