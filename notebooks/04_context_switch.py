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
# # 4. What does a context switch cost?
#
# Two tasks pass a token back and forth. Side A hands it to side B and waits; B
# wakes, hands it back and waits; A wakes. That is one **round trip**: two hops,
# and normally two context switches (each side leaves the CPU once while it
# waits). We time every round trip, so what comes out is a distribution, not a
# single average.
#
# What varies:
#
# - **mechanism**: how the token travels: a pipe each way (1 byte), a mutex with a
#   condition variable, a bare futex word per side, an eventfd each way;
# - **placement**: both tasks pinned to one CPU (`same-cpu`: every hop is a real
#   switch on that CPU), pinned to two CPUs (`cross-cpu`: each side sleeps and is
#   woken by the other CPU), or left to the scheduler (`unpinned`). Pinning is set
#   inside the C kernel with `sched_setaffinity` and checked with `sched_getcpu`
#   on every round trip;
# - **tasks**: two threads of one process, or a thread and a forked child process
#   (whose switches change the address space).
#
# The **number of switches** is not assumed: both sides read `getrusage` around
# the timed region, and the time per counted switch is the round trip divided by the
# switches counted per round trip. The paper's **one switch** (page 0, used on every
# page) is half the mean round trip of a run timed whole, without a clock read inside:
# C02's pinned runs below measure it. Baselines measured in the same run show what a
# hop costs without any switch (one task doing the same calls alone), an empty
# system call, an uncontended lock, and the timer itself.
#
# Published claims checked here: **C01** (S0: 1.2 to 1.5 µs per switch, two threads
# pinned to one core), **C02** (S0: about 2.2 µs unpinned), **C03** (S0: pipe echo at
# about 400,000 iterations/s pinned, about half unpinned), **C13** and **C14** (S3:
# five CPU-bound tasks on one core as threads vs processes, without and with an 8 MB
# working set each, replicated as S3 ran it).

# %% tags=["parameters"]
# Parameters (papermill: -p NAME VALUE, a list as YAML: -p NAME '[1, 2]', or -f params/<set>.yaml)
from typing import Optional  # papermill reads these annotations, not "X | None"

switch_mechanisms: list[str] = ["pipe", "condvar", "futex", "eventfd"]  # token paths to compare
switch_placements: list[str] = ["same-cpu", "cross-cpu", "smt-siblings", "unpinned"]  # skipped if absent
switch_tasks: list[str] = ["threads", "processes"]  # what the two sides are
switch_iterations: int = 20000  # timed round trips per configuration
switch_warmup: int = 2000  # untimed round trips before each
switch_baseline_scale: float = 1.0  # share of the default baseline batches (quick: less)
switch_working_sets_kib: list[int] = [0, 64, 512, 4096, 8192, 32768]  # KiB written per side per hop
switch_ws_seconds_per_point: float = 0.5  # about this long per working-set point
switch_ws_iterations: int = 20000  # upper bound on round trips per point
switch_echo_iterations: int = 10000  # echoes per run (C03)
switch_echo_repeats: int = 5  # runs per placement, alternating
switch_echo_message_bytes: int = 16  # bytes per echoed message
switch_placement_repeats: int = 5  # C02: pinned/unpinned ping-pong pairs, alternating
switch_placement_iterations: int = 10000  # round trips per run of those pairs
switch_perf_rounds: int = 3  # perf bench vs threadcost, alternating rounds
switch_perf_iterations: int = 30000  # round trips per round, for both tools
switch_timing_rounds: int = 3  # per-sample stamps vs whole-run timing rounds
cpu_bound_tasks: int = 5  # CPU-bound tasks sharing one CPU (S3: 5)
cpu_bound_run_s: float = 0.8  # seconds of CPU one run without a working set is sized to
cpu_bound_ws_run_s: float = 0.4  # seconds of CPU one run with the working sets is sized to
cpu_bound_limit: Optional[int] = None  # prime-count limit without a working set (S3: 30000; None: sized to cpu_bound_run_s)
cpu_bound_ws_limit: Optional[int] = None  # outer iterations with the working set (None: sized to cpu_bound_ws_run_s)
cpu_bound_ws_ints: int = 1000000  # 64-bit integers per task (S3: 1M, 8 MB)
cpu_bound_repeats: int = 5  # runs per condition, threads and processes alternating
data_dir: Optional[str] = None  # None: your runs/ (git-ignored; $THREADCOST_DATA_DIR), then the committed data/
figures_dir: Optional[str] = None  # None: build/figures/ ($THREADCOST_FIGURES_DIR); relative: inside build/
save: bool = True  # store what this notebook makes: runs under runs/<machine>/<run>/, figures under build/figures/
measure: bool = True  # False: measure nothing, draw from the stored runs of machine_id
machine_id: Optional[str] = None  # with measure False: the machine folder to draw (runs/, else data/), None: this one
interactive: bool = False  # True: live ipywidgets; False: static Vega-Lite charts (paper, papermill), live in `make lab`

