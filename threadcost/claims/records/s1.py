"""S1 (shane.ai): one million Rust threads and one million goroutines (C10, C11), and the
project's own reading of its thesis (C23, a finding of this study)."""

from __future__ import annotations

from threadcost.claims import properties, whys
from threadcost.claims.model import Claim, Published, Reading
from threadcost.claims.records._help import about_reading, of_source, values
from threadcost.findings import runtimes
from threadcost.findings.brigade import c23_thread_net_minus_user_tasks
from threadcost.findings.memory import (
    c10_million_thread_times,
    c10_million_threads,
    c11_as_published,
    c11_rss,
)

C10 = (Published("threads", 1_000_000, "threads", "Rust threads sleeping 1 s"),
       Published("per_thread_rss_kib", 8.5, "KiB", "8500640 kB max RSS / 1e6 threads"),
       Published("max_rss_kib", 8_500_640, "KiB", "max RSS"),
       Published("per_thread_vsz_kib", 2048, "KiB", "about 2 MiB virtual per thread"),
       Published("wall_s", 38.55, "s"), Published("user_s", 6.17, "s"),
       Published("sys_s", 80.41, "s"))
C11 = (Published("goroutines", 1_000_000, "goroutines", "sleeping 1 s"),
       Published("per_goroutine_rss_kib", 2.12, "KiB", "2122296 kB max RSS / 1e6 goroutines"),
       Published("max_rss_kib", 2_122_296, "KiB", "max RSS"),
       Published("wall_s", 2.44, "s"), Published("user_s", 16.66, "s"),
       Published("sys_s", 0.68, "s"))
C23 = (Published("thread_over_user_task_io_hop_ratio", 1, "ratio", "qualitative: only the "
                 "direction is claimed (net cost of an I/O-driven thread hop over a user-space "
                 "task hop above 1); 1 is that threshold, not a measurement"),)
V10, V11 = values(*C10), values(*C11)
THREADS_TIME = "6.17user 80.41system 0:38.55elapsed 224%CPU (0avgtext+0avgdata 8500640maxresident)k"
GO_TIME = "16.66user 0.68system 0:02.44elapsed 709%CPU (0avgtext+0avgdata 2122296maxresident)k"


def _thread_time(what: str) -> Reading:
    return about_reading(f"One million sleeping Rust threads: {what}", "s", V10[f"{what}_s"],
                         c10_million_thread_times, THREADS_TIME, timing=True)


S1_CPUS = 7.09  # S1's goroutine run: 709%CPU, about 7 CPUs busy on average (its time line)


def _go_time(what: str) -> Reading:
    why = (whys.gomaxprocs(S1_CPUS),) if what == "user" else whys.CPU_BOUND
    return about_reading(f"One million sleeping goroutines, S1's program: {what}", "s",
                         V11[f"{what}_s"], c11_as_published(f"{what}_s"), GO_TIME,
                         timing=True, why=why)


SOURCE_DOC = "Post comparing one million Rust threads with one million goroutines"

claim = of_source("S1")

CLAIMS: tuple[Claim, ...] = (
    claim("C10",
          words=("One million Rust threads sleeping 1 s: about 8 KiB resident and 2 MiB virtual "
                 "per thread; 38.55 s wall, 6.17 s user, 80.41 s sys; needed vm.max_map_count "
                 "and kernel.threads-max raised."),
          source_doc=SOURCE_DOC,
          their_machine="not stated",
          pages=("05_user_space_tasks",),
          experiments=("thread_limits", "threads_ceiling", "peer_million",),
          flips_on=properties.IDLE_THREAD,
          published=C10, as_published=(
        about_reading("Virtual memory per sleeping thread with Rust's 2 MiB stack (each "
                      "further thread, past glibc's one-time malloc arena reservations)",
                      "KiB", V10["per_thread_vsz_kib"],
                      runtimes.c10_vsz_per_thread,
                      "about 2MB per thread"),
        about_reading("Resident memory per sleeping thread with a 2 MiB stack (each "
                      "further thread)", "KiB", V10["per_thread_rss_kib"],
                      runtimes.c10_rss_per_thread,
                      "about 8KB overhead per thread/stack", why=whys.IDLE_THREAD_RSS),
        Reading("One million threads fit within this machine's limits", "threads",
                1_000_000, None, c10_million_threads, published=1_000_000,
                tolerance_words="at least one million",
                quote="sysctl -w kernel.threads-max=2000000000"),
        Reading("One million sleeping threads: max RSS, scaled from the count measured here",
                "MiB", None, None, runtimes.c10_million, published=V10["max_rss_kib"] / 1024,
                quote="8500640maxresident"),
        _thread_time("wall"), _thread_time("user"), _thread_time("sys"))),
    claim("C11",
          words=("One million goroutines sleeping 1 s: about 2 KiB per goroutine (2,122,296 kB "
                 "max RSS); 2.44 s wall, 16.66 s user, 0.68 s sys."),
          source_doc=SOURCE_DOC,
          their_machine="not stated",
          pages=("05_user_space_tasks",), experiments=("peers", "goroutines_million",),
          flips_on=properties.GOMAXPROCS,
          published=C11, as_published=(
        about_reading("Resident memory per sleeping goroutine, S1's program (max RSS / "
                      "goroutines)", "KiB",
                      V11["per_goroutine_rss_kib"], c11_rss,
                      "2 gigabytes of RAM resident or just 2KB/goroutine!",
                      why=whys.GO_MEMORY),
        _go_time("wall"), _go_time("user"), _go_time("sys"))),
    claim("C23",
          words=("Goroutines win on their integration with non-blocking I/O in a user-space "
                 "scheduler rather than on size: where switches are driven by I/O readiness, "
                 "user-space tasks should keep an advantage over kernel threads."),
          source_doc="Post comparing one million Rust (OS) threads with one million goroutines",
          their_machine="not stated",
          pages=("07_io_brigade",), experiments=("brigade",), flips_on=properties.WAKEUP,
          published=C23, finding=True, as_published=(
        Reading("Driven by I/O readiness, user-space tasks keep an advantage: thread net per "
                "hop above goroutine and epoll net per hop, at every N and placement "
                "(difference, ns)", "ns", 0.0, None, c23_thread_net_minus_user_tasks,
                timing=True, tolerance_words="direction only: above 0 in every cell",
                quote="The magic of goroutines, if it exists"),)),
)
