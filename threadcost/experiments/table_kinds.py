"""What each column of each stored table is, declared beside the registry's tables.

:mod:`threadcost.experiments.registry` names the tables every run of an experiment
holds; here each of those tables names the kind of each of its columns, so a number
read back from a stored run is checked against what its quantity can be
(:mod:`threadcost.store.table_checks`): a ``time`` is >= 0, a ``rate`` and a ``ratio`` > 0,
a ``per_operation`` count >= 0, a ``fraction`` within 0..1, a ``percent`` within
0..100, a ``count`` a whole number >= 0, a ``cpu`` a CPU number (-1: not pinned), a
``limit`` >= 0 up to 2^64, an ``amount`` (memory, a statistic of costs) finite and
bounded, ``signed`` a difference or a fitted coefficient; ``text`` and ``flag``
columns hold no number.
Read through :func:`threadcost.experiments.registry.column_kinds`; a column not
declared here (a table from a newer or a foreign run) is judged by its name
(``table_checks.RULES``). ``tests/test_column_kinds.py`` checks that every column of
every table of every run under ``data/`` is declared, and that this file names only
experiments the registry declares (a run may hold tables beyond the registry's list,
which names those every run holds).
"""

from __future__ import annotations


def _c(base: dict[str, str] | None = None, /, drop: str = "", **kinds: str) -> dict[str, str]:
    """Columns by kind, ``_c(time="create_ns join_ns", count="n")``: column -> kind. With
    ``base``: another table's columns, with these (and without those in ``drop``)."""
    dropped = drop.split()
    columns = {c: k for c, k in (base or {}).items() if c not in dropped}
    columns.update({column: kind for kind, names in kinds.items() for column in names.split()})
    return columns


# Tables that others store alike, or with a few columns more or less.
MALLOC_TOUCH_TOUCH_CURVE = _c(
    amount="touched_kib vsz_kib rss_kib rss_anon_kib")

THREAD_MEMORY_POINTS = _c(
    time="create_ns settle_ns join_ns",
    count="config repeat threads requested started stack_bytes guard_bytes too_deep "
           "cached_stacks_held threads_before threads_during threads_after",
    amount="stack_kib touch_kib vsz_kib rss_kib rss_rollup_kib rss_pmap_kib page_tables_kib "
            "kernel_stack_kib total_kib",
    signed="slab_kib system_page_tables_kib rss_after_kib vsz_after_kib kernel_stack_after_kib "
            "kernel_kib",
    flag="limited")

THREAD_MEMORY_STACK_PER_STACK_SIZE = _c(
    count="runs",
    amount="stack_kib_asked stack_used_kib",
    signed="vsz_kib_per_thread rss_kib_per_thread rss_rollup_kib_per_thread "
            "rss_pmap_kib_per_thread page_tables_kib_per_thread kernel_stack_kib_per_thread "
            "slab_kib_per_thread system_page_tables_kib_per_thread kernel_kib_per_thread "
            "total_kib_per_thread vsz_kib_per_thread_min rss_kib_per_thread_min "
            "rss_rollup_kib_per_thread_min rss_pmap_kib_per_thread_min "
            "page_tables_kib_per_thread_min kernel_stack_kib_per_thread_min "
            "slab_kib_per_thread_min system_page_tables_kib_per_thread_min "
            "kernel_kib_per_thread_min total_kib_per_thread_min vsz_kib_per_thread_max "
            "rss_kib_per_thread_max rss_rollup_kib_per_thread_max rss_pmap_kib_per_thread_max "
            "page_tables_kib_per_thread_max kernel_stack_kib_per_thread_max "
            "slab_kib_per_thread_max system_page_tables_kib_per_thread_max "
            "kernel_kib_per_thread_max total_kib_per_thread_max")

LAUNCH_DISTRIBUTIONS = _c(
    count="n",
    amount="parent_touch_mib min p50 p90 p99 p999 max mean",
    text="kind phase metric")

LAUNCH_MEMCPY = _c(
    time="ns",
    count="bytes")

