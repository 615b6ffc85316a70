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
# # 6. The claims, checked on this machine
#
# The published claims about what threads cost (C01..C25 from the sources S0..S6,
# C30..C35 from S7..S12, all cited in `data/published/references.csv`), each in one record under
# `threadcost/claims/records/`: its source, its published values, and three readings.
#
# - **As published, here.** Every number the source printed, read like for like (its
#   program, definition, statistic and setup: a switch is half a round trip, a mean is
#   a mean) or, where this project does not run the source's own experiment, by a
#   labelled substitute that says what differs; one mechanism or variant at a time,
#   never pooled. It *holds here*
#   when its whole 95% interval lies inside the tolerance the source's words give
#   ("about X" is X +/- 20%, a published range is used as given, "within about 1%" is
#   0.99 to 1.01), *differs here* (by how much, and which way) when it lies wholly
#   outside, and is *inconclusive here* otherwise.
# - **Shape.** Only the relations the source itself states, with its sentence: they
#   *hold* or *fail* the same way.
# - **Why it differs.** Every differing number names its cause from a more elementary
#   quantity measured on the same machine (the system time spent outside a task's loop;
#   the CPUs Go spreads over; how deep an idle thread's stack reaches; the system call a
#   switch makes), or a fact of the kernel version, or says "unexplained". The same kind
#   of quantity measured again is no why: the wake-up yardsticks are the pipe hand-off
#   itself, pinned, so beside a switch they are a decomposition, and a 64 KiB copy in
#   two cache states is the copy again. An empty system call explains nothing where the
#   source published no call of its machine. Such numbers are given as context after
#   "unexplained", and only real causes are counted as explanations. A setup that cannot
#   run as published here is *not reproducible on this machine*, never "underpowered";
#   10,000 sleeping tasks saturating two CPUs are judged all the same where page 05's
#   sweep shows saturation leaves the cost per wake-up alone.
#
# A timing reading rests on at least 5 independent repeats; its **power** (the
# half-width of its interval against the half-width of its tolerance) is measured,
# and a reading that cannot resolve its tolerance says so before the numbers. A
# reading from a different experiment is a *substitute* and names its stand-in
# (whatever it gave, an inconclusive stand-in included); *computed* is a number derived
# from limits without measuring it, or between two measured settings (a geometric mean,
# said so beside the value). C23 is this
# study's own reading of a source's thesis: it is listed as a finding, never counted
# with the published claims.

# %% tags=["parameters"]
# Parameters (papermill: -p NAME VALUE, a list as YAML: -p NAME '[1, 2]', or -f params/<set>.yaml)
from typing import Optional  # papermill reads these annotations, not "X | None"

claims_machine_id: Optional[str] = None  # machine folder under data/ to judge, None: this machine
claims_include_reference: bool = True  # compare with the committed reference runs (data/)
data_dir: Optional[str] = None  # None: your runs/ (git-ignored; $THREADCOST_DATA_DIR), then the committed data/
figures_dir: Optional[str] = None  # None: build/figures/ ($THREADCOST_FIGURES_DIR); relative: inside build/
save: bool = True  # store what this notebook makes: runs under runs/<machine>/<run>/, figures under build/figures/

# %%

from IPython.display import Markdown, display

from threadcost import claims, textout
from threadcost.experiments import parameters
from threadcost.host import machine
from threadcost.notebook import plotting, stored
from threadcost.store import datastore
from threadcost.views import claims as claims_view
from threadcost.views import machine_line, summary

parameters.check("06_claims", globals())  # a bad value names its parameter

plotting.use_paper_theme()
fp = stored.machine_fingerprint(claims_machine_id, data_dir)  # the machine judged
mid = claims_machine_id or machine.machine_id(fp)
verdicts = claims.judge(mid, data_dir)
display(Markdown(f"**Machine:** {machine_line.markdown(fp)} Data folder: {textout.md_code(mid)}."))
if skipped_runs := datastore.skipped_runs(data_dir, mid):
    display(Markdown(textout.skipped_markdown(skipped_runs)))

# %% [markdown]
# ## Before the numbers: what this run can and cannot resolve

# %%
up_front = claims_view.up_front_text(verdicts)
if up_front:
    display(Markdown(up_front))
