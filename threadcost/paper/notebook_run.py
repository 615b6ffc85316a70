"""Execute a notebook with papermill, with every wait bounded.

nbclient waits for a cell as long as it runs, and for a kernel as long as it
takes to start, unless told otherwise; a widget cell has been seen to block it
for good (papermill issue 723, nbclient issue 312). Here each cell gets an
execution timeout and the kernel a start timeout, and a timeout fails with a
:class:`NotebookTimeout` that names the notebook, the cell (its number, 1-based
as papermill counts, and its first line) and the limit, never silently.

Used by ``make paper`` (:func:`threadcost.paper.build.run_notebook`) and the tests.

Kernels started here talk to the runner over IPC, not TCP: Unix sockets in a
private folder (mode 0700, removed with the kernel), so no local port is open,
no other local user can read the kernel's output, and ipykernel has no reason
to warn that it runs "over TCP without encryption" (:class:`IPCKernelManager`).

The widget-cell hang itself (issue 15): the kernel answers in half a second, but
nbclient does not see the reply. jupyter_client's asyncio channel waits for it
with one ``zmq.asyncio`` poll as long as the cell timeout, and that poll can
miss the socket's (edge-triggered) wake-up; only when the poll times out does
its last check find the reply waiting. With no timeout that is forever; with a
180 s timeout the cell "completes" after exactly 180 s (seen in 03_launch, cell
27, ``view.explorer(result)``, in the 20-run repeat test). While a notebook runs
here, the channel polls in slices of POLL_SLICE_S instead, so a missed wake-up
costs at most that long.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

POLL_SLICE_S = 1.0


class NotebookTimeout(TimeoutError):
    """A notebook cell, or the kernel start, did not finish within its timeout."""


def _first_line(source: str) -> str:
    for line in source.splitlines():
        if line.strip():
            return line.strip()[:120]
    return "(empty cell)"


def _running_cell(target: Path) -> tuple[int, int, str] | None:
    """(cell number, cells, first line) of the last cell papermill started,
    read from the output notebook it saves at every cell start."""
    import nbformat

    try:
        nb = nbformat.read(str(target), as_version=4)
    except Exception:  # no output written yet (the kernel never started)
        return None
    started = [i for i, cell in enumerate(nb.cells)
               if cell.get("metadata", {}).get("papermill", {}).get("start_time")]
    if not started:
        return None
    index = started[-1]
    return index + 1, len(nb.cells), _first_line(nb.cells[index].source)


def _is_timeout(exc: BaseException) -> bool:
    from nbclient.exceptions import DeadKernelError

    if isinstance(exc, TimeoutError | DeadKernelError):
        return True
    return isinstance(exc, RuntimeError) and "didn't respond" in str(exc)


def describe_timeout(name: str, target: Path, exc: BaseException, cell_timeout: float,
                     start_timeout: float) -> str:
    where = _running_cell(target)
    if where is None:
        return (f"{name}: the kernel did not start within {start_timeout:g} s "
                f"({type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc) else ''})")
    number, total, first = where
    from nbclient.exceptions import DeadKernelError

    what = "the kernel died while running it" if isinstance(exc, DeadKernelError) else \
        f"did not finish within {cell_timeout:g} s"
    return f"{name}: cell {number} of {total} ({first!r}) {what}"


@contextlib.contextmanager
def sliced_channel_polls(slice_s: float = POLL_SLICE_S) -> Iterator[None]:
    """While inside, jupyter_client's asyncio channels wait for a message in
    polls of at most ``slice_s`` (the same overall timeout), so a poll that
    missed its wake-up is retried within ``slice_s``."""
    from queue import Empty

    from jupyter_client.channels import AsyncZMQSocketChannel

    original = AsyncZMQSocketChannel.get_msg

    async def get_msg(self: Any, timeout: float | None = None) -> dict[str, Any]:
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            left = slice_s if deadline is None else max(deadline - time.monotonic(), 0.0)
            if await self.socket.poll(int(min(slice_s, left) * 1000)):
                return await self._recv()
            if deadline is not None and time.monotonic() >= deadline:
                raise Empty

    AsyncZMQSocketChannel.get_msg = get_msg  # type: ignore[method-assign]
    try:
        yield
    finally:
        AsyncZMQSocketChannel.get_msg = original  # type: ignore[method-assign]


# Where a kernel's Unix sockets live: a folder of its own under the system's temp dir
# (short paths: a Unix socket's path is limited to about 107 bytes), or under the folder
# ``KERNELS_DIR_ENV`` names: a build keeps its kernels' folders in one folder of its own,
# which it removes even when it is stopped and its kernels die unannounced.
IPC_DIR_PREFIX = "threadcost-kernel-"
KERNELS_DIR_ENV = "THREADCOST_KERNELS_DIR"


def ipc_kernel_manager_class() -> type:
    """An asyncio kernel manager whose kernel listens on Unix sockets in a private
    folder (``transport="ipc"``), created with mode 0700 and removed with the kernel."""
    import shutil
    import tempfile

    from jupyter_client.manager import AsyncKernelManager

    class IPCKernelManager(AsyncKernelManager):  # type: ignore[misc]
        """:class:`AsyncKernelManager` over IPC, its sockets in a private folder."""

        _ipc_dir: str | None = None

        async def _async_pre_start_kernel(self, **kw: Any) -> Any:
            if self._ipc_dir is None:
                self._ipc_dir = tempfile.mkdtemp(prefix=IPC_DIR_PREFIX,  # mode 0700
                                                 dir=os.environ.get(KERNELS_DIR_ENV) or None)
            self.transport = "ipc"
            self.connection_file = str(Path(self._ipc_dir) / "kernel.json")
            self.ip = str(Path(self._ipc_dir) / "k")  # sockets: <dir>/k-1 .. k-5
            return await super()._async_pre_start_kernel(**kw)

        async def _async_interrupt_kernel(self) -> None:
            # jupyter_client interrupts a kernel before asking it to shut down; landing
            # while the kernel handles its last message, that SIGINT printed ipykernel's
            # "KeyboardInterrupt caught in kernel" on the build's stderr. A kernel that
            # does not stop when asked is killed after its wait, as before.
            if getattr(self, "shutting_down", False):
                return
            await super()._async_interrupt_kernel()

        async def _async_cleanup_resources(self, restart: bool = False) -> None:
            await super()._async_cleanup_resources(restart=restart)
            if not restart and self._ipc_dir is not None:
                shutil.rmtree(self._ipc_dir, ignore_errors=True)
                self._ipc_dir = None

    return IPCKernelManager


def client_stalls(target: Path, threshold_s: float = 10.0) -> list[str]:
    """Cells of an executed notebook where the client waited ``threshold_s``
    longer than the kernel took (reply sent, not seen): a missed wake-up."""
    from datetime import datetime

    import nbformat

    nb = nbformat.read(str(target), as_version=4)
    found = []
    for number, cell in enumerate(nb.cells, 1):
        meta = cell.get("metadata", {})
        timing, pm = meta.get("execution", {}), meta.get("papermill", {})
        begin, reply = timing.get("iopub.execute_input"), timing.get("shell.execute_reply")
        if not (begin and reply and pm.get("duration") is not None):
            continue
        kernel = (datetime.fromisoformat(reply.replace("Z", "+00:00"))
                  - datetime.fromisoformat(begin.replace("Z", "+00:00"))).total_seconds()
        if pm["duration"] - kernel > threshold_s:
            found.append(f"cell {number} ({_first_line(cell.source)!r}): kernel {kernel:.1f} s, "
                         f"client {pm['duration']:.1f} s")
    return found


def execute(source: Path, target: Path, parameters: dict[str, Any], *, cwd: Path,
            cell_timeout: float, start_timeout: float = 120, **options: Any) -> None:
    """``papermill.execute_notebook`` with a per-cell and a kernel-start timeout.

    ``options`` go to papermill (progress_bar, log_output, ...). Raises
    NotebookTimeout naming the notebook and the cell when a timeout fires; any
    other failure (a cell that raised) is papermill's own error.
    """
    import papermill as pm

    try:
        with sliced_channel_polls():
            options.setdefault("kernel_manager_class", ipc_kernel_manager_class())
            pm.execute_notebook(str(source), str(target), parameters=parameters,
                                kernel_name=options.pop("kernel_name", "python3"),
                                cwd=str(cwd), execution_timeout=cell_timeout,
                                start_timeout=start_timeout, **options)
    except Exception as exc:
        if not _is_timeout(exc):
            raise
        raise NotebookTimeout(describe_timeout(Path(source).name, Path(target), exc,
                                               cell_timeout, start_timeout)) from exc