LAUNCH_SAMPLES = _c(
    time="create_ns first_run_ns join_ns lifecycle_ns",
    count="index",
    amount="parent_touch_mib",
    text="kind phase")

LAUNCH_GROWTH_REPEATS = _c(
    time="create_ns_p50 lifecycle_ns_p50",
    count="repeat n",
    amount="parent_touch_mib touched_kib",
    text="kind")

CONTEXT_SWITCH_CONFIGS = _c(
    time="round_trip_min_ns switch_min_ns round_trip_p50_ns switch_p50_ns round_trip_p90_ns "
          "switch_p90_ns round_trip_p99_ns switch_p99_ns round_trip_p999_ns switch_p999_ns "
          "round_trip_max_ns switch_max_ns round_trip_mean_ns switch_mean_ns whole_run_mean_ns "
          "sys_ns_per_round_trip",
    per_operation="switches_per_round_trip",
    fraction="same_cpu_share",
    count="iterations voluntary involuntary",
    cpu="cpu_a cpu_b cpus_seen",
    amount="working_set_kib",
    text="mechanism placement tasks")

CONTEXT_SWITCH_QUANTILES = _c(
    time="round_trip_ns",
    fraction="quantile",
    amount="working_set_kib",
    text="tasks placement mechanism")

CONTEXT_SWITCH_CONFIG_SAMPLES = _c(
    time="round_trip_ns",
    cpu="cpu_a cpu_b")

SLEEPERS_SWEEP_POINTS = _c(
    time="planned_s wall_s spawn_s user_s sys_s cpu_s cpu_us_per_wakeup user_us_per_wakeup "
          "sys_us_per_wakeup",
    count="repeat count cpus tasks wakeups peak_os_threads",
    amount="rss_before_kib peak_rss_kib cpu_busy page_tables_before_kib peak_page_tables_kib",
    signed="rss_growth_kib rss_per_task_kib vsz_growth_kib vsz_per_task_kib "
            "page_tables_growth_kib page_tables_per_task_kib",
    flag="cpu_bound late saturated",
    text="variant not_run")

PEER_MILLION_RUNS = _c(
    time="spawn_s wall_s user_s sys_s user_s_at_count sys_s_at_count",
    count="requested measured_count finished alive_at_spawn_end max_rss_kib_at_count",
    amount="max_rss_kib wait4_maxrss_kib scale",
    signed="max_rss_kib_per_task",
    text="kind label count_bound at_count_label version not_run")

SWITCH_COUNTS_SYSCALL = _c(
    time="ns_per_call")

