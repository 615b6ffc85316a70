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
# # 9. Tokens in flight: when does an event loop beat threads?
#
# The brigade of notebook 7 passes one byte along N tasks, so exactly one task is ever
# runnable. A server has many requests in flight, and an event loop then gets several
# readiness events from one `epoll_wait`: that amortisation is where event loops are
# said to win. Nobody published numbers for it (S5's issue 5 asks exactly this).
#
# Here **K tokens circulate among N tasks** joined in a ring: task *i* reads its channel
# and writes the next task's. A channel is a Unix socket pair (or a pipe), and every hop
# is a real `read` and `write` of one 8-byte token. One **event** is one token handled:
# read from its channel, its hops counted down and, unless that was its last hop, written
# on. The models:
#
# - **blocking threads**: N threads, each blocking in `read()` on its channel;
# - **epoll, level-triggered**: one thread, one epoll set, one read per readiness event;
# - **epoll, edge-triggered**: the same, reading until the channel is empty (`EAGAIN`);
# - **io_uring**: one thread, one read always queued per task, driven by raw system
#   calls; where the kernel or a container refuses io_uring, it says "not run here" and
#   why.
#
# The cost per event is a run's wall time (from the first token written to the last
# retired) divided by the events it handled, for each K; each repeat is a fresh process
# per model, the models in a rotated order and the K too, and the page reads the median
# over the repeats. The same run counts, per event, the system calls made, the context
# switches the kernel counted (`getrusage`), the events whose token was written on
# another CPU than the one that read it (`sched_getcpu` at both ends) and the readiness
# events one wait returned.

# %% tags=["parameters"]
# Parameters (papermill: -p NAME VALUE, a list as YAML: -p NAME '[1, 2]', or -f params/<set>.yaml)
from typing import Optional, Union  # papermill reads these annotations, not "X | None"

readiness_tasks: int = 10000  # tasks N in the ring (a task needs 2 fds)
readiness_tokens: list[int] = [1, 10, 100, 1000, 10000]  # tokens in flight K, each from 1 to N
readiness_models: list[str] = ["thread", "epoll-lt", "epoll-et", "io_uring", "goroutine", "tokio-task"]  # how the tasks wait (goroutine: the Go peer; tokio-task: the Rust peer)
readiness_channel: str = "socketpair"  # what joins two tasks
readiness_placements: list[str] = ["unpinned"]  # placements to run (same-cpu: every thread on readiness_cpu)
readiness_events: int = 2000  # events timed per K (each token at least 2 hops)
readiness_repeats: int = 5  # independent runs per model, interleaved
readiness_cpu: Union[int, str] = "auto"  # CPU of same-cpu runs ("auto": the first usable)
readiness_stack_kib: int = 64  # stack of each task thread, KiB (0: default)
data_dir: Optional[str] = None  # None: your runs/ (git-ignored; $THREADCOST_DATA_DIR), then the committed data/
figures_dir: Optional[str] = None  # None: build/figures/ ($THREADCOST_FIGURES_DIR); relative: inside build/
save: bool = True  # store what this notebook makes: runs under runs/<machine>/<run>/, figures under build/figures/
measure: bool = True  # False: measure nothing, draw from the stored runs of machine_id
machine_id: Optional[str] = None  # with measure False: the machine folder to draw (runs/, else data/), None: this one

# %%
from IPython.display import Markdown, display

from threadcost import findings
from threadcost.experiments import parameters
from threadcost.experiments.readiness import run as readiness
from threadcost.notebook import plotting, stored
from threadcost.views import charts, machine_line, readiness_chart
from threadcost.views import readiness as view

parameters.check("09_readiness", globals())  # a bad value names its parameter

plotting.use_paper_theme()
store = stored.Store(measure, save, data_dir, machine_id)
fp = store.fingerprint
display(Markdown(f"**Machine:** {machine_line.markdown(fp)}"))

# %% [markdown]
# ## Cost per event against tokens in flight
#
# One line per model: the median cost per event over the repeats, the bar from the
# fastest repeat to the slowest. The dashed mark, when there is one, is where the
# blocking threads and the best event loop cost the same.

# %%
result = store.get("readiness", lambda: readiness.run(
    tasks=readiness_tasks, tokens=readiness_tokens, models=readiness_models,
    channel=readiness_channel, placements=readiness_placements, events=readiness_events,
    repeats=readiness_repeats, cpu=readiness_cpu, stack_kib=readiness_stack_kib))
unsaved = None if save else stored.present(result)
crossing = findings.get("readiness_crossing_tokens", data_dir, store.machine_id, unsaved)
saved = plotting.save_figure(view.cost_figure(result, crossing), "readiness_cost_per_event",
                             figures_dir)
display(Markdown(view.not_run_text(result)))

# %% [markdown]
# ## The answer, from these numbers

# %%
display(Markdown(view.answer_text(data_dir, store.machine_id, unsaved)))

# %% [markdown]
# ## io_uring
#
# io_uring queues a read for every task once and reaps completions, so one
# `io_uring_enter` both submits the next reads and writes and waits for the next
# completions: its system calls per event fall as K grows. Kernels may disable it
# (`kernel.io_uring_disabled`) and container runtimes often refuse it by seccomp.

# %%
display(Markdown(view.uring_text(result, data_dir, store.machine_id, unsaved)))

# %% [markdown]
# ## Every number behind the figure
#
# Per model and K: the cost per event over the repeats (µs: median, and the fastest
# and slowest repeat), the CPU time per event, and the medians of the counts per event.

# %%
display(view.cost_table(result))

# %% [markdown]
# ## Explore
#
# Pick what to draw per event: the wall time, the CPU time, or one of the counts the
# same run made. The chart redraws from the medians measured above, in JupyterLab and
# in the rendered paper alike (nothing is re-measured).

# %%
charts.show(readiness_chart.chart(result))
