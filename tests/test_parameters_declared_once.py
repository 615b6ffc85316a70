"""Each parameter's default, unit and range live in its declaration (#36 item 3).

- params/default.yaml is generated from the families' specs (`make params`) and
  carries every declared default; quick.yaml and large.yaml name declared parameters
  (one they leave out takes its default), each value within its declared range.
- The experiments' checks take their defaults and ranges from the declarations, and
  refuse what the declaration refuses.
- The well-known defaults (the context switch's round trips, malloc_points) are typed
  nowhere else: a search of the code, the notebooks' code cells and the tools finds no
  literal copy of them.
"""

from __future__ import annotations

import ast
import inspect
import re
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from threadcost.errors import ParameterError
from threadcost.experiments import parameters, specs

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tools"))

import parameters_cells  # noqa: E402

SETS = sorted((REPO / "params").glob("*.yaml"))


def test_default_set_is_generated() -> None:
    text = (REPO / "params" / "default.yaml").read_text(encoding="utf-8")
    assert text == parameters_cells.default_set(), "params/default.yaml: run `make params`"
    assert text.startswith("# Generated from the declarations in the families' specs")
    values = yaml.safe_load(text)
    expected = {p.name: p.default for p in parameters.DECLARATIONS
                if p.name not in parameters.NOT_IN_SETS}
    assert values == expected


@pytest.mark.parametrize("path", SETS, ids=lambda p: p.name)
def test_every_set_names_declared_parameters_within_range(path: Path) -> None:
    """A set names declared parameters only, each within its range; one it leaves out
    takes its default (a new family's parameter whose default is quick needs no line in
    params/quick.yaml)."""
    values = parameters.check_file(path)  # refuses a value outside its declared range
    default = yaml.safe_load((REPO / "params" / "default.yaml").read_text(encoding="utf-8"))
    assert set(values) <= set(default)


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


# ---------------------------------------------------------- the specs' wiring

FEEDS = [(f.name, p, feed) for f in specs.families() for p in f.parameters for feed in p.feeds]


@pytest.mark.parametrize("family,param,feed", FEEDS,
                         ids=[f"{p.name}-{feed}" for _, p, feed in FEEDS])
def test_experiments_take_the_declared_default(family: str, param: parameters.Param,
                                               feed: str) -> None:
    """Each function a parameter's declaration says it feeds takes its default."""
    func, argument = specs.fed_function(family, feed)
    default = inspect.signature(func).parameters[argument or param.api_name].default
    got = list(default) if isinstance(default, tuple) else default
    assert got == param.default, (feed, argument or param.api_name)


# Each check a spec declares is called as the notebook calls it (its arguments from the
# parameters' defaults, its fixed ones as declared), every argument fed by a parameter with
# a declared range in turn: the check refuses just below the declared minimum and just
# above the declared maximum (a value outside the declared choices), naming its argument,
# and accepts the bounds themselves. A machine may narrow a ``narrowed`` maximum
# (a size that must fit in its available memory, a count within its pid_max): the check
# may refuse below it, naming the limit; its refusal above the declared maximum is tested.
# So that the refusal is the tested argument's, the arguments that bound others are held
# where they bound nothing: warmups at 0, and these (a check, as its family
# names it: its arguments).
HELD = {"warmup": 0}
ISOLATED: dict[str, dict[str, Any]] = {
    "context_switch.checks.check_placement_repeats": {"mechanisms": ["futex"]},
    "context_switch.checks.check_working_set_sweep": {"working_sets_kib": [0],
                                                      "tasks": ["threads"]},
    "context_switch.cpu_bound.check_params": {"working_sets": ["none"]},
    "thread_memory.run.check_stack_grid": {"stack_sizes_kib": [0]},
    "thread_memory.run.check_touch_grid": {"touch_depths_kib": [0]},
    "launch.run.check_params": {"memcpy_kib": 0},
    "more_sources.launch.run.check_growth_repeats": {"kinds": ["fork"]},
    "user_space_tasks.fibers.check_params": {"touch_kib": 0, "impl": "asm"},
    "user_space_tasks.sleepers.check_params": {"variants": ["threads"], "duration_ms": 1000,
                                               "period_ms": 1},
    "user_space_tasks.sleepers.check_sweep": {"variants": ["threads"], "period_ms": 1,
                                              "stagger_ms": 0},
    "user_space_tasks.million.check_goroutines": {"variants": ["as_published"]},
    "user_space_tasks.million.check_peer_tasks": {"kinds": ["tokio-task"]},
    "brigade.run.check_reference": {"warmup": 1, "rounds": 1},
    "more_sources.indirect.check_switch_counts": {"mechanisms": ["futex"], "tasks": ["threads"]},
}


def _value(source: Any, check: specs.Check, defaults: dict[str, Any]) -> Any:
    if isinstance(source, str):
        return defaults[source]
    if isinstance(source, specs.Derived):
        return source.how(defaults[source.parameter])
    if isinstance(source, specs.Computed):
        return source.how(defaults)
    return source.value(check.family)


def _arguments(check: specs.Check, tested: str) -> dict[str, Any]:
    defaults = {p.name: p.default for p in parameters.DECLARATIONS}
    out = {a: _value(s, check, defaults) for a, s in check.arguments.items()}
    if check.each:
        out[check.each] = (out[check.each] or [None])[0]
    out.update(check.fixed)
    out.update({a: v for a, v in HELD.items() if a in out and a != tested})
    isolated = ISOLATED.get(f"{check.family}.{check.function}", {})
    out.update({a: v for a, v in isolated.items() if a != tested})
    return out


