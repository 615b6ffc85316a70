"""#37 item 5: ``python -m threadcost.paper`` (what ``make paper`` runs) ends every
failure in one line with the README's exit codes: 2 for bad input, 3 for a system limit
met before anything ran, 4 for the system or the disk (a full disk named ENOSPC, never
"(errno 0)"). An output folder named in a parameter file stays inside the build folder."""

from __future__ import annotations

import errno
import shutil
from pathlib import Path

import pytest

from threadcost.errors import DataError, LimitReached, ParameterError
from threadcost.paper import build as paper

ENOSPC_TEXT = "[Errno 28] No space left on device: '/repo/vendor/vega.js' -> '/out/vega.js'"
CASES = [
    (paper.BuildError("--machine typo: no stored run in runs/typo or data/typo"), 2, "typo"),
    (ParameterError("02_thread_memory: memory_repeats", 0, "must be an integer from 1 to "
                    "100"), 2, "memory_repeats"),
    (LimitReached("kernel.threads-max", errno.EAGAIN, None, "before anything ran"), 3,
     "kernel.threads-max"),
    (OSError(errno.ENOSPC, "No space left on device", "/out/paper.partial/x.html"), 4,
     "ENOSPC"),
    (shutil.Error([("/repo/vendor/vega.js", "/out/vega.js", ENOSPC_TEXT)] * 3), 4, "ENOSPC"),
    (PermissionError(errno.EACCES, "Permission denied", "/out"), 4, "Permission denied"),
    (DataError("data/m/r/meta.json: nested deeper than 32 levels"), 4, "deeper"),
]


@pytest.mark.parametrize("error,code,needle", CASES,
                         ids=["build", "parameter", "limit", "enospc", "copytree", "eacces",
                              "data"])
def test_each_failure_is_one_line_with_the_readmes_code(
        error: BaseException, code: int, needle: str, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    def failing(*args: object, **kwargs: object) -> Path:
        raise error

    monkeypatch.setattr(paper, "build", failing)
    monkeypatch.delenv("MAKELEVEL", raising=False)  # as typed, not under `make test`
    assert paper.main(["--out", str(tmp_path / "p")]) == code
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert captured.out == "" and len(lines) == 1, captured.err
    assert lines[0].startswith("python -m threadcost.paper") and needle in lines[0]
    assert "errno 0" not in lines[0] and "Traceback" not in captured.err


@pytest.mark.parametrize("key", ["figures_dir", "data_dir"])
@pytest.mark.parametrize("folder", ["/etc/threadcost-figures", "../../outside"])
def test_an_output_folder_outside_build_in_a_file_is_refused(
        key: str, folder: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("THREADCOST_DATA_DIR", str(tmp_path / "runs"))
    params = tmp_path / "mine.yaml"
    params.write_text(f"{key}: {folder}\n")
    assert paper.main(["--params", str(params), "--out", str(tmp_path / "p")]) == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and f"{key}' = '{folder}'" in lines[0], captured.err
    assert "inside the build folder" in lines[0]
    assert not Path(folder).exists() and not (tmp_path / "p").exists()
    assert not (tmp_path / "runs").exists()
