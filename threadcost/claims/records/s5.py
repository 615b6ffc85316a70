"""S5 (Blandy, context-switch): Rust threads vs Tokio tasks, the socket-pair brigade (C18-C22).

C18, C20 and C21 are read on the Rust peer's brigade as S5 ran it: 500 tasks joined by
Unix socket pairs, Tokio's default multi-thread runtime, 1 MiB thread stacks, S5's
statistic (mean trip / 500) and S5's baseline (the one-thread brigade of the same
repeat). What still differs: 100 timed trips a run after 30 untimed, not 10,000 after
100 (make paper's time), and the machine; a run stored with pipes or the current_thread
runtime says so in its reading."""

from __future__ import annotations

from typing import Any

from threadcost.claims import properties, whys
from threadcost.claims.model import FACTOR, WORDS, Claim, Context, Published, Reading
from threadcost.claims.records._help import about_reading, of_source, values
from threadcost.findings import runtimes
from threadcost.findings.brigade import c18_thread_net_over_syscall, c22_thread_kernel_kib
from threadcost.findings.memory import SLABTOP, SUNRECLAIM, slab_slope

C18 = (Published("thread_switch_ns", 1700, "ns", "per switch between kernel threads "
                 "(headline of the README)"),
       Published("tasks", 500, "threads", "brigade length (tasks)"),
       Published("thread_unpinned_per_task_ns", 5313, "ns", "mean per task per trip, "
                 "unpinned, pipe I/O included (2.657 ms / 500)"))
C19 = (Published("async_switch_ns", 200, "ns", "per switch between Tokio tasks"),
       Published("thread_over_async_switch_ratio", 8.5, "ratio", "derived: 1.7 / 0.2"))
C20 = (Published("io_driven_switch_ns", 1700, "ns", "both threads and async tasks when "
                 "driven by I/O readiness"),
       Published("async_per_task_ns", 3589, "ns", "mean per task per trip, pipe I/O "
                 "included (1.795 ms / 500)"),
       Published("async_over_thread_wall_ratio", 0.68, "ratio", "18.19 s / 26.91 s, "
                 "unpinned threads"))
C21 = (Published("thread_pinned_per_task_ns", 3417, "ns", "mean per task per trip, threaded "
                 "brigade pinned to one core (1.709 ms / 500)"),
       Published("thread_pinned_over_async_ratio", 0.95, "ratio", "derived: 1.709 / 1.795"),
       Published("thread_pinned_over_unpinned_ratio", 0.64, "ratio",
                 "derived: 1.709 / 2.657, the thread brigade pinned / unpinned"),
       # S5's /bin/time of the pinned thread-brigade: 4.81 s user, 12.50 s system, 17.37 s
       # elapsed over 10,100 trips (100 warm-up) of 500 tasks
       Published("thread_pinned_user_per_task_ns", 952, "ns", "derived: 4.81 s user / "
                 "(10,100 trips x 500 tasks), S5's /bin/time, pinned thread-brigade"),
       Published("thread_pinned_system_per_task_ns", 2475, "ns", "derived: 12.50 s system / "
                 "(10,100 trips x 500 tasks), S5's /bin/time, pinned thread-brigade"),
       Published("thread_pinned_off_cpu_per_task_ns", 12, "ns", "derived: (17.37 - 4.81 - "
                 "12.50) s / (10,100 trips x 500 tasks), S5's /bin/time, pinned "
                 "thread-brigade"))
C22 = (Published("thread_user_kib", 9.5, "KiB", "RSS per thread (slope over the task count)"),
       Published("thread_kernel_kib", 10, "KiB", "kernel memory per thread"),
       Published("async_task_kib", 0.4, "KiB", "RSS per async task"),
       Published("thread_over_async_rss_ratio", 20, "ratio", "derived: about 20x (9.5 / 0.4 "
                 "= 24)"))
