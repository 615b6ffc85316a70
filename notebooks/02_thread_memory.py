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
# # 2. What does a thread cost in memory?
#
# "A thread costs 8 MiB" and "a thread costs 8 KiB" are both printed by honest
# tools: the first is the **virtual** size a thread's stack reserves, the second
# the **resident** pages it has actually written (notebook 1). Neither counts the
# memory the kernel spends on the thread: its kernel stack, the page tables that
# map its user stack, and the kernel objects that describe it (`task_struct` and
# friends, in the slab allocator). This notebook measures all three, on this
# machine.
#
# **Method.** A C kernel (`native/thread_memory.c`) starts *N* threads. Each
# optionally writes part of its own stack, checks in, and sleeps on a futex (no
# busy waiting). When all of them sleep, the kernel reads this process's counters
# from `/proc/self/status` (VmSize, VmRSS, VmPTE) and the system-wide counters from
# `/proc/meminfo` (KernelStack, PageTables, SUnreclaim), and
# `/proc/self/smaps_rollup`, an independent count of resident pages made by walking
# the page tables; where this run asks for it (the default), `pmap -x` also reads the
# same process from outside, in the first run of each count (its readings bracket a little
# more than the threads, so compare its slope, not single differences). Then every thread is released and joined. Every measurement runs
# in a **fresh child process**: its baseline is clean (glibc caches the stacks of
# joined threads, so a second run in the same process would reuse them), and a
# system limit cannot hurt this notebook's kernel; and because a forked child
# inherits its parent's cached thread stacks, a few idle threads first take every
# cached stack that would fit, before the first reading. The cost of one thread is the
# **slope** of each counter against *N*, fitted over all runs, with R² and a 95%
# confidence interval. The system-wide counters also move with everything else the
# machine does, which is why we repeat and regress rather than trust one
# difference.
#
# Published claims checked here: **C05** and **C06** (S0: 10,000 idle threads; 10,000
# threads using 400 KiB of stack), **C08** (S0: about 32K threads per process),
# **C10** (S1: a million Rust threads), **C12** (S2: the 100..1000-thread slope) and
# **C16** (S4: page tables of 10,000 threads; judged in notebook 5 on S4's own Rust
# threads, these C threads standing in where no such run holds them).

# %% tags=["parameters"]
# Parameters (papermill: -p NAME VALUE, a list as YAML: -p NAME '[1, 2]', or -f params/<set>.yaml)
from typing import Optional, Union  # papermill reads these annotations, not "X | None"

memory_thread_counts: list[int] = [100, 150, 200, 250, 300, 350, 400, 450, 500, 550, 600, 650, 700, 750, 800, 850, 900, 950, 1000, 2000, 5000, 10000]  # N for each sweep point: C12's 100..1000 step 50, then up to C05's 10,000
memory_stack_kib_requested: int = 0  # stack per thread asked for in the sweep (KiB), 0: the system default (RLIMIT_STACK); the size used is stored per run (stack_bytes)
memory_touch_kib: int = 0  # KiB of its own stack each thread writes in the sweep (0: idle)
memory_pin: Union[list[int], str, None] = None  # CPUs to pin threads to round-robin, e.g. [0] or "0,1", None: no
memory_repeats: int = 3  # runs per sweep point, each in a fresh process
memory_pmap: bool = True  # also read the RSS of each sweep count's first run from outside with pmap -x
memory_grid_threads: int = 1000  # N for the stack-size and touch-depth grids
memory_stack_sizes_kib: list[int] = [16, 64, 256, 1024, 2048, 8192, 0]  # stack grid (KiB, 0 for the default)
memory_touch_depths_kib: list[int] = [0, 16, 64, 128, 256, 400]  # touch grid (KiB written per thread)
memory_grid_repeats: int = 2  # runs per grid point
memory_spawn_until_failure: bool = False  # opt-in: start threads until a limit stops them (uses up process ids of the whole machine while it runs)
memory_spawn_max: int = 40000  # bound for that run (at most 100,000)
memory_c10_cap: int = 8000  # most threads the C10 run may start (never near pid_max)
memory_c10_sleep_ms: int = 1000  # how long each C10 thread sleeps (S1: 1 s)
memory_process_counts: list[int] = [50, 100, 150, 200, 250, 300]  # idle forked children per run
memory_process_touch_kib: int = 0  # KiB of fresh memory each child writes before sleeping
memory_process_repeats: int = 2  # runs per count, counts interleaved
data_dir: Optional[str] = None  # None: your runs/ (git-ignored; $THREADCOST_DATA_DIR), then the committed data/
figures_dir: Optional[str] = None  # None: build/figures/ ($THREADCOST_FIGURES_DIR); relative: inside build/
save: bool = True  # store what this notebook makes: runs under runs/<machine>/<run>/, figures under build/figures/
measure: bool = True  # False: measure nothing, draw from the stored runs of machine_id
machine_id: Optional[str] = None  # with measure False: the machine folder to draw (runs/, else data/), None: this one
interactive: bool = False  # True: live ipywidgets; False: static Vega-Lite charts (paper, papermill), live in `make lab`

