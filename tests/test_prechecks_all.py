"""#37 item 3: every parameter of every notebook is judged before the first measurement.

``threadcost.paper.prechecks.check_all`` is what ``make paper`` / ``threadcost paper`` run
before any notebook starts. Each declared parameter is given a value no experiment
accepts; the refusal must come from the precheck (nothing runs), name the notebook and
the parameter, show the value and say what is allowed. A command-line run per
notebook section of ``params/default.yaml`` shows the same in one line, exit 2, and
that no run folder was written.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from threadcost.errors import LimitReached, ParameterError
from threadcost.experiments import parameters, specs
from threadcost.paper import prechecks

REPO = Path(__file__).resolve().parent.parent

# Parameters no range applies to: switches (type-checked by parameters.check), and the
# folders every notebook takes (a file's are kept inside build/ by parameters.check_file;
# one named on the command line is the user's choice; machine_id is read only with
# measure False, where nothing is measured).
NO_RANGE = {"save", "measure", "interactive", "data_dir", "figures_dir", "machine_id",
            "memory_pmap", "memory_spawn_until_failure", "claims_include_reference"}
HUGE = 10**12


def _impossible(param: parameters.Param) -> Any:
    """A value of the declared type that no experiment accepts."""
    if param.type in ("int", "Optional[int]"):
        return HUGE
    if param.type == "float":
        return 1e12
    if param.type == "list[int]":
        return [HUGE]
    if param.type == "list[str]":
        return ["no-such-choice"]
    if param.type == "str":  # a choice
        return "no-such-choice"
    if param.type in ("Union[int, str]", "Optional[str]"):
        return "no-such-cpu" if "cpu" in param.name or "pin" in param.name else "../outside"
    if param.type == "Union[list[int], str, None]":
        return [1 << 20]
    raise AssertionError(f"{param.name}: no impossible value for {param.type}")


CASES = [(stem, p) for stem in parameters.ALL for p in parameters.for_notebook(stem)
         if p.name not in NO_RANGE]


def test_the_cases_cover_every_notebook_that_takes_parameters() -> None:
    covered = {stem for stem, _ in CASES}
    assert covered == {s for s in parameters.ALL
                       if any(p.name not in NO_RANGE for p in parameters.for_notebook(s))}
    assert covered <= set(prechecks.PAGES) | {f.notebook for f in specs.families() if f.checks}


@pytest.fixture(scope="module", autouse=True)
def _imported() -> None:
    """The experiments imported once, so that the time bound is the check's alone."""
    prechecks.check_all(list(parameters.ALL), {})


@pytest.mark.parametrize("stem,param", CASES, ids=[f"{s[:2]}-{p.name}" for s, p in CASES])
def test_every_parameter_is_refused_before_anything_runs(
        stem: str, param: parameters.Param, monkeypatch: pytest.MonkeyPatch) -> None:
    # nothing may start: a child process, a C kernel or a peer program would be a measurement
    from threadcost.runsafety import isolate

    def started(*_: Any, **__: Any) -> None:
        raise AssertionError("a precheck started a measurement")

    monkeypatch.setattr(isolate, "run_isolated", started)
    monkeypatch.setattr(subprocess, "Popen", started)
    value = _impossible(param)
    start = time.monotonic()
    with pytest.raises((ParameterError, LimitReached)) as caught:
        prechecks.check_all([stem], {param.name: value})
    assert time.monotonic() - start < 5
    text = str(caught.value)
    assert len(text.splitlines()) == 1
    assert isinstance(caught.value, ParameterError), text
    assert caught.value.name.startswith(f"{stem}: "), text
    # the refusal names what the reader wrote, and what is allowed
    assert caught.value.name.endswith(param.name), text
    assert caught.value.allowed.strip(), text


def test_defaults_and_shipped_sets_pass() -> None:
    for name in ("default", "quick", "large"):
        values = parameters.check_file(REPO / "params" / f"{name}.yaml")
        prechecks.check_all(list(parameters.ALL), values)


