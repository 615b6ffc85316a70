"""A throw-away JupyterLab server for the browser tests.

``LabServer.start`` runs ``python -m jupyterlab`` from this interpreter (the
project's .venv) on 127.0.0.1 and a free port, with no token, in its own
process group, with every Jupyter folder (config, runtime, settings, workspaces)
in a temp folder so nothing of the user's own setup leaks in or is written to.
``stop`` shuts the kernels down through the REST API, then ends the server's
process group and any process it started, by PID.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# Lab settings that keep the page quiet and complete for a test:
# no "Jupyter news" toast, no update check, and every cell attached to the DOM
# (the default windowing leaves off-screen cells out of it).
USER_SETTINGS: dict[str, dict[str, Any]] = {
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
        "fetchNews": "false", "checkForUpdates": False},
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {
        "windowingMode": "none"},
    "@jupyterlab/docmanager-extension/plugin.jupyterlab-settings": {
        "autosave": False},
}
# Plugins switched off for the page (the news announcements ask the network).
DISABLED_PLUGINS = ["@jupyterlab/apputils-extension:announcements"]


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _stat(pid: int) -> tuple[int, str] | None:
    """(parent PID, start time) of a live process, or None."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return int(fields[1]), fields[19]


def _descendants(pid: int) -> list[tuple[int, str]]:
    """(PID, start time) of every live process below ``pid`` (read from /proc)."""
    children: dict[int, list[tuple[int, str]]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (st := _stat(int(entry.name))) is not None:
            children.setdefault(st[0], []).append((int(entry.name), st[1]))
    found: list[tuple[int, str]] = []
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child[0])
    return found


@dataclass
class LabServer:
    """One running ``jupyter lab``; ``root`` is the folder it serves."""

    root: Path
    state: Path
    env: dict[str, str]
    port: int = 0
    proc: subprocess.Popen[bytes] | None = None
    # JupyterLab's application settings (overrides.json), as `make lab` installs them
    app_overrides: Path | None = None
    runtime: Path | None = None
    log_path: Path = field(default_factory=Path)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # -- REST ---------------------------------------------------------------
    def api(self, path: str, method: str = "GET", timeout: float = 10) -> Any:
        req = urllib.request.Request(f"{self.url}/api/{path}", method=method)
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            body = resp.read()
        return json.loads(body) if body else None

    def kernels(self) -> list[dict[str, Any]]:
        return list(self.api("kernels"))

    def shutdown_kernels(self, timeout: float = 30) -> list[str]:
        """Shut down every kernel (sessions first, so none is restarted), then
        wait until the server lists none; return the ids still listed after
        ``timeout`` seconds (empty when all are gone)."""
        with contextlib.suppress(urllib.error.URLError, OSError, ValueError):
            for session in self.api("sessions"):
                with contextlib.suppress(urllib.error.URLError, OSError):
                    self.api(f"sessions/{session['id']}", method="DELETE", timeout=timeout)
        left: list[str] = []
        deadline = time.monotonic() + timeout
        while True:
            try:
                left = [k["id"] for k in self.kernels()]
            except (urllib.error.URLError, OSError, ValueError):
                return []
            if not left or time.monotonic() > deadline:
                return left
            for kernel_id in left:
                with contextlib.suppress(urllib.error.URLError, OSError):
                    self.api(f"kernels/{kernel_id}", method="DELETE", timeout=timeout)
            time.sleep(0.2)

    def log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no server log)"

    # -- life cycle -----------------------------------------------------------
    def _write_settings(self) -> None:
        settings = self.state / "user-settings"
        for rel, values in USER_SETTINGS.items():
            target = settings / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(json.dumps(values))
        if self.app_overrides is not None:
            app = self.state / "app-settings"
            app.mkdir(parents=True, exist_ok=True)
            (app / "overrides.json").write_bytes(self.app_overrides.read_bytes())
        labconfig = self.state / "config" / "labconfig"
        labconfig.mkdir(parents=True, exist_ok=True)
        (labconfig / "page_config.json").write_text(json.dumps(
            {"disabledExtensions": dict.fromkeys(DISABLED_PLUGINS, True)}))

    def start(self, timeout: float = 90) -> None:
        self._write_settings()
        for sub in ("workspaces", "ipython"):
            (self.state / sub).mkdir(parents=True, exist_ok=True)
        # The kernels' Unix sockets live in the runtime folder: keep its path short (a
        # socket path holds at most 107 bytes; pytest's temp folders can be longer).
        self.runtime = Path(tempfile.mkdtemp(prefix="tc-lab-"))  # mode 0700
        env = {**os.environ, **self.env,
               "JUPYTER_CONFIG_DIR": str(self.state / "config"),
               "JUPYTER_RUNTIME_DIR": str(self.runtime),
               "IPYTHONDIR": str(self.state / "ipython"),
               "JUPYTER_PLATFORM_DIRS": "1",
               "PYDEVD_DISABLE_FILE_VALIDATION": "1"}
        self.port = free_port()
        cmd = [sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root",
               "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={self.port}",
               "--ServerApp.port_retries=0", "--IdentityProvider.token=",
               "--PasswordIdentityProvider.hashed_password=",
               "--ServerApp.disable_check_xsrf=True",
               f"--ServerApp.root_dir={self.root}",
               f"--LabApp.user_settings_dir={self.state / 'user-settings'}",
               f"--LabApp.workspaces_dir={self.state / 'workspaces'}",
               "--LabApp.extension_manager=readonly", "--LabApp.news_url=",
               *([f"--LabApp.app_settings_dir={self.state / 'app-settings'}"]
                 if self.app_overrides is not None else []),
               # kernels on Unix sockets in the private runtime folder, as `make lab` does
               "--KernelManager.transport=ipc"]
        self.log_path = self.state / "jupyter-lab.log"
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(cmd, cwd=self.root, env=env, stdin=subprocess.DEVNULL,
                                         stdout=log, stderr=subprocess.STDOUT,
                                         start_new_session=True)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"jupyter lab exited with {self.proc.returncode}:\n"
                                   f"{self.log_tail()}")
            with contextlib.suppress(urllib.error.URLError, OSError, ValueError):
                self.api("status", timeout=2)
                return
            time.sleep(0.3)
        self.stop()
        raise RuntimeError(f"jupyter lab did not answer /api/status within {timeout:.0f} s:\n"
                           f"{self.log_tail()}")

    def stop(self) -> None:
        proc = self.proc
        if proc is None:
            return
        self.proc = None
        if proc.poll() is None:
            with contextlib.suppress(urllib.error.URLError, OSError, ValueError):
                self.shutdown_kernels()
        # Kernels run in their own sessions: remember every PID below the server
        # before it goes, and end the ones still alive afterwards.
        leftovers = _descendants(proc.pid)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
        for pid, started in leftovers:
            st = _stat(pid)
            if st is not None and st[1] == started:  # the same process, not a reused PID
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
        if self.runtime is not None:
            shutil.rmtree(self.runtime, ignore_errors=True)