# %%
from IPython.display import Markdown, display

from threadcost import claims
from threadcost.experiments import parameters
from threadcost.experiments.thread_memory import limits, process_memory
from threadcost.experiments.thread_memory import run as thread_memory
from threadcost.experiments.user_space_tasks import million
from threadcost.notebook import plotting, stored
from threadcost.views import claims as claims_view
from threadcost.views import machine_line
from threadcost.views import million as million_view
from threadcost.views import process_memory as process_view
from threadcost.views import thread_memory as view

parameters.check("02_thread_memory", globals())  # a bad value names its parameter

plotting.use_paper_theme()
store = stored.Store(measure, save, data_dir, machine_id)
fp = store.fingerprint
display(Markdown(f"**Machine:** {machine_line.markdown(fp)}"))

# %% [markdown]
# ## Sweep: memory against the number of threads
#
# Each dot is one run: the growth of a counter from before the first thread started
# to the moment all threads sleep. The line is the least-squares fit; its slope is
# the cost **per thread**. Virtual size is in GiB, resident set in MiB.

# %%
sweep = store.get("thread_memory", lambda: thread_memory.run(
    thread_counts=memory_thread_counts, stack_kib=memory_stack_kib_requested,
    touch_kib=memory_touch_kib, pin=memory_pin, repeats=memory_repeats, pmap=memory_pmap,
    progress=True))
view.keep(sweep, False)
fig = view.vs_threads_figure(sweep)
plotting.save_figure(fig, "thread_memory_vs_threads", figures_dir);

# %%
display(Markdown(view.sweep_text(sweep)))
display(view.per_thread_table(sweep).round(4))

# %% [markdown]
# ## What RSS hides
#
# What each counter covers, per thread:
#
# - **user stack pages** (VmRSS): the pages of its stack the thread has written;
#   even an idle thread writes a couple (its first frames, and the glibc thread
#   descriptor and TLS that live at the top of the stack). With many thousands of
#   threads the slope can creep a little above that: glibc also keeps a small
#   per-thread table on the heap, which stays invisible while it fits in heap
#   pages that were already resident;
# - **kernel stack** (KernelStack): every thread has its own stack inside the
#   kernel, 16 KiB on x86-64, never counted in any process's RSS;
# - **page tables** (VmPTE): the stack mapping needs its own page-table page once
#   touched (4 KiB maps 2 MiB), again outside RSS;
# - **kernel objects** (SUnreclaim): the pages of the kernel's unreclaimable slab
#   caches, where a thread's `task_struct`, its pid and the bookkeeping of its stack
#   mapping live (the threads of one process share one signal table, file table and
#   address space, counted once). Reclaimable slab (SReclaimable: dentries, inodes) is
#   not counted.
#
# The kernel stack and slab counters are system-wide: anything else the machine did
# during a run moves them too, which shows as a lower R² and a wider interval. The
# published bars are S2's (C12) and S4's page-table figure (C16). S2's 11 KiB of
# kernel memory is slab alone, read with `slabtop` (the objects in use in every slab
# cache, reclaimable ones included, by object size): it holds no kernel stack and no
# page tables, so it is drawn as slab, hatched, and C12 judges it against this
# machine's slab line alone, as a substitute (SUnreclaim counts the unreclaimable
# caches' pages, not slabtop's objects).

