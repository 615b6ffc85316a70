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
from typing import Any

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


def _table(text: str) -> dict[str, dict[str, str]]:
    """Rows ``module.function argument=parameter ...`` (an indented line goes on with
    the row above) as {function: {argument: parameter}}."""
    rows: dict[str, dict[str, str]] = {}
    where = ""
    for line in text.strip().splitlines():
        words = line.split()
        where = words.pop(0) if not line.startswith(" ") else where
        rows.setdefault(where, {}).update(word.split("=") for word in words)
    return rows


# function (under threadcost.experiments) -> {its argument: the parameter declared for it}:
# the function's default is the declaration's.
READS = _table("""
malloc_touch_params.check_params mib=malloc_mib points=malloc_points
context_switch_params.check_params iterations=switch_iterations warmup=switch_warmup
context_switch.run iterations=switch_iterations warmup=switch_warmup
context_switch.placement_repeats repeats=switch_placement_repeats
    iterations=switch_placement_iterations
context_switch.perf_cross_check rounds=switch_perf_rounds iterations=switch_perf_iterations
context_switch.working_set_sweep iterations=switch_ws_iterations
    seconds_per_point=switch_ws_seconds_per_point
thread_memory_params.check_params repeats=memory_repeats
brigade_params.check_params stack_kib=brigade_stack_kib tasks=brigade_tasks
    iterations=brigade_iterations repeats=brigade_repeats
echo.check_params iterations=switch_echo_iterations repeats=switch_echo_repeats
    message_bytes=switch_echo_message_bytes
yardsticks.run repeats=switch_echo_repeats
cpu_bound.check_params tasks=cpu_bound_tasks limit=cpu_bound_limit ws_limit=cpu_bound_ws_limit
    ws_ints=cpu_bound_ws_ints repeats=cpu_bound_repeats run_s=cpu_bound_run_s
    ws_run_s=cpu_bound_ws_run_s
cpu_bound.run limit=cpu_bound_limit ws_limit=cpu_bound_ws_limit repeats=cpu_bound_repeats
    run_s=cpu_bound_run_s ws_run_s=cpu_bound_ws_run_s
process_memory.check_params counts=memory_process_counts touch_kib=memory_process_touch_kib
    repeats=memory_process_repeats
limits.run stack_kib=memory_stack_kib_requested touch_kib=memory_touch_kib
limits.spawn_until_failure max_threads=memory_spawn_max stack_kib=memory_stack_kib_requested
million.threads cap=memory_c10_cap sleep_ms=memory_c10_sleep_ms
launch.run iterations=launch_iterations warmup=launch_warmup stack_kib=launch_stack_kib
    burst_repeats=launch_burst_repeats memcpy_kib=launch_memcpy_kib
launch.growth_repeats repeats=launch_growth_repeats iterations=launch_growth_iterations
    warmup=launch_warmup pin=launch_pin
fibers.run switch_iterations=tasks_switch_iterations warmup=tasks_warmup count=tasks_fiber_count
    stack_kib=tasks_fiber_stack_kib touch_kib=tasks_touch_kib cpu=tasks_cpu
    points=tasks_memory_points
peers.check_params iterations=tasks_go_iterations period_ms=tasks_sleep_period_ms
peers.launch_run iterations=tasks_go_launch_iterations
peers.pinning_run repeats=tasks_go_pinning_repeats iterations=tasks_go_pinning_iterations
    warmup=tasks_warmup
runtimes.check_params iterations=tasks_peer_iterations repeats=tasks_peer_repeats
kernel_task_switch.run iterations=tasks_kernel_switch_iterations
sleepers.run count=tasks_s4_count period_ms=tasks_sleep_period_ms
    duration_ms=tasks_s4_duration_ms stagger_ms=tasks_sleep_stagger_ms repeats=tasks_s4_repeats
sleepers.sweep counts=tasks_sleep_counts period_ms=tasks_sleep_period_ms
    duration_ms=tasks_sleep_sweep_duration_ms stagger_ms=tasks_sleep_stagger_ms
    repeats=tasks_sleep_sweep_repeats
million.goroutines count=tasks_c11_goroutines sleep_ms=tasks_c11_sleep_ms
    repeats=tasks_c11_repeats
million.peer_tasks count=tasks_s1_peer_count sleep_ms=tasks_c11_sleep_ms
    thread_cap=tasks_s1_thread_cap
more_sources.spawn_growth parent_touch_mib=sources_spawn_mib repeats=sources_repeats
    iterations=sources_spawn_iterations
more_sources.fiber_gap repeats=sources_repeats iterations=sources_fiber_iterations
    cpu=sources_cpu
more_sources.go_lockosthread repeats=sources_repeats iterations=sources_go_iterations
indirect.switch_counts repeats=sources_repeats iterations=sources_switch_iterations
indirect.indirect_cost array_kib=sources_array_kib strides=sources_strides
    repeats=sources_repeats cpu=sources_cpu target_accesses=sources_target_accesses
more_sources.thread_waves total=sources_threads wave=sources_wave repeats=sources_repeats
""")


