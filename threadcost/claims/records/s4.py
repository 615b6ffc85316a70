"""S4 (matklad, 10k_linux_threads): sleeping threads vs goroutines (C15-C17).

C15, C16 and C17 read S4's own program, run on the Rust peer (threads, and threads
pinned round-robin) and the Go peer (goroutines), repeated in fresh processes
with the variants interleaved (``sleepers`` runs, notebook 05;
:mod:`threadcost.findings.sleepers`). C16 counts the program's page tables (VmPTE)
per Rust thread on std::thread's default 2 MiB stacks; a run stored before the
peers reported VmPTE falls back to notebook 02's C threads (8 MiB stacks), labelled
a substitute (:mod:`threadcost.findings.runtimes`)."""

from __future__ import annotations

from threadcost.claims import properties, whys
from threadcost.claims.model import FACTOR, Claim, Published, Reading
from threadcost.claims.records._help import about_reading, of_source, values
from threadcost.findings import runtimes, sleepers

C15 = (Published("thread_max_rss_kib", 94_000, "KiB", "10,000 threads sleeping 10 ms x 1000 "
                 "(MB read as 1000 kB)"),
       Published("goroutine_max_rss_kib", 35_000, "KiB", "10,000 goroutines, same workload"),
       Published("thread_over_goroutine_ratio", 3, "ratio", "derived: about 3x (94 / 35 = "
                 "2.7)"))
C16 = (Published("page_tables_kib", 40_000, "KiB", "10,000 threads with default stacks "
                 "(about 40 MB)"),
       Published("per_thread_page_tables_kib", 4, "KiB", "derived: 40 MB / 10000"))
C17 = (Published("threads_cpu_s", 21, "s", "5 user + 16 sys"),
       Published("threads_user_s", 5, "s"), Published("threads_sys_s", 16, "s"),
       Published("goroutines_cpu_s", 14, "s"),
       Published("threads_pinned_cpu_s", 12, "s", "3 user + 9 sys; pinned round-robin"),
       Published("threads_pinned_user_s", 3, "s"), Published("threads_pinned_sys_s", 9, "s"))
V15, V16, V17 = values(*C15), values(*C16), values(*C17)
WAKEUPS = 10_000 * 1000  # S4: 10,000 tasks, each sleeping 10 ms a thousand times
RSS_QUOTE = "A thread is only 3 times as large as a goroutine."
CPU_QUOTE = ("it is possible to explain why threads need 21 seconds of CPU time while "
             "goroutines need only 14")


CPU_WORDS = {"cpu": "CPU (user + system)", "user": "user CPU", "sys": "system CPU"}
PEER = {"threads": sleepers.THREADS, "threads_pinned": sleepers.PINNED,
        "goroutines": sleepers.GOROUTINES}


def _cpu(variant: str, key: str, quote: str, part: str = "cpu") -> Reading:
    us = V17[key] / WAKEUPS * 1e6
    words = CPU_WORDS[part]
    name = sleepers.NAMES[PEER[variant]]
    return about_reading(f"{words[0].upper() + words[1:]} per wake-up, {name}, at 10,000 "
                         f"tasks (S4's {V17[key]:g} s / 10 million wake-ups)", "µs", us,
                         sleepers.at_s4(PEER[variant], f"{part}_us_per_wakeup", "µs"),
                         quote, timing=True,
                         # a sleeper wakes on a timer, not a pipe hand-off: no wake-up
                         # yardstick measures it; saturated but judged, the sweep says why
                         # saturation is not the cause (context: the difference stands)
                         why=(whys.computed(sleepers.saturation_why(
                             PEER[variant], f"{part}_us_per_wakeup"), "saturation",
                             explains=False),))


SOURCE_DOC = "Post comparing memory of 10,000 sleeping threads vs goroutines"

claim = of_source("S4", SOURCE_DOC, "not stated")

CLAIMS: tuple[Claim, ...] = (
    claim("C15",
          words=("10,000 threads sleeping 10 ms x 1000: max RSS about 94 MB vs about 35 MB for "
                 "10,000 goroutines; a thread is about 3x a goroutine."),
          pages=("05_user_space_tasks",), experiments=("sleepers",), flips_on=properties.TOOLCHAINS,
          published=C15, as_published=(
        about_reading("Max RSS of 10,000 sleeping Rust threads", "KiB",
                      V15["thread_max_rss_kib"],
                      sleepers.at_s4(sleepers.THREADS, "peak_rss_kib", "KiB"), "rss  94472k"),
        about_reading("Max RSS of 10,000 sleeping goroutines", "KiB",
                      V15["goroutine_max_rss_kib"],
                      sleepers.at_s4(sleepers.GOROUTINES, "peak_rss_kib", "KiB"), "rss  34924k",
                      why=whys.GO_MEMORY)),
        shape=(about_reading("A sleeping thread takes about 3x the memory of a goroutine "
                             "(max RSS, Rust threads / goroutines)", "ratio", 3.0,
                             sleepers.c15_max_rss_ratio, RSS_QUOTE, states=FACTOR,
                             verb="takes"),)),
    claim("C16",
          words=("RSS misses kernel-side memory: 10,000 threads with default stacks need about "
                 "40 MB of page tables."),
          pages=("05_user_space_tasks",), experiments=("thread_memory", "sleepers",),
          flips_on=properties.TOOLCHAINS,
          published=C16, as_published=(
        about_reading("Page tables per thread of 10,000 sleeping Rust threads on std::thread's "
                      "default 2 MiB stacks (the program's VmPTE growth / threads; S4: 40 MB "
                      "/ 10,000)", "KiB",
                      V16["per_thread_page_tables_kib"], runtimes.c16_page_tables_per_thread,
                      "10k threads with default stack sizes need about 40mb of page "
                      "tables"),)),
    claim("C17",
          words=("Threads use about 21 s CPU (5 user + 16 sys) vs 14 s for goroutines; pinning "
                 "threads round-robin cuts threads to about 12 s (3 user + 9 sys)."),
          pages=("05_user_space_tasks",), experiments=("sleepers",),
          flips_on=properties.CPUS_SATURATED,
          published=C17, as_published=(
        _cpu("threads", "threads_cpu_s", CPU_QUOTE),
        _cpu("goroutines", "goroutines_cpu_s", CPU_QUOTE),
        _cpu("threads_pinned", "threads_pinned_cpu_s", "user 3.01s sys  9.08s"),
        _cpu("threads", "threads_user_s", "user 4.96s", "user"),
        _cpu("threads", "threads_sys_s", "sys  16.06s", "sys"),
        _cpu("threads_pinned", "threads_pinned_user_s", "user 3.01s", "user"),
        _cpu("threads_pinned", "threads_pinned_sys_s", "sys  9.08s", "sys")),
        shape=(
        about_reading("Threads use about 1.5x the CPU per wake-up of goroutines (21 s vs 14 s)",
                      "ratio", 21 / 14, sleepers.c17_threads_over_goroutines_cpu, CPU_QUOTE,
                      timing=True, states=FACTOR, verb="use"),
        about_reading("Pinning threads round-robin cuts their CPU time by about 40% (21 s to "
                      "12 s)", "fraction", 0.4, sleepers.c17_pinning_cut,
                      "The total CPU time now is approximately the same", timing=True,
                      states=FACTOR, verb="cuts", directions=("more here", "less here")))),
)
