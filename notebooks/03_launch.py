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
# # 3. Launch: how long does it take to start a thread, and a process?
#
# A thread is "cheap to start" and a process "expensive": by how much, on this machine?
# This notebook starts short-lived threads and processes thousands of times and keeps
# **every** launch as a sample, so we see distributions, not one average.
#
# For each launch a C kernel (`native/launch.c`) reads `CLOCK_MONOTONIC` (through the
# vDSO) just before the create call (t0) and reports, in nanoseconds after t0:
#
# | time | what it covers |
# |---|---|
# | **create** | until the create call returns in the parent (`pthread_create`, `fork`, ...) |
# | **first run** | until the child's first instruction: the child reads the clock itself |
# | **join** | from the create's return until `pthread_join` / `waitpid` returns |
# | **lifecycle** | create + join: the whole life of a child that does nothing |
#
# Kinds: **thread** (`pthread_create` + `pthread_join`), **fork** (child `_exit(0)`,
# parent `waitpid`), **vfork**, **clone** with `CLONE_VM|CLONE_VFORK` (the two share
# the parent's memory and suspend it until the child exits, so their *create* already
# includes the child's whole run), and **posix_spawn** of a tiny static program that
# reads the clock and exits (glibc's posix_spawn itself uses `CLONE_VM|CLONE_VFORK`,
# then `execve`). The parent holds some memory with every page written, since a
# `fork` has to copy the page tables of all of it.
#
# Launches are timed from `launch_driver`, a small static C process (a few hundred KiB
# resident), not from this Jupyter kernel: a fork from a Python process copies the
# page tables of the interpreter and its libraries, and forking a big multi-threaded
# process is risky. Each measurement runs in its own child process with a deadline.
#
# Published claims checked here: **C09** (S0-code: thread launch about 5 to 5.5 µs,
# fork launch 22 to 67 µs growing with the parent's memory, a 64 KiB memcpy about 3 µs)
# and the time side of **C10**/**C11** (S1: a million threads started in 38.55 s wall;
# a million goroutines in 2.44 s), scaled down to bursts this machine can hold.

# %% tags=["parameters"]
# Parameters (papermill: -p NAME VALUE, a list as YAML: -p NAME '[1, 2]', or -f params/<set>.yaml)
from typing import Optional  # papermill reads these annotations, not "X | None"

launch_kinds: list[str] = ["thread", "fork", "vfork", "posix_spawn", "clone"]  # what to launch
launch_iterations: int = 600  # timed launches per kind and parent memory size
launch_warmup: int = 20  # launches before timing, kept apart as "first launches"
launch_stack_kib: int = 0  # thread stack size in KiB, 0 for the default (ulimit -s)
launch_pin: Optional[str] = "auto"  # CPUs to pin the measuring process to, "auto": the first usable, None: not pinned
launch_parent_touch_mib: list[int] = [0, 2, 4, 8, 64]  # MiB the parent holds, all pages written
launch_burst_sizes: list[int] = [100, 250, 500, 1000, 2000]  # threads alive at once (at most 10,000)
launch_burst_repeats: int = 3  # bursts per size (the first one needs fresh stacks)
launch_memcpy_kib: int = 64  # memcpy yardstick size (C09: 64 KiB), 0 skips it
launch_python_parent_iterations: int = 200  # forks from a Python process, for contrast, 0 skips it
launch_growth_repeats: int = 5  # C09: repeats of thread and fork at each parent size, alternating
launch_growth_iterations: int = 300  # launches per series in those repeats
launch_growth_parent_touch_mib: list[int] = [0, 2, 4, 8]  # C09: the parent's touched memory in those repeats (S0-code's 0, 2, 4, 8 MB)
data_dir: Optional[str] = None  # None: your runs/ (git-ignored; $THREADCOST_DATA_DIR), then the committed data/
figures_dir: Optional[str] = None  # None: build/figures/ ($THREADCOST_FIGURES_DIR); relative: inside build/
save: bool = True  # store what this notebook makes: runs under runs/<machine>/<run>/, figures under build/figures/
measure: bool = True  # False: measure nothing, draw from the stored runs of machine_id
machine_id: Optional[str] = None  # with measure False: the machine folder to draw (runs/, else data/), None: this one
interactive: bool = False  # True: live ipywidgets; False: static Vega-Lite charts (paper, papermill), live in `make lab`

