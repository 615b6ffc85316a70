"""Data from elsewhere is text: a machine folder whose every string is hostile renders
as text (no element, attribute or script comes from it), and the paper builds."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import drawing_priority
from threadcost import textout

REPO = Path(__file__).resolve().parent.parent
QUICK_PARAMS = REPO / "params" / "quick.yaml"

HOSTILE = ("<img src=x onerror=alert(1)>", "</script><script>alert(2)</script>",
           "<svg onload=alert(4)>", "`code` ``two``", "$\\bad{$", "*em* [x](javascript:alert(5))")
# A folder name cannot hold "/": the others are all there.
HOSTILE_ID = "evil`$\\bad{$<svg onload=alert(4)>`*x*"
MARKERS = ("alert(", "onerror", "onload")


def hostile_text(i: int) -> str:
    return " ".join(HOSTILE[i % len(HOSTILE):] + HOSTILE[:i % len(HOSTILE)])


def poison(value: Any, counter: list[int]) -> Any:
    """Every string in ``value`` replaced by hostile text."""
    if isinstance(value, dict):
        return {k: poison(v, counter) for k, v in value.items()}
    if isinstance(value, list):
        return [poison(v, counter) for v in value]
    if isinstance(value, str):
        counter[0] += 1
        return hostile_text(counter[0])
    return value


def smallest_machine_folder() -> Path:
    """The committed machine folder with the fewest runs (the claims page reads every
    run of every folder it lists, several times: the smallest is the cheapest to draw)."""
    machines = sorted(p for p in (REPO / "data").iterdir()
                      if p.is_dir() and p.name != "published")
    return min(machines, key=lambda m: (len(list(m.glob("*/meta.json"))), m.name))


def hostile_data_dir(target: Path) -> Path:
    """A machine folder of the repository's data/ (and its published tables) twice: as
    it is, and renamed to a hostile id, with every string of its fingerprint, of its
    runs' parameters and its machine id hostile."""
    data = target / "data"
    machine = smallest_machine_folder()
    shutil.copytree(REPO / "data" / "published", data / "published")
    shutil.copytree(machine, data / machine.name)
    hostile = data / HOSTILE_ID
    shutil.copytree(machine, hostile)
    for meta_path in hostile.glob("*/meta.json"):
        meta = json.loads(meta_path.read_text())
        meta["machine"] = poison(meta["machine"], [0])
        meta["params"] = poison(meta["params"], [1])
        meta["machine_id"] = HOSTILE_ID
        meta_path.write_text(json.dumps(meta))
    return data


class _Scan(HTMLParser):
    """Every element, attribute and script text of a page."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("svg", "img") and any(k.startswith("on") for k, _ in attrs):
            self.found.append(f"<{tag}> with a handler")
        for key, value in attrs:
            if key.startswith("on") or any(m in (value or "") for m in MARKERS):
                self.found.append(f"attribute {key}={value!r} on <{tag}>")
        self._in_script = tag == "script"

    def handle_endtag(self, tag: str) -> None:
        self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script and "alert(" in data:
            self.found.append(f"script text {data[:80]!r}")


def markup_from_data(html: str) -> list[str]:
    scan = _Scan()
    scan.feed(html)
    return scan.found


@pytest.mark.parametrize("text", [*HOSTILE, HOSTILE_ID, "a" * 100_000])
def test_markdown_helpers_keep_text_text(text: str) -> None:
    from nbconvert.filters.markdown_mistune import markdown2html_mistune

    for shown in (textout.md_text(text), textout.md_code(text)):
        html = markdown2html_mistune(f"**Machine:** {shown} and {shown}.")
        assert markup_from_data(html) == [], html
        assert "<script" not in html and "<svg" not in html and "<img" not in html
        assert len(shown) < 2_000  # a long value is cut


def test_code_span_survives_backticks() -> None:
    from nbconvert.filters.markdown_mistune import markdown2html_mistune

    html = markdown2html_mistune(f"id {textout.md_code('a`b``c')} end")
    assert "<code>a`b``c</code>" in html


def test_plain_label_draws_a_dollar() -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    ax.scatter([1], [1], label=textout.plain_label(HOSTILE_ID))
    ax.legend()
    fig.canvas.draw()  # a mathtext parse error would raise here
    plt.close(fig)


def test_safe_filename() -> None:
    for text in (HOSTILE_ID, "../../etc/passwd", "", ".hidden", "a/b"):
        name = textout.safe_filename(text)
        assert name and "/" not in name and not name.startswith(".")


def blocking_folders(data: Path) -> list[Path]:
    """Two more machine folders someone could send: one whose run's meta.json is a named
    pipe (reading it would block for ever), one whose meta.json nests 1,000 deep."""
    runs = []
    for name, make in (("pipe-machine", lambda p: os.mkfifo(p)),
                       ("nested-machine", lambda p: p.write_text("[" * 1000 + "]" * 1000))):
        run = data / name / "20260101T000000Z-echo-abcdef"
        run.mkdir(parents=True)
        make(run / "meta.json")
        runs.append(run)
    return runs


@pytest.mark.notebook
def test_hostile_machine_folder_renders_as_text(tmp_path: Path) -> None:
    """The claims page drawn from a committed machine folder (without measuring: the
    same on every host) beside the hostile one, which its across-machines section
    lists; a damaged run of the judged folder is named on the page and in the log.
    Folders that would block or crash a reader (#37) are named in the log, in one line
    each, and change nothing else."""
    data = hostile_data_dir(tmp_path)
    blocking = blocking_folders(data)
    judged = sorted(p for p in data.iterdir() if p.is_dir() and p.name not in (
        "published", HOSTILE_ID, *(r.parent.name for r in blocking)))[0]
    damaged = sorted(judged.iterdir())[-1]  # its newest run
    (damaged / "meta.json").write_text("")
    env = {**os.environ, "THREADCOST_DATA_DIR": str(data),
           "THREADCOST_FIGURES_DIR": str(tmp_path / "figures")}
    proc = subprocess.run(
        [sys.executable, "-m", "threadcost.paper", "--machine", judged.name, "--only", "06",
         "--params", str(QUICK_PARAMS), "--out", str(tmp_path / "paper")],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=900,
        stdin=subprocess.DEVNULL, check=False,
        preexec_fn=drawing_priority)
    assert proc.returncode == 0, proc.stderr[-4000:]
    pages = sorted((tmp_path / "paper" / "html").glob("*.html"))
    assert pages
    claims_page = next(p for p in pages if "06" in p.name)
    html = claims_page.read_text(encoding="utf-8")
    assert f"make paper: skipped {damaged}" in proc.stderr
    assert "Traceback" not in proc.stderr and "RecursionError" not in proc.stderr
    for run in blocking:
        named = [ln for ln in proc.stderr.splitlines() if f"skipped {run}:" in ln]
        assert len(named) == 1, proc.stderr[-3000:]
    assert "could not be read and were skipped" in html and damaged.name in html
    assert str(tmp_path) not in html  # no path of this computer on the page
    assert "alert(4)" in html  # the hostile machine is shown ...
    for page in pages:  # ... as text only
        assert markup_from_data(page.read_text(encoding="utf-8")) == [], page.name
