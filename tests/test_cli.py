"""The CLI contract, checked from outside: JSON shape, exit codes, one-line errors."""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import cli_json, run_cli


def test_malloc_touch_json_shape() -> None:
    code, data, _ = cli_json("malloc-touch", "--mib", "16", "--points", "5")
    assert code == 0
    for key in ("before", "after_alloc", "after_touch", "after_free"):
        assert set(data[key]) >= {"vsz_kib", "rss_kib"}
    assert len(data["touch_curve"]) == 5
    assert data["params"]["mib"] == 16
    assert data["limit_hit"] is None


def test_human_readable_table_by_default() -> None:
    proc = run_cli("malloc-touch", "--mib", "8")
    assert proc.returncode == 0
    assert "VSZ (KiB)" in proc.stdout and "after_touch" in proc.stdout


@pytest.mark.parametrize("args, word", [
    (["malloc-touch", "--mib", "0"], "mib"),
    (["malloc-touch", "--mib", "-4"], "mib"),
    (["malloc-touch", "--mib", "lots"], "mib"),
    (["malloc-touch", "--mib", "99999999"], "MemAvailable"),
    (["malloc-touch", "--mib", "8", "--allocator", "brk"], "allocator"),
    (["malloc-touch"], "--mib"),
    (["no-such-experiment"], "invalid choice"),
])
def test_bad_input_exits_2_with_one_line(args: list[str], word: str, tmp_path) -> None:
    proc = run_cli(*args)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert word in lines[0]
    assert "Traceback" not in proc.stderr
    assert proc.stdout == ""


def test_bad_input_writes_nothing(tmp_path, monkeypatch) -> None:
    data = tmp_path / "data"
    monkeypatch.setenv("THREADCOST_DATA_DIR", str(data))
    proc = run_cli("malloc-touch", "--mib", "0", "--save")
    assert proc.returncode == 2
    assert not data.exists() or not any(data.rglob("*"))


def test_save_writes_a_run_folder(tmp_path, monkeypatch) -> None:
    data = tmp_path / "data"
    monkeypatch.setenv("THREADCOST_DATA_DIR", str(data))
    proc = run_cli("malloc-touch", "--mib", "8", "--save", "--json")
    assert proc.returncode == 0
    metas = list(data.glob("*/*/meta.json"))
    assert len(metas) == 1


def test_python_m_and_help() -> None:
    proc = run_cli("--help")
    assert proc.returncode == 0
    assert "malloc-touch" in proc.stdout


# ------------------------------------------------ start-up, choices, pipes, progress

def test_version() -> None:
    import threadcost

    proc = run_cli("--version")
    assert proc.returncode == 0
    assert proc.stdout.strip() == f"threadcost {threadcost.__version__}"


LIGHT_CHECK = """
import sys
import threadcost
light = sorted(m for m in sys.modules if m.split(".")[0] in ("numpy", "pandas", "scipy"))
from threadcost import cli
cli.build_parser(cli.command_modules())
# the families' specs, their packages and the parameters read from them are plain data
parts = [m.split(".") for m in sys.modules]
declared = {".".join(p) for p in parts if p[:2] == ["threadcost", "experiments"]
            and (len(p) <= 3 or p[3] == "spec")}
heavy = sorted(m for m in sys.modules
               if m.split(".")[0] in ("numpy", "pandas", "scipy", "matplotlib", "cffi")
               or (m.startswith(("threadcost.experiments", "threadcost._native"))
                   and m not in declared))
print(light, heavy)
"""


def test_import_and_help_load_no_experiment_numpy_or_pandas() -> None:
    """`threadcost --help` stays instant: neither `import threadcost` nor building the
    parser (every command module) may load an experiment, numpy, pandas or scipy."""
    proc = subprocess.run([sys.executable, "-c", LIGHT_CHECK], capture_output=True, text=True,
                          timeout=60, check=True)
    assert proc.stdout.strip() == "[] []", proc.stdout


# the least each command needs on its command line to parse
REQUIRED = {"malloc-touch": ["--mib", "8"], "run-notebook": ["01"], "import": ["runs.tar.gz"]}


def test_every_command_runs_a_function_taking_its_arguments() -> None:
    """What a command's RUNS names is imported only when the command runs: each one
    resolves to a function that takes the keyword arguments ``arguments(args)`` gives."""
    import inspect

    from threadcost.cli import build_parser, command_modules

    modules = command_modules()
    parser = build_parser(modules)
    for name, module in modules.items():
        args = parser.parse_args([name, *REQUIRED.get(name, [])])
        args.progress = False  # as main() sets it off a terminal
        where, _, attribute = module.RUNS.partition(":")
        runs = getattr(importlib.import_module(where), attribute)
        inspect.signature(runs).bind(**module.arguments(args))  # TypeError if not


