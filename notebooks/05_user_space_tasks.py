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
# # 5. Threads vs processes vs fibers vs goroutines
#
# A kernel thread is scheduled by the kernel: every switch between two threads goes
# through a system call or an interrupt, the scheduler, and a return to user space;
# every thread owns a kernel stack and kernel bookkeeping besides its user stack.
# A **user-space task** (a C fiber, a goroutine) is switched by ordinary code in the
# process: save a few registers, swap the stack pointer, jump. This notebook sets
# the two side by side on this machine, in one run:
#
# - **C fibers** on small `mmap`'d stacks, each with a `PROT_NONE` guard page below
#   it, switched either by glibc's `swapcontext` or by a dozen hand-written x86-64
#   instructions (`native/fibers.c`);
# - **goroutines**, measured by a small Go program (`native/peers/go`) when Go is
#   installed;
# - **threads and processes**: their switch measured here by notebook 4's futex
#   ping-pong, their memory and launch the numbers notebooks 2 and 3 measured.
#
# Published claims checked here: **C04** (goroutine ping-pong, S0), **C11**
# (memory per goroutine, S1), **C15**, **C16** and **C17** (10,000 sleeping Rust threads
# vs goroutines, S4's own program: memory, page tables and CPU), the thread side of
# **C10** (memory per
# sleeping thread, S1), **C19** (a Tokio task switch, S5) and **C24**, **C25** (peak
# memory of many sleeping tasks per runtime, S6).

# %% tags=["parameters"]
# Parameters (papermill: -p NAME VALUE, a list as YAML: -p NAME '[1, 2]', or -f params/<set>.yaml)
from typing import Optional, Union  # papermill reads these annotations, not "X | None"

tasks_cpu: Union[int, str] = "auto"  # CPU of the fiber/goroutine switches ("auto": first usable)
tasks_switch_iterations: int = 200000  # timed round trips per fiber implementation
tasks_warmup: int = 20000  # untimed round trips before timing
tasks_fiber_impls: list[str] = ["asm", "ucontext"]  # hand-written switch and glibc swapcontext
tasks_fiber_count: int = 2000  # idle fibers per memory run (RSS/VSZ by slope)
tasks_fiber_stack_kib: int = 64  # stack of each fiber, KiB (plus a guard page)
tasks_touch_kib: list[int] = [0, 4, 8, 16, 32, 48]  # KiB of its stack each idle fiber writes
tasks_memory_points: int = 11  # /proc/self/status readings per memory run
tasks_go_iterations: int = 200000  # timed goroutine round trips per mode
tasks_goroutines: int = 10000  # idle goroutines for the memory slope
tasks_sleep_period_ms: int = 10  # each sleep, ms (C15: 10 ms)
tasks_sleep_stagger_ms: int = 200  # start delays spread below this, ms (C15: 200 ms)
tasks_kernel_switch_iterations: int = 50000  # thread/process round trips (futex, same CPU): a tenth in each bare batch
tasks_sleep_counts: list[int] = [300, 1000, 3000, 10000]  # sleeper counts of the sweep
tasks_sleep_sweep_duration_ms: int = 100  # total sleep of each task in the sweep, ms
tasks_sleep_sweep_repeats: int = 1  # repeats of every point of the sweep's figure, interleaved (no claim reads it)
tasks_c11_goroutines: int = 1000000  # C11: goroutines sleeping at once (S1: 1,000,000)
tasks_c11_sleep_ms: int = 1000  # how long each sleeps, ms (S1: 1 s)
tasks_c11_repeats: int = 5  # C11: runs of S1's program (its wall, user and system times are judged over them)
tasks_go_launch_iterations: int = 20000  # goroutine launches (go, first run, wg.Done, Wait)
tasks_go_pinning_repeats: int = 7  # C04: pinned/default pairs, alternating
tasks_go_pinning_iterations: int = 200000  # round trips per C04 run
tasks_peer_kinds: list[str] = ["rust-thread", "tokio-task", "tokio-task-mt", "java-platform", "java-virtual"]  # the peers' rows of the table
tasks_peer_iterations: int = 10000  # timed round trips per peer kind (pinned)
tasks_peer_launch_iterations: int = 1000  # launches per peer kind (pinned)
tasks_peer_tasks: int = 10000  # idle tasks per memory slope (Tokio, Java virtual threads)
tasks_peer_threads: int = 1000  # idle threads per memory slope (Rust, Java platform threads)
tasks_peer_repeats: int = 5  # repeats of each peer switch (fresh processes)
tasks_s4_count: int = 10000  # S4's program on Rust threads, goroutines and Tokio: workers (S4: 10,000)
tasks_s4_duration_ms: int = 250  # sleep of each worker, ms (S4: 1000 sleeps of 10 ms, 10 s; C17 is per wake-up)
tasks_s4_repeats: int = 5  # C15, C17: runs of every variant (fresh processes, variants interleaved)
tasks_s1_peer_count: int = 1000000  # S1's program on Rust threads and Tokio (S1: 1,000,000)
tasks_s1_thread_cap: int = 4000  # most Rust threads started (the rest computed, labelled)
tasks_s6_count: int = 10000  # S6: tasks asleep at once per runtime (S6: 10k, 100k, 1M)
tasks_s6_sleep_ms: int = 300  # how long each sleeps once all exist, ms (S6: 10 s)
data_dir: Optional[str] = None  # None: your runs/ (git-ignored; $THREADCOST_DATA_DIR), then the committed data/
figures_dir: Optional[str] = None  # None: build/figures/ ($THREADCOST_FIGURES_DIR); relative: inside build/
save: bool = True  # store what this notebook makes: runs under runs/<machine>/<run>/, figures under build/figures/
measure: bool = True  # False: measure nothing, draw from the stored runs of machine_id
machine_id: Optional[str] = None  # with measure False: the machine folder to draw (runs/, else data/), None: this one
interactive: bool = False  # True: live ipywidgets; False: static Vega-Lite charts (paper, papermill), live in `make lab`

