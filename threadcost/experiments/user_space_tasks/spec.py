"""The user space tasks family's spec: its experiments, their tables, its notebook's
parameters and their checks (:mod:`threadcost.experiments.specs`)."""

from __future__ import annotations

from threadcost import peers
from threadcost.experiments.context_switch.spec import CONTEXT_SWITCH_CONFIG_SAMPLES
from threadcost.experiments.launch.spec import LAUNCH_DISTRIBUTIONS, LAUNCH_MEMCPY, LAUNCH_SAMPLES
from threadcost.experiments.specs import (
    Check,
    Constant,
    Derived,
    Experiment,
    Table,
    columns,
    family,
    param,
)
from threadcost.experiments.thread_memory.spec import THREAD_MEMORY_POINTS

SLEEPERS_SWEEP_POINTS = columns(
    time="planned_s wall_s spawn_s user_s sys_s cpu_s cpu_us_per_wakeup user_us_per_wakeup "
         "sys_us_per_wakeup",
    count="repeat count cpus tasks wakeups peak_os_threads",
    amount="rss_before_kib peak_rss_kib cpu_busy page_tables_before_kib peak_page_tables_kib",
    signed="rss_growth_kib rss_per_task_kib vsz_growth_kib vsz_per_task_kib "
           "page_tables_growth_kib page_tables_per_task_kib",
    flag="cpu_bound late saturated",
    text="variant not_run")

PEER_MILLION_RUNS = columns(
    time="spawn_s wall_s user_s sys_s user_s_at_count sys_s_at_count",
    count="requested measured_count finished alive_at_spawn_end max_rss_kib_at_count",
    amount="max_rss_kib wait4_maxrss_kib scale",
    signed="max_rss_kib_per_task",
    text="kind label count_bound at_count_label version not_run")