def _function(where: str) -> Any:
    module, function = where.split("#")[0].split(".")  # "#...": another call of it
    return getattr(importlib.import_module(f"threadcost.experiments.{module}"), function)


@pytest.mark.parametrize("where", sorted(READS))
def test_experiments_take_the_declared_default(where: str) -> None:
    func = _function(where)
    for argument, name in READS[where].items():
        default = inspect.signature(func).parameters[argument].default
        got = list(default) if isinstance(default, tuple) else default
        assert got == parameters.declared(name).default, (where, argument)


# The check each notebook parameter reaches, as the notebook calls it (the arguments the
# notebook fixes in FIXED; every other one at its declared default): the check refuses
# just below the declared minimum and just above the declared maximum (a value outside
# the declared choices), naming its argument, and accepts the bounds themselves. A ``*``
# marks a maximum this machine may narrow (a size that must fit in its available memory,
# a count within its pid_max): the check may refuse below it, naming the limit; its
# refusal above the declared maximum is still tested.
CHECKS = _table("""
malloc_touch_params.check_params mib=malloc_mib* points=malloc_points
context_switch_params.check_params iterations=switch_iterations warmup=switch_warmup
context_switch_params.check_rounds rounds=switch_perf_rounds iterations=switch_perf_iterations
context_switch_params.check_placement_repeats repeats=switch_placement_repeats
    iterations=switch_placement_iterations
context_switch_params.check_working_set_sweep iterations=switch_ws_iterations
    seconds_per_point=switch_ws_seconds_per_point
echo.check_params iterations=switch_echo_iterations repeats=switch_echo_repeats
    message_bytes=switch_echo_message_bytes
yardsticks.check_params repeats=switch_echo_repeats
cpu_bound.check_params tasks=cpu_bound_tasks limit=cpu_bound_limit ws_limit=cpu_bound_ws_limit
    ws_ints=cpu_bound_ws_ints* repeats=cpu_bound_repeats run_s=cpu_bound_run_s
    ws_run_s=cpu_bound_ws_run_s
process_memory.check_params counts=memory_process_counts* touch_kib=memory_process_touch_kib
    repeats=memory_process_repeats
limits.check_params stack_kib=memory_stack_kib_requested touch_kib=memory_touch_kib
limits.check_spawn_until_failure max_threads=memory_spawn_max
    stack_kib=memory_stack_kib_requested
million.check_threads cap=memory_c10_cap sleep_ms=memory_c10_sleep_ms
thread_memory.check_stack_grid threads=memory_grid_threads* repeats=memory_grid_repeats
launch.check_params kinds=launch_kinds iterations=launch_iterations warmup=launch_warmup
    stack_kib=launch_stack_kib parent_touch_mib=launch_parent_touch_mib*
    burst_sizes=launch_burst_sizes burst_repeats=launch_burst_repeats
launch.check_growth_repeats repeats=launch_growth_repeats iterations=launch_growth_iterations
    parent_touch_mib=launch_growth_parent_touch_mib*
fibers.check_params switch_iterations=tasks_switch_iterations warmup=tasks_warmup
    stack_kib=tasks_fiber_stack_kib points=tasks_memory_points
peers.check_pinning_run repeats=tasks_go_pinning_repeats
    iterations=tasks_go_pinning_iterations
kernel_task_switch.check_params iterations=tasks_kernel_switch_iterations
sleepers.check_params count=tasks_s4_count* period_ms=tasks_sleep_period_ms
    stagger_ms=tasks_sleep_stagger_ms repeats=tasks_s4_repeats
sleepers.check_sweep counts=tasks_sleep_counts* duration_ms=tasks_sleep_sweep_duration_ms
    repeats=tasks_sleep_sweep_repeats
million.check_goroutines count=tasks_c11_goroutines sleep_ms=tasks_c11_sleep_ms
    repeats=tasks_c11_repeats
million.check_peer_tasks count=tasks_s1_peer_count sleep_ms=tasks_c11_sleep_ms
    thread_cap=tasks_s1_thread_cap
million.check_peer_tasks#S6 count=tasks_s6_count sleep_ms=tasks_s6_sleep_ms
brigade.check_reference iterations=brigade_reference_iterations
launch.check_growth_repeats#S7 parent_touch_mib=sources_spawn_mib* repeats=sources_repeats
    iterations=sources_spawn_iterations
more_sources.check_fiber_gap repeats=sources_repeats iterations=sources_fiber_iterations
more_sources.check_go_lockosthread repeats=sources_repeats iterations=sources_go_iterations
more_sources.check_thread_waves total=sources_threads wave=sources_wave* repeats=sources_repeats
indirect.check_switch_counts repeats=sources_repeats iterations=sources_switch_iterations
indirect.check_indirect_cost array_kib=sources_array_kib* strides=sources_strides
    repeats=sources_repeats target_accesses=sources_target_accesses
""")
FIXED: dict[str, dict[str, Any]] = {
    "context_switch_params.check_placement_repeats": {"mechanisms": ["futex"], "warmup": 0},
    "context_switch_params.check_working_set_sweep": {"working_sets_kib": [0],
                                                      "tasks": ["threads"]},
    "cpu_bound.check_params": {"working_sets": ["none"]},
    "million.check_threads": {"stack_kib": 2048},
    "thread_memory.check_stack_grid": {"stack_sizes_kib": [0]},
    "launch.check_params": {"memcpy_kib": 0},
    "launch.check_growth_repeats": {"kinds": ["thread", "fork"], "warmup": 0, "pin": None},
    "fibers.check_params": {"touch_kib": 0, "cpu": None, "impl": "asm"},
    "peers.check_pinning_run": {"cpu": None, "warmup": 0},
    "sleepers.check_params": {"variants": ["threads"], "duration_ms": 1000},
    "sleepers.check_sweep": {"variants": ["threads"], "period_ms": 1, "stagger_ms": 0},
    "million.check_goroutines": {"variants": ["as_published"]},
    "million.check_peer_tasks": {"kinds": ["tokio-task"]},
    "million.check_peer_tasks#S6": {"kinds": ["tokio-task"], "thread_cap": 1},
    "brigade.check_reference": {"tasks": 100, "warmup": 1, "rounds": 1, "cpu": None},
    "launch.check_growth_repeats#S7": {"kinds": ["fork"], "warmup": 0, "pin": None},
    "more_sources.check_fiber_gap": {"warmup": 0, "cpu": None},
    "more_sources.check_go_lockosthread": {"warmup": 0},
    "indirect.check_switch_counts": {"mechanisms": ["futex"], "tasks": ["threads"]},
    "indirect.check_indirect_cost": {"cpu": None},
}
CASES = [(where, argument, name.rstrip("*"), name.endswith("*"))
         for where, given in CHECKS.items() for argument, name in given.items()]