V18, V19, V20, V21, V22 = (values(*c) for c in (C18, C19, C20, C21, C22))
# S5's own words (README of jimblandy/context-switch). Its summary does not name the
# program behind 0.2 µs and 1.7 µs; its method for a switch alone is the brigade minus
# one-thread-brigade ("a baseline cost for the I/O operations themselves, which we can
# subtract off"), and its numbers are the mean trip / 500 tasks "per task per iter".
HEADLINE = ("\"A context switch takes around 0.2µs between async tasks, versus 1.7µs between "
            "kernel threads.\" (S5)")
SUBTRACT = ("; one-thread-brigade: \"a baseline cost for the I/O operations themselves, which "
            "we can subtract off from the times in the other two programs\" (S5)")
CONVERGE = ("\"That advantage goes away if the context switch is due to I/O readiness: "
            "both converge to 1.7µs.\" (S5)")
THREAD_MEAN = ("thread-brigade, 500 tasks: \"mean 2.657ms per iteration, stddev 231.822µs "
               "(5.313µs per task per iter)\" (S5)")
ASYNC_MEAN = ("async-brigade, 500 tasks: \"mean 1.795ms per iteration, stddev 82.016µs "
              "(3.589µs per task per iter)\" (S5)")
PINNED_MEAN = ("thread-brigade under taskset --cpu-list 1: \"mean 1.709ms per iteration, "
               "stddev 102.926µs (3.417µs per task per iter)\" (S5)")
SPEEDUP = ("\"I'm seeing 18.19s / 26.91s ≅ 0.68 or a 30% speedup from going async\" (S5; "
           "his means per trip give the same: 1.795 / 2.657 = 0.68)")
PINNED = ("\"if I pin the threaded version to a single core, the speed advantage of async "
          "disappears\" (S5): 1.709 ms vs 1.795 ms per trip")
RSS = ("\"Per-thread resident memory use in `thread-brigade` is about 9.5KiB, whereas "
       "per-async-task memory use in `async-brigade` is around 0.4KiB, a factor of ~20.\" (S5)")
PINNED_TIME = ("S5's /bin/time of its pinned thread-brigade, \"4.81user 12.50system "
               "0:17.37elapsed 99%CPU\", over 10,100 trips of 500 tasks")
INTERCORE = ("\"The async advantage also goes away in our microbenchmark if the program is "
             "pinned to a single core. So inter-core communication is something to watch out "
             "for.\" (S5); after the pinned thread-brigade: \"mean 1.709ms per iteration\" "
             "against the unpinned \"mean 2.657ms per iteration\": \"I don't know why.\" "
             "(S5)")
KERNEL = "\"around 20KiB (9.5KiB user, 10KiB kernel) for a kernel thread\" (S5)"


# S5's brigades pass the byte through Unix socket pairs on Tokio's default multi-thread
# runtime, and so does the Rust peer's brigade (peer_brigade); a run stored before it did
# (pipes, the current_thread runtime) is read with these labels, set by the selectors
PIPES, TOKIO_CT = runtimes.PIPES_FOR_SOCKETS, runtimes.CT_FOR_MT
SLAB_BY_IDLE = (f"{SUNRECLAIM} per idle C thread (notebook 02: its slope over 100..1,000 "
                f"threads) stands in for S5's count over its brigade's threads, {SLABTOP}: it "
                "leaves out the reclaimable caches and counts whole slab pages; the brigade "
                "stores kernel memory as KernelStack + PageTables + SUnreclaim, not slab alone")


def _hop(text: str, x: float, select: Any, quote: str) -> Reading:
    """An unpinned brigade's time per task per trip (the pinned one's why is its own)."""
    return about_reading(text, "ns", x, select, quote, timing=True, why=whys.SWITCH_UNPINNED)


SOURCE_DOC = ("Rust threads vs Tokio async tasks: switch time, memory, creation (README of "
              "github.com/jimblandy/context-switch)")
