# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
#   threadcost:
#     summary: false
# ---

# %% [markdown]
# # 1. Virtual is not resident: what `malloc` really costs
#
# Before counting what a thread costs in memory we need the two numbers every tool
# shows and most people mix up. **Virtual size** (VSZ, `VmSize`) is the address
# space a process has reserved. **Resident set** (RSS, `VmRSS`) is the part backed
# by physical memory right now. Linux hands out address space eagerly and physical
# pages lazily, on the first write to each page (a *page fault*).
#
# This notebook allocates a large buffer, writes one byte to each page in order, and
# reads `/proc/self/status` before, right after allocating, at evenly spaced points
# while touching, after touching and after freeing. Everything is measured by a C
# kernel (`native/malloc_touch.c`) in a child process with one thread (forked from a
# Python process that has loaded threadcost, numpy and pandas), not in this Jupyter
# kernel: the kernel's own threads start threads when they like, and each would add
# its stack and a malloc arena to the curve. The baseline is whatever the child already
# held; every figure shows the **change** from that baseline.
#
# Published claim checked here: **C07** (S0): a 400 MiB `malloc` moves VSZ but not RSS;
# only touching makes it resident.

# %% tags=["parameters"]
# Parameters (papermill: -p NAME VALUE, a list as YAML: -p NAME '[1, 2]', or -f params/<set>.yaml)
from typing import Optional  # papermill reads these annotations, not "X | None"

malloc_mib: int = 400  # MiB to allocate (C07 used 400)
malloc_allocators: list[str] = ["malloc", "mmap"]  # allocators to compare
malloc_points: int = 41  # readings taken while touching
data_dir: Optional[str] = None  # None: your runs/ (git-ignored; $THREADCOST_DATA_DIR), then the committed data/
figures_dir: Optional[str] = None  # None: build/figures/ ($THREADCOST_FIGURES_DIR); relative: inside build/
save: bool = True  # store what this notebook makes: runs under runs/<machine>/<run>/, figures under build/figures/
measure: bool = True  # False: measure nothing, draw from the stored runs of machine_id
machine_id: Optional[str] = None  # with measure False: the machine folder to draw (runs/, else data/), None: this one
interactive: bool = False  # True: live ipywidgets; False: static Vega-Lite charts (paper, papermill), live in `make lab`

# %%
from IPython.display import Markdown, display

from threadcost import findings
from threadcost.experiments import parameters
from threadcost.experiments.malloc_touch import run as malloc_touch
from threadcost.notebook import plotting, stored
from threadcost.views import machine_line
from threadcost.views import malloc_touch as view

parameters.check("01_malloc_touch", globals())  # a bad value names its parameter

plotting.use_paper_theme()
store = stored.Store(measure, save, data_dir, machine_id)
fp = store.fingerprint
display(Markdown(f"**Machine:** {machine_line.markdown(fp)}"))

# %% [markdown]
# ## Measure
#
# One run per allocator. `malloc` of a large block is served by `mmap` inside glibc
# (anything above the mmap threshold), so both should look alike; `mmap` is the
# direct system call, shown as a control.

# %%
results = {
    allocator: store.get(f"malloc_touch_{allocator}",
                         lambda a=allocator: malloc_touch.run(mib=malloc_mib, allocator=a,
                                                              points=malloc_points),
                         experiment="malloc_touch", match={"allocator": allocator})
    for allocator in malloc_allocators
}

# %% [markdown]
# ## VSZ jumps at allocation, RSS follows the touch
#
# The x axis is how much of the buffer has been written so far; the y axis is the
# growth of each counter since before the allocation, in MiB. The dashed diagonal is
# "one resident MiB per MiB touched".

# %%
first = results[malloc_allocators[0]]
fig = view.curve_figure(first)
saved = plotting.save_figure(fig, "malloc_touch_curve", figures_dir)

# %%
for allocator, result in results.items():
    display(Markdown(f"**{allocator}**: readings of `/proc/self/status`"))
    display(view.stages_table(result))

# %%
def show(name):
    """A finding of the run the figure draws (this notebook's first allocator), by name."""
    return findings.show(f"malloc_touch_{malloc_allocators[0]}_{name}", data_dir,
                         store.machine_id, results=[first])


size = findings.parameter("malloc_mib", f"{first.params['mib']:,} MiB")  # the run's size
display(Markdown(
    f"Allocating {size} "
    f"with `{malloc_allocators[0]}` grew the virtual size by **{show('vsz_after_alloc_mib')}** "
    f"and the resident set by **{show('rss_after_alloc_kib')}**. Touching every page then grew "
    f"RSS to **{show('rss_after_touch_mib')}** above the baseline, at "
    f"{show('touch_rate_mib_per_s')} (that rate includes one page fault per page). Freeing brought RSS back to {show('rss_after_free_mib')} and VSZ to "
    f"{show('vsz_after_free_mib')} of the baseline (the run the figure draws)."
))

# %% [markdown]
# ## Claim C07 beside this machine
#
# C07's numbers are absolute sizes of a small C program; ours are changes inside a
# Python process that already holds numpy and pandas. To compare like with like the
# table divides each change by the size allocated or touched: a ratio of 1.0 means
# "all of it". The published values are C07's numbers as S0 printed them (its source
# is listed with every claim on the claims page).

# %%
display(view.c07_comparison(first))

# %% [markdown]
# ## Explore
#
# Change the size, the allocator or the share of pages touched; the curve redraws.
# In JupyterLab the kernel reruns at any value you pick; in the
# rendered paper the chart moves between the points of a small grid that this run
# measured (`make lab` re-measures at any value).

# %%
if parameters.interactive(interactive):
    display(view.explorer(default_mib=min(malloc_mib, 256)))
else:
    from threadcost.experiments.malloc_touch import grid as explorer_grid
    from threadcost.views import charts, malloc_touch_chart

    grid = store.get("malloc_touch_grid",
                     lambda: explorer_grid.malloc_touch_grid(allocators=malloc_allocators))
    charts.show(malloc_touch_chart.chart(grid))

# %% [markdown]
# ## What this means for threads
#
# A thread's stack is exactly such a mapping: reserved in full when the thread
# starts (8 MiB by default, the `ulimit -s` value), resident only as deep as the
# thread has ever written. That is why "a thread costs 8 MiB" (VSZ) and "a thread
# costs 8 KiB" (RSS) can both be printed by honest tools. Notebook 2 measures both,
# plus the kernel memory that neither counter shows.