COLUMNS: dict[str, dict[str, dict[str, str]]] = {
    "malloc_touch": {
        "stages": _c(
            count="threads",
            amount="vsz_kib rss_kib rss_anon_kib pte_kib stk_kib",
            text="stage"),
        "touch_curve": MALLOC_TOUCH_TOUCH_CURVE,
    },
    "malloc_touch_grid": {
        "curves": _c(
            percent="touched_pct",
            amount="touched_kib vsz_kib rss_kib rss_anon_kib touched_mib mib",
            signed="vsz_growth_mib rss_growth_mib",
            text="allocator"),
    },
    "thread_memory": {
        "points": THREAD_MEMORY_POINTS,
    },
    "thread_memory_stack": {
        "per_stack_size": THREAD_MEMORY_STACK_PER_STACK_SIZE,
        "points": _c(THREAD_MEMORY_POINTS, amount="stack_kib_asked"),
    },
    "thread_memory_touch": {
        "per_touch_depth": _c(THREAD_MEMORY_STACK_PER_STACK_SIZE,
            amount="touch_kib_asked",
            drop="stack_kib_asked"),
        "points": _c(THREAD_MEMORY_POINTS, amount="touch_kib_asked"),
    },
    "thread_memory_grid": {
        "points": _c(
            count="threads",
            amount="vsz_kib rss_kib stack_kib touch_kib",
            signed="kernel_kib"),
        "skipped": _c(
            amount="stack_kib touch_kib",
            text="reason"),
    },
    "process_memory": {
        "fits": _c(
            fraction="r2",
            count="n",
            signed="per_process_kib ci95_low ci95_high intercept_kib",
            text="quantity meaning method"),
        "points": _c(
            count="repeat requested started ready stopped",
            amount="touch_kib uss_kib pss_kib rss_kib page_tables_kib kernel_stack_kib "
                    "parent_rss_kib parent_pte_kib total_kib",
            signed="slab_kib system_page_tables_kib kernel_kib"),
    },
    "thread_limits": {
        "advice": _c(
            limit="current needed",
            flag="enough",
            text="setting command note"),
        "limits": _c(
            limit="limit value threads_allowed",
            flag="applies",
            text="unit kind note"),
    },
    "threads_ceiling": {
        "measured": _c(
            time="wall_s spawn_s user_s sys_s",
            count="threads finished peak_threads",
            signed="rss_growth_kib vsz_growth_kib rss_kib_per_thread vsz_kib_per_thread"),
        "scaled": _c(
            limit="value",
            text="quantity unit label"),
    },
    "launch": {
        "burst": _c(
            time="create_total_ns join_total_ns user_us sys_us create_p50_ns create_p99_ns "
                  "create_mean_ns wall_ns",
            count="n repeat err created threads_alive",
            signed="vsz_delta_kib rss_delta_kib"),
        "burst_creates": _c(
            time="create_ns",
            count="n repeat index"),
        "distributions": LAUNCH_DISTRIBUTIONS,
        "memcpy": LAUNCH_MEMCPY,
        "samples": LAUNCH_SAMPLES,
    },
    "launch_growth": {
        "repeats": LAUNCH_GROWTH_REPEATS,
    },
    "launch_python_parent": {
        "distributions": LAUNCH_DISTRIBUTIONS,
        "samples": LAUNCH_SAMPLES,
    },
    "context_switch": {
        "baselines": _c(
            count="n",
            cpu="cpu",
            amount="min p50 p90 p99 p999 max mean",
            text="placement baseline"),
        "configs": CONTEXT_SWITCH_CONFIGS,
        "quantiles": CONTEXT_SWITCH_QUANTILES,
        "skipped": _c(
            text="mechanism placement tasks reason"),
    },
    "context_switch_config": {
        "samples": CONTEXT_SWITCH_CONFIG_SAMPLES,
    },
    "context_switch_headline": {
        "baselines": _c(
            time="ns_per_op",
            text="baseline"),
        "samples": CONTEXT_SWITCH_CONFIG_SAMPLES,
    },
    "context_switch_working_set": {
        "points": _c(CONTEXT_SWITCH_CONFIGS,
            time="touch_p50_ns user_ns_per_round_trip",
            signed="round_trip_minus_touch_p50_ns round_trip_minus_touch_mean_ns"),
        "quantiles": CONTEXT_SWITCH_QUANTILES,
    },
    "context_switch_placement": {
        "repeats": _c(
            time="round_trip_ns switch_ns",
            count="repeat order iterations",
            text="mechanism placement"),
    },
    "context_switch_perf_check": {
        "rounds": _c(
            time="round_trip_ns",
            count="round",
            text="tool"),
    },
    "context_switch_timing_check": {
        "rounds": _c(
            time="mean_ns whole_run_mean_ns",
            count="round",
            flag="per_sample"),
    },
    "echo": {
        "repeats": _c(
            time="seconds",
            rate="rate_per_s",
            per_operation="switches_per_iteration",
            count="repeat iterations",
            cpu="cpu_a cpu_b",
            text="placement"),
    },
    "cpu_bound": {
        "ratios": _c(
            ratio="ratio",
            count="n",
            signed="ci95_low ci95_high",
            text="working_set quantity"),
        "runs": _c(
            time="wall_s user_s sys_s cpu_s life_user_s life_sys_s whole_user_s whole_sys_s",
            count="repeat order tasks_started tasks_stopped tasks_completed vcsw ivcsw switches "
                   "dtlb_misses",
            cpu="cpu",
            limit="limit",
            amount="ws_mib",
            text="mode working_set switches_source"),
        "tasks": _c(
            time="cpu_s user_s sys_s life_user_s life_sys_s wall_s",
            count="repeat order task vcsw ivcsw dtlb_misses perf_switches primes",
            cpu="cpu",
            limit="limit",
            amount="ws_mib",
            flag="completed",
            text="mode working_set"),
        "totals": _c(
            time="wall_s_median wall_s_min wall_s_max user_s_median user_s_min user_s_max "
                  "sys_s_median sys_s_min sys_s_max cpu_s_median cpu_s_min cpu_s_max "
                  "whole_user_s_median whole_user_s_min whole_user_s_max whole_sys_s_median "
                  "whole_sys_s_min whole_sys_s_max",
            count="repeats switches_min switches_max dtlb_misses_min dtlb_misses_max",
            amount="ws_mib switches_median dtlb_misses_median",
            text="working_set mode"),
    },
    "yardsticks": {
        "repeats": _c(
            time="ns_median ns_min ns_max timer_overhead_ns",
            count="repeat ops_per_batch batches",
            cpu="cpu",
            text="yardstick"),
    },
    "fibers": {
        "creation": _c(
            time="create_ns start_ns",
            count="fiber",
            amount="touch_kib"),
        "memory_points": _c(
            count="fibers",
            amount="touch_kib vsz_kib rss_kib rss_anon_kib"),
        "per_fiber": _c(
            time="create_ns_p50 start_ns_p50",
            fraction="rss_r2 vsz_r2",
            count="fibers",
            amount="touch_kib rss_kib vsz_kib",
            signed="rss_ci95_low rss_ci95_high vsz_ci95_low vsz_ci95_high"),
        "round_trips": _c(
            time="round_trip_ns"),
    },
    "peers": {
        "memory_points": _c(MALLOC_TOUCH_TOUCH_CURVE,
            count="goroutines threads",
            amount="stack_inuse_kib",
            drop="touched_kib"),
        "round_trips": _c(
            time="round_trip_ns",
            text="mode"),
    },
    "goroutine_launch": {
        "samples": _c(
            time="launch_ns"),
    },
    "goroutine_pinning": {
        "gain": _c(
            count="pairs",
            signed="gain_mean ci95_low ci95_high ci95_half_width",
            flag="resolves_5_percent",
            text="basis"),
        "runs": _c(
            time="batch_round_trip_ns switch_ns_batch round_trip_p50_ns",
            rate="round_trips_per_s median_rate_per_s",
            count="repeat gomaxprocs",
            text="mode"),
    },
    "goroutines_million": {
        "runs": _c(
            time="spawn_s wall_s user_s sys_s",
            count="count finished alive_at_spawn_end gomaxprocs repeat",
            amount="max_rss_kib",
            signed="max_rss_kib_per_goroutine",
            text="variant"),
    },
    "sleepers_sweep": {
        "points": SLEEPERS_SWEEP_POINTS,
    },
    "tasks_switch_thread": {
        "samples": CONTEXT_SWITCH_CONFIG_SAMPLES,
    },
    "tasks_switch_process": {
        "samples": CONTEXT_SWITCH_CONFIG_SAMPLES,
    },
    "tasks_thread_memory": {
        "points": THREAD_MEMORY_POINTS,
    },
    "tasks_launch": {
        "distributions": LAUNCH_DISTRIBUTIONS,
        "memcpy": LAUNCH_MEMCPY,
        "samples": LAUNCH_SAMPLES,
    },
    "sleepers": {
        "repeats": _c(SLEEPERS_SWEEP_POINTS, drop="count"),
        "variants": _c(
            time="wall_s spawn_s user_s sys_s cpu_s cpu_us_per_wakeup user_us_per_wakeup "
                  "sys_us_per_wakeup",
            count="tasks wakeups peak_os_threads repeats",
            amount="rss_before_kib peak_rss_kib page_tables_before_kib peak_page_tables_kib "
                    "cpu_busy",
            signed="rss_growth_kib rss_per_task_kib vsz_growth_kib vsz_per_task_kib "
                    "page_tables_growth_kib page_tables_per_task_kib",
            flag="saturated",
            text="variant not_run"),
    },
    "brigade": {
        "memory": _c(
            fraction="rss_r2 kernel_r2",
            count="runs max_tasks",
            signed="rss_per_task_kib rss_ci95_low rss_ci95_high kernel_per_task_kib "
                    "kernel_ci95_low kernel_ci95_high",
            text="kind placement"),
        "per_hop": _c(
            time="per_hop_ns_min per_hop_ns_p50 per_hop_ns_p99 per_hop_ns_max per_hop_ns_mean",
            count="tasks trips",
            limit="limit",
            signed="net_per_hop_ns rss_per_task_kib kernel_per_task_kib",
            text="kind placement not_run"),
        "runs": _c(
            time="per_hop_ns_p50 per_hop_ns_mean timer_overhead_ns",
            count="tasks repeat hops_per_trip trips bytes_sent bytes_arrived bytes_wrong "
                   "tasks_before tasks_height tasks_after fds_before fds_ready fds_after "
                   "voluntary_switches involuntary_switches",
            limit="limit",
            signed="rss_growth_kib kernel_growth_kib",
            text="kind placement"),
        "trips": _c(
            time="trip_ns per_hop_ns",
            count="tasks repeat",
            text="kind placement"),
    },
    "brigade_reference": {
        "per_round": _c(
            time="per_hop_ns mean_per_hop_ns",
            count="round",
            text="program kind"),
    },
    "peer_runtimes": {
        "samples": _c(
            time="ns",
            text="kind what"),
    },
    "peer_brigade": {
        "runs": _c(
            time="trip_p50_ns trip_mean_ns per_task_ns_mean per_hop_ns_p50",
            count="repeat tasks trips bytes_wrong",
            signed="rss_growth_kib",
            text="kind placement"),
    },
    "peer_million": {
        "runs": PEER_MILLION_RUNS,
    },
    "peer_peak_memory": {
        "runs": PEER_MILLION_RUNS,
    },
    "launch_spawn_growth": {
        "repeats": LAUNCH_GROWTH_REPEATS,
    },
    "fiber_gap": {
        "ratios": _c(
            ratio="ucontext_over_asm",
            signed="gap_over_sigprocmask",  # (ucontext - asm) / sigprocmask: a difference
            count="repeat"),
        "repeats": _c(
            time="ns",
            per_operation="switches_per_round_trip",
            count="repeat operations voluntary involuntary",
            text="what"),
    },
    "switch_counts": {
        "runs": _c(
            time="round_trip_ns switch_ns ns_per_counted_switch",
            per_operation="switches_per_round_trip",
            count="repeat round_trips voluntary involuntary",
            text="mechanism tasks"),
        "syscall": SWITCH_COUNTS_SYSCALL,
    },
    "indirect_cost": {
        "points": _c(
            time="single switch",
            per_operation="switches_per_round_trip",
            count="repeat stride_bytes",
            amount="array_kib",
            signed="c2_ns c1_ns indirect_ns"),
        "runs": _c(
            time="ns_per_hop",
            count="repeat stride_bytes hops voluntary involuntary",
            amount="array_kib",
            text="mode"),
        "syscall": SWITCH_COUNTS_SYSCALL,
    },
    "go_lockosthread": {
        "runs": _c(
            time="ns_per_round_trip switch_ns",
            per_operation="switches_per_round_trip",
            count="repeat voluntary involuntary gomaxprocs",
            flag="locked",
            text="go_version"),
    },
    "thread_waves": {
        "repeats": _c(
            time="ns",
            rate="threads_per_s",
            count="repeat threads"),
        "waves": _c(
            time="create_ns join_ns wave_ns",
            count="repeat wave status err created threads_alive"),
    },
}

