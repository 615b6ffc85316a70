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
# # 7. Switches driven by I/O readiness: a bucket brigade
#
# Notebooks 4 and 5 timed switches as a **ping-pong** between two tasks, where
# user-space tasks (fibers, goroutines) win by one to two orders of magnitude. That
# never tests the thesis of S1: that goroutines win not on size but on how their
# scheduler is built into **non-blocking I/O**. Real servers switch tasks because a
# socket or a pipe became readable, not because a task yields.
#
# So here N tasks are joined by N+1 pipes, a **bucket brigade** (after the
# measurement of S5, `jimblandy/context-switch`, which chained 500 tasks with Unix
# socket pairs; `brigade_transport: socketpair` runs this brigade on those, and S5's
# own runtimes below run on both): a byte
# enters pipe 0, task *i* reads pipe *i* and writes pipe *i+1*, and the driver reads
# pipe N. **One trip is N+1 hops**; a hop is one pipe `read` and one `write`, plus
# whatever it takes to get the reading task running. The kinds of task:
#
# - **threads**: N kernel threads, each blocking in `read()`; the kernel wakes the
#   next one at every hop (a thread switch driven by the pipe);
# - **epoll loop**: one thread, the pipes non-blocking, an `epoll_wait` loop that
#   runs the small state machine of whichever task's pipe became readable (the
#   event-driven design S1 contrasts with threads);
# - **goroutines**: N goroutines on `os.Pipe` ends; a goroutine whose read finds the
#   pipe empty parks, and the Go runtime's poller (epoll underneath) makes it
#   runnable when the byte arrives. Run only when Go is installed;
# - **one thread, no switch**: one thread does every read and write in order. This
#   is the cost of the pipe I/O alone, the **baseline**: a kind's *net* cost per hop
#   is its p50 minus this baseline's p50 at the same N and placement.
#
# **Placement**: `same-cpu` pins every thread of the brigade (and the whole Go
# process, so `GOMAXPROCS` is 1) to one CPU; `unpinned` leaves placement to the
# scheduler. Every run is a fresh process with a watchdog and a deadline; repeats
# are interleaved (each repeat runs every size and kind, the kinds in a rotated
# order). Time per hop = (trip time - one clock read) / (N+1).
#
# Published claims this notebook feeds: **C18-C22** (S5: about 1.7 µs per thread
# switch and 0.2 µs per async task switch, converging to about 1.7 µs when driven
# by I/O readiness; no async advantage once the threads are pinned to one core;
# about 9.5 KiB user + 10 KiB kernel per thread vs about 0.4 KiB per async task)
# and **C23** (S1's thesis, qualitative).

# %% tags=["parameters"]
# Parameters (papermill: -p NAME VALUE, a list as YAML: -p NAME '[1, 2]', or -f params/<set>.yaml)
from typing import Optional, Union  # papermill reads these annotations, not "X | None"

brigade_tasks: list[int] = [2, 10, 100, 500, 1000]  # brigade sizes N (S5 used 500; a task needs 2 fds)
brigade_kinds: list[str] = ["thread", "epoll", "one-thread", "goroutine"]  # kinds to run
brigade_placements: list[str] = ["same-cpu", "unpinned"]  # placements to run
brigade_iterations: int = 60  # timed trips per run
brigade_warmup: int = 15  # untimed trips before timing
brigade_repeats: int = 5  # independent runs per condition, interleaved
brigade_cpu: Union[int, str] = "auto"  # CPU of same-cpu runs ("auto": the first usable)
brigade_stack_kib: int = 256  # stack of each task thread, KiB (0: system default)
brigade_reference_rounds: int = 5  # alternating rounds against the C reference (0: skip)
brigade_reference_iterations: int = 200  # trips per reference round (100 tasks)
brigade_transport: str = "pipe"  # what joins the C brigade's tasks (S5: socketpair)
brigade_peer_kinds: list[str] = ["rust-thread", "tokio-task-mt", "one-thread"]  # S5's own runtimes (Rust peer)
brigade_peer_tasks: list[int] = [500]  # their brigade sizes (S5: 500)
brigade_peer_transports: list[str] = ["socketpair"]  # what joins the peer's tasks (S5: socketpair; pipe: a variant)
brigade_peer_iterations: int = 100  # timed trips per peer run (S5: 10,000)
brigade_peer_warmup: int = 30  # untimed trips first (S5: 100)
brigade_peer_stack_kib: int = 1024  # Rust thread stacks, KiB (S5: 1024; 0: Rust's 2 MiB)
data_dir: Optional[str] = None  # None: your runs/ (git-ignored; $THREADCOST_DATA_DIR), then the committed data/
figures_dir: Optional[str] = None  # None: build/figures/ ($THREADCOST_FIGURES_DIR); relative: inside build/
save: bool = True  # store what this notebook makes: runs under runs/<machine>/<run>/, figures under build/figures/
measure: bool = True  # False: measure nothing, draw from the stored runs of machine_id
machine_id: Optional[str] = None  # with measure False: the machine folder to draw (runs/, else data/), None: this one

