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
# Twenty-nine published claims about what threads cost (C01..C23 from the sources
# S0..S5, C30..C35 from S7..S12, all cited in `data/published/references.csv`). Each claim is declared once in
# `threadcost/claims/`: the statements it makes that should hold on any machine (a
# ratio, a direction, a size the kernel sets), each with the tolerance the claim's own
# words allow ("about X" is X +/- 20%; a published range is used as given; "within
# about 1%" is 0.99 to 1.01), and the measurement that feeds it, chosen by matching the
# source's setup (stack size, allocator, placement, workload), never by which run came
# last.
#
# **How a verdict is reached.** A measured value comes with a 95% interval from the
# spread across independent repeats (a t interval over the repeats, or a fitted
# slope's interval). *Supported*: the whole interval lies inside the tolerance.
# *Contradicted*: wholly outside. *Inconclusive*: it straddles a bound, or a timing
# statement rests on fewer than 5 repeats. *Not reproduced*: the published effect
# cannot show here for a named, known cause. *Computed*: derived from limits, not
# measured. *Substitute*: a different experiment stands in for the source's, and the
# stand-in gave a clear answer. *Not run here*: nothing was measured, with the reason.
# Absolute numbers from the sources' machines are shown only as context.

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

from threadcost import claims, machine, plotting
from threadcost.views import claims as claims_view
from threadcost.views import summary

plotting.use_paper_theme()
fp = machine.fingerprint()
mid = claims_machine_id or machine.machine_id(fp)
verdicts = claims.judge(mid, data_dir)
display(Markdown(f"**Machine:** {machine.describe(fp)} Data folder: `{mid}`."))

# %% [markdown]
# ## Verdicts at a glance

# %%
display(claims_view.style(claims_view.tally_table(verdicts)))

# %%
display(claims_view.style(claims_view.overview_table(verdicts)))

# %% [markdown]
# ## Every assertion
#
# One row per statement a claim makes: the value measured here with its 95% interval,
# what the claim's words allow, how many independent repeats the value rests on, and
# the verdict. "Read from" names the experiment and the setup the value was selected by.

# %%
display(claims_view.style(claims_view.assertions_table(verdicts)))

# %% [markdown]
# The same assertions as a picture: each measured value and the band its claim allows,
# both divided by the published value.

# %%
fig = claims_view.figure(verdicts)
if save:
    plotting.save_figure(fig, "claims_assertions", figures_dir)

# %% [markdown]
# ## Context: the published machines' absolute numbers
#
# Not verdicts: the sources' machines (a 2018 desktop, for S0) and this one differ in more
# than threads.
# Where this machine measured the 64 KiB memcpy yardstick (notebook 04's last cell, or
# the launch run), each time is also divided by how much faster or slower the memcpy
# is here than on the source's machine (S0-code: about 3 µs): a normalised ratio near 1
# means the difference is the machine's general speed, not the operation.

# %%
display(claims_view.style(claims_view.context_table(verdicts), column="claim"))

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
# The stored runs of each experiment on this machine (the newest one listed), with
# parameters and any system limit that cut it short. Each run folder holds tidy CSVs
# and a `meta.json` with the full machine fingerprint. The verdicts above name the run
# each value was read from.

# %%
display(summary.runs_table(data_dir, mid))

# %% [markdown]
# ## Method notes
#
# - **Time** is read with `CLOCK_MONOTONIC` (through the vDSO) inside the C kernels,
#   around the measured operation only; setup (allocating samples, creating pipes,
#   spawning partners) happens before the timed region, and every series starts with a
#   warm-up that is discarded. Results are distributions (min, p50, p90, p99, max), and
#   a verdict's interval is a 95% interval over independent repeats.
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
# - **Verdicts** follow the rules stated at the top (`threadcost/claims/logic.py`); a
#   ratio is never rounded into a verdict by hand. The same verdicts print with
#   `threadcost claims` (add `--json` for a machine-readable list).
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