# %%
from IPython.display import Markdown, display

from threadcost import claims, findings, stats
from threadcost.experiments import parameters
from threadcost.experiments.user_space_tasks import (
    fibers,
    kernel_task_switch,
    million,
    runtimes,
    sleepers,
)
from threadcost.experiments.user_space_tasks import goroutines as peers
from threadcost.notebook import plotting, stored
from threadcost.views import claims as claims_view
from threadcost.views import goroutines as go_view
from threadcost.views import kernel_task_rows as kernel_rows
from threadcost.views import machine_line, task_compare
from threadcost.views import million as million_view
from threadcost.views import runtimes as runtimes_view
from threadcost.views import sleepers_sweep as sweep_view
from threadcost.views import user_space_tasks as view
from threadcost.views import user_space_tasks_figures as tasks_figures

parameters.check("05_user_space_tasks", globals())  # a bad value names its parameter

plotting.use_paper_theme()
store = stored.Store(measure, save, data_dir, machine_id)
fp = store.fingerprint
display(Markdown(f"**Machine:** {machine_line.markdown(fp)}"))

# %% [markdown]
# ## C fibers: switch, memory, creation
#
# Two fibers, A and B, on one thread pinned to one CPU: A switches to B, B switches
# straight back. One **round trip is two switches**. After a warm-up, each round
# trip is timed with one clock read (its cost, measured first, is shown beside it);
# a second batch without clock reads gives the mean. Then `count` fibers are created
# one by one, each writes a given depth of its own stack and parks; `/proc/self/status`
# is read along the way and the **per-fiber** RSS and VSZ are the slopes.
#
# Why `swapcontext` is slower: a `ucontext_t` includes the signal mask, and
# `swapcontext` saves and restores it with the `rt_sigprocmask` **system call**, so
# every switch enters the kernel (no scheduling happens there, but the trip in and
# out is most of the cost). The hand-written switch only pushes the six registers the
# calling convention says a function must preserve, plus the SSE/x87 control words,
# swaps the stack pointer and pops the other fiber's registers: no system call at all.

# %%
fiber_results = {
    impl: store.get(f"fibers_{impl}", lambda i=impl: fibers.run(
        switch_iterations=tasks_switch_iterations, warmup=tasks_warmup,
        count=tasks_fiber_count, stack_kib=tasks_fiber_stack_kib, touch_kib=tasks_touch_kib,
        impl=i, cpu=tasks_cpu, points=tasks_memory_points),
        experiment="fibers", match={"impl": impl})
    for impl in tasks_fiber_impls
}
for result in fiber_results.values():
    display(Markdown(view.fiber_switch_text(result)))

