"""Every module of the package stays readable: one unit of meaning, at most about 800
lines (#45 item 4). A module that grows past it is split where it holds two things, never
cut in two to meet the cap."""

from __future__ import annotations

from threadcost import paths

PACKAGE = paths.REPO_ROOT / "threadcost"
MAX_LINES = 800


def test_every_module_is_at_most_800_lines() -> None:
    sizes = {path.relative_to(paths.REPO_ROOT).as_posix():
             len(path.read_text(encoding="utf-8").splitlines())
             for path in PACKAGE.rglob("*.py")}
    assert len(sizes) > 50  # the walk found the package
    over = {name: n for name, n in sorted(sizes.items()) if n > MAX_LINES}
    assert over == {}, f"modules over {MAX_LINES} lines: {over}"
