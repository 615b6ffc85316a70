"""The readiness family's spec: its experiment, its table, its notebook's parameters and
their checks (:mod:`threadcost.experiments.specs`)."""

from __future__ import annotations

from threadcost.experiments.specs import Check, Experiment, Table, columns, family, param

PARAMETERS = (
    param('readiness_tasks', 'int', 10_000, 'tasks N in the ring (a task needs 2 fds)',
          minimum=2, maximum=10_000, feeds=('run.check_params',), narrowed=True),
    param('readiness_tokens', 'list[int]', [1, 10, 100, 1000, 10_000],
          'tokens in flight K, each from 1 to N', minimum=1,
          maximum=10_000, feeds=('run.check_params',)),
    param('readiness_models', 'list[str]',
          ['thread', 'epoll-lt', 'epoll-et', 'io_uring', 'goroutine', 'tokio-task'],
          'how the tasks wait (goroutine: the Go peer; tokio-task: the Rust peer)',
          choices=('thread', 'epoll-lt', 'epoll-et', 'io_uring', 'goroutine', 'tokio-task')),
    param('readiness_channel', 'str', 'socketpair', 'what joins two tasks',
          choices=('socketpair', 'pipe')),
    param('readiness_placements', 'list[str]', ['unpinned'],
          'placements to run (same-cpu: every thread on readiness_cpu)',
          choices=('unpinned', 'same-cpu')),
    # 2,000, not 20,000 (make paper's time: the section adds about 20 s on 2 cores, most of
    # it setting up 10,000 tasks in each of 30 processes): at 4 to 10 µs an event a K's
    # window is 8 to 20 ms, read as the median over 5 repeats
    param('readiness_events', 'int', 2000, 'events timed per K (each token at least 2 hops)',
          minimum=100, maximum=1_000_000, feeds=('run.check_params',), narrowed=True),
    param('readiness_repeats', 'int', 5, 'independent runs per model, interleaved',
          minimum=1, maximum=50, feeds=('run.check_params',)),
    param('readiness_cpu', 'Union[int, str]', 'auto',
          'CPU of same-cpu runs ("auto": the first usable)'),
    param('readiness_stack_kib', 'int', 64, 'stack of each task thread, KiB (0: default)',
          unit='KiB', minimum=0, maximum=1 << 20, feeds=('run.check_params',)),
)

CHECKS = (
    Check("run.check_params", {
        "tasks": "readiness_tasks", "tokens": "readiness_tokens", "models": "readiness_models",
        "channel": "readiness_channel", "placements": "readiness_placements",
        "events": "readiness_events", "repeats": "readiness_repeats", "cpu": "readiness_cpu",
        "stack_kib": "readiness_stack_kib"}),
)

FAMILY = family(
    "readiness", "09_readiness",
    experiments=(
        Experiment("readiness", "readiness.run", (
            Table("points", columns(
                    time="wall_ns cpu_ns ns_per_event cpu_ns_per_event",
                    count="repeat tasks tokens_asked tokens hops events retired reads "
                          "empty_reads writes "
                          "waits wait_events voluntary_switches involuntary_switches "
                          "cross_cpu_events",
                    amount="syscalls_per_event switches_per_event cross_cpu_per_event "
                           "events_per_wait",
                    limit="limit",
                    text="model channel placement")),
            Table("cost", columns(
                    time="ns_per_event_p50 ns_per_event_min ns_per_event_p25 "
                         "ns_per_event_p75 ns_per_event_max cpu_ns_per_event_p50",
                    count="tasks tokens tokens_in_flight repeats",
                    amount="syscalls_per_event switches_per_event cross_cpu_per_event "
                           "events_per_wait",
                    text="model channel placement")),
        ), figures=("readiness_cost_per_event",)),
    ),
    parameters=PARAMETERS,
    checks=CHECKS,
    prefixes=('readiness_',),
    title="Tokens in flight",
    about="K tokens among N tasks: threads vs epoll vs io_uring, cost per readiness event",
)