def _enumerated() -> list[tuple[str, argparse.Action]]:
    from threadcost.cli import build_parser, command_modules

    sub = build_parser(command_modules())._subparsers._group_actions[0]  # type: ignore[union-attr]
    return [(name, action) for name, parser in sub.choices.items()  # type: ignore[union-attr]
            for action in parser._actions if hasattr(action, "choices_source")]


@pytest.mark.parametrize("command, action", _enumerated(),
                         ids=[f"{c} {a.option_strings[-1]}" for c, a in _enumerated()])
def test_enumerated_options_list_the_experiments_choices(command: str,
                                                         action: argparse.Action) -> None:
    """The choices --help lists are the ones the experiment accepts."""
    module, attribute = action.choices_source.split(":")  # type: ignore[attr-defined]
    listed = action.listed_choices  # type: ignore[attr-defined]
    assert set(listed) == set(getattr(importlib.import_module(module), attribute))
    code, out, _ = _help(command)
    assert code == 0 and "{" + ",".join(listed) + "}" in out


def test_every_known_enumerated_option_shows_its_choices() -> None:
    shown = {(c, a.option_strings[-1]) for c, a in _enumerated()}
    assert shown >= {("switch", "--mechanism"), ("switch", "--placement"),
                     ("echo", "--placement"), ("fibers", "--impl"), ("launch", "--kind"),
                     ("malloc-touch", "--allocator")}


def _help(command: str) -> tuple[int, str, str]:
    from threadcost.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main([command, "--help"])
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("as_json", [True, False])
def test_a_closed_pipe_exits_quietly(as_json: bool) -> None:
    """`threadcost ... | head -c 10`: the reader is gone before the result is written."""
    argv = [sys.executable, "-m", "threadcost", "malloc-touch", "--mib", "8"]
    proc = subprocess.Popen(argv + (["--json"] if as_json else []), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    assert proc.stdout is not None
    proc.stdout.close()  # like `head` that has read what it wanted
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 141, err.decode()
    assert err.decode() == ""


def test_a_closed_pipe_still_saves(tmp_path, monkeypatch) -> None:
    data = tmp_path / "data"
    monkeypatch.setenv("THREADCOST_DATA_DIR", str(data))
    proc = subprocess.Popen([sys.executable, "-m", "threadcost", "malloc-touch", "--mib", "8",
                             "--json", "--save"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL, env=os.environ.copy())
    assert proc.stdout is not None
    proc.stdout.close()
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 141 and "Traceback" not in err.decode()
    assert len(list(data.glob("*/*/meta.json"))) == 1


def test_status_line_on_a_terminal_only(monkeypatch) -> None:
    """Long commands get a tqdm line on stderr (elapsed time), cleared at the end;
    with progress off (stderr not a terminal) nothing is written."""
    from threadcost import cli

    monkeypatch.setattr(cli, "PROGRESS_DELAY_S", 0.05)
    for enabled in (True, False):
        err = io.StringIO()
        monkeypatch.setattr(sys, "stderr", err)
        with cli.status_line("threadcost demo", enabled):
            time.sleep(0.5)
        text = err.getvalue()
        if enabled:
            assert "threadcost demo: running, 00:00 elapsed" in text
            assert text.endswith("\r")  # the line is cleared before the result prints
        else:
            assert text == ""


def test_commands_without_their_own_bar_get_the_status_line() -> None:
    from threadcost.cli import command_modules

    own = {n for n, m in command_modules().items() if getattr(m, "PROGRESS", False)}
    assert own == {"launch", "memory"}
    for name in own:
        assert "args.progress" in Path(command_modules()[name].__file__ or "").read_text()


@pytest.mark.parametrize("command", ["launch", "peers"])
def test_commands_needing_the_checkout_say_so_when_installed_from_a_wheel(
        command: str, monkeypatch) -> None:
    from threadcost import cli, paths

    monkeypatch.setattr(paths, "in_checkout", lambda: False)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main([command, "--iterations", "5"])
    assert code == cli.EXIT_ERROR and out.getvalue() == ""
    lines = err.getvalue().strip().splitlines()
    assert len(lines) == 1 and "checkout" in lines[0] and "make setup" in lines[0]
