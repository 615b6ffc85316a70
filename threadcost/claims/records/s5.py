"""S5 (Blandy, context-switch): Rust threads vs Tokio tasks, the pipe brigade (C18-C22)."""

from __future__ import annotations

from threadcost.claims import selectors as sel
from threadcost.claims import whys
from threadcost.claims.model import Claim, Context, Published, Reading
from threadcost.claims.read import as_published as ap
from threadcost.claims.read import rust
from threadcost.claims.records._help import about_reading, values

GOROUTINES_FOR_TOKIO = ("goroutines (Go's runtime: a user-space scheduler over the epoll "
                        "poller) stand in for S5's Tokio async tasks")
EPOLL_FOR_TOKIO = ("the brigade's epoll loop (stackless tasks in one thread, the closest "
                   "stand-in here) stands in for S5's Tokio async tasks")
GO_PINGPONG_FOR_TOKIO = ("a goroutine channel ping-pong (GOMAXPROCS=1, pinned) stands in for "
                         "S5's switch between Tokio tasks; the thread side is a pipe "
                         "ping-pong between two threads on one CPU")

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
       Published("thread_pinned_over_async_ratio", 0.95, "ratio", "derived: 1.709 / 1.795"))
C22 = (Published("thread_user_kib", 9.5, "KiB", "RSS per thread (slope over the task count)"),
       Published("thread_kernel_kib", 10, "KiB", "kernel memory per thread"),
       Published("async_task_kib", 0.4, "KiB", "RSS per async task"),
       Published("thread_over_async_rss_ratio", 20, "ratio", "derived: about 20x (9.5 / 0.4 "
                 "= 24)"))
S5 = " (S5, as the sources summarise it)"
V18, V19, V20, V21, V22 = (values(*c) for c in (C18, C19, C20, C21, C22))
HOP = "about 1.7 µs per context switch between kernel threads" + S5
CONVERGE = "both converge to about 1.7 µs per switch when driven by I/O readiness" + S5


def _hop(text: str, x: float, kind: str, placement: str, quote: str, net: bool = False,
         substitute: str | None = None) -> Reading:
    return about_reading(text, "ns", x, ap.brigade_hop(kind, placement, net), quote,
                         timing=True, substitute=substitute,
                         why=whys.SWITCH_UNPINNED if placement == "unpinned" else ())


CLAIMS: tuple[Claim, ...] = (
    Claim("C18", source="S5", published=C18, as_published=(
        _hop("Thread brigade, 500 tasks, unpinned: net time per hop (minus the one-thread "
             "pipe I/O)", V18["thread_switch_ns"], "thread", "unpinned", HOP, net=True),
        _hop("Thread brigade, 500 tasks, unpinned: mean time per hop, pipe I/O included",
             V18["thread_unpinned_per_task_ns"], "thread", "unpinned",
             "2.657 ms per 500-task trip" + S5),
    ), context=(Context("thread net per hop in empty system calls", None,
                        "empty system calls", sel.c18_thread_net_over_syscall),)),
    Claim("C19", source="S5", published=C19, as_published=(
        about_reading("A switch between user-space tasks, not I/O driven", "ns",
                      V19["async_switch_ns"], sel.goroutine_switch_pinned_ns,
                      "about 0.2 µs per context switch between Tokio tasks" + S5,
                      timing=True, substitute=GO_PINGPONG_FOR_TOKIO),),
        shape=(Reading("A thread switch costs far more than a switch between user-space tasks "
                       "(thread / user-space task)", "ratio", 2.0, None,
                       rust.c19_thread_over_tokio_switch, timing=True, published=1.7 / 0.2,
                       tolerance_words="far more: at least 2x",
                       quote="1.7 µs vs 0.2 µs" + S5),)),
    Claim("C20", source="S5", published=C20, as_published=(
        _hop("User-space task brigade, 500 tasks, unpinned: mean time per hop, pipe I/O "
             "included", V20["async_per_task_ns"], "goroutine", "unpinned",
             "1.795 ms per 500-task trip" + S5, substitute=GOROUTINES_FOR_TOKIO),
        _hop("User-space task brigade, 500 tasks, unpinned: net time per hop",
             V20["io_driven_switch_ns"], "goroutine", "unpinned", CONVERGE, net=True,
             substitute=GOROUTINES_FOR_TOKIO),
    ), shape=(
        about_reading("User-space tasks take about 0.68x the time of threads per hop (18.19 s "
                      "vs 26.91 s)", "ratio", 0.68, sel.c20_goroutine_over_thread_gross,
                      "18.19 s vs 26.91 s" + S5, timing=True,
                      substitute=GOROUTINES_FOR_TOKIO),
        Reading("Both converge: thread / user-space task net per hop within 0.67 to 1.5",
                "ratio", 0.8 / 1.2, 1.2 / 0.8, sel.c20_thread_over_goroutine_net, timing=True,
                substitute=GOROUTINES_FOR_TOKIO, published=1.0,
                tolerance_words="both about 1.7 µs (+/- 20% each)", quote=CONVERGE))),
    Claim("C21", source="S5", published=C21, as_published=(
        _hop("Thread brigade pinned to one CPU, 500 tasks: mean time per hop",
             V21["thread_pinned_per_task_ns"], "thread", "same-cpu",
             "1.709 ms vs 1.795 ms per 500-task trip" + S5),),
        shape=(Reading("Pinned threads match the unpinned user-space tasks (per hop, threads "
                       "pinned / tasks unpinned)", "ratio", 0.8, 1.25,
                       sel.c21_pinned_thread_over_goroutine, timing=True,
                       substitute=GOROUTINES_FOR_TOKIO, published=1.709 / 1.795,
                       tolerance_words="the advantage disappears: equal within 20%",
                       quote="1.709 ms vs 1.795 ms per 500-task trip" + S5),)),
    Claim("C22", source="S5", published=C22, as_published=(
        about_reading("RSS per thread of the brigade (slope over the task count)", "KiB",
                      V22["thread_user_kib"], ap.brigade_rss_slope("thread"),
                      "about 9.5 KiB user per thread" + S5),
        about_reading("Kernel memory per thread beyond its pipes (slope)", "KiB",
                      V22["thread_kernel_kib"], sel.c22_thread_kernel_kib,
                      "10 KiB kernel per thread" + S5),
        about_reading("RSS per user-space task (slope over the task count)", "KiB",
                      V22["async_task_kib"], ap.brigade_rss_slope("epoll"),
                      "about 0.4 KiB per async task" + S5,
                      substitute=EPOLL_FOR_TOKIO)),
        shape=(about_reading("A thread holds about 20x the resident memory of a user-space "
                             "task (threads / goroutines)", "ratio", 20.0,
                             rust.c22_thread_over_tokio_rss,
                             "about 9.5 KiB ... vs about 0.4 KiB per async task",
                             why=whys.GO_MEMORY),)),
)
