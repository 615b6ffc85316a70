"""A machine folder someone sends you is untrusted input (#37): it cannot make threadcost
read files outside it, hang, crash, or move a verdict, and it never changes another
machine's claims or paper.

One data root is built for the module: the committed reference folder as it is (the
"good" machine), a copy of it with three runs made impossible (an echo rate of -1, a
launch median of 1e308, a brigade run whose meta.json is cut), and one hostile machine
folder per case (a named pipe as meta.json, JSON nested 1,000 deep, a 50 MB meta.json,
table names that climb out or are absolute, links out, a device). Each case asserts the
one-line reason, the time it took (a bound far above the seconds it takes: it is about
hangs) and that the good machine reads as before."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from threadcost import claims, findings, paths
from threadcost.host import machine
from threadcost.paper import pages as paper_pages
from threadcost.results import Result, _json_safe
from threadcost.store import datastore

REFERENCE = "x86_64-amd-epyc-2cpu-24g-kvm-1650d2c6"  # the committed reference run
DAMAGED = f"{REFERENCE}-damaged"  # its copy with three impossible runs
FP = {**machine.fingerprint(include_git=False), "cpu_model": "Hostile CPU"}
# Reading a hostile folder takes milliseconds; a hang takes forever. A process (the CLI)
# pays its imports and a judgement of every claim, seconds on a busy machine.
READ_BOUND_S = 20
PROCESS_BOUND_S = 120
SECRET = "secret,column\nonly-outside,1\n"


def _one_run(root: Path, folder: str) -> Path:
    """A small valid run (one table) in machine folder ``folder``."""
    frame = pd.DataFrame({"repeat": [0, 1, 2], "rate_per_s": [1.5e5, 1.6e5, 1.7e5]})
    saved = datastore.save_run(Result("echo", {"placement": "same-cpu"}, {},
                                      tables={"repeats": frame}),
                               data_dir=root, fingerprint=FP)
    target = root / folder
    target.mkdir()
    moved = Path(shutil.move(str(saved), target / saved.name))
    saved.parent.rmdir()  # the folder save_run made for the fingerprint, empty again
    return moved


def _meta(run: Path) -> dict[str, Any]:
    return json.loads((run / "meta.json").read_text())


def _write_meta(run: Path, meta: dict[str, Any]) -> None:
    (run / "meta.json").write_text(json.dumps(meta))


def _fifo(run: Path, outside: Path) -> None:
    (run / "meta.json").unlink()
    os.mkfifo(run / "meta.json")


def _deep(run: Path, outside: Path) -> None:
    meta = _meta(run)
    meta["params"]["nested"] = "__HERE__"
    text = json.dumps(meta).replace('"__HERE__"', "[" * 1000 + "]" * 1000)
    (run / "meta.json").write_text(text)  # about 2 KB


def _huge(run: Path, outside: Path) -> None:
    with open(run / "meta.json", "r+b") as fh:  # sparse: 50 MB that take no disk
        fh.truncate(50 * 2**20)


def _climbing_name(run: Path, outside: Path) -> None:
    depth = len(run.relative_to(outside.parent).parts)
    name = "/".join([".."] * depth) + f"/{outside.name}/secret"
    _name_table(run, name)


def _absolute_name(run: Path, outside: Path) -> None:
    _name_table(run, str(outside / "secret"))


def _name_table(run: Path, name: str) -> None:
    meta = _meta(run)
    meta["tables"] = [name]
    meta["table_schema"] = {name: {"rows": 1, "columns": ["secret", "column"]}}
    _write_meta(run, meta)


def _linked_table(run: Path, outside: Path) -> None:
    (run / "repeats.csv").unlink()
    (run / "repeats.csv").symlink_to(outside / "secret.csv")


def _linked_meta(run: Path, outside: Path) -> None:
    shutil.copy(run / "meta.json", outside / "meta.json")
    (run / "meta.json").unlink()
    (run / "meta.json").symlink_to(outside / "meta.json")


def _linked_run(run: Path, outside: Path) -> None:
    """The run folder itself a link to a folder outside (holding a valid run)."""
    elsewhere = outside / "a-run"
    shutil.move(str(run), elsewhere)
    run.symlink_to(elsewhere, target_is_directory=True)


def _device(run: Path, outside: Path) -> None:
    (run / "repeats.csv").unlink()
    try:  # /dev/zero's numbers: reading it never ends
        os.mknod(run / "repeats.csv", stat.S_IFCHR | 0o600, os.makedev(1, 5))
    except PermissionError:
        pytest.skip("mknod needs CAP_MKNOD")


def _impossible_count(run: Path, outside: Path) -> None:
    path = run / "repeats.csv"
    path.write_text(path.read_text().replace("\n1,", "\n-3,", 1))


def _gzip_bomb(run: Path, outside: Path) -> None:
    """A .csv.gz of about 130 KB that inflates to more than any table (128 MiB)."""
    import gzip

    (run / "repeats.csv").unlink()
    with gzip.open(run / "repeats.csv.gz", "wb", compresslevel=9) as fh:
        fh.write(b"repeat,rate_per_s\n")
        block = b"0" * (1 << 20)
        for _ in range(130):
            fh.write(block)


CASES: dict[str, tuple[Callable[[Path, Path], None], str]] = {
    "named pipe as meta.json": (_fifo, "a named pipe, not a regular file"),
    "JSON nested 1,000 deep": (_deep, "nested 1,002 levels deep"),
    "50 MB meta.json": (_huge, "52,428,800 bytes, more than"),
    "table name climbing out": (_climbing_name, "is not a plain name"),
    "absolute table name": (_absolute_name, "is not a plain name"),
    "table linked out": (_linked_table, "a symbolic link, not a regular file"),
    "meta.json linked out": (_linked_meta, "a symbolic link, not a regular file"),
    "run folder linked out": (_linked_run, "a symbolic link, not a run folder"),
    "a device as a table": (_device, "a device, not a regular file"),
    "a negative count": (_impossible_count, "is impossible: a count"),
    "a table that inflates without end": (_gzip_bomb, "MiB of CSV text"),
}


def _folder(case: str) -> str:
    return "hostile-" + "".join(c if c.isalnum() else "-" for c in case)


def _impossible(data: Path) -> dict[str, Path]:
    """The damaged copy's three impossible runs, by what was done."""
    def run(experiment: str) -> Path:
        return next(p for p in sorted((data / DAMAGED).iterdir())
                    if p.name.split("-", 1)[1].rsplit("-", 1)[0] == experiment)

    echo, launch, brigade = run("echo"), run("launch"), run("brigade")
    yardsticks = run("yardsticks")  # read by claims.judge itself, and by the whys
    (yardsticks / "meta.json").write_text("[" * 1000)
    frame = pd.read_csv(echo / "repeats.csv")
    frame.loc[0, "rate_per_s"] = -1
    frame.to_csv(echo / "repeats.csv", index=False)
    frame = pd.read_csv(launch / "distributions.csv")
    frame["p50"] = frame["p50"].astype(float)
    frame.loc[:, "p50"] = 1e308
    frame.to_csv(launch / "distributions.csv", index=False)
    text = (brigade / "meta.json").read_text()
    (brigade / "meta.json").write_text(text[: len(text) // 2])
    return {"echo": echo, "launch": launch, "brigade": brigade, "yardsticks": yardsticks}


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The data root, the good machine's verdicts before anything hostile was added,
    the hostile runs by case, and a folder outside the root with a secret CSV."""
    base = tmp_path_factory.mktemp("hostile")
    root = base / "data"
    shutil.copytree(paths.REPO_ROOT / "data" / REFERENCE, root / REFERENCE)
    before = [v.as_dict() for v in claims.judge(REFERENCE, root)]
    outside = base / "outside"
    outside.mkdir()
    (outside / "secret.csv").write_text(SECRET)
    runs = {}
    for case, (damage, _) in CASES.items():
        run = _one_run(root, _folder(case))
        damage(run, outside)
        runs[case] = run
    shutil.copytree(paths.REPO_ROOT / "data" / REFERENCE, root / DAMAGED)
    return {"root": root, "before": before, "runs": runs, "outside": outside,
            "impossible": _impossible(root)}


@pytest.mark.parametrize("case", list(CASES))
def test_hostile_run_is_named_in_one_line(case: str, store: dict[str, Any]) -> None:
    root, run = store["root"], store["runs"][case]
    started = time.monotonic()
    runs, skipped = datastore.scan(root, machine_id=_folder(case))
    assert time.monotonic() - started < READ_BOUND_S
    assert runs == [] and [s.path for s in skipped] == [run], skipped
    reason = skipped[0].reason
    assert CASES[case][1] in reason, reason
    assert "\n" not in reason and len(reason) < 600
    assert "Traceback" not in reason and "RecursionError" not in reason


def test_nothing_outside_the_folder_is_read_or_copied(store: dict[str, Any],
                                                      tmp_path: Path) -> None:
    """The runs whose tables reach outside are linked and copied by no page; a valid
    run's tables are (the paper copies what it validated)."""
    links = paper_pages.Links(tmp_path / "html", tmp_path / "html")
    hostile = [store["runs"][c] for c in ("table name climbing out", "absolute table name",
                                          "table linked out", "run folder linked out")]
    prov = paper_pages.provenance_for(hostile, links)
    assert prov.data == []
    copied = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert all(SECRET not in p.read_text(errors="replace") for p in copied), copied
    good = next(p for p in sorted((store["root"] / REFERENCE).iterdir()) if "-echo-" in p.name)
    prov = paper_pages.provenance_for([good], links)
    assert [name for name, _ in prov.data] == ["echo/repeats.csv"]
    assert (tmp_path / "html" / "data" / REFERENCE / good.name / "repeats.csv").is_file()


def test_other_machines_read_as_before(store: dict[str, Any]) -> None:
    root = store["root"]
    started = time.monotonic()
    runs, skipped = datastore.scan(root, machine_id=REFERENCE)
    assert skipped == [] and runs
    after = [v.as_dict() for v in claims.judge(REFERENCE, root)]
    assert after == store["before"]
    assert time.monotonic() - started < PROCESS_BOUND_S
    from threadcost.views import across_machines

    shown = across_machines.machines(root)
    assert REFERENCE in shown and not any(m.startswith("hostile-") for m in shown)


def test_impossible_numbers_move_no_verdict(store: dict[str, Any]) -> None:
    """Each reading that would have read an impossible run says "could not read <run>:
    <why>", instead of a shape ratio of -4,108, a thread launch of 1e308 ns or "no
    stored brigade run"; an unreadable yardsticks run (read by the judging itself)
    explains nothing and raises nothing."""
    root, bad = store["root"], store["impossible"]
    verdicts = {v.id: v for v in claims.judge(DAMAGED, root)}
    c03 = verdicts["C03"].sentence
    assert f"could not read {bad['echo'].name}: repeats.csv: column 'rate_per_s'" in c03, c03
    assert "impossible: a rate" in c03 and "4,108" not in c03
    # C22 judges slab like S5's slabtop (notebook 02's runs); the brigade's wider kernel
    # count is its context row, which names the unreadable run instead of reading another
    c22 = verdicts["C22"]
    brigade_rows = [row for row in c22.context if "brigade" in row.label]
    assert brigade_rows and all(row.measured is None for row in brigade_rows), c22.context
    assert all(f"could not read {bad['brigade'].name}: meta.json: not valid JSON"
               in row.reason for row in brigade_rows), [r.reason for r in brigade_rows]
    assert "no stored brigade run" not in c22.sentence
    from threadcost.views import claims as claims_view

    assert claims_view.why_yardsticks_table(DAMAGED, root).empty  # none read, no raise
    launch = findings.get("launch_thread_median_ns", root, DAMAGED)
    assert launch.value is None
    assert launch.missing.startswith(f"could not read {bad['launch'].name}: "
                                     "distributions.csv: column 'p50'"), launch.missing


def _cli(*args: str, root: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "THREADCOST_DATA_DIR": str(root)}
    return subprocess.run([sys.executable, "-m", "threadcost", *args], capture_output=True,
                          text=True, timeout=PROCESS_BOUND_S, check=False, env=env,
                          stdin=subprocess.DEVNULL)


def test_claims_of_another_machine_unchanged_and_prompt(store: dict[str, Any]) -> None:
    """`threadcost claims` reads every folder to list them: the named pipe, the nested
    JSON and the rest neither block nor crash it, and the good machine's verdicts are
    the ones judged before any hostile folder was there."""
    root = store["root"]
    started = time.monotonic()
    proc = _cli("claims", "--machine", REFERENCE, "--data-dir", str(root), "--json",
                root=root)
    assert time.monotonic() - started < PROCESS_BOUND_S
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    got = [{k: v for k, v in row.items() if k != "skipped"} for row in json.loads(proc.stdout)]
    assert got == json.loads(json.dumps(_json_safe(store["before"])))


def test_claims_of_a_hostile_machine_name_it(store: dict[str, Any]) -> None:
    root = store["root"]
    case = "named pipe as meta.json"
    proc = _cli("claims", "--machine", _folder(case), "--data-dir", str(root), root=root)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert lines == [f"threadcost claims: skipped {store['runs'][case]}: "
                     f"{store['runs'][case] / 'meta.json'}: a named pipe, not a regular "
                     "file of the run (refused)"], proc.stderr
    assert "could not read" in proc.stdout and "Traceback" not in proc.stdout


def test_paper_of_a_typo_lists_machines_promptly(store: dict[str, Any]) -> None:
    root = store["root"]
    started = time.monotonic()
    proc = _cli("paper", "--machine", "no-such-machine", root=root)
    assert time.monotonic() - started < PROCESS_BOUND_S
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and REFERENCE in lines[0] and "hostile-" not in lines[0], lines


def test_paper_of_a_hostile_machine_is_refused_in_one_line(store: dict[str, Any],
                                                           tmp_path: Path) -> None:
    root = store["root"]
    env = {**os.environ, "THREADCOST_DATA_DIR": str(root)}
    proc = subprocess.run([sys.executable, "-m", "threadcost.paper", "--machine",
                           _folder("JSON nested 1,000 deep"), "--out", str(tmp_path / "p")],
                          capture_output=True, text=True, timeout=PROCESS_BOUND_S,
                          check=False, env=env, stdin=subprocess.DEVNULL, cwd=paths.REPO_ROOT)
    assert proc.returncode == 4, proc.stderr  # a data error (README), named in one line
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "could be read" in lines[0] and "nested 1,002" in lines[0]
    assert not (tmp_path / "p").exists() and not (tmp_path / "p.partial").exists()


def test_a_folder_named_with_a_newline_is_named_on_one_line(tmp_path: Path) -> None:
    run = _one_run(tmp_path, "machine\nwith a newline")
    (run / "meta.json").write_text("{")
    skipped = datastore.skipped_runs(tmp_path)
    assert [s.path for s in skipped] == [run]
    text = datastore.skipped_text(skipped)
    assert len(text.splitlines()) == 1 and "machine\\nwith a newline" in text
    assert "\n" not in "".join(skipped[0].as_dict().values())
