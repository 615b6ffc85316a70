"""Each parameter's default, unit and range live in its declaration (#36 item 3).

- params/default.yaml is generated from threadcost/settings/parameters.py (`make params`) and
  carries every declared default; quick.yaml and large.yaml name the same parameters,
  each value within its declared range.
- The experiments' checks take their defaults and ranges from the declarations, and
  refuse what the declaration refuses.
- The well-known defaults (the context switch's round trips, malloc_points) are typed
  nowhere else: a search of the code, the notebooks' code cells and the tools finds no
  literal copy of them.
"""

from __future__ import annotations

import importlib
import inspect
import re
import sys
from pathlib import Path

import pytest
import yaml

from threadcost.errors import ParameterError
from threadcost.settings import parameters

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tools"))

import parameters_cells  # noqa: E402

SETS = sorted((REPO / "params").glob("*.yaml"))


def test_default_set_is_generated() -> None:
    text = (REPO / "params" / "default.yaml").read_text(encoding="utf-8")
    assert text == parameters_cells.default_set(), "params/default.yaml: run `make params`"
    assert text.startswith("# Generated from the declarations in threadcost/settings/parameters.py")
    values = yaml.safe_load(text)
    expected = {p.name: p.default for p in parameters.DECLARATIONS
                if p.name not in parameters.NOT_IN_SETS}
    assert values == expected


@pytest.mark.parametrize("path", SETS, ids=lambda p: p.name)
def test_every_set_names_the_same_parameters_within_range(path: Path) -> None:
    values = parameters.check_file(path)  # refuses a value outside its declared range
    default = yaml.safe_load((REPO / "params" / "default.yaml").read_text(encoding="utf-8"))
    assert sorted(values) == sorted(default)


def test_a_value_outside_the_declared_range_is_refused(tmp_path: Path) -> None:
    points = parameters.declared("malloc_points")
    assert points.maximum is not None
    path = tmp_path / "mine.yaml"
    path.write_text(f"malloc_points: {points.maximum + 1}\n")
    with pytest.raises(ParameterError, match="malloc_points"):
        parameters.check_file(path)
    path.write_text("switch_mechanisms: [pipe, carrier-pigeon]\n")
    with pytest.raises(ParameterError, match="one of pipe, condvar"):
        parameters.check_file(path)


# function (under threadcost.experiments) -> {its argument: the parameter declared for it}:
# the function's default is the declaration's.
READS = {
    "malloc_touch_params.check_params": {"mib": "malloc_mib", "points": "malloc_points"},
    "context_switch_params.check_params": {"iterations": "switch_iterations",
                                           "warmup": "switch_warmup"},
    "context_switch.run": {"iterations": "switch_iterations", "warmup": "switch_warmup"},
    "context_switch.placement_repeats": {"repeats": "switch_placement_repeats",
                                         "iterations": "switch_placement_iterations"},
    "context_switch.perf_cross_check": {"rounds": "switch_perf_rounds",
                                        "iterations": "switch_perf_iterations"},
    "context_switch.working_set_sweep": {"iterations": "switch_ws_iterations",
                                         "seconds_per_point": "switch_ws_seconds_per_point"},
    "thread_memory_params.check_params": {"repeats": "memory_repeats"},
    "brigade_params.check_params": {"stack_kib": "brigade_stack_kib", "tasks": "brigade_tasks",
                                    "iterations": "brigade_iterations",
                                    "repeats": "brigade_repeats"},
    "echo.check_params": {"iterations": "switch_echo_iterations",
                          "repeats": "switch_echo_repeats",
                          "message_bytes": "switch_echo_message_bytes"},
    "cpu_bound.check_params": {"limit": "cpu_bound_limit", "ws_limit": "cpu_bound_ws_limit",
                               "repeats": "cpu_bound_repeats"},
    "process_memory.check_params": {"repeats": "memory_process_repeats"},
    "launch.check_params": {"iterations": "launch_iterations", "warmup": "launch_warmup",
                            "burst_repeats": "launch_burst_repeats"},
    "fibers.check_params": {"switch_iterations": "tasks_switch_iterations",
                            "points": "tasks_memory_points"},
    "peers.check_params": {"iterations": "tasks_go_iterations",
                           "period_ms": "tasks_sleep_period_ms"},
    "peers.launch_run": {"iterations": "tasks_go_launch_iterations"},
    "runtimes.check_params": {"iterations": "tasks_peer_iterations",
                              "repeats": "tasks_peer_repeats"},
    "more_sources.go_lockosthread": {"iterations": "sources_go_iterations"},
}


