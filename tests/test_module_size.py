"""Every module of the package stays readable: at most 600 lines (#21). A module that
grows past it is split by responsibility, its public names re-exported where callers
import them."""

from __future__ import annotations

from threadcost import paths

PACKAGE = paths.REPO_ROOT / "threadcost"
MAX_LINES = 600


def test_every_module_is_at_most_600_lines() -> None:
    sizes = {path.relative_to(paths.REPO_ROOT).as_posix():
             len(path.read_text(encoding="utf-8").splitlines())
             for path in PACKAGE.rglob("*.py")}
    assert len(sizes) > 50  # the walk found the package
    over = {name: n for name, n in sorted(sizes.items()) if n > MAX_LINES}
    assert over == {}, f"modules over {MAX_LINES} lines: {over}"