PARAMETERS = (
    param('tasks_cpu', 'Union[int, str]', 'auto',
          'CPU of the fiber/goroutine switches ("auto": first usable)',
          feeds=('fibers.run',)),
    param('tasks_switch_iterations', 'int', 200000,
          'timed round trips per fiber implementation', minimum=1,
          maximum=10_000_000,
          feeds=('fibers.run',)),
    param('tasks_warmup', 'int', 20000,
          'untimed round trips before timing', minimum=0, maximum=10_000_000,
          feeds=('fibers.run', 'goroutines.pinning_run')),
    param('tasks_fiber_impls', 'list[str]', ['asm', 'ucontext'],
          'hand-written switch and glibc swapcontext', choices=('asm', 'ucontext')),
    param('tasks_fiber_count', 'int', 2000,
          'idle fibers per memory run (RSS/VSZ by slope)', minimum=3,
          feeds=('fibers.run:count',)),
    param('tasks_fiber_stack_kib', 'int', 64,
          'stack of each fiber, KiB (plus a guard page)', unit='KiB', minimum=16,
          maximum=1 << 20,
          feeds=('fibers.run:stack_kib',)),
    param('tasks_touch_kib', 'list[int]', [0, 4, 8, 16, 32, 48],
          'KiB of its stack each idle fiber writes', unit='KiB', minimum=0,
          feeds=('fibers.run',)),
    param('tasks_memory_points', 'int', 11,
          '/proc/self/status readings per memory run', minimum=3, maximum=1000,
          feeds=('fibers.run:points',)),
    param('tasks_go_iterations', 'int', 200000,
          'timed goroutine round trips per mode', minimum=1, maximum=10_000_000,
          feeds=('goroutines.check_params:iterations',)),
    param('tasks_goroutines', 'int', 10000,
          'idle goroutines for the memory slope', minimum=3, maximum=1_000_000),
    param('tasks_sleep_period_ms', 'int', 10,
          'each sleep, ms (C15: 10 ms)', unit='ms', minimum=1,
          maximum=1000,
          feeds=('goroutines.check_params:period_ms', 'sleepers.run:period_ms',
                 'sleepers.sweep:period_ms')),
    param('tasks_sleep_stagger_ms', 'int', 200,
          'start delays spread below this, ms (C15: 200 ms)', unit='ms', minimum=0,
          maximum=10_000,
          feeds=('sleepers.run:stagger_ms', 'sleepers.sweep:stagger_ms')),
    # page 05's kernel-task switch (threadcost.experiments.user_space_tasks.kernel_task_switch);
    # the thread row's memory and launch are notebooks 02's and 03's findings, measured there
    param('tasks_kernel_switch_iterations', 'int', 50000,
          'thread/process round trips (futex, same CPU): a tenth in each bare batch',
          minimum=1, maximum=10_000_000,
          feeds=('kernel_task_switch.run:iterations',)),
    param('tasks_sleep_counts', 'list[int]', [300, 1000, 3000, 10000],
          'sleeper counts of the sweep', minimum=1, maximum=100_000,
          feeds=('sleepers.sweep:counts',), narrowed=True),
    param('tasks_sleep_sweep_duration_ms', 'int', 100,
          'total sleep of each task in the sweep, ms', unit='ms', minimum=1,
          maximum=600_000,
          feeds=('sleepers.sweep:duration_ms',)),
    # One repeat (was 2: 24 runs, 13 s of make paper, now 12 runs): no claim reads the sweep,
    # and its figure's gaps outlast a repeat's spread. Stored runs with 2 repeats: CPU per
    # wake-up differed between the repeats by a median 4.9% (max 10.8%) on this project's
    # 2-CPU Intel host, 7.1% (max 26.6%) and 31% (max 44%) on the two AMD folders; RSS per
    # task by at most 3.6%; while threads take 1.6x..11x the CPU per wake-up of goroutines
    # and 2-3x their RSS per task at every count. More repeats: -p tasks_sleep_sweep_repeats.
    param('tasks_sleep_sweep_repeats', 'int', 1,
          "repeats of every point of the sweep's figure, interleaved (no claim reads it)",
          minimum=1, maximum=100,
          feeds=('sleepers.sweep:repeats',)),
    param('tasks_c11_goroutines', 'int', 1000000,
          'C11: goroutines sleeping at once (S1: 1,000,000)', minimum=1,
          maximum=10_000_000,
          feeds=('million.goroutines:count',)),
    param('tasks_c11_sleep_ms', 'int', 1000,
          'how long each sleeps, ms (S1: 1 s)', unit='ms', minimum=0, maximum=60_000,
          feeds=('million.goroutines:sleep_ms', 'million.peer_tasks:sleep_ms')),
    param('tasks_c11_repeats', 'int', 5,
          "C11: runs of S1's program (its wall, user and system times are judged over them)",
          minimum=1, maximum=50,
          feeds=('million.goroutines:repeats',)),
    param('tasks_go_launch_iterations', 'int', 20000,
          'goroutine launches (go, first run, wg.Done, Wait)', minimum=1, maximum=10_000_000,
          feeds=('goroutines.launch_run:iterations',)),
    param('tasks_go_pinning_repeats', 'int', 7,
          'C04: pinned/default pairs, alternating', minimum=2, maximum=1000,
          feeds=('goroutines.pinning_run:repeats',)),
    param('tasks_go_pinning_iterations', 'int', 200000,
          'round trips per C04 run', minimum=1000, maximum=10_000_000,
          feeds=('goroutines.pinning_run:iterations',)),
    param('tasks_peer_kinds', 'list[str]', list(peers.PAGE5_KINDS),
          "the peers' rows of the table", choices=(*peers.PAGE5_KINDS, peers.ALL)),
    param('tasks_peer_iterations', 'int', 10_000,
          'timed round trips per peer kind (pinned)', minimum=10, maximum=10_000_000,
          feeds=('runtimes.check_params:iterations',)),
    param('tasks_peer_launch_iterations', 'int', 1000,
          'launches per peer kind (pinned)', minimum=10, maximum=1_000_000),
    param('tasks_peer_tasks', 'int', 10_000,
          'idle tasks per memory slope (Tokio, Java virtual threads)', minimum=3,
          maximum=1_000_000),
    param('tasks_peer_threads', 'int', 1000,
          'idle threads per memory slope (Rust, Java platform threads)', minimum=3, maximum=8_000),
    param('tasks_peer_repeats', 'int', 5,
          'repeats of each peer switch (fresh processes)', minimum=1, maximum=100,
          feeds=('runtimes.check_params:repeats',)),
    param('tasks_s4_count', 'int', 10_000,
          "S4's program on Rust threads, goroutines and Tokio: workers (S4: 10,000)",
          minimum=1, maximum=100_000,
          feeds=('sleepers.run:count',), narrowed=True),
    param('tasks_s4_duration_ms', 'int', 250,
          'sleep of each worker, ms (S4: 1000 sleeps of 10 ms, 10 s; C17 is per wake-up)',
          unit='ms', minimum=1, maximum=600_000,
          feeds=('sleepers.run:duration_ms',)),
    param('tasks_s4_repeats', 'int', 5,
          'C15, C17: runs of every variant (fresh processes, variants interleaved)', minimum=1,
          maximum=100,
          feeds=('sleepers.run:repeats',)),
    param('tasks_s1_peer_count', 'int', 1_000_000,
          "S1's program on Rust threads and Tokio (S1: 1,000,000)", minimum=1,
          maximum=10_000_000,
          feeds=('million.peer_tasks:count',)),
    param('tasks_s1_thread_cap', 'int', 4000,
          'most Rust threads started (the rest computed, labelled)', minimum=1,
          maximum=10_000_000,
          feeds=('million.peer_tasks:thread_cap',)),
    param('tasks_s6_count', 'int', 10_000,
          'S6: tasks asleep at once per runtime (S6: 10k, 100k, 1M)', minimum=1,
          maximum=10_000_000),
    param('tasks_s6_sleep_ms', 'int', 300,
          'how long each sleeps once all exist, ms (S6: 10 s)', unit='ms', minimum=0,
          maximum=60_000),
)

