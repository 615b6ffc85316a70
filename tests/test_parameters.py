"""One declaration per parameter (#21 item 5): the notebooks' parameters cells, the
checks of params/*.yaml and the names in refusals all come from threadcost/parameters."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from threadcost import parameters
from threadcost.errors import ParameterError

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
    from threadcost.experiments import malloc_touch

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
    from threadcost import cli

    modules = cli.command_modules()
    parser = cli.build_parser(modules)
    subparsers = next(a for a in parser._actions if a.dest == "command").choices
    for (command, flag), name in parameters.CLI_DEFAULTS.items():
        action = next(a for a in subparsers[command]._actions if flag in a.option_strings)
        assert action.default == parameters.cli_default(name), (command, flag)
