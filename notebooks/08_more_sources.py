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
# # 8. Six more published numbers, checked the same way
#
# The numbers people quote when they argue about threads come from more places than
# the posts of notebooks 1-7. This notebook takes six of them, each checked with the
# kernels of the earlier notebooks (and a few small new ones), each read three ways:
# **as published** (the source's own number, in its terms: holds here, or differs and
# by how much), **the shape** (the relation the source states, which should hold on
# any machine), and **why** a number differs: a more elementary quantity measured in the
# same run (a system call, not the same switch timed again), or "unexplained".
#
# - **S7**, Baumann et al., "A fork() in the road" (HotOS 2019): fork + exec against
#   posix_spawn as the parent's memory grows (claim C30).
# - **S8**, Boost.Context's Performance page: a switch with `fcontext_t` at 9 ns
#   against 547 ns with `ucontext_t` (C31).
# - **S9**, tsuna, "How long does it take to make a context switch?" (2010), and the
#   open question of his repository: how many switches one iteration makes (C32).
# - **S10**, Li, Ding and Shen, "Quantifying the cost of context switch" (ExpCS 2007):
#   a direct cost of 3.8 µs and an indirect cost that grows with the data (C33).
# - **S11**, golang/go issue 18023: a channel ping-pong 16 times slower with
#   `runtime.LockOSThread` (C34).
# - **S12**, the NPTL announcement (2002): 100,000 threads created and destroyed in
#   two seconds (C35).
#
# The sources' sentences and table cells, with the address each was read at, are in
# `data/published/quotes.csv`; what could not be found in a readable copy of a source
# is left out there and said below.

# %% tags=["parameters"]
# Parameters (papermill: -p NAME VALUE, a list as YAML: -p NAME '[1, 2]', or -f params/<set>.yaml)
from typing import Optional, Union  # papermill reads these annotations, not "X | None"

sources_cpu: Union[int, str] = "auto"  # CPU of the pinned runs ("auto": the first usable)
sources_repeats: int = 5  # independent repeats of every timed comparison; a verdict needs 5
sources_spawn_mib: list[int] = [0, 64, 256]  # S7: parent memory, every page written, MiB
sources_spawn_iterations: int = 10  # S7: launches per series
sources_fiber_iterations: int = 100000  # S8: round trips per switch batch
sources_switch_iterations: int = 2000  # S9: round trips per mechanism and repeat
sources_array_kib: list[int] = [0, 256, 2048, 16384, 65536]  # S10: array per process, KiB
sources_strides: list[int] = [8, 128]  # S10: access stride, bytes
sources_target_accesses: int = 2000000  # S10: array accesses per point (sets the hops)
sources_go_iterations: int = 20000  # S11: round trips per Go run
sources_threads: int = 50000  # S12: threads created and destroyed in all
sources_wave: int = 1000  # S12: threads alive at once in one wave
data_dir: Optional[str] = None  # None: your runs/ (git-ignored; $THREADCOST_DATA_DIR), then the committed data/
figures_dir: Optional[str] = None  # None: build/figures/ ($THREADCOST_FIGURES_DIR); relative: inside build/
save: bool = True  # store what this notebook makes: runs under runs/<machine>/<run>/, figures under build/figures/
measure: bool = True  # False: measure nothing, draw from the stored runs of machine_id
machine_id: Optional[str] = None  # with measure False: the machine folder to draw (runs/, else data/), None: this one

# %%
from IPython.display import Markdown, display

from threadcost import claims, findings
from threadcost.experiments import parameters
from threadcost.experiments.more_sources import indirect
from threadcost.experiments.more_sources import run as more_sources
from threadcost.findings.context_switch import yardstick_name
from threadcost.notebook import plotting, stored
from threadcost.views import claims as claims_view
from threadcost.views import machine_line
from threadcost.views import more_sources as view

