"""Move stored runs into the machine folders their fingerprints name today.

Machine ids once were only a readable prefix (``x86_64-amd-epyc-2cpu-24g-kvm``),
so two hosts that differ in CPU stepping, microcode, kernel or mitigations wrote
into one folder. Now an id ends in a hash of what sets performance
(:func:`threadcost.host.machine.machine_id`). This moves every run folder to
``<data>/<id of its own meta.json fingerprint>/`` and rewrites ``machine_id`` in
its meta.json (the old name is kept as ``machine_id_before``). A folder that
held two hosts' runs becomes two folders. Nothing is measured, nothing deleted;
running it twice changes nothing the second time.

    python -m threadcost.store.migrate [--data-dir DIR] [--dry-run]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from threadcost import paths
from threadcost.errors import DataError
from threadcost.host import machine
from threadcost.results import run_files
from threadcost.results.layout import META


def plan(data_dir: Path) -> list[tuple[Path, Path]]:
    """(run folder, where it belongs) for every run whose folder name is not its id."""
    moves = []
    for mdir in sorted(p for p in data_dir.iterdir() if p.is_dir()):
        if mdir.name.startswith(".") or mdir.name == "published":
            continue
        for rdir in sorted(p for p in mdir.iterdir() if p.is_dir()):
            meta_path = rdir / META
            if rdir.name.startswith(".") or not meta_path.is_file():
                continue
            try:  # read as any run's file is: a regular file, bounded (run_files)
                meta = run_files.parse_json(
                    meta_path, run_files.read_file(meta_path, run_files.MAX_META_BYTES)[0])
                new_id = machine.machine_id(meta["machine"])
            except (OSError, ValueError, KeyError, TypeError, DataError) as exc:
                print(f"migrate: skipped {rdir}: unreadable meta.json ({exc})",
                      file=sys.stderr)
                continue
            if new_id != mdir.name:
                moves.append((rdir, data_dir / new_id / rdir.name))
    return moves


def migrate(data_dir: Path, dry_run: bool = False) -> list[tuple[Path, Path]]:
    """Carry out :func:`plan` (unless ``dry_run``) and return the moves."""
    moves = plan(data_dir)
    for src, dst in moves if not dry_run else []:
        if dst.exists():
            raise FileExistsError(f"{dst} exists; not overwriting it with {src}")
        meta_path = src / META
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        before = meta.get("machine_id", src.parent.name)
        updated = {}
        for key, value in meta.items():  # keep the key order of the stored file
            updated[key] = dst.parent.name if key == "machine_id" else value
            if key == "machine_id":
                updated["machine_id_before"] = before
        tmp = meta_path.with_name(f".{META}.migrate-{os.getpid()}")
        tmp.write_text(json.dumps(updated, indent=2, allow_nan=False), encoding="utf-8")
        os.replace(tmp, meta_path)
        dst.parent.mkdir(parents=True, exist_ok=True)
        os.rename(src, dst)
        if not any(src.parent.iterdir()):
            src.parent.rmdir()
    return moves


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m threadcost.store.migrate",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", default=None,
                        help="data folder (default: data/ or $THREADCOST_DATA_DIR)")
    parser.add_argument("--dry-run", action="store_true", help="only say what would move")
    args = parser.parse_args(argv)
    data_dir = Path(args.data_dir) if args.data_dir else paths.data_dir()
    if not data_dir.is_dir():
        print(f"migrate: --data-dir {data_dir}: not a folder", file=sys.stderr)
        return 2
    moves = migrate(data_dir, dry_run=args.dry_run)
    folders: dict[tuple[str, str], int] = {}
    for src, dst in moves:
        key = (src.parent.name, dst.parent.name)
        folders[key] = folders.get(key, 0) + 1
    verb = "would move" if args.dry_run else "moved"
    for (old, new), n in sorted(folders.items()):
        print(f"{verb} {n} run(s): {old}/ -> {new}/")
    if not moves:
        print("every run is already in its machine's folder")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