# %%
from IPython.display import Markdown, display

from threadcost import claims, findings, textout
from threadcost.experiments import parameters
from threadcost.experiments.context_switch import cpu_bound, echo, yardsticks
from threadcost.experiments.context_switch import run as cs
from threadcost.notebook import plotting, stored
from threadcost.views import claims as claims_view
from threadcost.views import context_switch as view
from threadcost.views import cpu_bound as cpu_view
from threadcost.views import machine_line

parameters.check("04_context_switch", globals())  # a bad value names its parameter

plotting.use_paper_theme()
store = stored.Store(measure, save, data_dir, machine_id)
fp = store.fingerprint
display(Markdown(
    f"**Machine:** {machine_line.markdown(fp)} SMT sibling groups: {textout.cpu_groups(fp['smt_siblings'])}; "
    f"clock source `{fp['clocksource']}`"
    + (f"; transparent huge pages `{cs._thp_mode()}`." if measure else ".")))


# %% [markdown]
# ## Measure every mechanism, placement and task kind
#
# Each configuration runs its warm-up, then its timed round trips, in threads
# created by the kernel (the notebook's own thread is only the watchdog: if a
# partner stops answering, the run ends with an error instead of hanging).
# Placements this machine cannot provide (two CPUs, SMT siblings) are listed as
# skipped, with the reason.

# %%
each_measured = {}


def _sweep():
    combined, configs = cs.sweep(switch_mechanisms, switch_placements, switch_tasks,
                                 switch_iterations, switch_warmup,
                                 baseline_scale=switch_baseline_scale)
    each_measured.update(configs)
    return combined


sweep = store.get("context_switch", _sweep)
# The configurations drawn one by one below are stored with their samples as well.
each = {key: store.get("context_switch_" + "_".join(key), lambda k=key: each_measured.get(k),
                       experiment="context_switch_config", announce=False)
        for key in [("pipe", "same-cpu", "threads"), ("pipe", "unpinned", "threads"),
                    ("pipe", "cross-cpu", "threads")]}
each = {key: value for key, value in each.items() if value is not None}
if sweep.summary["skipped"]:
    display(Markdown(view.skipped_text(sweep)))
if view.pair_text(sweep):
    display(Markdown(view.pair_text(sweep)))

# %% [markdown]
# ## Distributions
#
# Each curve is the empirical distribution (ECDF) of one configuration's round
# trips: read across at 0.5 for the median, at 0.99 for the 99th percentile. The
# time axis is logarithmic, because the tail (a round trip that waited for
# another process, an interrupt, a migration) is orders of magnitude longer than
# the body. Colour is the mechanism, solid lines are threads and dashed lines are
# processes. Every time is **per round trip** (two hops).

# %%
fig = view.distributions_figure(sweep)
plotting.save_figure(fig, "switch_distributions", figures_dir)

# %%
display(view.percentiles_table(sweep))

# %%
def show(name, *results):
    """A finding of this page, marked with its name (the sweep's and the rerun's runs)."""
    return findings.show(name, data_dir, store.machine_id,
                         results=[r for r in results if r is not None] or None)