power = claims_view.power_table(verdicts)
if power.empty:
    display(Markdown("No reading is left inconclusive for want of power with these "
                     "parameters."))
else:
    n_ap = int((power.kind == "as published").sum())
    display(Markdown(f"{len(power)} timing readings ({n_ap} numbers as published, "
                     f"{len(power) - n_ap} shapes) are *inconclusive* because these "
                     "parameters cannot resolve their tolerance, not for the claim's sake:"))
    display(claims_view.style(power, column="claim"))

# %% [markdown]
# ## Each claim in one line
#
# What holds here, what differs and by how much, each named by its reading; the
# readings follow below.

# %%
display(claims_view.style(claims_view.takeaway_table(verdicts)))

# %% [markdown]
# ## What holds here, what does not, and why

# %%
display(Markdown(claims_view.folklore_md(verdicts)))
display(claims_view.style(claims_view.readings_tally_table(verdicts), column="readings"))
display(claims_view.style(claims_view.tally_table(verdicts)))

# %% [markdown]
# ## Each claim in one row
#
# The source's words; what was measured here in the same terms (value, 95% interval,
# the published number, and the verdict in words); the relations the source states;
# and why a number differs here. A finding of this study (C23) is marked as such.

# %%
display(claims_view.style(claims_view.overview_table(verdicts)))

# %% [markdown]
# ## The yardsticks behind "why"
#
# Measured in every run by the last cell of notebook 4, on this machine.

# %%
display(claims_view.style(claims_view.why_yardsticks_table(mid, data_dir),
                          column="yardstick"))

# %% [markdown]
# ## Every reading
#
# One row per reading: as published or shape, the source's words, the value measured
# here with its 95% interval, what the words allow, how many independent repeats the
# value rests on, and the verdict. "Read from" names the experiment and the setup the
# value was selected by.

# %%
display(claims_view.style(claims_view.assertions_table(verdicts)))

# %% [markdown]
# The same readings as a picture: each measured value and the band its source allows,
# both divided by the published value.

# %%
fig = claims_view.figure(verdicts)
if save:
    plotting.save_figure(fig, "claims_assertions", figures_dir)

# %% [markdown]
# ## Context: the published machines' absolute numbers
#
# Not verdicts: the sources' machines (a 2018 desktop, for S0) and this one differ in more
# than threads. Some rows read a number in the unit of the machine property its verdict
# turns on (a pinned switch in empty system calls, an unpinned one in wake-ups on another
# CPU): in those units machines that differ several times in nanoseconds agree. Nothing
# is divided by S0-code's 64 KiB copy: its 3 µs is a bar typed in a plot script, with no
# cache state stated.

# %%
display(claims_view.style(claims_view.context_table(verdicts), column="claim"))

# %% [markdown]
# ## Across machines
#
# The same study on every machine with runs: the committed ones (`data/<machine-id>/`)
# and yours (`runs/<machine-id>/`, marked "(this machine)", kept apart from the
# committed reference even when the machine id is the same): the headline numbers side
# by side, with this machine's divided by the committed reference's, each published
# claim's verdict on each machine, and, where a machine has a yardsticks run, its times
# in multiples of its own yardstick, so that a machine which is slower at everything
# does not look slower at threads in particular.

# %%
from threadcost.views import across_machines

machine_ids = across_machines.machines(data_dir)
if len(machine_ids) >= 2:
    across = across_machines.headline_values(data_dir)
    display(Markdown("\n".join(
        f"- {textout.md_code(m)}: {across_machines.describe(data_dir, m)}"
        for m in machine_ids)))
    display(across_machines.headline_table(across))
    display(Markdown(
        "Each claim's verdict on each machine, every folder judged on its own runs; where "
        "a verdict differs between machines, the last column names the machine property "
        "it is put down to and that property's value on each machine (a folder that "
        "cannot feed a claim says why). The same table prints with "
        "`threadcost claims --all-machines` (add `--json`)."))
    display(claims_view.style(claims_view.across_machines_table(data_dir)))
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
# - **Verdicts** follow the rules stated at the top (`threadcost/claims/logic.py` and
#   `threadcost/claims/readings.py`); a ratio is never rounded into a verdict by hand. The same verdicts print with
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
