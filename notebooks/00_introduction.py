# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
#   threadcost:
#     summary: true
# ---

# %% [markdown]
# # What does a thread cost?
#
# Ask how expensive a thread is and you will hear "8 MiB of stack", "8 KiB", "a few
# microseconds to start", "a context switch is slow, use goroutines". Each of these
# numbers was measured once, on someone's machine, by some method, and then repeated
# for years. This study measures them again **on this machine**, with the method in
# view, and sets each one beside the published claim it comes from.
#
# A thread costs in two currencies:
#
# - **time**: to launch it (create, first run, join) and to switch to it (the kernel
#   stops one thread and runs another);
# - **space**: the address space reserved for it (virtual), the part of it backed by
#   physical memory (resident), and the kernel's own memory for it (kernel stack,
#   task structures, page tables), which RSS does not count (a process's page tables
#   show in its VmPTE; its kernel stacks and task structures only in system-wide
#   counters).
#
# Each cost is set against the alternatives: a **process** (fork), a **fiber**
# (a user-space context switched by C code), and a **goroutine** (Go's scheduler);
# notebook 5 adds Rust threads, Tokio tasks and Java's platform and virtual threads.

# %% tags=["parameters"]
# Parameters (papermill: -p NAME VALUE, a list as YAML: -p NAME '[1, 2]', or -f params/<set>.yaml)
from typing import Optional  # papermill reads these annotations, not "X | None"

intro_machine_id: Optional[str] = None  # machine folder under data/ to summarise, None: this machine
data_dir: Optional[str] = None  # None: your runs/ (git-ignored; $THREADCOST_DATA_DIR), then the committed data/
figures_dir: Optional[str] = None  # None: build/figures/ ($THREADCOST_FIGURES_DIR); relative: inside build/
save: bool = True  # store what this notebook makes: runs under runs/<machine>/<run>/, figures under build/figures/

# %%
from IPython.display import Markdown, display

from threadcost import textout
from threadcost.experiments import parameters
from threadcost.host import machine
from threadcost.notebook import plotting, stored
from threadcost.views import headline, machine_line, summary

parameters.check("00_introduction", globals())  # a bad value names its parameter

plotting.use_paper_theme()
fp = stored.machine_fingerprint(intro_machine_id, data_dir)  # the machine whose runs are read
mid = intro_machine_id or machine.machine_id(fp)

# %% [markdown]
# ## The machine
#
# Every number below depends on the machine it was measured on. This is the machine of
# this run, as recorded with every result (`meta.json` of each run folder). The limits
# matter as much as the hardware: they decide how many threads one can start at all.

# %%
display(Markdown(f"**{machine_line.markdown(fp)}** Data folder: {textout.md_code(mid)}."))
display(summary.machine_card(fp))
display(Markdown(summary.ceiling_text(data_dir, mid)))
if fp["virtualization"] != "none":
    display(Markdown(
        f"This is a **virtual machine ({fp['virtualization']})**: a virtual CPU can be "
        "descheduled by the hypervisor at any moment, so timings carry the host's noise, "
        "and the cross-CPU numbers (unpinned switches) are the ones most affected."))

# %% [markdown]
# ## The cost of one task, on this machine
#
# Each dot is a number measured by this study's runs on this machine, with one
# definition per column, the same for every row:
#
# - **launch** is a task's whole life, one at a time: create it, let it run, wait for
#   it to finish (join, waitpid, `wg.Wait`), and free what it held (for a fiber:
#   unmap its stack);
# - **a switch** (the paper's one definition, used on every page) is half the round
#   trip of a ping-pong between two tasks pinned to one CPU (each round trip hands the
#   CPU over twice), timed as a batch of round trips with no clock read inside: the
#   batch's mean round trip / 2, and the median of runs where there are several (the
#   line: their range). Threads and processes ping-pong through a futex, fibers through
#   a hand-written switch, goroutines (`GOMAXPROCS=1`) and Tokio tasks over channels. A
#   cell marked partial comes from a run that also timed each round trip (a clock read
#   inside each). A Rust or Java platform thread is a kernel thread, switched exactly as
#   the OS thread is. Where a page prints single round trips (each timed with one clock
#   read) or divides by the switches the kernel counted, it says so by name ("round
#   trip", "per counted switch");
# - **memory** is per idle task, resident plus the kernel side that RSS does not show
#   (kernel stack, page tables, kernel objects), from slopes over many task counts. An
#   idle process is a child forked from this study's Python harness, so its page tables
#   copy a parent of tens of MiB (the figure says how large).
#
# A cell whose experiment has no stored run says which one would fill it. The notes
# under the table say what each number is and which run it comes from.

# %%
values = headline.cells(data_dir, mid)
fig = headline.figure(values)
if save:
    plotting.save_figure(fig, "summary_headline", figures_dir)

# %%
display(Markdown(headline.sentence(values)))
display(Markdown("The same numbers as a table (brackets: the interval drawn):"))
display(headline.styled_table(values))
display(headline.notes(values))

# %% [markdown]
# ## How to read the rest

# %%
display(summary.reading_guide({  # and each family's row, from its spec
    "06_claims": ("claims", "every published claim beside this machine, with a verdict"),
}))

# %% [markdown]
# Code is folded under each result in the rendered paper; the notebooks run unchanged
# in JupyterLab (`make lab`), where the sliders rerun the C kernels.