def _arguments(where: str) -> dict[str, Any]:
    declared = {a: parameters.declared(n.rstrip("*")).default for a, n in CHECKS[where].items()}
    return {**declared, **FIXED.get(where, {})}


def _as_declared(param: parameters.Param, value: Any) -> Any:
    return [value] if param.type.startswith("list") else value


def _outside(param: parameters.Param) -> list[Any]:
    if param.choices:
        return [_as_declared(param, "no-such-choice")]
    assert param.minimum is not None, f"{param.name}: no declared minimum"
    values = [param.minimum - 1]
    if param.maximum is not None:
        values.append(param.maximum + 1)
    return [_as_declared(param, v) for v in values]


@pytest.mark.parametrize("where,argument,name,narrowed", CASES,
                         ids=[f"{w}-{a}" for w, a, _, _ in CASES])
def test_the_experiment_refuses_outside_the_declared_range(where: str, argument: str, name: str,
                                                           narrowed: bool) -> None:
    check, param = _function(where), parameters.declared(name)
    for value in _outside(param):
        with pytest.raises(ParameterError) as info:
            check(**{**_arguments(where), argument: value})
        assert info.value.name == argument, (where, value, info.value)
    bounds = [] if param.choices else [param.minimum]
    if param.maximum is not None and not narrowed:
        bounds.append(param.maximum)
    for value in bounds:  # the bounds themselves are taken
        try:
            check(**{**_arguments(where), argument: _as_declared(param, value)})
        except ParameterError as exc:
            assert exc.name != argument, (where, value, str(exc))


def test_a_c_limit_is_the_declared_maximum() -> None:
    """Where the C kernel's own limit bounds a parameter, the declaration's maximum is it."""
    from threadcost.experiments.context_switch import cpu_bound
    from threadcost.experiments.launch import run as launch
    from threadcost.experiments.user_space_tasks import fibers

    assert parameters.declared("cpu_bound_tasks").maximum == cpu_bound.MAX_TASKS
    assert set(parameters.declared("launch_kinds").choices) == set(launch.KINDS)
    assert set(parameters.declared("tasks_fiber_impls").choices) == set(fibers.IMPLS)


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
