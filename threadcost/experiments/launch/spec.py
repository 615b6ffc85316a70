"""The launch family's spec: its experiments, their tables, its notebook's
parameters and their checks (:mod:`threadcost.experiments.specs`)."""

from __future__ import annotations

from threadcost.experiments.specs import (
    Check,
    Computed,
    Experiment,
    Table,
    columns,
    family,
    param,
)

# The times of one launch, each a distribution of its own.
METRICS = ("lifecycle_ns", "create_ns", "first_run_ns", "join_ns")

LAUNCH_DISTRIBUTIONS = columns(
    count="n",
    amount="parent_touch_mib min p50 p90 p99 p999 max mean",
    text="kind phase metric")

LAUNCH_MEMCPY = columns(
    time="ns",
    count="bytes")

LAUNCH_SAMPLES = columns(
    time="create_ns first_run_ns join_ns lifecycle_ns",
    count="index",
    amount="parent_touch_mib",
    text="kind phase")

LAUNCH_GROWTH_REPEATS = columns(
    time="create_ns_p50 lifecycle_ns_p50",
    count="repeat n",
    amount="parent_touch_mib touched_kib",
    text="kind")

PARAMETERS = (
    param('launch_kinds', 'list[str]',
          ['thread', 'fork', 'vfork', 'posix_spawn', 'clone'],
          'what to launch',
          choices=('thread', 'fork', 'vfork', 'posix_spawn', 'clone', 'fork_exec')),
    param('launch_iterations', 'int', 600,
          'timed launches per kind and parent memory size', minimum=1, maximum=1_000_000,
          feeds=('run.run',)),
    param('launch_warmup', 'int', 20,
          'launches before timing, kept apart as "first launches"', minimum=0,
          maximum=100_000,
          feeds=('run.run', 'run.growth_repeats')),
    param('launch_stack_kib', 'int', 0,
          'thread stack size in KiB, 0 for the default (ulimit -s)', unit='KiB', minimum=0,
          maximum=1 << 20,
          feeds=('run.run',)),
    param('launch_pin', 'Optional[str]', 'auto',
          'CPUs to pin the measuring process to, "auto": the first usable, None: not pinned',
          feeds=('run.growth_repeats',)),
    param('launch_parent_touch_mib', 'list[int]', [0, 2, 4, 8, 64],
          'MiB the parent holds, all pages written', unit='MiB', minimum=0, maximum=1 << 20,
          narrowed=True),
    param('launch_burst_sizes', 'list[int]', [100, 250, 500, 1000, 2000],
          'threads alive at once (at most 10,000)', minimum=1, maximum=10_000),
    param('launch_burst_repeats', 'int', 3,
          'bursts per size (the first one needs fresh stacks)', minimum=1, maximum=100,
          feeds=('run.run',)),
    param('launch_memcpy_kib', 'int', 64,
          'memcpy yardstick size (C09: 64 KiB), 0 skips it', unit='KiB', minimum=0,
          maximum=1 << 20,
          feeds=('run.run',)),
    param('launch_python_parent_iterations', 'int', 200,
          'forks from a Python process, for contrast, 0 skips it', minimum=0,
          maximum=1_000_000),
    param('launch_growth_repeats', 'int', 5,
          'C09: repeats of thread and fork at each parent size, alternating', minimum=1,
          maximum=100,
          feeds=('run.growth_repeats:repeats',)),
    param('launch_growth_iterations', 'int', 300,
          'launches per series in those repeats', minimum=1, maximum=1_000_000,
          feeds=('run.growth_repeats:iterations',)),
    param('launch_growth_parent_touch_mib', 'list[int]', [0, 2, 4, 8],
          "C09: the parent's touched memory in those repeats (S0-code's 0, 2, 4, 8 MB)",
          unit='MiB', minimum=0, maximum=1 << 20,
          narrowed=True),
)

CHECKS = (
    Check("run.check_params", {
        "kinds": "launch_kinds", "iterations": "launch_iterations", "warmup": "launch_warmup",
        "stack_kib": "launch_stack_kib", "pin": "launch_pin",
        "parent_touch_mib": "launch_parent_touch_mib", "burst_sizes": "launch_burst_sizes",
        "burst_repeats": "launch_burst_repeats", "memcpy_kib": "launch_memcpy_kib"}),
    # the forks from a Python parent (0 skips them)
    Check("run.check_params", {
        "iterations": "launch_python_parent_iterations", "pin": "launch_pin",
        "warmup": Computed(lambda v: min(v["launch_warmup"],
                                         v["launch_python_parent_iterations"]))},
          fixed={"kinds": "fork", "parent_touch_mib": 0, "memcpy_kib": 0, "parent": "python"},
          when=lambda v: bool(v["launch_python_parent_iterations"])),
    Check("run.check_growth_repeats", {
        "parent_touch_mib": "launch_growth_parent_touch_mib", "repeats": "launch_growth_repeats",
        "iterations": "launch_growth_iterations", "warmup": "launch_warmup",
        "pin": "launch_pin"}, fixed={"kinds": ["thread", "fork"]}),
)

FAMILY = family(
    "launch", "03_launch",
    experiments=(
        Experiment("launch", "launch.run", (
            Table("samples", LAUNCH_SAMPLES),
            Table("distributions", LAUNCH_DISTRIBUTIONS),
            Table("burst", columns(
                    time="create_total_ns join_total_ns user_us sys_us create_p50_ns "
                         "create_p99_ns create_mean_ns wall_ns",
                    count="n repeat err created threads_alive",
                    signed="vsz_delta_kib rss_delta_kib"), always=False),
            Table("burst_creates", columns(
                    time="create_ns",
                    count="n repeat index"), always=False),
            Table("memcpy", LAUNCH_MEMCPY, always=False),
        ), figures=(
            "launch_distributions",
            "launch_create_distributions",
            "launch_vs_parent_memory",
            "launch_burst",
            "launch_c09",
        )),
        Experiment("launch_growth", "launch.run", (
            Table("repeats", LAUNCH_GROWTH_REPEATS),
        )),
        Experiment("launch_python_parent", "launch.run", (
            Table("samples", LAUNCH_SAMPLES),
            Table("distributions", LAUNCH_DISTRIBUTIONS, always=False),
        ), auxiliary=True),
    ),
    parameters=PARAMETERS,
    checks=CHECKS,
    prefixes=('launch_',), explorers=True,
    title="launch",
    about="thread create vs fork, vfork, clone, posix_spawn",
)
