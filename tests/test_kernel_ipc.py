"""Kernels started by papermill (``make paper``, the tests) listen on Unix sockets
in a private folder, never on a local TCP port."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from tests.conftest import REPO

CELL = """\
import os
from ipykernel.kernelapp import IPKernelApp
app = IPKernelApp.instance()
folder = os.path.dirname(app.connection_file)
print(app.transport, oct(os.stat(folder).st_mode & 0o777), folder)
print(sorted(os.listdir(folder)))
"""

RUNNER = """\
import sys
from pathlib import Path
from threadcost.paper.notebook_run import execute
src, out = Path(sys.argv[1]), Path(sys.argv[2])
execute(src, out, {}, cwd=src.parent, cell_timeout=120, progress_bar=False)
"""


@pytest.mark.timeout(240)
def test_a_papermill_kernel_uses_ipc_in_a_private_folder(tmp_path: Path) -> None:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nb.cells = [nbformat.v4.new_code_cell(CELL)]
    nbformat.write(nb, tmp_path / "in.ipynb")
    proc = subprocess.run([sys.executable, "-c", RUNNER, str(tmp_path / "in.ipynb"),
                           str(tmp_path / "out.ipynb")], cwd=REPO, capture_output=True,
                          text=True, timeout=200, stdin=subprocess.DEVNULL, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "without encryption" not in proc.stderr
    out = nbformat.read(tmp_path / "out.ipynb", as_version=4)
    text = "".join(o.get("text", "") for o in out.cells[0].outputs)
    first, files = text.splitlines()[:2]
    transport, mode, folder = first.split(" ", 2)
    assert transport == "ipc" and mode == "0o700"
    assert "kernel.json" in files and "k-1" in files  # the sockets beside it
    assert not Path(folder).exists()  # removed with the kernel


def test_make_lab_starts_kernels_over_ipc() -> None:
    makefile = (REPO / "Makefile").read_text()
    lab = makefile.split("\nlab:", 1)[1].split("\n\n", 1)[0]
    assert "--KernelManager.transport=ipc" in lab