# %%
from IPython.display import Markdown, display

from threadcost import claims, findings
from threadcost.experiments import parameters
from threadcost.experiments.launch import run as launch
from threadcost.notebook import plotting, stored
from threadcost.views import claims as claims_view
from threadcost.views import launch as view
from threadcost.views import machine_line

parameters.check("03_launch", globals())  # a bad value names its parameter

plotting.use_paper_theme()
store = stored.Store(measure, save, data_dir, machine_id)
fp = store.fingerprint
display(Markdown(f"**Machine:** {machine_line.markdown(fp)}"))

# %% [markdown]
# ## Measure
#
# One series per kind and parent memory size, a plain create+join loop as a baseline,
# the bursts and the memcpy yardstick.

# %%
result = store.get("launch", lambda: launch.run(
    kinds=launch_kinds, iterations=launch_iterations, warmup=launch_warmup,
    stack_kib=launch_stack_kib, pin=launch_pin, parent_touch_mib=launch_parent_touch_mib,
    burst_sizes=launch_burst_sizes, burst_repeats=launch_burst_repeats,
    memcpy_kib=launch_memcpy_kib, progress=True))
if result.limit_hit:
    display(Markdown(f"**A system limit stopped the run:** {result.limit_hit}. "
                     "What follows is the partial result."))

# %% [markdown]
# ## Is the clock fast enough, and do we agree with the obvious loop?
#
# Each launch reads the clock a few times. The clock's own cost per read, measured in
# this run, should be a small share of a launch. And the means should match a plain
# `pthread_create` + `pthread_join` loop written the obvious way (default attributes,
# timed as a whole, no per-launch bookkeeping), measured in the same run.

# %%
display(Markdown(view.checks_text(result)))

# %% [markdown]
# ## Threads against processes
#
# Each curve is an ECDF: for a time on the x axis (log scale), the share of launches
# that took at most that long. One sample per launch, the parent holding no extra
# memory. Further right is slower; a long flat tail means rare slow launches
# (preemption, interrupts, other programs on the machine).

# %%
fig = view.distributions_figure(result, metric="lifecycle_ns")
plotting.save_figure(fig, "launch_distributions", figures_dir)

# %%
fig = view.distributions_figure(result, metric="create_ns")
plotting.save_figure(fig, "launch_create_distributions", figures_dir)

# %%
mib0 = min(result.params["parent_touch_mib"])
for metric in launch.METRICS:
    held = findings.parameter("launch_parent_touch_mib", f"{mib0} MiB")
    display(Markdown(f"**{view.METRIC_LABELS[metric]}** (µs per launch, parent holding "
                     f"{held})"))
    table = view.distribution_table(result, metric)
    display(table[table.index.get_level_values("parent_touch_mib") == mib0])

# %%
display(Markdown(view.kinds_text(result)))

# %% [markdown]
# ## First launches and glibc's stack cache
#
# glibc keeps the stacks of joined threads in a cache (up to 40 MiB by default) and
# hands them to the next `pthread_create`, so only the first launch of a process pays
# for a fresh `mmap` of a stack and its guard page. The warm-up launches are kept:
# the table shows the very first launch of each series, the other warm-up launches and
# the steady state.

# %%
display(view.phases_table(result))
display(Markdown(view.first_launch_text(result)))

# %% [markdown]
# ## Launch time against the parent's memory
#
# A `fork` copies the parent's page tables (one entry per 4 KiB page here: the kernel
# allocates the parent's memory with transparent huge pages switched off for it), and
# its exit tears the copy down. A thread shares them, and vfork, clone(CLONE_VM) and
# posix_spawn borrow them. Points are medians of the create time; bars reach the 90th
# percentile; the x axis is the memory the parent held, every page written.

# %%
fig = view.memory_figure(result, metric="create_ns")
plotting.save_figure(fig, "launch_vs_parent_memory", figures_dir)
display(view.memory_fit_table(result).round(3))
display(Markdown(view.memory_text(result)))

# %% [markdown]
# ### Why the parent must be small
#
# The same fork, from a Python process (one of this notebook's measuring children,
# with numpy and pandas loaded) instead of the small C driver. Stored apart, as a run
# of its own that no claim reads; shown to explain why every other number here comes
# from the small parent.

