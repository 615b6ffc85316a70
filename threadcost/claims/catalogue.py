"""The published claims (C01..C23), each declared once.

For every claim: the assertions it makes, written so they hold on any machine
(a ratio, a direction, a per-thread size set by the kernel), each with the
tolerance its own words allow, and the selector (threadcost.claims.selectors)
that reads the measurement from runs whose setup matches the source's.
Absolute numbers from the source's machine are kept as context only.

Tolerances. "about X" allows X +/- 20% unless the words say more; a published
range ("1.2 to 1.5 us") is used as given; "within about 1%" is 0.99..1.01;
"grows" / "much more" / "far below" are one-sided bounds stated with the
assertion ("much more", "far below": at least 2x); two things that "converge"
to "about X" each are X +/- 20%, so their ratio lies in 0.8/1.2..1.2/0.8; an
advantage that "disappears" leaves the two equal within 20% (0.8..1.25).
Absolute times from another machine (C18's 1.7 us) are context, never verdicts.
"""

from __future__ import annotations

from typing import Any

from threadcost.claims import selectors as sel
from threadcost.claims.model import Assertion, Claim, Context
from threadcost.claims.sources import rust_readings as rust

ABOUT = 0.20


def about(x: float, share: float = ABOUT) -> tuple[float, float]:
    return x * (1 - share), x * (1 + share)


def _about(text: str, unit: str, x: float, select: Any, **kw: Any) -> Assertion:
    lo, hi = about(x)
    return Assertion(text, unit, lo, hi, select, published=x,
                     tolerance_words=f"about {x:g} (+/- 20%)", **kw)


GOROUTINES_FOR_TOKIO = ("goroutines (Go's runtime: a user-space scheduler over the epoll "
                        "poller) stand in for S5's Tokio async tasks")
GO_PINGPONG_FOR_TOKIO = ("a goroutine channel ping-pong (GOMAXPROCS=1, pinned) stands in for "
                         "S5's switch between Tokio tasks; the thread side is a pipe "
                         "ping-pong between two threads on one CPU")

