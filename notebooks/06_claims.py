# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
#   threadcost:
#     summary: true
# ---

# %% [markdown]
# # 6. The claims, checked on this machine
#
# Seventeen published claims about what threads cost (C01..C17, from five sources
# S0..S4 listed in `data/published/`) against what this machine measured. For each
# claim the table gives the published number, the number measured here (with the
# interval the experiment reported), their ratio and a verdict in words by one stated
# rule. A claim that could not be measured here stays in the table with the reason.
#
# The published numbers are read from `data/published/values.csv`; the measured ones
# from the newest run of each experiment stored for this machine (`data/<machine>/`).

# %% tags=["parameters"]
# Parameters (papermill: -p NAME VALUE, or -f params/<set>.yaml)
from typing import Optional  # papermill reads these annotations, not "X | None"

claims_machine_id: Optional[str] = None  # machine folder under data/ to judge, None: this machine
claims_include_reference: bool = True  # compare with the committed reference runs (reference/)
data_dir: Optional[str] = None  # None: the repository's data/ (or $THREADCOST_DATA_DIR)
figures_dir: Optional[str] = None  # None: the repository's figures/ (or $THREADCOST_FIGURES_DIR)
save: bool = True  # save the figures under figures/

# %%

from IPython.display import Markdown, display

from threadcost import discussion, machine, plotting, verdicts
from threadcost.views import summary

plotting.use_paper_theme()
fp = machine.fingerprint()
mid = claims_machine_id or machine.machine_id(fp)
virt = fp["virtualization"] if mid == machine.machine_id(fp) else "none"
table = verdicts.verdict_table(data_dir, machine_id=mid, virtualization=virt)
display(Markdown(f"**Machine:** {machine.describe(fp)} Data folder: `{mid}`."))

# %% [markdown]
# ## Verdicts at a glance

# %%
display(Markdown(discussion.verdict_overview(table)))

# %%
display(summary.style_verdicts(summary.claim_overview(table)))

# %% [markdown]
# Each dot below is one published number divided into this machine's: 1 means the
# same, right of 1 larger or slower here. Green is the "reproduced" band, yellow "same
# order"; a dot outside both "differs".

# %%
fig = summary.ratio_figure(table)
if save:
    plotting.save_figure(fig, "claims_ratios", figures_dir)

# %% [markdown]
# ## Every claim, quantity by quantity
#
# One row per published quantity that an experiment measured (a claim may have
# several), and one row per claim that was not run here. "How measured" is the
# experiment's own note: what was timed or read, and any scaling to the published
# setting.

# %%
display(summary.style_verdicts(summary.claims_display_table(table)))

# %% [markdown]
# ## Discussion
#
# Written from this run's numbers; where a run is missing, the text says what it
# would take.
#
# ### Memory: what RSS shows and what it hides

# %%
values = summary.headline_values(data_dir, mid)
display(Markdown(discussion.memory_paragraph(table, values)))

# %% [markdown]
# ### Time: launching a thread

# %%
display(Markdown(discussion.launch_paragraph(table)))

# %% [markdown]
# ### Time: switching between threads, pinned or not

# %%
display(Markdown(discussion.switch_paragraph(table, fp)))

# %% [markdown]
# ## Across machines
#
# The same study on every machine with runs in the data folder (`data/<machine-id>/`,
# one folder per machine): the headline numbers side by side, each published claim's
# verdict on each machine, and, where a machine has a yardsticks run, its times in
# multiples of its own yardstick, so that a machine which is slower at everything does
# not look slower at threads in particular.

# %%
from threadcost.views import across_machines

machine_ids = across_machines.machines(data_dir)
if len(machine_ids) >= 2:
    across = across_machines.headline_values(data_dir)
    display(Markdown("; ".join(f"`{m}`: {across_machines.describe(data_dir, m)}"
                               for m in machine_ids)))
    display(across_machines.headline_table(across))
    display(across_machines.verdict_table(data_dir))
    normalised = across_machines.normalised_table(data_dir, across)
    display(Markdown(across_machines.yardstick_text(data_dir, machine_ids)))
    if not normalised.empty:
        display(normalised)
    fig = across_machines.figure(across)
    if save:
        plotting.save_figure(fig, "summary_across_machines", figures_dir)
else:
    display(Markdown(across_machines.how_to_add_text(machine_ids)))

# %% [markdown]
# ## The runs behind these numbers
#
# The newest run of each experiment on this machine, with its parameters and any
# system limit that cut it short. Each run folder holds tidy CSVs and a `meta.json`
# with the full machine fingerprint.

# %%
display(summary.runs_table(data_dir, mid))

# %% [markdown]
# ## Method notes
#
# - **Time** is read with `CLOCK_MONOTONIC` (through the vDSO) inside the C kernels,
#   around the measured operation only; setup (allocating samples, creating pipes,
#   spawning partners) happens before the timed region, and every series starts with a
#   warm-up that is discarded. Results are distributions (min, p50, p90, p99, max), and
#   a claim row's interval is the spread or 95% interval the experiment reports.
# - **A context switch** is half a ping-pong round trip between two tasks that block on
#   each other (pipe, condition variable, futex, eventfd, channel): it includes the
#   wake-up and the system calls, the "direct cost" in S0's words, not the cache
#   misses a real workload pays afterwards. "Pinned" means both tasks restricted to one
#   CPU with `sched_setaffinity`; "unpinned" leaves the placement to the scheduler.
# - **A launch** is create, first run and join (threads) or fork, exit and wait
#   (processes), timed from the parent.
# - **Memory per thread** is a slope: totals read at several thread counts, fitted by
#   a line (with R² and a 95% interval), so the fixed cost of the process drops out.
#   *Virtual* is `VmSize`, *resident* `VmRSS` of `/proc/<pid>/status`; *kernel side*
#   is read from the system-wide kernel counters (`KernelStack`, `PageTables`, slab)
#   of `/proc/meminfo`, which RSS never includes.
# - **Scaling:** when a run's size differs from the published setting (a smaller
#   allocation, fewer threads), the experiment scales its number per unit and says so
#   in "how measured".
# - **Verdicts** follow the rule printed above; a ratio is never rounded into a
#   verdict by hand.
#
# ### Rerun one experiment with other parameters
#
# Every notebook has a parameters cell; papermill overrides any of them:
#
# ```sh
# # one notebook, default set, one value changed
# .venv/bin/jupytext --to ipynb -o build/01.ipynb notebooks/01_malloc_touch.py
# .venv/bin/papermill build/01.ipynb build/01.out.ipynb -p malloc_mib 1024
# # the whole paper with another set
# make paper PARAMS=params/large.yaml
# # only some notebooks (then the summaries)
# .venv/bin/python -m threadcost.paper --params params/quick.yaml --only 01 00 06
# ```
#
# The same experiments run from the command line, and `--save` stores the run where
# this notebook finds it:
#
# ```sh
# .venv/bin/threadcost --help
# .venv/bin/threadcost malloc-touch --mib 400 --save
# ```