head = each.get(("pipe", "same-cpu", "threads"))
if head is not None:
    s = head.summary
    display(Markdown(
        f"Two threads pinned to CPU {s['cpus_seen'][0]} passing one byte through pipes took "
        f"**{show('switch_pipe_pinned_round_trip_median_ns', sweep)}** per round trip at the "
        f"median ({s['completed']:,} round trips, each timed with one clock read). getrusage "
        f"counted **{show('switch_pipe_pinned_counted_per_round_trip_mean', sweep)}** per "
        "round trip: the two hand-overs, so one switch is half a round trip. The paper's "
        "one switch is half the mean round trip of a run timed whole, with no clock read "
        "inside: C02's pinned runs, below, measure it for this ping-pong."))

# %% [markdown]
# ### Are there really two switches per round trip?
#
# Usually, but not always, and this is why they are counted. With a condition
# variable, the woken thread must also take the mutex, which the thread that
# signalled it may still hold: it sleeps once more, an extra switch. Across CPUs a
# side may find the token already there and never sleep: fewer switches. Involuntary
# switches (another task, from this study or anyone else's, preempting a side) add
# to the count too.

# %%
display(Markdown(view.switch_count_text(sweep)))

# %% [markdown]
# ## Baselines: what a hop costs without a switch
#
# Measured in the same run on the same CPU as side A. A **lone hop** is one
# task doing a hop's calls on its own objects (write then read its own pipe; wake a
# futex nobody waits on, then wait on a word that already changed; signal a
# condition variable nobody waits on). All numbers are **ns per operation**.

# %%
display(view.baselines_table(sweep))

# %%
# the headline configuration once more, now with its own baselines on its CPU
head_full = store.get("context_switch_headline", lambda: cs.run(
    "pipe", "same-cpu", "threads", switch_iterations, switch_warmup,
    baseline_scale=switch_baseline_scale), experiment="context_switch_headline")
s = head_full.summary
share = findings.get("instrumentation_rerun_share_pct", data_dir, store.machine_id,
                     results=[head_full])
display(Markdown(
    f"Rerun with its baselines, the same configuration took "
    f"{show('switch_pipe_pinned_rerun_round_trip_median_ns', head_full)} per round trip at "
    f"the median. Subtracting two lone hops "
    f"({show('pipe_lone_hop_rerun_median_ns', head_full)} each: the pipe write + read "
    f"without a partner) and dividing by the switches the kernel counted leaves "
    f"**{show('switch_pipe_pinned_net_per_counted_median_ns', head_full)} per counted "
    f"switch** for the switch itself: the scheduler, the wake-up and the change of "
    f"registers and stack. The timer and the CPU notes add about "
    f"{show('instrumentation_rerun_mean_ns', head_full)} per round trip "
    f"({findings.span(share, share.number() + '%') if share.measured else 'not measured'} of "
    f"the median)."))

# %% [markdown]
# ## Unpinned: which CPU did each round trip use?
#
# Unpinned, the scheduler may keep both tasks on one CPU (a cheap wake-up on the
# same runqueue) or spread them over two (a wake-up by inter-processor interrupt, with
# the other CPU possibly idle and asleep). Both sides note their CPU on every
# round trip, so the unpinned distribution can be split into the two cases. When
# both cases occur, they show as two humps in the histogram: this choice, not noise.

# %%
unpinned = each.get(("pipe", "unpinned", "threads"))
if unpinned is not None:
    fig = view.unpinned_split_figure(unpinned)
    plotting.save_figure(fig, "switch_unpinned_split", figures_dir)
    s = unpinned.summary
    same, diff = s.get("round_trip_ns_same_cpu"), s.get("round_trip_ns_different_cpus")
    text = (f"Unpinned, both threads shared a CPU for "
            f"**{show('switch_pipe_unpinned_same_cpu_share_pct', unpinned)}** of the "
            f"{s['completed']:,} round trips")
    if same and same["n"]:
        text += f" (median {show('switch_pipe_unpinned_same_cpu_round_trip_median_ns', unpinned)})"
    if diff and diff["n"]:
        text += (f"; on different CPUs the median was "
                 f"{show('switch_pipe_unpinned_two_cpus_round_trip_median_ns', unpinned)}")
    if s["same_cpu_share"] in (0.0, 1.0):
        text += (". Every round trip took the same path in this run, so the distribution "
                 "has one hump, not two")
    display(Markdown(text + "."))