THEIR_MACHINE = "Linux laptop (4 cores, 2-way HT, 32 GiB)"

claim = of_source("S5", SOURCE_DOC, THEIR_MACHINE)

CLAIMS: tuple[Claim, ...] = (
    claim("C18",
          words=("Rust threads passing a byte along a 500-task pipe bucket brigade: about 1.7 µs "
                 "per context switch between kernel threads (the brigade's per-hop time minus "
                 "the one-thread pipe I/O baseline)."),
          pages=("07_io_brigade",), experiments=("brigade",), flips_on=properties.WAKEUP,
          published=C18, as_published=(
        _hop("Rust thread brigade, 500 tasks, unpinned: net time per task per trip (minus "
             "the one-thread brigade's socket-pair I/O)", V18["thread_switch_ns"],
             runtimes.c18_thread_net, HEADLINE + SUBTRACT),
        _hop("Rust thread brigade, 500 tasks, unpinned: mean time per task per trip, "
             "socket-pair I/O included", V18["thread_unpinned_per_task_ns"],
             runtimes.c18_thread_gross, THREAD_MEAN),
    ), context=(Context("thread net per hop in empty system calls (the unit that compares "
                        "across machines)", None,
                        "empty system calls", c18_thread_net_over_syscall),)),
    claim("C19",
          words=("Tokio async tasks: about 0.2 µs per context switch between tasks, far below a "
                 "thread switch, when the switch is not driven by I/O readiness."),
          pages=("07_io_brigade", "05_user_space_tasks",),
          experiments=("brigade", "peer_runtimes",),
          flips_on=properties.TOOLCHAINS,
          published=C19, as_published=(
        about_reading("A switch between two Tokio tasks over Tokio channels, not I/O driven "
                      "(batch mean)", "ns", V19["async_switch_ns"], runtimes.c19_tokio_switch,
                      HEADLINE, timing=True,
                      # judged on the mean over the repeats; the headline's Tokio switch is
                      # the median of the same runs: the abstract prints that one
                      finding="switch_tokio_task_batch_median_ns"),),
        shape=(Reading("A thread switch costs far more than a switch between Tokio tasks "
                       "(Rust thread / Tokio task, each a ping-pong over channels)", "ratio",
                       2.0, None, runtimes.c19_thread_over_tokio_switch, timing=True,
                       published=1.7 / 0.2, tolerance_words="far more: at least 2x",
                       quote=HEADLINE, states=WORDS),),
        context=(Context("a switch between two Java platform threads (beside the Rust "
                         "threads)", None, "ns", runtimes.java_switch),)),
    claim("C20",
          words=("When the switch is driven by I/O readiness (the pipe brigade), async tasks "
                 "lose that advantage: both converge to about 1.7 µs per switch; the async "
                 "brigade was only about 30% faster in wall time (18.19 s vs 26.91 s)."),
          pages=("07_io_brigade",), experiments=("brigade",), flips_on=properties.WAKEUP,
          published=C20, as_published=(
        _hop("Tokio task brigade (default multi-thread runtime), 500 tasks, unpinned: mean "
             "time per task per trip, socket-pair I/O included", V20["async_per_task_ns"],
             runtimes.c20_tokio_gross, ASYNC_MEAN),
        _hop("Tokio task brigade (default multi-thread runtime), 500 tasks, unpinned: net "
             "time per task per trip (minus the one-thread brigade's socket-pair I/O)",
             V20["io_driven_switch_ns"], runtimes.c20_tokio_net, CONVERGE + SUBTRACT),
    ), shape=(
        about_reading("Tokio tasks take about 0.68x the time of Rust threads per trip "
                      "(unpinned)", "ratio", 0.68, runtimes.c20_tokio_over_thread, SPEEDUP,
                      timing=True, states=FACTOR, verb="take"),
        Reading("Both converge: Rust thread / Tokio task net per task per trip within 0.67 "
                "to 1.5", "ratio", 0.8 / 1.2, 1.2 / 0.8, runtimes.c20_thread_over_tokio_net,
                timing=True, published=1.0,
                tolerance_words="both about 1.7 µs (+/- 20% each)", quote=CONVERGE,
                states=WORDS))),
    claim("C21",
          words=("Pinning the threaded brigade to a single core removes the async advantage "
                 "(1.709 ms vs 1.795 ms per 500-task trip) and makes it faster than unpinned "
                 "(2.657 ms): inter-core communication is something to watch out for (S5 does "
                 "not know why)."),
          pages=("07_io_brigade",), experiments=("brigade",), flips_on=properties.SYSCALL,
          published=C21, as_published=(
        about_reading("Rust thread brigade pinned to one CPU, 500 tasks: mean time per task "
                      "per trip", "ns", V21["thread_pinned_per_task_ns"],
                      runtimes.c21_pinned_thread, PINNED_MEAN, timing=True,
                      why=(whys.cpu_time_split(
                          {"user": V21["thread_pinned_user_per_task_ns"],
                           "system": V21["thread_pinned_system_per_task_ns"],
                           "off_cpu": V21["thread_pinned_off_cpu_per_task_ns"]},
                          PINNED_TIME), *whys.PIPE_PINNED)),),
        shape=(Reading("Pinned threads match the unpinned Tokio tasks (per task per trip, "
                       "Rust threads pinned / Tokio tasks unpinned)", "ratio", 0.8, 1.25,
                       runtimes.c21_pinned_thread_over_tokio, timing=True,
                       published=1.709 / 1.795,
                       tolerance_words="the advantage disappears: equal within 20%",
                       quote=PINNED, states=WORDS),
               # S5's "I don't know why", answered by the wake-ups across CPUs the same run
               # counts, each at the yardsticks' extra cost of one
               about_reading("Pinned threads take about 0.64x the time of unpinned ones (per "
                             "task per trip, Rust threads pinned / unpinned)", "ratio",
                             V21["thread_pinned_over_unpinned_ratio"],
                             runtimes.c21_pinned_over_unpinned_thread, INTERCORE, timing=True,
                             states=FACTOR, verb="take", why=(whys.cross_cpu_wakeups,)))),
    claim("C22",
          words=("Memory per task: about 9.5 KiB user + 10 KiB kernel per thread vs about 0.4 "
                 "KiB per async task, about 20x less (slope of RSS over the task count)."),
          pages=("07_io_brigade",), experiments=("brigade", "peer_runtimes",),
          flips_on=properties.IDLE_THREAD,
          published=C22, as_published=(
        about_reading("RSS per Rust thread (slope over the task count)", "KiB",
                      V22["thread_user_kib"], runtimes.c22_thread_rss, RSS,
                      why=whys.IDLE_THREAD_RSS),
        about_reading("Kernel memory per thread, counted as slab (slope)", "KiB",
                      V22["thread_kernel_kib"], slab_slope, KERNEL, substitute=SLAB_BY_IDLE),
        about_reading("RSS per Tokio task (slope over the task count)", "KiB",
                      V22["async_task_kib"], runtimes.c22_tokio_rss, RSS)),
        context=(Context("kernel stack + page tables + unreclaimable slab per brigade thread "
                         "beyond its pipes (a wider count than S5's slab)", None, "KiB",
                         c22_thread_kernel_kib),
                 Context("kernel memory per Rust thread (the Rust peer)", None, "KiB",
                         runtimes.rust_kernel_side)),
        shape=(about_reading("A thread holds about 20x the resident memory of a Tokio task "
                             "(Rust threads / Tokio tasks, RSS slopes)", "ratio", 20.0,
                             runtimes.c22_thread_over_tokio_rss, RSS, states=FACTOR,
                             verb="holds"),)),
)