# %%
from IPython.display import Markdown, display

from threadcost import claims
from threadcost.experiments import parameters
from threadcost.experiments.brigade import run as brigade
from threadcost.notebook import plotting, stored
from threadcost.views import brigade as view
from threadcost.views import claims as claims_view
from threadcost.views import machine_line

parameters.check("07_io_brigade", globals())  # a bad value names its parameter

plotting.use_paper_theme()
store = stored.Store(measure, save, data_dir, machine_id)
fp = store.fingerprint
display(Markdown(f"**Machine:** {machine_line.markdown(fp)}"))

# %% [markdown]
# ## The brigade on this machine
#
# Every kind at every size and placement. The figure shows the median time per hop
# (bars from the fastest trip to the 99th percentile); the dashed grey line is the
# baseline, one thread doing the same reads and writes with no switch at all.

# %%
result = store.get("brigade", lambda: brigade.run(
    tasks=brigade_tasks, kinds=brigade_kinds, placement=brigade_placements,
    iterations=brigade_iterations, warmup=brigade_warmup, repeats=brigade_repeats,
    cpu=brigade_cpu, stack_kib=brigade_stack_kib, transport=brigade_transport))
fig = view.per_hop_figure(result)
saved = plotting.save_figure(fig, "brigade_per_hop", figures_dir)

# %% [markdown]
# ## The answer, from these numbers
#
# Do user-space tasks keep their advantage when switches are driven by I/O
# readiness, and how does that change with N? "Net" is a kind's p50 per hop minus
# the one-thread baseline's at the same N and placement, in each repeat, then averaged
# over the repeats (the table's last column): what the switch or the readiness wait
# adds on top of the pipe I/O itself.

# %%
display(Markdown(view.answer_text(result)))

# %% [markdown]
# Every number behind the figure: the distribution of the time per hop over all
# timed trips of all repeats, in nanoseconds.

# %%
display(view.per_hop_table(result))

# %% [markdown]
# ## Memory per task
#
# Each run starts in a fresh process. Its resident set (VmRSS) is read before any
# pipe or task exists and again after the warm-up, when every task has run; the
# memory per task is the **slope** of that growth over N (with its 95% confidence
# interval and R²). The kernel side is the growth of the kernel's own memory over
# the same interval (kernel stacks, page tables, unreclaimable slab, from
# `/proc/meminfo`): it is system-wide, so other work on the machine adds noise, and
# it includes the pipes themselves for every kind, so a thread's own kernel cost is
# its slope minus the one-thread slope. A goroutine's stack lives in the Go heap
# and shows in RSS.

# %%
fig = view.memory_figure(result)
saved = plotting.save_figure(fig, "brigade_memory_per_task", figures_dir)
display(view.memory_table(result))

# %% [markdown]
# ## Checked against a minimal C program
#
# To make sure the kernel measures the brigade and not its own machinery, a
# separate, minimal C program (`native/brigade_reference/brigade_ref.c`: no
# per-trip clock reads, no watchdog, the process pinned with `sched_setaffinity`)
# runs the 100-thread brigade and its one-thread baseline on the same CPU, in
# rounds alternating with this project's kernel. Both report the median trip divided
# by the hops per trip; the table shows the median over the rounds.