CASES = [(check, argument, parameters.declared(name))
         for f in specs.families() for check in f.checks
         for argument, name in check.fed().items()
         if argument != check.each and (parameters.declared(name).choices
                                        or parameters.declared(name).minimum is not None)]


def test_the_checks_cover_every_ranged_parameter_they_are_fed() -> None:
    fed = {p.name for _, _, p in CASES}
    ranged = {p.name for f in specs.families() for p in f.parameters
              if p.choices or p.minimum is not None}
    assert fed == ranged - {p.name for f in specs.families() for c in f.checks
                            for a, p_name in c.fed().items() if a == c.each
                            for p in [parameters.declared(p_name)]}


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


@pytest.mark.parametrize("check,argument,param", CASES,
                         ids=[f"{c.family}.{c.function}-{a}-{p.name}" for c, a, p in CASES])
def test_the_experiment_refuses_outside_the_declared_range(check: specs.Check, argument: str,
                                                           param: parameters.Param) -> None:
    func = check.resolve()
    defaults = {p.name: p.default for p in parameters.DECLARATIONS}

    def called(value: Any) -> bool:  # a check the notebook skips at this value
        return check.when is None or check.when({**defaults, param.name: value})

    for value in filter(called, _outside(param)):
        with pytest.raises(ParameterError) as info:
            func(**{**_arguments(check, argument), argument: value})
        assert info.value.name == argument, (check.function, value, info.value)
    bounds = [] if param.choices else [param.minimum]
    if param.maximum is not None and not param.narrowed:
        bounds.append(param.maximum)
    for value in filter(called, bounds):  # the bounds themselves are taken
        try:
            func(**{**_arguments(check, argument), argument: _as_declared(param, value)})
        except ParameterError as exc:
            assert exc.name != argument, (check.function, value, str(exc))


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
SKIPPED = ("threadcost/experiments/parameters.py",  # the declarations themselves
           "threadcost/claims/")  # sources' own words and formulas, quoted


def _literal_pattern() -> re.Pattern[str]:
    values = {parameters.declared(n).default for n in WELL_KNOWN} | set(STALE)
    number = "|".join(sorted({f"{v:_}" for v in values} | {str(v) for v in values}))
    return re.compile(
        rf"(iterations|round_trips|points)\w*\s*(:\s*[\w\[\], ]+)?=\s*(?:{number})\b"
        rf"|/\s*(?:{number})\b|(iterations|points)\w*\(\w+,\s*[\"'](?:{number})[\"']", re.I)


# A string literal holding a space is prose (a source's formula quoted in a reading's
# "how", say), not a copy of a default: its text is left out of the search. A bare
# number in quotes ("20000", an option's default) is still searched.
def _without_prose(text: str) -> str:
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return text
    data = text.encode("utf-8")  # ast's columns count bytes
    starts = [0]
    for line in data.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    in_fstrings = {id(part) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr)
                   for part in node.values}  # an f-string is searched whole
    spans = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Constant) and isinstance(node.value, str)
                and id(node) not in in_fstrings
                and any(c.isspace() for c in node.value)
                and node.end_lineno is not None and node.end_col_offset is not None):
            spans.append((starts[node.lineno - 1] + node.col_offset,
                          starts[node.end_lineno - 1] + node.end_col_offset))
    out, at = [], 0
    for start, end in sorted(spans):
        if start >= at:
            out += [data[at:start], b'""']
            at = end
    return b"".join([*out, data[at:]]).decode("utf-8")


def _code(path: Path) -> str:
    """The file's text without prose in string literals; a notebook without its
    generated parameters cell."""
    text = path.read_text(encoding="utf-8")
    if path.parent.name == "notebooks":
        text = parameters_cells.CELL.sub(r"\1\3", text)
    return _without_prose(text)


def test_well_known_defaults_are_typed_only_in_their_declaration() -> None:
    pattern = _literal_pattern()
    found = []
    for folder in SEARCHED:
        for path in sorted((REPO / folder).rglob("*.py")):
            rel = path.relative_to(REPO).as_posix()
            if (rel.startswith(SKIPPED) or rel.startswith("threadcost/_native")
                    or rel.endswith("/spec.py")):  # the families' declarations
                continue
            for number, line in enumerate(_code(path).splitlines(), 1):
                if pattern.search(line):
                    found.append(f"{rel}:{number}: {line.strip()}")
    assert found == [], ("read these from threadcost.experiments.parameters.declared(...):\n"
                         + "\n".join(found))


def test_the_search_finds_a_copy() -> None:
    pattern = _literal_pattern()
    for line in ("def run(iterations: Any = 20_000) -> None:", "points=33,",
                 'opt.iterations(parser, "20000", "timed round trips")',
                 "scale=min(1.0, switch_iterations / 20000)", "malloc_points = 41"):
        assert pattern.search(line), line
    assert not pattern.search("MAX_TASKS = 10_000")
    assert "20000" in _without_prose('f(iterations, "20000", y="z w")')
    assert "20000" in _without_prose('f("a b", iterations=20000, y="c d")')
    assert "20000" in _without_prose('f"{n / 20000} round trips"')
    quoted = 'how = ("per repeat "\n       "(c2 = s1/20000 - s2/10000)")'
    assert "20000" not in _without_prose(quoted)