CLAIMS: tuple[Claim, ...] = (
    Claim("C01", (
        Assertion("A pinned thread switch is cheaper than a 64 KiB memcpy (switch / memcpy "
                  "below 1)", "ratio", None, 1.0, sel.c01_switch_over_memcpy, timing=True,
                  published=1350 / 3000, tolerance_words="below 1"),
    ), (
        Context("pinned switch (pipe)", 1350, "ns", sel.switch_pinned_ns, "memcpy_64kib"),
        Context("64 KiB memcpy", 3000, "ns", sel.memcpy_ns),
    )),
    Claim("C02", (
        Assertion("An unpinned switch costs 1.47 to 1.83 times a pinned one (2.2 us against "
                  "1.2 to 1.5 us)", "ratio", 2.2 / 1.5, 2.2 / 1.2,
                  sel.c02_unpinned_over_pinned, timing=True, published=2.2 / 1.35,
                  tolerance_words="the published range"),
    )),
    Claim("C03", (
        _about("Unpinned, the pipe echo runs at about half the pinned rate", "ratio", 0.5,
               sel.c03_unpinned_over_pinned_rate, timing=True),
    ), (
        Context("pinned echo rate", 400_000, "iterations/s", sel.echo_pinned_rate),
    )),
    Claim("C04", (
        Assertion("GOMAXPROCS=1 plus pinning raises the channel ping-pong rate by about "
                  "10%", "fraction", 0.05, 0.15, sel.c04_pinning_gain, timing=True,
                  published=0.10, tolerance_words="10% or so: 5% to 15%"),
    ), (
        Context("goroutine switch, runtime defaults (batch / 2)", 170, "ns",
                sel.goroutine_switch_default_ns, "memcpy_64kib"),
    )),
    Claim("C05", (
        _about("An idle thread with the 8 MiB default stack reserves about 8 MiB of virtual "
               "memory (80 GiB / 10,000)", "KiB", 83_886_080 / 10_000, sel.c05_vsz_per_thread),
        _about("An idle thread holds about 8 KiB resident (80 MiB / 10,000)", "KiB",
               81_920 / 10_000, sel.c05_rss_per_thread),
    )),
    Claim("C06", (
        _about("Writing 400 KiB of each thread's stack raises RSS by only about 65% of it "
               "(2.6 GiB, not 4 GiB)", "ratio", 2.6 / 4.0, sel.c06_rss_over_touched,
               known_cause=sel.split_rss_cause),
    )),
    Claim("C07", (
        Assertion("malloc of 400 MiB moves the virtual size by the allocation", "ratio",
                  0.95, 1.05, sel.c07_vsz_after_alloc, published=409_604 / 409_600,
                  tolerance_words="the allocation +/- 5%"),
        Assertion("malloc alone leaves RSS where it was", "ratio", None, 0.05,
                  sel.c07_rss_after_alloc, published=0.0,
                  tolerance_words="below 5% of the allocation"),
        Assertion("Touching every element moves RSS by the allocation", "ratio", 0.95, 1.05,
                  sel.c07_rss_after_touch, published=(410_916 - 4_780) / 409_600,
                  tolerance_words="the allocation +/- 5%"),
    )),
    Claim("C08", (
        _about("One process can start about 32K threads, a kernel limit rather than memory",
               "threads", 32_000, sel.c08_max_threads),
    )),
    Claim("C09", (
        Assertion("Thread launch does not depend on the parent's touched memory (8 MB vs 0)",
                  "ratio", 0.9, 1.1, sel.c09_thread_growth, timing=True, published=1.0,
                  tolerance_words="within 10%"),
        Assertion("Fork launch grows with the parent's touched memory (8 MB vs 0)", "ratio",
                  1.1, None, sel.c09_fork_growth, timing=True, published=66.8 / 22.3,
                  tolerance_words="more than 10% slower at 8 MB"),
    ), (
        Context("thread launch", 5250, "ns", sel.launch_ns("thread"), "memcpy_64kib"),
        Context("fork launch, 0 MB touched", 22_300, "ns", sel.launch_ns("fork"),
                "memcpy_64kib"),
        Context("64 KiB memcpy", 3000, "ns", sel.memcpy_ns),
    )),
    Claim("C10", (
        _about("A sleeping thread with Rust's 2 MiB stack reserves about 2 MiB of virtual "
               "memory", "KiB", 2048,
               rust.c10_vsz_per_thread),
        _about("A sleeping thread with a 2 MiB stack holds about 8.5 KiB resident", "KiB", 8.5,
               rust.c10_rss_per_thread),
        Assertion("One million threads fit within this machine's limits", "threads",
                  1_000_000, None, sel.c10_million_threads, published=1_000_000,
                  tolerance_words="at least one million"),
        Assertion("One million sleeping threads: resident memory and CPU time, scaled from "
                  "the count measured here", "MiB", None, None, rust.c10_million,
                  published=8_500_640 / 1024),
    )),
    Claim("C11", (
        _about("One million sleeping goroutines hold about 2 KiB resident each (max RSS / "
               "goroutines)", "KiB", 2.12, sel.c11_rss),
    ), (
        Context("one million goroutines, S1's program: wall", 2.44, "s",
                sel.c11_as_published("wall_s")),
        Context("one million goroutines, S1's program: user", 16.66, "s",
                sel.c11_as_published("user_s")),
        Context("one million goroutines, S1's program: sys", 0.68, "s",
                sel.c11_as_published("sys_s")),
    )),
    Claim("C12", (
        _about("An idle thread adds about 8 KiB of RSS (slope over 100..1,000 threads)",
               "KiB", 8.0, sel.c12_rss_slope),
        _about("An idle thread adds about 8,196 KiB of virtual memory", "KiB", 8196.0,
               sel.c12_vsz_slope),
        _about("An idle thread adds about 11 KiB of kernel memory", "KiB", 11.0,
               sel.c12_kernel_slope),
    )),
    Claim("C13", (
        Assertion("With small memory, 5 CPU-bound threads and 5 processes on one CPU take the "
                  "same wall time within about 1% (processes / threads)", "ratio", 0.99, 1.01,
                  sel.c13_process_over_thread_time, timing=True, published=1.0,
                  tolerance_words="within about 1%"),
    )),
    Claim("C14", (
        Assertion("With an 8 MB working set per task, processes spend much more system time "
                  "than threads (processes / threads, like the time command)", "ratio", 2.0, None,
                  sel.c14_process_over_thread_sys, timing=True, published=0.74 / 0.084,
                  tolerance_words="much more: at least 2x"),
    ), (
        Context("dTLB load misses, processes / threads (S3's TLB explanation)", None,
                "ratio", sel.c14_dtlb_ratio),
    )),
    Claim("C15", (
        _about("A sleeping thread takes about 3x the resident memory of a sleeping goroutine",
               "ratio", 3.0, rust.c15_thread_over_goroutine_rss),
    )),
    Claim("C16", (
        _about("Each thread with a default stack costs about 4 KiB of page tables that RSS "
               "does not show (40 MB / 10,000)", "KiB", 4.0, sel.c16_page_tables_per_thread),
    )),
    Claim("C17", (
        _about("Sleeping threads use about 1.5x the CPU per wake-up of goroutines (21 s vs "
               "14 s)", "ratio", 21 / 14, rust.c17_threads_over_goroutines_cpu, timing=True),
        _about("Pinning threads round-robin cuts their CPU time by about 40% (21 s to 12 s)",
               "fraction", 0.4, rust.c17_pinning_cut, timing=True),
    )),
)

