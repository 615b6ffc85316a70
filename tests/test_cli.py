"""The CLI contract, checked from outside: JSON shape, exit codes, one-line errors."""

from __future__ import annotations

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