# %% [markdown]
# ## Threads vs processes running CPU-bound work (C13, C14)
#
# S3's own experiment, replicated: five tasks that count primes the naive way, all
# pinned to one CPU, run as five threads of one process and as five processes. In
# the second condition each task also writes every integer of its own array (S3: one
# million integers, 8 MB) at the start of every outer iteration, so each switch
# hands the CPU to a task whose memory is not in the caches and, between processes,
# not in the TLB either. Every task first faults its array in and waits at a start
# gate; the clock starts when the gate opens. Per task we read its own user and
# system time (`getrusage(RUSAGE_THREAD)`, the same call for a thread and for a
# process's single thread), its CPU clock, and, where `perf_event_open` is allowed,
# its dTLB load misses and context switches. The whole-run system time is what
# `time` would print (the process plus its children, fork and exit included).
# Threads and processes alternate run by run, each run in a fresh child process.
# S3's LIMIT of 30,000 ran for minutes, and any fixed size lasts twice as long on a
# CPU whose division is twice as slow, so the loops are sized by time instead: a
# short calibration before the timed runs (the same tasks as threads, in probes of
# growing size) chooses the prime limit and the working-set iterations so that one
# run lasts about a chosen time of CPU on this machine, one without a working set and
# one with it (two of this notebook's parameters). The text under the tables gives both
# times and says how large the loops came out.

# %%
cpu = store.get("cpu_bound", lambda: cpu_bound.run(
    tasks=cpu_bound_tasks, limit=cpu_bound_limit, ws_limit=cpu_bound_ws_limit,
    ws_ints=cpu_bound_ws_ints, repeats=cpu_bound_repeats, run_s=cpu_bound_run_s,
    ws_run_s=cpu_bound_ws_run_s))
fig = cpu_view.totals_figure(cpu)
plotting.save_figure(fig, "cpu_bound_totals", figures_dir)

# %%
display(cpu_view.totals_table(cpu).style.format(precision=3, na_rep="-"))
display(cpu_view.ratios_table(cpu).style.format({"processes / threads": "{:.3f}"}, na_rep="-"))
display(Markdown(cpu_view.summary_text(cpu) + " " + cpu_view.perf_text(cpu) + " "
                 + cpu_view.sizing_text(cpu, store.machine_id)))

# %%
display(claims_view.claims_section(claims.for_experiment("cpu_bound"), data_dir, stored.present(cpu),
                                   machine_id=store.machine_id))

# %% [markdown]
# ## A working set in the ping-pong
#
# A switch between two threads keeps the address space; a switch between two
# processes changes it (a new page-table root; with PCID the TLB entries may
# survive, tagged). Cache and TLB effects show up only when the tasks have memory to
# lose, so here each side writes W KiB of its own memory (one word per 64-byte line)
# on every hop, pinned to one CPU, with the lmbench `lat_ctx -s` idea. The warm cost of
# writing W once, measured alone, is subtracted twice per round trip: what is left is
# the switches plus the cache and TLB misses the other task caused.

# %%
ws = store.get("context_switch_working_set", lambda: cs.working_set_sweep(
    switch_working_sets_kib, switch_tasks, iterations=switch_ws_iterations,
    seconds_per_point=switch_ws_seconds_per_point))
fig = view.working_set_figure(ws)
plotting.save_figure(fig, "switch_working_set", figures_dir)
display(view.working_set_table(ws))

# %% [markdown]
# ## Echo rate (C03)
#
# S0's second benchmark writes a short message into one pipe and reads it back from
# another, with a thread echoing between them; its rate is iterations per second.
# Each run is timed as a whole, like the original; runs alternate between
# placements so that background load hits both alike.

# %%
echo_result = store.get("echo", lambda: echo.run(
    ["same-cpu", "unpinned"] + (["cross-cpu"] if "cross-cpu" in switch_placements
                                and len(fp["affinity"]) > 1 else []),
    switch_echo_iterations, switch_echo_message_bytes, switch_echo_repeats))
fig = view.echo_figure(echo_result)
plotting.save_figure(fig, "switch_echo_rate", figures_dir)
display(Markdown(view.echo_text(echo_result, data_dir, saved=save)))