# %%
fig = tasks_figures.fiber_memory_figure(fiber_results)
saved = plotting.save_figure(fig, "tasks_fiber_memory", figures_dir)

# %%
display(Markdown(view.fiber_memory_text(fiber_results)))

# %% [markdown]
# The guard page is what keeps a small stack honest: a fiber that recursed past its
# stack would write into the `PROT_NONE` page and die with `SIGSEGV` instead of
# silently corrupting the neighbouring fiber's stack. The parameters never let a fiber
# get there (touch depth must leave 12 KiB of the stack free for its own frames and a
# signal frame); all of this runs in a child process, so even a fault would not reach
# this notebook's kernel.

# %% [markdown]
# ## Goroutines
#
# The Go peer program runs a channel ping-pong between two goroutines (one round trip
# = two goroutine switches) twice: with `GOMAXPROCS=1` and the whole process pinned to
# one CPU, and with the runtime's defaults. It then starts goroutines that block on a
# channel and reads the resident set along the way.

# %%
go_result = store.get("peers", lambda: peers.run(
    iterations=tasks_go_iterations, warmup=tasks_warmup, cpu=tasks_cpu,
    memory_count=tasks_goroutines, memory_points=tasks_memory_points, sleepers_count=0))
display(Markdown(view.goroutine_text(go_result)))

# %% [markdown]
# ### Goroutine launch, and C04's pinning gain in repeated pairs
#
# A goroutine's whole life, one at a time: the `go` statement, its first run, its
# `wg.Done()`, and the `wg.Wait()` that sees it, with `GOMAXPROCS=1` and the process
# pinned to one CPU (as notebook 3 pins its thread launches). Each launch is timed (one
# clock read included), and a second batch is timed as a whole. Then C04's question,
# "does `GOMAXPROCS=1` plus pinning help?", as pairs of ping-pong runs, pinned and
# default in alternating order; the gain is pinned rate / default rate - 1 for each
# pair, with a 95% interval over the pairs.