# %%
if brigade_reference_rounds > 0:
    check = stored.to_dict(store.get("brigade_reference", lambda: stored.from_dict(
        "brigade_reference", brigade.reference_check(
            tasks=100, iterations=brigade_reference_iterations,
            warmup=max(brigade_reference_iterations // 10, 1),
            rounds=brigade_reference_rounds, cpu=brigade_cpu)), announce=False))
    display(view.reference_table(check))
    display(Markdown(view.reference_text(check)))
else:
    display(Markdown("The reference check was skipped (brigade_reference_rounds = 0)."))

# %% [markdown]
# ## S5's own runtimes: Rust threads and Tokio tasks
#
# S5's brigade as S5 ran it, on the Rust peer (`native/peers/rust`, this project's own
# program): N `std::thread`s on 1 MiB stacks, or N Tokio tasks on Tokio's default
# multi-thread runtime (S5's `#[tokio::main]`: one worker per usable CPU, the driver on
# the main thread), each reading one byte from a Unix socket pair and writing it to the
# next; and S5's one-thread brigade (one thread making the same calls, no switch: S5's
# baseline). Pipes (the transport this page's C brigade uses by default) are a labelled
# variant, run when the parameter cell's transports of the peer name them
# (`params/large.yaml` does).
# Sized for the paper's time: fewer timed trips a run than S5's 10,000, after fewer
# untimed ones than S5's 100 (the parameter cell above sets both); by S5's own published
# spread (not measured here), the standard error of a mean of 100 trips is under 1% of
# the trip. Same-CPU runs pin the whole
# process to one CPU (a pinned multi-thread runtime then has one worker). The table
# shows the gross time per task per trip, I/O calls included: the mean trip divided
# by N, the mean over the repeats. The conclusion below subtracts the one-thread
# brigade of the same repeat and transport, as S5 did. Without `cargo` this section
# says "not run here" and why.

# %%
from threadcost.experiments.user_space_tasks import runtimes
from threadcost.views import runtimes as runtimes_view

peer_brigade = store.get("peer_brigade", lambda: runtimes.brigade(
    tasks=brigade_peer_tasks, kinds=brigade_peer_kinds, placements=brigade_placements,
    iterations=brigade_peer_iterations, warmup=brigade_peer_warmup, repeats=brigade_repeats,
    cpu=brigade_cpu, transports=brigade_peer_transports, stack_kib=brigade_peer_stack_kib))
display(runtimes_view.brigade_table(peer_brigade))

# %% [markdown]
# ## Beside the published numbers
#
# S5 measured Rust threads and Tokio tasks on a 2020 laptop with 500 tasks over Unix
# socket pairs; the Rust peer's brigade above runs the same transport, runtime, task
# count and statistic (over fewer trips a run), the C brigade pipes unless its
# transport parameter says socket pairs. Its absolute numbers are context, not a
# verdict: what carries over is the shape. Threads pay a kernel switch per hop; the
# epoll loop and the goroutines pay a readiness wait instead (an `epoll_wait` that
# returns at once, and for Go the scheduler's own bookkeeping). The claims layer
# judges C18, C20 and C21 on S5's own runtimes (the Rust peer's brigade above, S5's
# statistic: a trip's mean time / 500 tasks), C19 and the Tokio side of C22 on the Rust
# peer's runs of notebook 5, and the thread side of C22 (memory per thread) and C23 on
# this notebook's C brigade (experiment `brigade`).

# %%
display(claims_view.claims_section(claims.for_page("07_io_brigade"), data_dir,
                                   stored.present(result), machine_id=store.machine_id))

# %% [markdown]
# ## What this means
#
# The page's question answered in this run's numbers, at S5's length of 500 tasks: the
# net cost of a hop for threads, goroutines and the epoll loop, unpinned and on one CPU;
# the same brigade on S5's own runtimes; and, labelled so, the numbers S5 published.

# %%
display(Markdown(view.conclusion_text(
    data_dir, store.machine_id, None if save else stored.present(result, peer_brigade))))