plotting.use_paper_theme()
parameters.check("08_more_sources", globals())  # a bad value names its parameter
store = stored.Store(measure, save, data_dir, machine_id)
fp = store.fingerprint
display(Markdown(f"**Machine:** {machine_line.markdown(fp)}"))


def judged(claim_id: str, words: str, *results: object) -> object:
    """The claim's reading of a number a sentence prints: one value per quantity."""
    return claims.measure(claim_id, words, store.machine_id, data_dir, stored.present(*results))

# %% [markdown]
# ## S7: fork + exec against posix_spawn, as the parent grows
#
# A small static C program holds some memory with every 4 KiB page written (the
# "dirty" variant of the paper's Figure 1; the fragmented variant is not run), then
# launches the same tiny static program over and over: by `fork` and `execve`, and by
# `posix_spawn`. A bare `fork` whose child exits at once runs beside them as the
# yardstick: it shows where the growth comes from. Each series is a fresh process;
# the order of the sizes flips every repeat. The paper's Figure 1 values could not be
# read from the source here, so C30 has a shape and no published number.

# %%
spawn = store.get("launch_spawn_growth", lambda: more_sources.spawn_growth(
    parent_touch_mib=sources_spawn_mib, repeats=sources_repeats,
    iterations=sources_spawn_iterations))
display(view.spawn_table(spawn))
fig = view.spawn_figure(spawn)
saved = plotting.save_figure(fig, "sources_spawn_growth", figures_dir)

# %%
display(Markdown(view.spawn_text(spawn)))

# %% [markdown]
# ## S8: Boost.Context's 9 ns against 547 ns
#
# Boost measured a `callcc()`/continuation switch at 9 ns with its assembly
# `fcontext_t` and 547 ns with `ucontext_t` on a dual Xeon E5-2620 v4. The C fibers of
# notebook 5 have both kinds: a hand-written x86-64 switch (registers only, as
# `fcontext_t`) and glibc's `swapcontext`. The yardstick is what `swapcontext` does
# besides swapping registers: one `rt_sigprocmask` system call, timed alone in the
# same process. The three are timed in turn, the order rotating, in one process pinned
# to one CPU; each switch's kernel context switches are counted too.