# %%
fig = view.breakdown_figure(sweep)
plotting.save_figure(fig, "thread_memory_breakdown", figures_dir);

# %% [markdown]
# ## An idle thread beside an idle process
#
# The same question for processes: a fresh measuring process forks *N* children that
# only sleep (`native/process_memory.c`), for several *N*, each run in a process of
# its own. With all of them asleep we read each child's `/proc/<pid>/smaps_rollup`
# (USS = Private_Clean + Private_Dirty: the pages only that child holds; PSS) and its
# VmPTE, and the system's kernel stack and slab counters (read before the children's
# files, since reading them allocates kernel memory of its own). Per idle process is
# the slope over *N*, with its 95% interval, exactly as per thread above. A thread's
# user pages are its stack pages (RSS growth of its process); a process's are its
# USS.

# %%
procs = store.get("process_memory", lambda: process_memory.run(
    counts=memory_process_counts, touch_kib=memory_process_touch_kib,
    repeats=memory_process_repeats))
view.keep(procs, False)
fig = process_view.side_by_side_figure(sweep, procs)
plotting.save_figure(fig, "thread_vs_process_memory", figures_dir);

# %%
display(Markdown(process_view.process_text(procs)))
display(process_view.side_by_side_table(sweep, procs).style.format(precision=1, na_rep="-"))

# %% [markdown]
# ## Stack size moves virtual memory, not resident memory
#
# The same measurement for several stack sizes (`pthread_attr_setstacksize`, and the
# default). Values are per thread (the growth divided by *N*, median of runs). The
# kernel's share is shown with its spread over the runs: it includes unreclaimable slab,
# counted for the whole system, which moves by several KiB from one run to the next, so
# two rows whose ranges overlap do not differ.

# %%
stacks = store.get("thread_memory_stack", lambda: thread_memory.stack_grid(
    stack_sizes_kib=memory_stack_sizes_kib, threads=memory_grid_threads, pin=memory_pin,
    repeats=memory_grid_repeats, progress=True))
view.keep(stacks, False)
fig = view.stack_figure(stacks)
plotting.save_figure(fig, "thread_memory_stack", figures_dir);
display(view.stack_table(stacks))

# %% [markdown]
# ## Touching the stack: RSS follows the depth written
#
# Now every thread writes part of its own stack (one byte per page, top down, as a
# deep call chain would) before it sleeps. C06 reported that 10,000 threads using
# 400 KiB each showed about 2.6 GiB of RSS instead of the 4 GiB one would expect.
# S0's footnote puts that down to the kernel only approximating RSS. A likely
# mechanism: kernels of that era batched each thread's RSS counter updates and
# folded them into the process total only now and then, so threads that touch pages
# and then sleep can leave updates unreported. Reading the same pages by page walk
# (smaps_rollup) tells whether this kernel's VmRSS undercounts.

# %%
touch = store.get("thread_memory_touch", lambda: thread_memory.touch_grid(
    touch_depths_kib=memory_touch_depths_kib, threads=memory_grid_threads, pin=memory_pin,
    repeats=memory_grid_repeats, progress=True))
view.keep(touch, False)
fig = view.touch_figure(touch)
plotting.save_figure(fig, "thread_memory_touch", figures_dir);
display(Markdown(view.touch_text(touch)))

# %% [markdown]
# ## Beside the other machines: a page more or fewer per idle thread
#
# Machines can differ by a whole page of user memory per idle thread. The two grids
# above say where such a page lies without measuring anything more: a page that stops
# differing once the threads write some depth of their stacks is on the thread's own
# stack, within that depth; one that differs at every depth lies above the first frame
# (the thread descriptor and static thread-local storage) or off the stack. Compared
# with every other machine folder whose grids are stored:

# %%
display(Markdown(view.page_gap_text(touch, stacks, fp, store.machine_id, store.data_dir)
                 or "No other machine folder with both grids is stored here to compare."))

