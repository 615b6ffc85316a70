"""threadcost share and threadcost import: one archive of a machine's runs, nothing personal
in it, taken in with the untrusted-data rules plus the archive's own; twice is once."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import shutil
import tarfile
from pathlib import Path

import pytest

from threadcost import cli
from threadcost.store import archive, datastore, privacy

REPO = Path(__file__).resolve().parent.parent
FAKE_USER = "zq7alice"
FAKE_HOST = "zq7host-lab4"


def _source_machine() -> Path:
    """A committed machine folder with a launch run (it stores a path of its checkout)."""
    for folder in sorted((REPO / "data").iterdir()):
        if list(folder.glob("*-launch-*/meta.json")):
            return folder
    raise AssertionError("no committed machine folder holds a launch run")


def _personal_run_folder(tmp_path: Path) -> tuple[Path, str]:
    """(data folder, machine id): a launch run and a yardsticks run copied into a checkout
    under a fake user's home, their fingerprints naming a fake host, the launch run naming
    the program it spawned by its absolute path there, as a run measured there does."""
    source = _source_machine()
    home = tmp_path / "home" / FAKE_USER
    data = home / "src" / "threadcost" / "runs"
    target = data / source.name
    target.mkdir(parents=True)
    for pattern in ("*-launch-*", "*-yardsticks-*"):
        run = sorted(source.glob(pattern))[-1]
        shutil.copytree(run, target / run.name)
        meta_path = target / run.name / "meta.json"
        meta = json.loads(meta_path.read_text())
        meta["machine"]["hostname"] = FAKE_HOST
        spawn = meta["summary"].get("spawn_target")
        if isinstance(spawn, dict):
            spawn["path"] = str(home / "src" / "threadcost" / "build" / "native" / "spawn_target")
            spawn["what"] += f" (built by {FAKE_USER} on {FAKE_HOST})"
        meta_path.write_text(json.dumps(meta, indent=2))
    return data, source.name


def _members(path: Path) -> dict[str, bytes]:
    with tarfile.open(path, "r:gz") as tar:
        return {m.name: tar.extractfile(m).read() for m in tar.getmembers()  # type: ignore[union-attr]
                if m.isreg()}


def _share(data: Path, mid: str, out: Path, *extra: str) -> int:
    return cli.main(["share", "--data-dir", str(data), "--machine", mid, "--out", str(out),
                     *extra])


def test_a_shared_archive_names_no_user_host_or_path(tmp_path: Path, monkeypatch, capsys) -> None:
    data, mid = _personal_run_folder(tmp_path)
    monkeypatch.setenv("USER", FAKE_USER)
    monkeypatch.setenv("HOME", str(tmp_path / "home" / FAKE_USER))
    out = tmp_path / "out" / "mine.tar.gz"
    assert _share(data, mid, out) == 0
    raw = out.read_bytes()
    with tarfile.open(out, "r:gz") as tar:
        infos = tar.getmembers()
    assert all(i.uname == "" and i.gname == "" and i.uid == 0 and i.mtime == 0 for i in infos)
    texts = [gzip.decompress(raw)] + [gzip.decompress(b) if n.endswith(".gz") else b
                                      for n, b in _members(out).items()]
    for blob in texts:
        for secret in (FAKE_USER, FAKE_HOST, str(tmp_path)):
            assert secret.encode() not in blob, secret
    members = _members(out)
    launch = next(json.loads(b) for n, b in members.items()
                  if "-launch-" in n and n.endswith("meta.json"))
    assert launch["machine"]["hostname"] == privacy.HOST
    assert launch["summary"]["spawn_target"]["path"] == \
        f"{privacy.CHECKOUT}/build/native/spawn_target"
    assert f"built by {privacy.USER} on {privacy.HOST}" in launch["summary"]["spawn_target"]["what"]
    manifest = json.loads(members[f"{archive.TOP}/{archive.MANIFEST}"])
    assert manifest["machine_id"] == mid and len(manifest["runs"]) == 2
    assert manifest["commit"] is None or len(manifest["commit"]) == 40
    for name, entry in manifest["files"].items():
        assert hashlib.sha256(members[f"{archive.TOP}/{name}"]).hexdigest() == entry["sha256"]
    assert any("host" in r for r in manifest["replaced"])
    # the runs left behind are unchanged: only the archive is freed of them
    assert FAKE_HOST in next(data.glob("*/*-launch-*/meta.json")).read_text()


@pytest.mark.parametrize("folder", sorted(p.name for p in (REPO / "data").iterdir()
                                           if p.is_dir() and p.name != "published"))
def test_the_committed_folders_carry_nothing_personal(folder: str) -> None:
    """Every committed run is as a shared one would be: its host named by the placeholder,
    no absolute path but the system's (scrubbing it again changes no byte)."""
    nobody = privacy.Personal(frozenset(), frozenset(), ())
    for run in sorted((REPO / "data" / folder).iterdir()):
        meta = json.loads((run / datastore.META).read_text())
        assert meta["machine"]["hostname"] == privacy.HOST, run.name
        assert privacy.meta(meta, nobody) == meta, run.name
        for table in sorted(run.glob("*.csv*")):
            raw = table.read_bytes()
            assert privacy.table(raw, table.name.endswith(".gz"), nobody) == raw, table.name


