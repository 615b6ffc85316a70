"""One declaration per parameter (#21 item 5): the notebooks' parameters cells, the
checks of params/*.yaml and the names in refusals all come from threadcost/parameters."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from threadcost.errors import ParameterError
from threadcost.experiments import parameters

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tools"))

import parameters_cells  # noqa: E402


@pytest.mark.parametrize("path", sorted((REPO / "notebooks").glob("0*.py")), ids=lambda p: p.stem)
def test_parameters_cell_is_generated_from_the_declarations(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert parameters_cells.rewrite(text, path.stem) == text, (
        f"{path.name}: run python tools/parameters_cells.py")
    cell = parameters_cells.current_cell(text)
    declared = [p.name for p in parameters.for_notebook(path.stem)]
    written = [ln.split(":")[0] for ln in cell.splitlines() if ln and ln[0].isalpha()
               and not ln.startswith("from ")]
    assert written == declared


def test_the_tool_checks_in_one_command() -> None:
    proc = subprocess.run([sys.executable, str(REPO / "tools" / "parameters_cells.py"),
                           "--check"], capture_output=True, text=True, timeout=60,
                          check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_each_name_is_declared_once() -> None:
    names = [p.name for p in parameters.DECLARATIONS]
    assert len(names) == len(set(names))


@pytest.mark.parametrize("path", sorted((REPO / "params").glob("*.yaml")), ids=lambda p: p.name)
def test_shipped_parameter_sets_pass(path: Path) -> None:
    values = parameters.check_file(path)
    for name, value in values.items():
        assert parameters.BY_NAME[name].check(value) == value


def test_each_default_fits_its_declaration() -> None:
    for p in parameters.DECLARATIONS:
        p.check(p.default)


@pytest.mark.parametrize("text,needle", [
    ("malloc_mibs: 64\n", "malloc_mibs"),
    ("malloc_mib: sixty\n", "malloc_mib"),
    ("malloc_mib: 6.5\n", "malloc_mib"),
    ("malloc_allocators: malloc\n", "malloc_allocators"),
    ("save: 'yes'\n", "save"),
    ("memory_thread_counts: [100, -5]\n", "memory_thread_counts"),
])
def test_a_bad_parameter_file_names_file_and_key(text: str, needle: str,
                                                 tmp_path: Path) -> None:
    path = tmp_path / "mine.yaml"
    path.write_text(text)
    with pytest.raises(ParameterError) as info:
        parameters.check_file(path)
    assert str(path) in str(info.value) and needle in str(info.value)


def test_paper_refuses_a_bad_parameter_file_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "mine.yaml"
    path.write_text("malloc_mibs: 64\n")
    proc = subprocess.run([sys.executable, "-m", "threadcost.paper", "--params", str(path),
                           "--out", str(tmp_path / "out"), "--only", "01"],
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    assert "malloc_mibs" in proc.stderr and str(path) in proc.stderr


def test_refusals_in_a_notebook_name_the_notebook_parameter() -> None:
    from threadcost.experiments.malloc_touch import run as malloc_touch

    saved = dict(ParameterError.aliases)
    try:
        parameters.check("01_malloc_touch", {"malloc_mib": 64})
        with pytest.raises(ParameterError) as info:
            malloc_touch.run(mib=10**9)
        assert "'malloc_mib'" in str(info.value) and "'mib'" not in str(info.value)
        with pytest.raises(ParameterError) as info:
            parameters.check("01_malloc_touch", {"malloc_mib": "abc"})
        assert "'malloc_mib'" in str(info.value)
    finally:
        ParameterError.aliases = saved


@pytest.mark.notebook
def test_papermill_error_names_the_notebook_parameter(tmp_path: Path) -> None:
    from tests.conftest import run_notebook

    with pytest.raises(Exception) as info:
        run_notebook("01_malloc_touch.ipynb", tmp_path, malloc_mib=10**9)
    assert "malloc_mib" in str(info.value)


def test_cli_defaults_come_from_the_declarations() -> None:
    """Every option declared with ``_options.declared`` shows its parameter's declared
    default, and the well-known ones are among them."""
    from threadcost import cli

    modules = cli.command_modules()
    parser = cli.build_parser(modules)
    subparsers = next(a for a in parser._actions if a.dest == "command").choices
    found = {}
    for command, sub in subparsers.items():
        for action in sub._actions:
            name = getattr(action, "declared_name", None)
            if name is not None:
                assert action.default == parameters.cli_default(name), (command, action.dest)
                found[(command, action.option_strings[0])] = name
    assert found[("switch", "--iterations")] == "switch_iterations"
    assert found[("malloc-touch", "--points")] == "malloc_points"
    assert len(found) >= 25, found


# ------------------------------------------------ bounded files, names, lists (#37, #38)

BOMB = ("a: &a [1, 1, 1, 1, 1, 1, 1, 1, 1]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
        "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
        "memory_thread_counts: [*d, *d, *d, *d, *d, *d, *d, *d, *d]\n")


def _file_refusal(tmp_path: Path, data: bytes) -> str:
    path = tmp_path / "mine.yaml"
    path.write_bytes(data)
    started = time.monotonic()
    with pytest.raises(ParameterError) as info:
        parameters.check_file(path)
    assert time.monotonic() - started < 2.0
    text = str(info.value)
    assert "\n" not in text and str(path) in text and len(text) < 300
    return text


def test_an_alias_bomb_is_refused_at_once(tmp_path: Path) -> None:
    assert "alias" in _file_refusal(tmp_path, BOMB.encode())


@pytest.mark.parametrize("data,why", [
    (bytes(range(256)) * 8, "binary"),
    (b"\xff\xfe malloc_mib: 4\n", "UTF-8"),
    (b"malloc_mib: " + b"[" * 1000 + b"]" * 1000 + b"\n", "nested deeper"),
    (b"memory_thread_counts: [" + b"1, " * 40_000 + b"]\n", "bytes"),
    (b"- 1\n- 2\n", "must map"),
    (b"malloc_mib: [1\n", "not valid YAML"),
])
def test_a_damaged_parameter_file_is_one_line(tmp_path: Path, data: bytes, why: str) -> None:
    assert why in _file_refusal(tmp_path, data)


def test_a_named_pipe_is_refused_without_blocking(tmp_path: Path) -> None:
    path = tmp_path / "pipe.yaml"
    os.mkfifo(path)
    with pytest.raises(ParameterError, match="not a regular file"):
        parameters.check_file(path)


def test_a_huge_value_is_shown_bounded() -> None:
    value: list = [1] * 9
    for _ in range(6):  # shared references: 9**7 items if walked, as an alias bomb is
        value = [value] * 9
    started = time.monotonic()
    with pytest.raises(ParameterError) as info:
        parameters.BY_NAME["memory_thread_counts"].check(value)
    assert time.monotonic() - started < 1.0 and len(str(info.value)) < 300


def test_an_unknown_name_names_the_closest(tmp_path: Path) -> None:
    text = _file_refusal(tmp_path, b"memory_thread_count: 500\n")
    assert "did you mean 'memory_thread_counts'" in text


@pytest.mark.parametrize("folder", ["/etc", "../../somewhere", "/tmp/x"])
def test_output_folders_from_a_file_stay_in_build(tmp_path: Path, folder: str) -> None:
    text = _file_refusal(tmp_path, f"figures_dir: {folder}\n".encode())
    assert "figures_dir" in text and "build folder" in text


def test_a_list_typed_with_dash_p_is_parsed() -> None:
    param = parameters.BY_NAME["malloc_allocators"]
    assert param.coerce("[mmap]") == ["mmap"]
    assert param.coerce('["malloc", "mmap"]') == ["malloc", "mmap"]
    with pytest.raises(ParameterError, match="a list is written as YAML or JSON"):
        param.check(param.coerce("mmap"))
    pin = parameters.BY_NAME["memory_pin"]  # a string is one of its own forms
    assert pin.coerce("0,1") == "0,1"


def test_a_notebook_refuses_a_name_papermill_injected(monkeypatch: pytest.MonkeyPatch) -> None:
    from threadcost.settings import parameter_input

    monkeypatch.setattr(parameter_input, "injected_names", lambda: ["malloc_mibb"])
    namespace = {p.name: p.default for p in parameters.for_notebook("01_malloc_touch")}
    namespace["malloc_mibb"] = 1024
    with pytest.raises(ParameterError) as info:
        parameters.check("01_malloc_touch", namespace)
    assert "did you mean 'malloc_mib'" in str(info.value)
    assert info.value._render_traceback_() == [f"ParameterError: {info.value}"]  # one line


def test_injected_names_reads_papermills_cell(monkeypatch: pytest.MonkeyPatch) -> None:
    import types

    from threadcost.settings import parameter_input

    shell = types.SimpleNamespace(history_manager=types.SimpleNamespace(input_hist_raw=[
        "", "# Parameters (papermill: ...)\nmalloc_mib: int = 400\n",
        "# Parameters\nmalloc_mibb = 1024\nsave = False\n", "x = 1"]))
    import IPython

    monkeypatch.setattr(IPython, "get_ipython", lambda: shell)
    assert parameter_input.injected_names() == ["malloc_mibb", "save"]


def _run_notebook(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "threadcost", "run-notebook", *args],
                          capture_output=True, text=True, timeout=120, check=False,
                          stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("args,needle", [
    (["01", "-p", "memory_thread_count", "500"], "did you mean 'memory_thread_counts' (a "
                                                 "parameter of 02_thread_memory)"),
    (["01", "-p", "memory_thread_counts", "[500]"], "not a parameter of this notebook"),
    (["02", "-p", "memory_thread_count", "500"], "did you mean 'memory_thread_counts'?"),
    (["01", "-p", "malloc_allocators", "mmap"], "-p malloc_allocators"),
    (["01", "-y", "malloc_mib: &a 4"], "anchor"),
    (["99"], "01_malloc_touch"),
])
def test_run_notebook_refuses_before_a_kernel_starts(args: list[str], needle: str) -> None:
    proc = _run_notebook(*args)
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == "" and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert needle in proc.stderr


def test_paper_exits_2_naming_itself_for_a_bad_parameter_file(tmp_path: Path) -> None:
    path = tmp_path / "mine.yaml"
    path.write_text("malloc_mibb: 64\n")
    env = {k: v for k, v in os.environ.items() if k != "MAKELEVEL"}
    proc = subprocess.run([sys.executable, "-m", "threadcost.paper", "--params", str(path),
                           "--out", str(tmp_path / "out")], capture_output=True, text=True,
                          timeout=120, check=False, env=env)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        f"python -m threadcost.paper: error: parameter '{path}: malloc_mibb' = 64: is not a "
        "parameter of any notebook; did you mean 'malloc_mib'?"]


@pytest.mark.parametrize("text,needle", [
    ("tasks_cpu: 4096\n", "'05_user_space_tasks: tasks_cpu' = 4096"),
    ("malloc_mib: 1000000000\n", "'01_malloc_touch: malloc_mib' = 1000000000"),
])
def test_every_notebook_is_checked_before_the_first_measures(text: str, needle: str,
                                                             tmp_path: Path) -> None:
    # 05's value is refused before 01..04 run: nothing is measured, nothing stored
    path = tmp_path / "mine.yaml"
    path.write_text(text)
    proc = subprocess.run([sys.executable, "-m", "threadcost.paper", "--params", str(path),
                           "--out", str(tmp_path / "out")], capture_output=True, text=True,
                          timeout=120, check=False)
    assert proc.returncode == 2, proc.stderr[-1000:]
    assert needle in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "out.partial").exists()
