"""Page 02 says where an idle thread's extra page lies when two machines' stored grids
differ by one (threadcost.views.thread_page_gap): from the touch grid (a gap that closes
once the threads write some depth is on the thread's own stack, within that depth) and
the stack grid, never from a sentence about one machine."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from threadcost import paths
from threadcost.findings import marks
from threadcost.views import thread_page_gap as gap

DATA = Path(__file__).resolve().parents[1] / "data"
SIXTEEN = "x86_64-intel-xeon-16cpu-126g-vm-3754101c"
DEPTHS = [0, 16, 64, 400]
SIZES = [16, 64, 0]


def _grids(label: str, idle: float, touched_extra: float, *, page_kib: float = 4.0,
           kernel_stack: float = 16.0) -> gap.Grids:
    """A machine whose untouched thread keeps ``idle`` KiB and whose touched threads keep
    the depth + 8 KiB + ``touched_extra``."""
    touch = pd.DataFrame({
        "touch_kib_asked": DEPTHS,
        "rss_kib_per_thread": [idle if d == 0 else d + 8 + touched_extra for d in DEPTHS],
        "rss_rollup_kib_per_thread": [idle if d == 0 else d + 8 + touched_extra
                                      for d in DEPTHS],
        "vsz_kib_per_thread": [8196.0] * len(DEPTHS),
        "kernel_stack_kib_per_thread": [kernel_stack] * len(DEPTHS),
        "page_tables_kib_per_thread": [4.04] * len(DEPTHS)})
    stacks = pd.DataFrame({"stack_kib_asked": SIZES,
                           "rss_kib_per_thread": [idle] * len(SIZES)})
    return gap.Grids(label=label, touch=touch, stacks=stacks, page_kib=page_kib,
                     touch_run=f"{label}-touch", stack_run=f"{label}-stacks",
                     machine_id=label)


def _prose(text: str) -> str:
    """The text as the page's generated prose, where marks.unnamed reads numbers."""
    return ('<div class="jp-RenderedHTMLCommon jp-RenderedMarkdown jp-OutputArea-output">'
            f"<p>{text}</p></div>")


def test_a_page_that_touching_the_stack_absorbs_is_on_the_threads_stack() -> None:
    here, there = _grids("a", 12.0, 0.0), _grids("b", 8.2, 0.0)
    found = gap.compare(here, there)
    assert found is not None
    assert (found.pages, found.closes_at_kib, found.every_stack_size,
            found.smallest_stack_kib) == (1, 16, True, 16)
    assert found.same_counters == ("virtual size", "kernel stack", "page tables")
    assert found.by_page_walk
    text = gap.located_text(here, [(there, found)])
    assert "one page more" in text and "on the thread's own stack" in text
    assert marks.unnamed(_prose(text)) == [] and marks.runs_unsaid(text) == []
    # seen from the other machine: one page fewer, the same place
    back = gap.compare(there, here)
    assert back is not None and back.pages == -1 and back.closes_at_kib == 16


def test_a_page_that_stays_at_every_depth_lies_above_the_first_frame() -> None:
    here, there = _grids("a", 16.0, 8.0), _grids("b", 8.0, 0.0)
    found = gap.compare(here, there)
    assert found is not None and found.pages == 2 and found.closes_at_kib is None
    text = gap.located_text(here, [(there, found)])
    assert "two pages more" in text and "above their first frame" in text
    assert "own stack" not in text


def test_less_than_a_page_or_another_page_size_is_not_a_page_gap() -> None:
    assert gap.compare(_grids("a", 8.2, 0.0), _grids("b", 8.0, 0.0)) is None
    assert gap.compare(_grids("a", 10.0, 0.0), _grids("b", 8.0, 0.0)) is None  # half a page
    assert gap.compare(_grids("a", 12.0, 0.0), _grids("b", 8.0, 0.0, page_kib=16.0)) is None


def test_a_kernel_counter_that_differs_is_not_called_the_same() -> None:
    found = gap.compare(_grids("a", 12.0, 0.0, kernel_stack=32.0), _grids("b", 8.0, 0.0))
    assert found is not None and "kernel stack" not in found.same_counters


@pytest.mark.skipif(not (DATA / SIXTEEN).is_dir(), reason="the 16-CPU folder is not in data/")
def test_the_stored_folders_put_the_16_cpu_hosts_extra_page_on_the_threads_stack(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The 16-CPU Ubuntu 24.04 folder's idle thread keeps a page more than the other
    stored folders; its grids close the gap once the threads write their stacks."""
    monkeypatch.setattr(paths, "data_dirs", lambda: [DATA])
    here = gap.stored_grids(DATA / SIXTEEN)
    assert here is not None
    others = [g for g in (gap.stored_grids(p) for p in gap._others(SIXTEEN)) if g]
    assert len(others) >= 2
    for there in others:
        found = gap.compare(here, there)
        assert found is not None and found.pages == 1, there.machine_id
        assert found.closes_at_kib is not None and found.every_stack_size, there.machine_id
    fp = {"cpu_model": "Intel Xeon", "logical_cpus": 16, "glibc": "2.39", "page_size": 4096}
    run = type("Stored", (), {})
    touch, stacks = run(), run()
    touch.tables = {gap.TOUCH_TABLE: here.touch}
    stacks.tables = {gap.STACK_TABLE: here.stacks}
    text = gap.gap_text(touch, stacks, fp, SIXTEEN, (here.touch_run, here.stack_run))
    assert f"these {len(others)} machines" in text and "own stack" in text
    assert marks.unnamed(_prose(text)) == [] and marks.runs_unsaid(text) == []
    assert marks.conflicts({"02": text}) == {}