def test_a_table_cell_holding_a_path_is_replaced_and_numbers_are_not() -> None:
    personal = privacy.Personal(frozenset({"box7"}), frozenset({FAKE_USER}),
                                (("/srv/tc", privacy.CHECKOUT),))
    table = (f"kind,where,n\nthread,/home/{FAKE_USER}/x/build/native/t,3\n"
             "fork,/proc/config.gz,7\nbox7,https://go.dev/dl,1.5e3\n").encode()
    clean = privacy.table(table, False, personal).decode()
    assert FAKE_USER not in clean and "box7" not in clean
    assert "<checkout>/build/native/t" in clean and "/proc/config.gz" in clean
    assert "https://go.dev/dl" in clean and ",3\n" in clean and "1.5e3" in clean
    assert privacy.table(clean.encode(), False, personal).decode() == clean  # idempotent
    same = b"a,b\n1,2\n"
    assert privacy.table(same, False, personal) is same


def test_share_then_import_adds_the_runs_and_twice_changes_nothing(tmp_path: Path,
                                                                  capsys) -> None:
    data, mid = _personal_run_folder(tmp_path)
    out = tmp_path / "a.tar.gz"
    assert _share(data, mid, out) == 0
    target = tmp_path / "data"
    assert cli.main(["import", str(out), "--data-dir", str(target)]) == 0
    assert "Added 2 runs" in capsys.readouterr().out
    runs = datastore.list_runs(data_dir=target, machine_id=mid)
    assert len(runs) == 2 and all(r.meta["machine"]["hostname"] == privacy.HOST for r in runs)
    before = {p: (p.stat().st_ino, p.stat().st_mtime_ns) for p in target.rglob("*")}
    assert cli.main(["import", str(out), "--data-dir", str(target)]) == 0
    assert "Nothing new" in capsys.readouterr().out
    assert {p: (p.stat().st_ino, p.stat().st_mtime_ns) for p in target.rglob("*")} == before
    assert not list(target.glob(".*"))  # no staging folder left behind


def test_share_picks_the_newest_run_of_each_experiment_or_the_runs_named(tmp_path: Path
                                                                        ) -> None:
    data, mid = _personal_run_folder(tmp_path)
    launch = next(data.glob("*/*-launch-*"))
    older = launch.with_name("20000101T000000Z-launch-000000")
    shutil.copytree(launch, older)
    meta = json.loads((older / "meta.json").read_text())
    meta["run_id"], meta["created_utc"] = older.name, "2000-01-01T00:00:00Z"
    (older / "meta.json").write_text(json.dumps(meta, indent=2))
    runs = datastore.list_runs(data_dir=data, machine_id=mid)
    assert len(runs) == 3
    picked = {r.path.name for r in archive.newest_runs(runs)}
    assert launch.name in picked and older.name not in picked and len(picked) == 2
    out = tmp_path / "one.tar.gz"
    assert _share(data, mid, out, "--runs", older.name) == 0
    assert {n.split("/")[2] for n in _members(out) if n.count("/") == 3} == {older.name}


# --- hostile archives ------------------------------------------------------------------

def _good(tmp_path: Path) -> tuple[Path, dict[str, bytes]]:
    data, mid = _personal_run_folder(tmp_path)
    out = tmp_path / "good.tar.gz"
    assert _share(data, mid, out) == 0
    return out, _members(out)


