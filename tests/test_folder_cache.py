"""What one process computes from a machine folder is kept for the others
(threadcost.findings.folder_cache): a hit returns exactly what the computation would; a
changed folder, other code or a damaged file is computed afresh, and nothing about a
damaged file reaches the output."""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from threadcost import claims, findings
from threadcost.findings import folder_cache
from threadcost.views import headline

SMALLEST = "x86_64-intel-xeon-2cpu-24g-kvm-a0232525"  # the committed folder quickest to judge


@dataclass(frozen=True)
class Kept:
    name: str
    values: tuple[float, ...]
    extra: dict[str, Any] = field(default_factory=dict)


def _folder(tmp_path: Path) -> tuple[Path, str]:
    root = tmp_path / "data"
    run = root / "machine-a" / "20260101T000000Z-launch-abc123"
    run.mkdir(parents=True)
    (run / "meta.json").write_text('{"experiment": "launch"}')
    (run / "samples.csv").write_text("n,ns\n1,10\n")
    return root, "machine-a"


class Counted:
    """A computation that says how often it ran."""

    def __init__(self, value: Any) -> None:
        self.value, self.calls = value, 0

    def __call__(self) -> Any:
        self.calls += 1
        return self.value


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv(folder_cache.ENV, str(folder))
    return folder


def test_a_kept_result_is_returned_with_its_types(tmp_path: Path, cache_dir: Path) -> None:
    root, mid = _folder(tmp_path)
    value = [Kept("a", (1.0, math.nan, -0.0, math.inf), {"n": np.int64(3), "x": np.float64(2.5),
                                                          "run": Path("/r/x"), 1: (None, True)})]
    compute = Counted(value)
    first = folder_cache.memo("test", root, mid, compute, (Kept,))
    again = folder_cache.memo("test", root, mid, compute, (Kept,))
    assert compute.calls == 1 and first is value
    assert again is not value and folder_cache.same(again, value)
    assert type(again[0].extra["n"]) is np.int64 and type(again[0].values) is tuple
    assert math.copysign(1.0, again[0].values[2]) == -1.0


def test_a_changed_folder_is_computed_again(tmp_path: Path, cache_dir: Path) -> None:
    root, mid = _folder(tmp_path)
    compute = Counted({"v": 1})
    folder_cache.memo("test", root, mid, compute)
    run = next((root / mid).iterdir())
    (run / "samples.csv").write_text("n,ns\n1,11\n")  # same size, other bytes
    folder_cache.memo("test", root, mid, compute)
    assert compute.calls == 2
    (run / "extra.csv").write_text("")  # a new file
    folder_cache.memo("test", root, mid, compute)
    assert compute.calls == 3
    folder_cache.memo("test", root, mid, compute)
    assert compute.calls == 3


def test_other_code_is_a_miss(tmp_path: Path, cache_dir: Path,
                              monkeypatch: pytest.MonkeyPatch) -> None:
    root, mid = _folder(tmp_path)
    compute = Counted({"v": 1})
    folder_cache.memo("test", root, mid, compute)
    monkeypatch.setattr(folder_cache, "code_digest", lambda: "another version of the code")
    folder_cache.memo("test", root, mid, compute)
    assert compute.calls == 2