# %% [markdown]
# ## Pinned vs unpinned, repeated (C02)
#
# S0 timed its pipe and condition-variable ping-pongs with both threads pinned to one
# core and unpinned. Here each is run as independent pairs of runs, a fresh pair of
# threads each time, the two placements alternating in order (A B, B A, ...); each run
# is timed as a whole, and one switch is half its mean round trip: S0's definition, and
# the paper's.

# %%
placed = store.get("context_switch_placement", lambda: cs.placement_repeats(
    cs.CLAIM_MECHANISMS, switch_placement_repeats, switch_placement_iterations, switch_warmup))
if placed.summary.get("skipped"):
    display(Markdown(f"**Pinned against unpinned not run here:** {placed.summary['skipped']}."))
else:
    display(view.placement_table(placed, store.machine_id, data_dir))

# %% [markdown]
# ## Cross-checks: `perf bench sched pipe`, and the cost of timing every round trip
#
# `perf bench sched pipe -T` is the kernel developers' own pipe ping-pong between two
# threads; one of its "ops" is one round trip. It runs here pinned to the same CPU as
# our runs on one CPU, alternating with our kernel timed as a whole. Then our kernel
# runs with and without per-round-trip stamps, alternately, to show that stamping
# every sample does not change the answer.

# %%
perf = store.get("context_switch_perf_check", lambda: cs.perf_cross_check(
    switch_perf_rounds, switch_perf_iterations, "same-cpu"))
p = perf.summary
if p["perf_available"]:
    display(view.perf_rounds_table(perf))
    display(Markdown(
        f"Mean round trip (median over rounds): perf "
        f"**{show('perf_bench_pipe_round_trip_mean_ns', perf)}**, threadcost "
        f"**{show('perf_check_ours_round_trip_mean_ns', perf)}**; ratio threadcost / perf = "
        f"**{show('perf_check_ours_over_perf_ratio', perf)}**."))
else:
    display(Markdown(f"**perf cross-check not run:** {p['reason']}."))
timing = store.get("context_switch_timing_check", lambda: cs.timing_check(
    switch_timing_rounds, switch_iterations))
t = timing.summary
display(Markdown(
    f"With a stamp per round trip the mean (median over rounds) was "
    f"{show('timing_check_stamped_round_trip_mean_ns', timing)}; timed only as "
    f"a whole, {show('timing_check_whole_round_trip_mean_ns', timing)}: ratio "
    f"**{show('timing_check_stamped_over_whole_ratio', timing)}**."))

# %% [markdown]
# The benchmark targets this kernel was built to meet, as measured in this run (a target
# missed on a busy or virtual machine is shown as missed, not hidden):

# %%
display(cs.targets(head_full, perf, timing).style.hide(axis="index"))

# %% [markdown]
# ## The claims beside this machine
#
# C01 and C02 quote time **per switch**, which S0 took to be half the mean round trip of
# a run timed whole, the paper's own definition: the claims read it so. The tables'
# time per counted switch divides by the switches actually counted (see above): where 2
# were counted the two agree; where more were counted (condition variables) it is the
# smaller. A ratio above 1 means slower (or larger) here.
# The verdicts come from the claims layer (`threadcost/claims/`), judged on the runs
# above; C01's comparison with a 64 KiB memcpy is measured by the yardsticks at the
# end of this notebook, and judged there.

# %%
yard_claims = claims.for_experiment("yardsticks")  # C01, C09: with the yardsticks, below
switch_claims = [c for c in claims.for_page("04_context_switch") if c not in yard_claims]
verdicts = claims.judge(store.machine_id, data_dir,
                        stored.present(sweep, ws, echo_result, placed, cpu))
display(claims_view.style(claims_view.assertions_table(verdicts, switch_claims)
                          .drop(columns=["read from"])))
fig = claims_view.figure(verdicts, switch_claims)
plotting.save_figure(fig, "switch_claims", figures_dir)

# %% [markdown]
# ## Explore
#
# Choose a mechanism, a placement and threads or processes: the distribution and its
# percentiles redraw. In JupyterLab, configurations measured above are shown as
# measured and others are measured on the spot; in the rendered paper the chart
# switches between the configurations this run measured (`make lab` measures others).

# %%
if parameters.interactive(interactive):
    display(view.explorer(each, iterations=min(switch_iterations, 5000)))