CHECKS = (
    Check("fibers.check_params", {
        "switch_iterations": "tasks_switch_iterations", "count": "tasks_fiber_count",
        "stack_kib": "tasks_fiber_stack_kib", "touch_kib": "tasks_touch_kib",
        "impl": "tasks_fiber_impls", "warmup": "tasks_warmup", "cpu": "tasks_cpu",
        "points": "tasks_memory_points"}, each="impl"),
    Check("goroutines.check_params", {
        "iterations": "tasks_go_iterations", "warmup": "tasks_warmup", "cpu": "tasks_cpu",
        "memory_count": "tasks_goroutines", "memory_points": "tasks_memory_points"},
          fixed={"sleepers_count": 0}),
    Check("goroutines.check_launch_run", {
        "iterations": "tasks_go_launch_iterations",
        "warmup": Derived("tasks_warmup", lambda w: w // 10), "cpu": "tasks_cpu"}),
    Check("goroutines.check_pinning_run", {
        "repeats": "tasks_go_pinning_repeats", "iterations": "tasks_go_pinning_iterations",
        "warmup": "tasks_warmup", "cpu": "tasks_cpu"}),
    Check("runtimes.check_params", {
        "kinds": "tasks_peer_kinds", "iterations": "tasks_peer_iterations",
        "warmup": Derived("tasks_peer_iterations", lambda n: n // 10),
        "launch_iterations": "tasks_peer_launch_iterations", "task_count": "tasks_peer_tasks",
        "thread_count": "tasks_peer_threads", "repeats": "tasks_peer_repeats",
        "points": Derived("tasks_memory_points", lambda n: min(n, 6)), "cpu": "tasks_cpu"}),
    # the kernel-task rows' switch, one check per kind
    *(Check("kernel_task_switch.check_params",
            {"iterations": "tasks_kernel_switch_iterations"}, fixed={"kind": kind})
      for kind in ("thread", "process")),
    Check("sleepers.check_sweep", {
        "counts": "tasks_sleep_counts", "variants": Constant("sleepers.VARIANTS"),
        "period_ms": "tasks_sleep_period_ms", "duration_ms": "tasks_sleep_sweep_duration_ms",
        "stagger_ms": "tasks_sleep_stagger_ms", "repeats": "tasks_sleep_sweep_repeats"}),
    Check("million.check_goroutines", {
        "count": "tasks_c11_goroutines", "sleep_ms": "tasks_c11_sleep_ms",
        "variants": Constant("million.MILLION_VARIANTS"), "repeats": "tasks_c11_repeats"}),
    Check("sleepers.check_params", {
        "count": "tasks_s4_count", "period_ms": "tasks_sleep_period_ms",
        "duration_ms": "tasks_s4_duration_ms", "stagger_ms": "tasks_sleep_stagger_ms",
        "repeats": "tasks_s4_repeats"},
          fixed={"variants": ["rust_threads", "rust_threads_pinned", "tokio", "goroutines"]}),
    Check("million.check_peer_tasks", {
        "count": "tasks_s1_peer_count", "sleep_ms": "tasks_c11_sleep_ms",
        "thread_cap": "tasks_s1_thread_cap"}, fixed={"kinds": ["rust-thread", "tokio-task"]}),
    Check("million.check_peer_tasks", {
        "count": "tasks_s6_count", "sleep_ms": "tasks_s6_sleep_ms",
        "thread_cap": Derived("tasks_s6_count", lambda n: max(n, 1))},
          fixed={"kinds": ["rust-thread", "tokio-task"]}),
)

FAMILY = family(
    "user_space_tasks", "05_user_space_tasks",
    experiments=(
        Experiment("fibers", "user_space_tasks.fibers", (
            Table("round_trips", columns(
                    time="round_trip_ns")),
            Table("memory_points", columns(
                    count="fibers",
                    amount="touch_kib vsz_kib rss_kib rss_anon_kib")),
            Table("per_fiber", columns(
                    time="create_ns_p50 start_ns_p50",
                    fraction="rss_r2 vsz_r2",
                    count="fibers",
                    amount="touch_kib rss_kib vsz_kib",
                    signed="rss_ci95_low rss_ci95_high vsz_ci95_low vsz_ci95_high")),
            Table("creation", columns(
                    time="create_ns start_ns",
                    count="fiber",
                    amount="touch_kib")),
        ), figures=(
            "tasks_fiber_memory",
            "tasks_switch_time",
            "tasks_memory_per_task",
            "tasks_creation",
        )),
        Experiment("peers", "user_space_tasks.goroutines", (
            Table("round_trips", columns(
                    time="round_trip_ns",
                    text="mode")),
            Table("memory_points", columns(
                    amount="vsz_kib rss_kib rss_anon_kib stack_inuse_kib",
                    count="goroutines threads")),
        ), figures=("tasks_switch_time", "tasks_memory_per_task")),
        Experiment("goroutine_launch", "user_space_tasks.goroutines", (
            Table("samples", columns(
                    time="launch_ns")),
        ), figures=("tasks_creation",)),
        Experiment("goroutine_pinning", "user_space_tasks.goroutines", (
            Table("runs", columns(
                    time="batch_round_trip_ns switch_ns_batch round_trip_p50_ns",
                    rate="round_trips_per_s median_rate_per_s",
                    count="repeat gomaxprocs",
                    text="mode")),
            Table("gain", columns(
                    count="pairs",
                    signed="gain_mean ci95_low ci95_high ci95_half_width",
                    flag="resolves_5_percent",
                    text="basis")),
        )),
        Experiment("goroutines_million", "user_space_tasks.million", (
            Table("runs", columns(
                    time="spawn_s wall_s user_s sys_s",
                    count="count finished alive_at_spawn_end gomaxprocs repeat",
                    amount="max_rss_kib",
                    signed="max_rss_kib_per_goroutine",
                    text="variant")),
        )),
        Experiment("sleepers_sweep", "user_space_tasks.sleepers", (
            Table("points", SLEEPERS_SWEEP_POINTS),
        ), figures=("tasks_sleepers_sweep",)),
        Experiment("tasks_switch_thread", "user_space_tasks.kernel_task_switch", (
            Table("samples", CONTEXT_SWITCH_CONFIG_SAMPLES, always=False),
        ), auxiliary=True),
        Experiment("tasks_switch_process", "user_space_tasks.kernel_task_switch", (
            Table("samples", CONTEXT_SWITCH_CONFIG_SAMPLES, always=False),
        ), auxiliary=True),
        Experiment("tasks_thread_memory", "thread_memory.run", (
            Table("points", THREAD_MEMORY_POINTS),
        ), auxiliary=True, retired=True),
        Experiment("tasks_launch", "launch.run", (
            Table("samples", LAUNCH_SAMPLES),
            Table("distributions", LAUNCH_DISTRIBUTIONS, always=False),
            Table("memcpy", LAUNCH_MEMCPY, always=False),
        ), auxiliary=True, retired=True),
        Experiment("sleepers", "user_space_tasks.sleepers", (
            Table("variants", columns(
                    time="wall_s spawn_s user_s sys_s cpu_s cpu_us_per_wakeup "
                         "user_us_per_wakeup sys_us_per_wakeup",
                    count="tasks wakeups peak_os_threads repeats",
                    amount="rss_before_kib peak_rss_kib page_tables_before_kib "
                           "peak_page_tables_kib cpu_busy",
                    signed="rss_growth_kib rss_per_task_kib vsz_growth_kib vsz_per_task_kib "
                           "page_tables_growth_kib page_tables_per_task_kib",
                    flag="saturated",
                    text="variant not_run")),
            Table("repeats", columns(
                    time="planned_s wall_s spawn_s user_s sys_s cpu_s cpu_us_per_wakeup "
                         "user_us_per_wakeup sys_us_per_wakeup",
                    count="repeat cpus tasks wakeups peak_os_threads",
                    amount="rss_before_kib peak_rss_kib cpu_busy page_tables_before_kib "
                           "peak_page_tables_kib",
                    signed="rss_growth_kib rss_per_task_kib vsz_growth_kib vsz_per_task_kib "
                           "page_tables_growth_kib page_tables_per_task_kib",
                    flag="cpu_bound late saturated",
                    text="variant not_run"), always=False),
        )),
        Experiment("peer_runtimes", "user_space_tasks.runtimes", (
            Table("samples", columns(
                    time="ns",
                    text="kind what")),
        )),
        Experiment("peer_million", "user_space_tasks.million", (
            Table("runs", PEER_MILLION_RUNS),
        )),
        Experiment("peer_peak_memory", "user_space_tasks.million", (
            Table("runs", PEER_MILLION_RUNS),
        )),
    ),
    parameters=PARAMETERS,
    checks=CHECKS,
    prefixes=('tasks_',), explorers=True,
    title="user-space tasks",
    about=("C fibers, goroutines, Rust threads, Tokio tasks and Java threads against "
           "OS threads"),
)
