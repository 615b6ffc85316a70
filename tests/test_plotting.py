"""The paper's figure theme, written out in threadcost.notebook.plotting, is seaborn's."""

from __future__ import annotations

import subprocess
import sys

PROBE = """
import matplotlib as mpl
import seaborn as sns
from threadcost.notebook import plotting
sns.set_theme(context="paper", style="whitegrid", palette=plotting.PALETTE, font_scale=1.2)
theirs = dict(mpl.rcParams)
mpl.rcdefaults()
plotting.use_paper_theme()
ours = dict(mpl.rcParams)
differ = [k for k in plotting.PAPER_THEME if str(ours[k]) != str(theirs[k])
          and not (isinstance(ours[k], float) and abs(ours[k] - theirs[k]) < 1e-9)]
missing = [k for k in theirs if k not in plotting.PAPER_THEME and k != "image.cmap"
           and str(theirs[k]) != str(mpl.rcParamsDefault[k])]
print(differ, missing)
"""


def test_paper_theme_is_seaborns_paper_whitegrid_colorblind() -> None:
    proc = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                          timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "[] []", proc.stdout


def test_importing_plotting_does_not_import_seaborn_or_scipy() -> None:
    code = ("import sys; import threadcost.notebook.plotting; "
            "print(sorted(m for m in ('seaborn', 'scipy.stats') if m in sys.modules))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "[]"


def test_plain_tick_labels_keep_the_digits_that_tell_ticks_apart() -> None:
    """A log axis from 0.6 to 2 labels 0.6, 0.8, 1, 1.2, 1.5, 2: each tick formatted alone
    keeps its own digits (it once printed "1" for 1.2 and "2" for 1.5)."""
    from threadcost.textout import plain_number

    ticks = [0.6, 0.8, 1.0, 1.2, 1.5, 2.0]
    labels = [plain_number(t) for t in ticks]
    assert labels == ["0.6", "0.8", "1", "1.2", "1.5", "2"]
    assert len(set(labels)) == len(ticks)
    # float noise never shows, powers of ten never appear, thousands are separated
    assert [plain_number(v) for v in (0.1 + 0.2, 1.2000000000000002, 0.01, 0.25, 2e6)] == [
        "0.3", "1.2", "0.01", "0.25", "2,000,000"]
    assert plain_number(0) == "0" and plain_number(float("nan")) == ""