else:
    from threadcost.views import charts, context_switch_chart

    charts.show(context_switch_chart.chart(sweep))

# %% [markdown]
# ## What this means

# %%
s = head_full.summary
text = (f"On this machine a pipe switch between two threads sharing a CPU (the paper's one "
        "switch: half the mean round trip of a run timed whole, no clock read inside, the "
        "median of C02's pinned runs) cost "
        f"**{show('switch_pipe_pinned_batch_median_ns', *stored.present(placed))}** with the "
        "pipe calls around it. Timed one at a time (one clock read each), the median round "
        f"trip was {show('switch_pipe_pinned_rerun_round_trip_median_ns', head_full)} in the "
        "rerun with its baselines"
        + (f" ({show('switch_pipe_pinned_round_trip_median_ns', sweep)} in the sweep above)"
           if head is not None else "")
        + f", and about **{show('switch_pipe_pinned_net_per_counted_median_ns', head_full)}** "
        "per counted switch beyond those calls. ")
cross = each.get(("pipe", "cross-cpu", "threads"))
slower = findings.ratio(
    findings.get("switch_pipe_cross_cpu_round_trip_median_ns", data_dir, store.machine_id,
                 results=[cross] if cross is not None else None),
    findings.get("switch_pipe_pinned_rerun_round_trip_median_ns", data_dir, store.machine_id,
                 results=[head_full]))
if cross is not None and slower is not None:
    text += (f"Spread over two CPUs, the same ping-pong took **{slower[1]}** as long "
             f"per round trip: the wake-up crosses CPUs and the other CPU may be asleep. ")
pts = ws.tables["points"]
big = pts[pts.working_set_kib == pts.working_set_kib.max()]
parts = []
for row in big.itertuples():
    extra = row.round_trip_minus_touch_p50_ns / 1000
    name = f"switch_working_set_largest_{row.tasks}_extra_median_ns"
    parts.append(f"{row.tasks} {show(name, ws)}" if extra > 0 else
                 f"{row.tasks} no measurable time (the difference, {show(name, ws)}, is below "
                 "the noise of timing the touch alone)")
if parts:
    size = findings.parameter("switch_working_sets_kib",
                              f"{int(big.working_set_kib.iloc[0]):,} KiB")
    text += (f"With {size} written per side per hop, the "
             "round trip took, beyond the touching itself: " + "; ".join(parts) + ". ")
text += cpu_view.conclusion_text(cpu) + " "
display(Markdown(text + "The direct cost of a switch is small; what a switch does to the "
                 "caches, and where the scheduler puts the two tasks, can cost more. Notebook 5 "
                 "sets these kernel switches beside user-space switches (fibers and goroutines)."))

# %% [markdown]
# ## Yardsticks: the machine's speed at the pieces a switch is made of
#
# Operations that involve no second thread: an empty system call, one thread
# writing a byte into a pipe and reading it back (the system calls of a ping-pong
# without the switch), a 64 KiB memcpy with both buffers in cache and one with both in
# no cache (as S0-code's 3 µs copy). Each repeat times them in turn, with a pinned pipe
# switch (a wake-up on the same CPU) and the same ping-pong across two CPUs, once with
# the partner CPU idle and once kept busy by a lowest-priority spinner: the difference
# is what idling and waking a CPU adds to a wake-up. They put this machine's numbers on a measured scale: a switch that
# costs many empty system calls, or a published number from a machine whose memcpy
# was slower, can be read for what it is, instead of blamed on "a virtual machine".
# C01's practical point, that a switch is cheaper than copying 64 KiB, and C09's
# 64 KiB memcpy are judged here from the same repeats (C09's launch times are on page 3).

# %%
yard = store.get("yardsticks", lambda: yardsticks.run(
    repeats=max(switch_echo_repeats, 1),
    scale=min(1.0, switch_iterations / yardsticks.SWITCH_ROUND_TRIPS)))
display(claims_view.style(claims_view.yardsticks_table(yard), column="yardstick"))
if yard.summary.get("not_run"):
    display(Markdown(f"**Wake-ups on another CPU not run here:** {yard.summary['not_run']}."))
display(claims_view.claims_section(yard_claims, data_dir, stored.present(yard),
                                   machine_id=store.machine_id, without=("launch",)))