def test_the_code_digest_reads_every_source_file(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    before = folder_cache.code_digest()
    folder_cache.code_digest.cache_clear()
    source = Path(folder_cache.__file__)
    real = Path.read_bytes

    def edited(path: Path) -> bytes:
        return real(path) + (b"\n# edited\n" if path.resolve() == source.resolve() else b"")

    monkeypatch.setattr(Path, "read_bytes", edited)
    try:
        assert folder_cache.code_digest() != before
    finally:
        folder_cache.code_digest.cache_clear()


@pytest.mark.parametrize("damage", [
    b"", b"{not json", b"\xff\xfe", b"[]", b'{"format": 1}',
    b'{"format": 1, "kind": "test", "key": "KEY", "value": {"$c": "os.system", "f": {}}}',
    b'{"format": 1, "kind": "test", "key": "KEY", "value": {"$n": "O", "v": 1}}',
    b'{"format": 1, "kind": "test", "key": "KEY", "value": {"$f": "1e999"}}',
    b'{"format": 1, "kind": "test", "key": "KEY", "value": ' + b"[" * 100_000 + b"]" * 100_000
    + b"}",
])
def test_a_damaged_file_is_ignored_and_rewritten(tmp_path: Path, cache_dir: Path,
                                                 damage: bytes,
                                                 capfd: pytest.CaptureFixture[str]) -> None:
    root, mid = _folder(tmp_path)
    value = [Kept("a", (1.0,))]
    compute = Counted(value)
    folder_cache.memo("test", root, mid, compute, (Kept,))
    (kept,) = cache_dir.glob("test-*.json")
    key = kept.name.removeprefix("test-").removesuffix(".json")
    kept.write_bytes(damage.replace(b"KEY", key.encode()))
    got = folder_cache.memo("test", root, mid, compute, (Kept,))
    assert compute.calls == 2 and folder_cache.same(got, value)
    assert folder_cache.same(folder_cache.memo("test", root, mid, compute, (Kept,)), value)
    assert compute.calls == 2  # rewritten whole
    out, err = capfd.readouterr()
    assert out == "" and err == ""


def test_what_cannot_be_rebuilt_is_not_kept(tmp_path: Path, cache_dir: Path) -> None:
    root, mid = _folder(tmp_path)
    compute = Counted({"frame": object()})
    folder_cache.memo("test", root, mid, compute)
    folder_cache.memo("test", root, mid, compute)
    assert compute.calls == 2 and not list(cache_dir.glob("*.json"))


def test_a_folder_holding_a_link_or_missing_is_never_kept(tmp_path: Path,
                                                          cache_dir: Path) -> None:
    root, mid = _folder(tmp_path)
    run = next((root / mid).iterdir())
    os.symlink("/etc/hostname", run / "table.csv")
    compute = Counted(1)
    folder_cache.memo("test", root, mid, compute)
    folder_cache.memo("test", root, mid, compute)
    folder_cache.memo("test", root, "no-such-machine", compute)
    assert compute.calls == 3 and not list(cache_dir.glob("*.json"))


def test_nothing_is_kept_without_the_variable(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(folder_cache.ENV, raising=False)
    root, mid = _folder(tmp_path)
    compute = Counted(1)
    folder_cache.memo("test", root, mid, compute)
    folder_cache.memo("test", root, mid, compute)
    assert compute.calls == 2


def test_verdicts_and_findings_kept_are_the_ones_computed(cache_dir: Path) -> None:
    """A committed folder's verdicts and headline findings read back from another
    process's file equal what judging computes; a damaged file gives them again, and
    its name is in none of them."""
    claims._JUDGED.clear()
    findings.clear_cache()
    computed = claims.judge(SMALLEST)
    cells = headline.cells(None, SMALLEST)
    assert {p.name.split("-")[0] for p in cache_dir.glob("*.json")} == {"verdicts", "findings"}
    claims._JUDGED.clear()
    findings.clear_cache()
    assert folder_cache.same(claims.judge(SMALLEST), computed)
    assert headline.cells(None, SMALLEST).equals(cells)
    for kept in cache_dir.glob("*.json"):
        kept.write_text(json.dumps({"format": 1, "kind": "verdicts", "value": []}))
    claims._JUDGED.clear()
    findings.clear_cache()
    again = claims.judge(SMALLEST)
    assert folder_cache.same(again, computed)
    assert headline.cells(None, SMALLEST).equals(cells)
    assert str(cache_dir) not in json.dumps([v.as_dict() for v in again], default=str)
    claims._JUDGED.clear()
    findings.clear_cache()