CLAIMS += (
    Claim("C18", (
        Assertion("A thread switch driven by I/O readiness costs about 1.7 us (net per hop, "
                  "500 tasks); absolute, so shown in empty system calls, not judged",
                  "empty system calls", None, None, sel.c18_thread_net_over_syscall,
                  published=None),
    ), (
        Context("thread net per hop, 500 tasks, unpinned", 1700, "ns", sel.c18_thread_net_ns),
    )),
    Claim("C19", (
        Assertion("A thread switch costs far more than a switch between user-space tasks "
                  "(thread / user-space task, not I/O driven)", "ratio", 2.0, None,
                  rust.c19_thread_over_tokio_switch, timing=True,
                  published=1.7 / 0.2,
                  tolerance_words="far below: at least 2x"),
    )),
    Claim("C20", (
        _about("Driven by I/O readiness, user-space tasks take only about 0.68x the time of "
               "threads per hop (18.19 s vs 26.91 s; 500 tasks, unpinned)", "ratio", 0.68,
               sel.c20_goroutine_over_thread_gross, timing=True,
               substitute=GOROUTINES_FOR_TOKIO),
        Assertion("Driven by I/O readiness, both converge to about 1.7 us: thread / user-space "
                  "task net per hop within 0.67 to 1.5 (each about 1.7 us, +/- 20%)", "ratio",
                  0.8 / 1.2, 1.2 / 0.8, sel.c20_thread_over_goroutine_net, timing=True,
                  substitute=GOROUTINES_FOR_TOKIO, published=1.0,
                  tolerance_words="both about 1.7 us (+/- 20% each)"),
    )),
    Claim("C21", (
        Assertion("Pinned to one core, the thread brigade matches the unpinned async one "
                  "(1.709 ms vs 1.795 ms per trip): threads pinned / user-space tasks, per "
                  "hop", "ratio", 0.8, 1.25, sel.c21_pinned_thread_over_goroutine,
                  timing=True, substitute=GOROUTINES_FOR_TOKIO, published=1.709 / 1.795,
                  tolerance_words="the advantage disappears: equal within 20%"),
    )),
    Claim("C22", (
        _about("A thread holds about 20x the resident memory of a user-space task (9.5 KiB "
               "vs 0.4 KiB)", "ratio", 20.0, rust.c22_thread_over_tokio_rss),
        _about("A thread also holds about 10 KiB of kernel memory (beyond its pipes)", "KiB",
               10.0, sel.c22_thread_kernel_kib),
    )),
    Claim("C23", (
        Assertion("Driven by I/O readiness, user-space tasks keep an advantage: thread net per "
                  "hop above goroutine and epoll net per hop, at every N and placement "
                  "(difference, ns)", "ns", 0.0, None, sel.c23_thread_net_minus_user_tasks,
                  timing=True, published=None,
                  tolerance_words="direction only: above 0 in every cell"),
    )),
)

# The yardsticks with a published value (S0-code: a 64 KiB memcpy takes about 3 us).
PUBLISHED_YARDSTICKS = {"memcpy_64kib": 3000.0}
CLAIMS = CLAIMS + __import__("threadcost.claims.sources.s6", fromlist=["CLAIMS"]).CLAIMS  # S6
