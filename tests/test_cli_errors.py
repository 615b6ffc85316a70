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

from threadcost import cli, datastore


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
    from threadcost.commands import malloc_touch

    def damaged(args: object) -> None:
        raise datastore.DataError("/data/m/run/t.csv: column 'ns' missing (truncated?)")

    monkeypatch.setattr(malloc_touch, "execute", damaged)
    code = cli.main(["malloc-touch", "--mib", "4"])
    _, errtext = capsys.readouterr()
    assert code == cli.EXIT_DATA
    assert errtext.count("\n") == 1 and "/data/m/run/t.csv" in errtext