# %% [markdown]
# ## Limits: how many threads could one process start here?
#
# C08 found about 32K threads per process, "a kernel limit, not memory". Several
# limits cap the count; the table gives each one's value and how many more threads
# a fresh process could start before it bites, for the default stack and this
# machine's measured per-thread memory cost. `RLIMIT_NPROC` is not enforced for
# root. S1 needed `vm.max_map_count` and `kernel.threads-max` raised for a million
# threads (C10); the second table shows what a million would need here (and
# `kernel.pid_max` too: every thread takes a process id).

# %%
caps = store.get("thread_limits", lambda: limits.run(
    stack_kib=memory_stack_kib_requested, touch_kib=memory_touch_kib,
    per_thread_kib=sweep.summary["per_thread"].get("total_kib")))
view.keep(caps, False)
display(view.limits_frame(caps))
display(Markdown(view.limits_text(caps, data_dir, saved=save)))
display(caps.tables["advice"])

# %%
spawned = (store.get("thread_spawn", lambda: limits.spawn_until_failure(
    max_threads=memory_spawn_max, stack_kib=memory_stack_kib_requested, exhaust=True))
    if memory_spawn_until_failure else None)
view.keep(spawned, False)
display(Markdown(view.spawn_text(spawned)))

# %% [markdown]
# ## C10 at the largest thread count this machine allows
#
# S1 started one million Rust threads (2 MiB stacks) that each sleep one second. Here
# the same program runs at the largest count that stays clear of this machine's
# limits (`kernel.pid_max` is shared with everything else running, so a reserve is
# kept) and of the cap on threads set for this run (8,000 by default), measured over
# the whole create, sleep and join. Figures for one million are computed from it by scaling and are
# labelled so; they are not measurements.

# %%
c10 = store.get("threads_ceiling", lambda: million.threads(
    cap=memory_c10_cap, stack_kib=2048, sleep_ms=memory_c10_sleep_ms))
view.keep(c10, False)
display(Markdown(million_view.threads_text(c10)))
display(million_view.scaled_table(c10))

# %% [markdown]
# ## The published claims beside this machine
#
# The claims this notebook measures, judged by the claims layer (`threadcost/claims/`,
# notebook 6 has every claim): each statement with the value measured by the runs
# above, its 95% interval, what the claim's words allow and the verdict. The figure
# divides each value and its band by the published value.

# %%
memory_claims = claims.for_page("02_thread_memory")  # C10, C16: page 5 (S1, S4 ran Rust threads)
runs = stored.present(sweep, stacks, touch, caps, spawned)
verdicts = claims.judge(store.machine_id, data_dir, runs)
display(claims_view.style(claims_view.assertions_table(verdicts, memory_claims)
                          .drop(columns=["read from"])))
fig = claims_view.figure(verdicts, memory_claims)
plotting.save_figure(fig, "thread_memory_claims", figures_dir);

# %% [markdown]
# ## Explore
#
# Pick a thread count, a stack size and a touch depth: the kernel measures four
# thread counts up to the one chosen (one fresh process each) and redraws the
# virtual-vs-resident curves (virtual on a log axis) and the per-thread cost.
# In JupyterLab each press of **Run** measures at the values chosen (up to 10,000
# threads). In the rendered paper the chart moves between the points of a small grid
# that this run measured: four thread counts for each stack size and touch depth
# (`make lab` re-measures at any value). A second chart switches between the stack-size
# and touch-depth grids measured above.

# %%
if parameters.interactive(interactive):
    display(view.explorer(threads=min(memory_grid_threads, 2000)))
else:
    from threadcost.experiments.thread_memory import grid as explorer_grid
    from threadcost.views import charts, thread_memory_chart

    grid = store.get("thread_memory_grid", lambda: explorer_grid.thread_memory_grid(
        threads=min(memory_grid_threads, 2000)))
    charts.show(thread_memory_chart.chart(grid))
    charts.show(thread_memory_chart.grids_chart(stacks, touch))

# %% [markdown]
# ## What this means
#
# A thread's virtual size is what its stack reserves: cheap on 64-bit Linux until a
# limit counts it (RLIMIT_AS, strict overcommit, or the mappings counted by
# `vm.max_map_count`). Its resident cost is what it writes to its stack, plus a
# kernel cost RSS never shows, which for an idle thread is larger than the RSS
# itself. Notebook 5 sets these numbers against user-space tasks.