# %%
go_launch = store.get("goroutine_launch", lambda: peers.launch_run(
    iterations=tasks_go_launch_iterations, warmup=tasks_warmup // 10, cpu=tasks_cpu))
go_pinning = store.get("goroutine_pinning", lambda: peers.pinning_run(
    repeats=tasks_go_pinning_repeats, iterations=tasks_go_pinning_iterations,
    warmup=tasks_warmup, cpu=tasks_cpu))
if go_launch.summary["skipped"]:
    display(Markdown(go_view.not_run_text(go_launch)))
else:
    display(Markdown(go_view.launch_text(go_launch, go_pinning)))
    if not go_pinning.summary["skipped"]:
        display(go_view.gain_table(go_pinning))

# %% [markdown]
# ## Rust threads, Tokio tasks, Java platform and virtual threads
#
# The runtimes the sources ran, through the same peer interface (`threadcost/peers`):
# a Rust program (`native/peers/rust`: `std::thread` and Tokio, both its
# `current_thread` and multi-thread runtimes) and a Java program
# (`native/peers/java`: platform and virtual threads, JDK 21 or later). Per kind: a
# ping-pong between two tasks over channels with the process pinned to one CPU (one
# round trip = two switches; Java's peer has none), a task's whole life one at a time
# (spawn, first run, exit, join), and the resident growth per idle task by slope. A
# runtime whose toolchain is missing reads "not run here", with what to install.

# %%
peer_result = store.get("peer_runtimes", lambda: runtimes.run(
    kinds=tasks_peer_kinds, iterations=tasks_peer_iterations,
    warmup=tasks_peer_iterations // 10, launch_iterations=tasks_peer_launch_iterations,
    task_count=tasks_peer_tasks, thread_count=tasks_peer_threads, repeats=tasks_peer_repeats,
    points=min(tasks_memory_points, 6), cpu=tasks_cpu))

# %% [markdown]
# ## Threads and processes
#
# The kernel-task rows: one switch of a futex ping-pong between two threads (and between a
# thread and a forked process) both pinned to the same CPU, measured here in bare batches
# (notebook 4's kernel); their round trips, each timed, are notebook 4's sweep; the
# thread's memory per idle thread by slope over thread counts, including the kernel-side
# memory (kernel stacks, page tables, slab) that RSS does not show, and its
# `pthread_create` and whole-life times are notebook 2's and notebook 3's numbers: the
# same values those pages print.

# %%
kernel_switches = {  # stored under names of their own: the claims read notebook 04's runs
    kind: store.get(experiment, lambda k=kind: kernel_task_switch.run(
        kind=k, iterations=tasks_kernel_switch_iterations), announce=False)
    for kind, experiment in kernel_task_switch.EXPERIMENTS.items()
}
switch_numbers = kernel_rows.switch_findings(kernel_switches, data_dir, store.machine_id)
thread_numbers = kernel_rows.thread_findings(data_dir, store.machine_id)
kernel_round_trips = kernel_rows.sweep_round_trips(data_dir, store.machine_id)
display(Markdown(kernel_rows.missing_text(switch_numbers, thread_numbers, kernel_round_trips)))

# %% [markdown]
# ## The table: switch time and memory per task
#
# **One switch** is the paper's one definition, the same as the headline's: half the
# mean round trip of a batch of round trips timed whole, with no clock read inside, both
# tasks pinned to one CPU (the median of runs where there are several). The round-trip
# columns are another quantity: the distribution of single round trips (two switches:
# there and back), each timed with one clock read, p50 and p99, never halved. Memory is **per task**, the slope over
# many idle tasks; "kernel memory" is what the kernel holds for each thread outside
# the process's RSS (user-space tasks have none of their own: they live inside one
# thread). Each row says how it was measured; a row without numbers says why.

# %%
rows = (kernel_rows.kernel_task_rows(switch_numbers, thread_numbers, kernel_round_trips)
        + view.fiber_rows(fiber_results) + view.goroutine_rows(go_result, go_pinning)
        + [row for r in stored.present(peer_result) for row in runtimes_view.peer_rows(r)])
table = view.comparison_table(rows)
display(table)
display(Markdown(view.switch_note_text(rows)))
display(Markdown("Round-trip distributions (ns): each sample is one round trip (two "
                 "switches) timed with one clock read inside it, so these are not halved "
                 "into switches; the mean is the samples' mean."))
display(view.switch_distribution_table(rows))

# %%
fig = tasks_figures.switch_figure(rows)
saved = plotting.save_figure(fig, "tasks_switch_time", figures_dir)

# %%
fig = tasks_figures.memory_figure(rows)
saved = plotting.save_figure(fig, "tasks_memory_per_task", figures_dir)

# %%
display(Markdown(view.switch_ratio_text(rows)))

# %%
display(Markdown(view.creation_text(fiber_results, thread_numbers)))
fig = tasks_figures.creation_figure(fiber_results,
                              kernel_rows.thread_launch_samples(data_dir, store.machine_id))
saved = plotting.save_figure(fig, "tasks_creation", figures_dir)

# %% [markdown]
# ## Sleepers, from a few hundred to 10,000: memory and CPU of many idle tasks
#
# S4's workload: each task waits a fixed pseudo-random delay (so they do not wake
# together), then sleeps `period` at a time until it has slept `duration`. Three
# variants, each in a fresh process: C threads placed by the scheduler, C threads pinned
# round-robin to the CPUs, and goroutines. Memory is the **growth** of the process's peak
# resident set over its size just before the tasks started; CPU is the process's user and
# system time from the moment every task exists (they wait at a gate while the others are
# created) to the last one's end.
#
# One count says little on a small machine: 10,000 tasks waking every 10 ms ask for
# a million wake-ups a second, and if the CPUs cannot keep up, the run stretches and
# the cost per wake-up changes with it. So the same workload runs at several counts,
# every variant at each, with all tasks created before the clock starts. What is
# drawn is the **CPU per wake-up** (user and system) and the **resident memory per
# task**; points where the CPUs were saturated, or the run fell behind its schedule
# (the rule is printed below), are drawn hollow. This sweep of C threads shows how the
# costs move with the count; the claims (C15, C17) are judged on S4's own program, further
# down, not on it.

# %%
sweep_result = store.get("sleepers_sweep", lambda: sleepers.sweep(
    counts=tasks_sleep_counts, period_ms=tasks_sleep_period_ms,
    duration_ms=tasks_sleep_sweep_duration_ms, stagger_ms=tasks_sleep_stagger_ms,
    repeats=tasks_sleep_sweep_repeats, progress=True))
fig = sweep_view.figure(sweep_result)
saved = plotting.save_figure(fig, "tasks_sleepers_sweep", figures_dir)

# %%
display(Markdown(sweep_view.text(sweep_result)))
display(sweep_view.table(sweep_result))

# %% [markdown]
# ### One million goroutines (C11)
#
# S1's goroutine program as S1 ran it: start one million goroutines that each sleep one
# second, wait for all, and measure the program from outside the way the `time` program
# does (wall clock, and user, system and max RSS from `wait4`). It runs five times, each
# a fresh process, so its times have an interval. If starting them takes longer than one
# sleep, the first end before the last start, so a second program, run once, holds every
# goroutine until all exist: its max RSS is that of all of them asleep at once. Both run
# only when the memory available is at least twice what they should need; otherwise the
# page says so.

# %%
c11 = store.get("goroutines_million", lambda: million.goroutines(
    count=tasks_c11_goroutines, sleep_ms=tasks_c11_sleep_ms, repeats=tasks_c11_repeats))
display(Markdown(million_view.goroutines_text(c11, store.machine_id, data_dir)))
if not c11.summary.get("skipped"):
    display(million_view.goroutines_table(c11))

# %% [markdown]
# ### S4's and S1's programs on Rust threads, goroutines and Tokio (C10, C15-C17)
#
# S4 ran Rust threads (unpinned, and pinned round-robin to the CPUs) against
# goroutines, and read `time`'s max RSS and user and system CPU. The same program runs
# here on the Rust peer (threads, pinned threads, and Tokio tasks beside them) and the
# Go peer (goroutines): the number of workers set for this run (S4: 10,000; the table's
# count column) sleep 10 ms at a time after a staggered start, for the duration set for
# this run (S4: 1000 sleeps, 10 s). Every variant runs several times (the table's
# repeats column), each run a fresh process, the variants in alternating order from one
# repeat to the next, so that a slow minute of the machine falls on all of them. The
# table gives each variant's mean over its repeats.
#
# What C15 and C17 read from these runs, per repeat: the **peak resident set of the
# whole program** (sampled every period, and its VmHWM; what `time` reports as max RSS,
# read by the program itself because `wait4` would also count the pages of the Python
# process that started it), and the **CPU per wake-up**: the program's user and system
# time from the moment every worker exists to the last one's end, divided by the
# wake-ups. S4's 21 s of threads are 21 s / 10 million wake-ups = 2.1 µs each; a run of
# fewer sleeps than his is compared per wake-up, so a shorter run (its duration / 10 ms
# sleeps per worker) reads the same quantity. Two small differences remain: the
# staggered first sleep is one wake-up per worker that the division leaves out (one in
# the sleeps per worker + 1: 1 in 1,001 at S4's 10 s), and S4's `time` also counted the
# creation of the workers, which here happens before the clock starts. A CPU number is
# judged only where the workers kept up with their schedule: a saturated repeat (the
# rule is printed under the table) is shown but not judged (10,000 threads waking every
# 10 ms can saturate a machine of few CPUs).
#
# C16 reads the same runs: S4's "10k threads with default stack sizes need about 40mb
# of page tables" is kernel memory that `time` does not show. Each program reports its
# page tables (VmPTE of `/proc/self/status`, every level) before its first worker, and
# the largest reading from the moment every worker exists; the growth divided by the
# workers is the page tables per Rust thread on `std::thread`'s default 2 MiB stacks
# (S4: 40 MB / 10,000 = 4 KiB). Runs stored before the peers reported VmPTE have none:
# C16 then reads notebook 2's C threads (glibc's default 8 MiB stacks), labelled a
# substitute.
#
# S1 started one million Rust threads: its tasks all sleep at once, as many threads as
# this machine allows without nearing its process-id limit, the million computed from
# them and labelled so.

# %%
s4_rust = store.get("sleepers_s4_peers", lambda: sleepers.run(
    count=tasks_s4_count, period_ms=tasks_sleep_period_ms,
    duration_ms=tasks_s4_duration_ms, stagger_ms=tasks_sleep_stagger_ms,
    variants=["rust_threads", "rust_threads_pinned", "tokio", "goroutines"],
    repeats=tasks_s4_repeats, progress=True),
    experiment="sleepers")
display(runtimes_view.sleepers_table(s4_rust))
display(Markdown(f"Saturated, so not judged: a repeat with the CPUs at least "
                 f"{findings.parameter('stats.SATURATION_SHARE', f'{stats.SATURATION_SHARE:.0%}')} "
                 f"busy, or a run more than "
                 f"{findings.parameter('stats.LATE_FACTOR', f'{stats.LATE_FACTOR - 1:.0%}')} "
                 "longer than its sleeps."))

# %%
s1_rust = store.get("peer_million", lambda: million.peer_tasks(
    kinds=["rust-thread", "tokio-task"], count=tasks_s1_peer_count,
    sleep_ms=tasks_c11_sleep_ms, thread_cap=tasks_s1_thread_cap))
display(runtimes_view.million_table(s1_rust))

# %% [markdown]
# ### Peak memory with every task asleep, per runtime (S6)
#
# Kołaczkowski's measurement (S6): start N tasks that each sleep, and read the peak
# memory of the process. Here every task waits until all exist, then sleeps, so the
# peak is that of all N asleep together. The peak is the program's own high-water mark
# (VmHWM, read by the program itself before it exits): `wait4`'s max RSS, which `time`
# reports, would also count the pages of the Python process that forked it.

# %%
s6_peak = store.get("peer_peak_memory", lambda: million.peer_tasks(
    kinds=["rust-thread", "tokio-task", "goroutine", "java-platform", "java-virtual"],
    count=tasks_s6_count, sleep_ms=tasks_s6_sleep_ms, thread_cap=max(tasks_s6_count, 1),
    gate=True, experiment=million.PEAK_EXPERIMENT))
display(runtimes_view.million_table(s6_peak))

# %% [markdown]
# ## The claims beside this machine
#
# Each claim's statements, judged by the claims layer (`threadcost/claims/`) on the
# runs above: the value measured here with its 95% interval, what the claim's words
# allow, the independent repeats behind it and the verdict (notebook 6 has them all).
# C22 (memory per thread and per task) is judged with the brigade, in notebook 7.

# %%
display(claims_view.claims_section(claims.for_page("05_user_space_tasks"), data_dir,
                                   stored.present(go_result, go_pinning, c11, peer_result,
                                                  s4_rust, s1_rust, s6_peak),
                                   machine_id=store.machine_id))

# %% [markdown]
# ## Compare any two
#
# Pick two rows of the table; the chart shows their numbers side by side and the
# ratio A / B, from the values measured above (in JupyterLab and in the rendered
# paper alike).

# %%
if parameters.interactive(interactive):
    display(task_compare.compare_widget(rows))
else:
    from threadcost.views import charts, tasks_chart

    charts.show(tasks_chart.chart(rows))

# %% [markdown]
# ## What user-space tasks give up
#
# The numbers above are the price list; this is what the cheaper tasks do not buy:
#
# - **No preemption of their own.** A fiber runs until it switches away; one that
#   loops forever starves the others on its thread. Go's runtime preempts goroutines
#   (since Go 1.14, with signals), which is part of what its scheduler costs.
# - **A blocking system call blocks the carrier.** A fiber that calls `read` on a slow
#   socket stops every fiber on that thread. Goroutines avoid it by pairing the
#   scheduler with non-blocking I/O (netpoller) and handing blocked threads off, which
#   is the real reason they scale to many connections, not their size alone.
# - **Parallelism comes from threads anyway.** Fibers on one thread use one CPU; Go
#   multiplexes goroutines over `GOMAXPROCS` threads.
# - **Small stacks need care.** A fixed fiber stack must be sized for the deepest call
#   chain (the guard page turns an overflow into a crash, not a corruption). Go grows
#   stacks by copying, which needs compiler support that C does not have.
# - **Tools know threads.** Debuggers, profilers, `top` and thread-local storage all
#   see kernel threads; user-space tasks are invisible to them without extra support.
#
# Kernel threads are not as heavy as their 8 MiB virtual stacks suggest: what they
# really cost is the kernel switch (measured on this machine in the table of switch
# time and memory per task above, and in notebook 4, from two threads on one CPU to a
# wake-up on another CPU) and some kernel memory per thread. Whether that matters depends on how much work a task does
# between switches.