@pytest.mark.parametrize("where", sorted(READS))
def test_experiments_take_the_declared_default(where: str) -> None:
    module, function = where.split(".")
    func = getattr(importlib.import_module(f"threadcost.experiments.{module}"), function)
    for argument, name in READS[where].items():
        default = inspect.signature(func).parameters[argument].default
        got = list(default) if isinstance(default, tuple) else default
        assert got == parameters.declared(name).default, (where, argument)


@pytest.mark.parametrize("name,argument", [
    ("malloc_mib", "mib"), ("malloc_points", "points"), ("switch_iterations", "iterations"),
    ("switch_warmup", "warmup")])
def test_the_experiment_refuses_outside_the_declared_range(name: str, argument: str) -> None:
    module = "malloc_touch_params" if name.startswith("malloc") else "context_switch_params"
    check = importlib.import_module(f"threadcost.experiments.{module}").check_params
    param = parameters.declared(name)
    fixed = {"mib": 1} if module == "malloc_touch_params" and argument != "mib" else {}
    for value in (param.minimum - 1, (param.maximum or 0) + 1):
        with pytest.raises(ParameterError, match=argument):
            check(**fixed, **{argument: value})


# ---------------------------------------------------------- no literal copies

# Defaults whose literal copies the issue found typed in many places.
WELL_KNOWN = ("switch_iterations", "switch_echo_iterations", "switch_placement_iterations",
              "tasks_peer_iterations", "malloc_points")
# A name about round trips or readings given one of these values as a default, a CLI
# default or a divisor: "iterations: Any = 20_000", "points=33", "opt.iterations(parser,
# "20000", ...)", "/ 20000".
STALE = (33,)  # malloc_points' old copies (the experiment and the CLI said 33)
SEARCHED = ("threadcost", "notebooks", "tools")
SKIPPED = ("threadcost/settings/parameters.py",  # the declarations themselves
           "threadcost/claims/")  # sources' own words and formulas, quoted


def _literal_pattern() -> re.Pattern[str]:
    values = {parameters.declared(n).default for n in WELL_KNOWN} | set(STALE)
    number = "|".join(sorted({f"{v:_}" for v in values} | {str(v) for v in values}))
    return re.compile(
        rf"(iterations|round_trips|points)\w*\s*(:\s*[\w\[\], ]+)?=\s*(?:{number})\b"
        rf"|/\s*(?:{number})\b|(iterations|points)\w*\(\w+,\s*[\"'](?:{number})[\"']", re.I)


def _code(path: Path) -> str:
    """The file's text; a notebook without its generated parameters cell."""
    text = path.read_text(encoding="utf-8")
    if path.parent.name == "notebooks":
        text = parameters_cells.CELL.sub(r"\1\3", text)
    return text


def test_well_known_defaults_are_typed_only_in_their_declaration() -> None:
    pattern = _literal_pattern()
    found = []
    for folder in SEARCHED:
        for path in sorted((REPO / folder).rglob("*.py")):
            rel = path.relative_to(REPO).as_posix()
            if rel.startswith(SKIPPED) or rel.startswith("threadcost/_native"):
                continue
            for number, line in enumerate(_code(path).splitlines(), 1):
                if pattern.search(line):
                    found.append(f"{rel}:{number}: {line.strip()}")
    assert found == [], ("read these from threadcost.settings.parameters.declared(...):\n"
                         + "\n".join(found))


def test_the_search_finds_a_copy() -> None:
    pattern = _literal_pattern()
    for line in ("def run(iterations: Any = 20_000) -> None:", "points=33,",
                 'opt.iterations(parser, "20000", "timed round trips")',
                 "scale=min(1.0, switch_iterations / 20000)", "malloc_points = 41"):
        assert pattern.search(line), line
    assert not pattern.search("MAX_TASKS = 10_000")