def _write(path: Path, members: dict[str, bytes], extra: list[tarfile.TarInfo] | None = None,
           manifest_fix: bool = True) -> Path:
    """A .tar.gz of ``members``, the manifest's checksums made to match when asked."""
    files = dict(members)
    key = f"{archive.TOP}/{archive.MANIFEST}"
    if manifest_fix and key in files:
        manifest = json.loads(files[key])
        manifest["files"] = {n.removeprefix(f"{archive.TOP}/"):
                             {"sha256": hashlib.sha256(b).hexdigest(), "bytes": len(b)}
                             for n, b in files.items() if n != key}
        files[key] = json.dumps(manifest).encode()
    with tarfile.open(path, "w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        for info in extra or []:
            tar.addfile(info)
    return path


def _refused(tmp_path: Path, path: Path, capsys, words: str) -> None:
    target = tmp_path / "target"
    code = cli.main(["import", str(path), "--data-dir", str(target)])
    err = capsys.readouterr().err
    assert code == 2, err
    assert len(err.strip().splitlines()) == 1 and words in err, err
    assert not [p for p in target.rglob("*") if p.is_file()]  # nothing landed


def _run_file(members: dict[str, bytes], ending: str) -> str:
    return next(n for n in members if n.endswith(ending))


def test_import_refuses_links(tmp_path: Path, capsys) -> None:
    _, members = _good(tmp_path)
    mid_run = "/".join(_run_file(members, "meta.json").split("/")[:3])
    for kind in (tarfile.SYMTYPE, tarfile.LNKTYPE):
        link = tarfile.TarInfo(f"{mid_run}/extra.csv")
        link.type, link.linkname = kind, "/etc/passwd"
        _refused(tmp_path, _write(tmp_path / f"link{kind!r}.tar.gz", members, [link]),
                 capsys, "a link")


@pytest.mark.parametrize("name", ["../evil.csv", "/etc/evil.csv", "threadcost-share/../x"])
def test_import_refuses_paths_out(tmp_path: Path, capsys, name: str) -> None:
    _, members = _good(tmp_path)
    members[name] = b"a\n1\n"
    _refused(tmp_path, _write(tmp_path / "out.tar.gz", members, manifest_fix=False), capsys,
             "refused")


def test_import_refuses_a_file_that_does_not_match_its_checksum(tmp_path: Path, capsys) -> None:
    _, members = _good(tmp_path)
    meta = _run_file(members, "meta.json")
    members[meta] = members[meta].replace(b'"complete": true', b'"complete": true ')
    _refused(tmp_path, _write(tmp_path / "sum.tar.gz", members, manifest_fix=False), capsys,
             "checksum")


def test_import_refuses_files_outside_its_manifest_and_unknown_names(tmp_path: Path,
                                                                     capsys) -> None:
    _, members = _good(tmp_path)
    run = "/".join(_run_file(members, "meta.json").split("/")[:3])
    more = dict(members, **{f"{run}/notes.csv": b"a\n1\n"})
    _refused(tmp_path, _write(tmp_path / "extra.tar.gz", more, manifest_fix=False), capsys,
             "not in its manifest")
    odd = dict(members, **{f"{run}/notes.txt": b"hello"})
    _refused(tmp_path, _write(tmp_path / "odd.tar.gz", odd), capsys, "run file name")


def test_import_refuses_too_many_files_and_too_large_ones(tmp_path: Path, capsys,
                                                          monkeypatch) -> None:
    good, _ = _good(tmp_path)
    monkeypatch.setattr(archive, "MAX_FILES", 1)
    monkeypatch.setattr(archive, "MAX_RUNS", 1)
    _refused(tmp_path, good, capsys, "more than 1 files")
    monkeypatch.setattr(archive, "MAX_FILES", 10_000)
    monkeypatch.setattr(archive, "MAX_RUNS", 2000)
    monkeypatch.setattr(archive, "MAX_TOTAL_BYTES", 1000)
    _refused(tmp_path, good, capsys, "unpacks to more than")


def test_import_refuses_a_gzip_bomb_and_what_is_no_archive(tmp_path: Path, capsys,
                                                           monkeypatch) -> None:
    bomb = tmp_path / "bomb.tar.gz"  # one small member whose header unpacks to 4 MiB
    with tarfile.open(bomb, "w:gz", format=tarfile.PAX_FORMAT) as tar:
        info = tarfile.TarInfo(f"{archive.TOP}/{archive.MANIFEST}")
        info.pax_headers = {"comment": "x" * (4 * 2**20)}
        tar.addfile(info, io.BytesIO(b""))
    assert bomb.stat().st_size < 64 * 1024
    monkeypatch.setattr(archive, "MAX_TOTAL_BYTES", 2**20)
    _refused(tmp_path, bomb, capsys, "unpacks to more than")
    text = tmp_path / "notes.tar.gz"
    text.write_text("not an archive")
    _refused(tmp_path, text, capsys, "not a .tar.gz")


def test_import_refuses_runs_filed_under_another_machine(tmp_path: Path, capsys) -> None:
    _, members = _good(tmp_path)
    manifest = json.loads(members[f"{archive.TOP}/{archive.MANIFEST}"])
    other = "x86_64-some-other-machine-0000abcd"
    moved = {n.replace(manifest["machine_id"], other): b for n, b in members.items()}
    key = f"{archive.TOP}/{archive.MANIFEST}"
    moved[key] = json.dumps(dict(manifest, machine_id=other)).encode()
    _refused(tmp_path, _write(tmp_path / "other.tar.gz", moved), capsys,
             f"not on {other}")


def test_import_refuses_a_run_the_untrusted_data_rules_refuse(tmp_path: Path, capsys) -> None:
    _, members = _good(tmp_path)
    meta_name = _run_file(members, "meta.json")
    meta = json.loads(members[meta_name])
    meta["tables"] = ["../../escape"]
    members[meta_name] = json.dumps(meta).encode()
    _refused(tmp_path, _write(tmp_path / "bad.tar.gz", members), capsys, "not a plain name")


def test_import_never_overwrites_a_run_with_other_contents(tmp_path: Path, capsys) -> None:
    good, members = _good(tmp_path)
    target = tmp_path / "target"
    meta_name = _run_file(members, "meta.json")
    _, mid, run, _ = meta_name.split("/")
    (target / mid / run).mkdir(parents=True)
    (target / mid / run / "meta.json").write_text("{}")
    code = cli.main(["import", str(good), "--data-dir", str(target)])
    err = capsys.readouterr().err
    assert code == 2 and "with other contents" in err and len(err.strip().splitlines()) == 1
    assert (target / mid / run / "meta.json").read_text() == "{}"
    assert [p.name for p in (target / mid).iterdir()] == [run]  # no other run landed