def _sections() -> list[tuple[str, str]]:
    """(notebook stem, first parameter of its section) for each section of the default set."""
    text = (REPO / "params" / "default.yaml").read_text(encoding="utf-8")
    out = []
    for stem, body in re.findall(r"^# --- (0\d_\w+) ---\n(.*?)(?=^# ---|\Z)", text, re.M | re.S):
        names = re.findall(r"^(\w+):", body, re.M)
        if names:
            out.append((stem, names[-1]))
    return out


SECTIONS = _sections()


def test_every_section_has_a_case() -> None:
    assert {s for s, _ in SECTIONS} == set(parameters.EXPERIMENTS) | {
        "07_io_brigade", "08_more_sources", "09_readiness"}


def _refusal_file(tmp_path: Path, name: str) -> tuple[Path, Any]:
    value = _impossible(parameters.BY_NAME[name])
    path = tmp_path / "mine.yaml"
    path.write_text(f"{name}: {value!r}\n".replace("'", '"'))
    return path, value


def _assert_refused(stem: str, name: str, value: Any, err: str, tmp_path: Path) -> None:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err[-2000:]
    shown = str(value[0] if isinstance(value, list) else value)
    # refused where it is first read: the parameter file against the declared range, or
    # the notebook's section against what its experiments accept
    assert (f"'{stem}: {name}'" in lines[0] or f"mine.yaml: {name}'" in lines[0]), lines[0]
    assert shown in lines[0], lines[0]
    assert re.search(r"from \S+ to|one of|must be|at most|fit", lines[0]), lines[0]
    data = tmp_path / "runs"
    assert not data.exists() or not any(data.rglob("meta.json"))  # nothing measured
    assert not (tmp_path / "out").exists() and not (tmp_path / "out.partial").exists()


@pytest.mark.parametrize("stem,name", SECTIONS, ids=[s for s, _ in SECTIONS])
def test_paper_refuses_each_section_in_one_line(stem: str, name: str, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    from threadcost.paper import build as paper

    monkeypatch.setenv("THREADCOST_DATA_DIR", str(tmp_path / "runs"))
    path, value = _refusal_file(tmp_path, name)
    start = time.monotonic()
    code = paper.main(["--params", str(path), "--out", str(tmp_path / "out")])
    assert time.monotonic() - start < 10
    captured = capsys.readouterr()
    assert code == 2 and captured.out == "", captured.err[-2000:]
    _assert_refused(stem, name, value, captured.err, tmp_path)


def test_the_command_refuses_a_late_notebook_before_the_first_measures(tmp_path: Path) -> None:
    # the whole command, as a reader runs it: 08's value refused before 01 measures
    stem, name = SECTIONS[-1]
    path, value = _refusal_file(tmp_path, name)
    env = {k: v for k, v in os.environ.items() if k != "MAKELEVEL"}
    env["THREADCOST_DATA_DIR"] = str(tmp_path / "runs")
    proc = subprocess.run([sys.executable, "-m", "threadcost.paper", "--params", str(path),
                           "--out", str(tmp_path / "out")], capture_output=True, text=True,
                          timeout=300, check=False, env=env, cwd=REPO)
    assert proc.returncode == 2 and proc.stdout == "", proc.stderr[-2000:]
    _assert_refused(stem, name, value, proc.stderr, tmp_path)


@pytest.mark.parametrize("name,stem", [("intro_machine_id", "00_introduction"),
                                       ("claims_machine_id", "06_claims")])
def test_a_machine_without_runs_is_refused_naming_those_with_runs(
        name: str, stem: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("THREADCOST_DATA_DIR", str(tmp_path / "runs"))
    with pytest.raises(ParameterError) as caught:
        prechecks.check_all([stem], {name: "x86_64-no-such-machine"})
    assert caught.value.name == f"{stem}: {name}"
    assert "machine folder with stored runs" in caught.value.allowed