# %%
if launch_python_parent_iterations:
    py = store.get("launch_python_parent", lambda: launch.run(
        kinds="fork", iterations=launch_python_parent_iterations,
        warmup=min(launch_warmup, launch_python_parent_iterations),
        pin=launch_pin, parent_touch_mib=0, memcpy_kib=0, baseline=False,
        parent="python"), experiment="launch_python_parent", announce=False)
    display(Markdown(view.python_parent_text(result, py)))

# %% [markdown]
# ## Many threads alive at once: the burst
#
# C10 started a million threads that all slept for a second. A scaled-down version:
# start N threads that each block until all N exist (so all are alive at once), timing
# every `pthread_create`, then release them and join them all. The first burst of a
# process needs a fresh stack per thread; later bursts may find some in glibc's cache.
# Left: the time to create all N, and the whole burst, against N, with a least-squares
# line (its slope is the cost per thread). Right: the mean time per create.

# %%
if "burst" in result.tables:
    fig = view.burst_figure(result)
    plotting.save_figure(fig, "launch_burst", figures_dir)
    display(view.burst_table(result))
    display(Markdown(view.burst_text(result)))

# %% [markdown]
# ## Claim C09 beside this machine
#
# S0-code timed the create call alone (`pthread_create` or `fork` returning in the
# parent; the join was timed apart) and averaged 10,000 unpinned launches; its "MB" is
# 10^6 bytes, ours MiB. This table shows S0-code's statistic, the **mean create time**,
# over this run's one series of launches pinned to one CPU, with the 95% interval of that
# mean (not the spread of the launches: a mean of a heavy-tailed sample can lie outside
# their 5th to 95th percentile). It is context, not C09's verdict: one series is one
# repeat, and a timing verdict rests on at least five. The verdicts further down read the
# launch growth run instead (five or more repeats, each a fresh process pinned to one
# CPU), which stores each repeat's **median** create time, not its mean: a labelled
# substitute for S0-code's mean of unpinned launches, so its ratios to the published
# values differ from this table's. The published values are S0-code's, as the claims
# page lists them with their source. C09's 64 KiB memcpy is not in this table:
# notebook 4's yardsticks measure it, in cache and in no cache, and judge it there.

# %%
display(view.c09_table(result))
fig = view.c09_figure(result)
plotting.save_figure(fig, "launch_c09", figures_dir)

# %% [markdown]
# C09's numbers (fork launch at 0, 2, 4 and 8 MB touched in the parent) and its two
# statements (thread launch does not grow with the parent's memory; fork launch does, as
# ratios against none touched) are judged on independent repeats: each repeat runs thread
# and fork series at every size, every series in a fresh launch process, the order of the
# sizes flipping every repeat. The table gives, per kind, the median over the repeats of
# each series' median create time. C09's third number, a 64 KiB memcpy in about 3 µs, is one
# of the yardsticks notebook 4 measures: it is judged there, and in notebook 6.

# %%
growth = store.get("launch_growth", lambda: launch.growth_repeats(
    ["thread", "fork"], launch_growth_parent_touch_mib, launch_growth_repeats,
    launch_growth_iterations, launch_warmup, launch_pin))
display(view.growth_table(growth))
display(claims_view.claims_section(claims.for_page("03_launch"), data_dir, stored.present(growth),
                                   machine_id=store.machine_id, without=("64 KiB memcpy",)))

# %% [markdown]
# ## C10 and C11: a million launches, scaled
#
# S1's million Rust threads (C10) and million goroutines (C11) beside this machine's
# one million threads, computed (not measured): notebook 2 starts the largest count
# of 2 MiB-stack threads sleeping one second that this machine's limits allow, and
# scales it linearly to a million, the number C10 is judged on. A linear scale-up is
# an assumption: S1 needed raised kernel limits; goroutines are measured for real in
# notebook 5.

# %%
display(view.c10_table(result, data_dir))

# %% [markdown]
# ## Explore
#
# Pick kinds, the parent's memory, which time to show and the plot type; the figure
# redraws from the samples measured above, in JupyterLab and in the rendered paper
# alike (nothing is re-measured).

# %%
if parameters.interactive(interactive):
    display(view.explorer(result))
else:
    from threadcost.views import charts, launch_chart

    charts.show(launch_chart.chart(result))

# %% [markdown]
# ## What this means

# %%
display(Markdown(view.conclusion_text(result, data_dir)))