# %%
gap = store.get("fiber_gap", lambda: more_sources.fiber_gap(
    repeats=sources_repeats, iterations=sources_fiber_iterations,
    warmup=sources_fiber_iterations // 10, cpu=sources_cpu))
display(view.gap_table(gap))
fig = view.gap_figure(gap)
saved = plotting.save_figure(fig, "sources_fiber_gap", figures_dir)

# %%
display(Markdown(view.gap_text(gap, judged("C31", "ucontext_t switch", gap))))

# %% [markdown]
# ## S11: a goroutine hand-off, and the same hand-off between locked OS threads
#
# The benchmark passes a value back and forth between two goroutines over
# channels, with `GOMAXPROCS=1`. Locked with `runtime.LockOSThread`, each goroutine
# owns an OS thread and every hand-off must wake the other thread. The Go peer
# (`native/peers/go/lockosthread.go`) runs both, in alternating order, and reads its
# own process's kernel switch counters around the timed batch. The playground code of
# the issue could not be read here; this program locks both goroutines and counts one
# round trip as one op.

# %%
go = store.get("go_lockosthread", lambda: more_sources.go_lockosthread(
    repeats=sources_repeats, iterations=sources_go_iterations, warmup=sources_go_iterations // 10))
display(Markdown(view.go_text(go, judged("C34", "about 16 times slower", go))))
if not go.summary.get("skipped"):
    fig = view.go_figure(go)
    saved = plotting.save_figure(fig, "sources_lockosthread", figures_dir)

# %% [markdown]
# ## S9: how many switches does one round trip make?
#
# Every per-switch number in this paper is half a round trip. Whether a round trip
# *is* two switches is a question for the kernel, which counts every context switch
# of every task (`getrusage`, the same counters as `/proc/<tid>/status`). tsuna's
# repository divides by an assumed 4 switches per iteration of its futex loop, and its
# open issue argues for 6. Below, every mechanism of this paper runs between two tasks
# pinned to one CPU, and the count the kernel kept sits beside the time per switch;
# the last rows are the fibers, the goroutines and the Li/Ding/Shen pipe pair measured
# above and below. tsuna's own loop (wake, `sched_yield`, wait) is rebuilt in
# `native/yieldloop.c` so its count can be read the same way. His "2.5x to 3x more
# expensive ... when using virtualization" needs the same machine with and without a
# hypervisor; this machine is measured as it is, so that part is not run here.

# %%
counts = store.get("switch_counts", lambda: indirect.switch_counts(
    repeats=sources_repeats, iterations=sources_switch_iterations))

# %% [markdown]
# ## S10: the indirect cost of a switch
#
# Li, Ding and Shen's method: two processes on one CPU pass a byte through a pipe
# pair; before each hand-off the running process walks its own array, reading and
# writing one byte every *stride* bytes. One process alone makes the same walks and
# the same pipe calls through its own pipe, with no switch. Per switch, the total cost
# is c2 = (time per hop with the partner) - (time per hop alone); with no array it is
# the direct cost c1, and c2 - c1 is the indirect cost: the caches refilled after the
# other process evicted them. The array sweeps past this machine's last-level cache.

# %%
ind = store.get("indirect_cost", lambda: indirect.indirect_cost(
    array_kib=sources_array_kib, strides=sources_strides, repeats=sources_repeats,
    cpu=sources_cpu, target_accesses=sources_target_accesses))
display(view.indirect_table(ind))
fig = view.indirect_figure(ind)
saved = plotting.save_figure(fig, "sources_indirect_cost", figures_dir)

# %%
syscall = findings.get(yardstick_name("syscall"), data_dir, store.machine_id)  # the paper's
display(Markdown(view.indirect_text(ind, judged("C33", "direct cost", ind), syscall)))

# %% [markdown]
# ### Every mechanism, with the switches the kernel counted

# %%
rows = view.all_switch_rows(counts, gap, go, ind)
display(view.switch_count_table(rows))
fig = view.switch_count_figure(rows)
saved = plotting.save_figure(fig, "sources_switch_counts", figures_dir)

# %%
display(Markdown(view.tsuna_text(counts)))

# %% [markdown]
# ## S12: 100,000 threads, created and destroyed
#
# NPTL's announcement: "running 100,000 concurrent threads was no problem at all,
# creating and destroying the threads did not take more than two seconds". This
# machine's `kernel.pid_max` is far below 100,000 and every run here keeps a reserve
# below it, so the threads come in waves: each wave starts its threads, which all stay
# alive until the last one exists, then releases and joins them. Each repeat is a
# fresh process running its share of the waves, and its rate (threads created and
# destroyed per second) gives the time 100,000 threads take.

# %%
waves = store.get("thread_waves", lambda: more_sources.thread_waves(
    total=sources_threads, wave=sources_wave, repeats=sources_repeats))
display(Markdown(view.waves_text(waves, judged("C35", "Creating and destroying", waves))))
fig = view.waves_figure(waves)
saved = plotting.save_figure(fig, "sources_thread_waves", figures_dir)

# %% [markdown]
# ## The claims: as published, shape, and why
#
# "As published" sets the source's number beside this machine's, in the source's own
# terms; "Shape" checks the relation the source states. Under a verdict, "why" (folded)
# names the cause with a more elementary quantity measured in the same run, or says
# "unexplained" and gives what was measured around it (the same counters split, the same
# hand-off timed another way) as context, not as a cause: it carries no verdict of its
# own. An absolute time from another machine is judged only as the "as published"
# reading.

# %%
results = [spawn, gap, go, counts, ind, waves]
display(claims_view.claims_section(claims.for_page("08_more_sources"), data_dir,
                                   stored.present(*results), machine_id=store.machine_id))
