"""The seventeen published claims, each declared once.

For every claim: the assertions it makes, written so they hold on any machine
(a ratio, a direction, a per-thread size set by the kernel), each with the
tolerance its own words allow, and the selector (threadcost.claims.selectors)
that reads the measurement from runs whose setup matches the source's.
Absolute numbers from the source's machine are kept as context only.

Tolerances. "about X" allows X +/- 20% unless the words say more; a published
range ("1.2 to 1.5 us") is used as given; "within about 1%" is 0.99..1.01;
"grows" / "much more" are one-sided bounds stated with the assertion.
"""

from __future__ import annotations

from typing import Any

from threadcost.claims import selectors as sel
from threadcost.claims.model import Assertion, Claim, Context

ABOUT = 0.20


def about(x: float, share: float = ABOUT) -> tuple[float, float]:
    return x * (1 - share), x * (1 + share)


def _about(text: str, unit: str, x: float, select: Any, **kw: Any) -> Assertion:
    lo, hi = about(x)
    return Assertion(text, unit, lo, hi, select, published=x,
                     tolerance_words=f"about {x:g} (+/- 20%)", **kw)


ECHO_FOR_PINGPONG = ("pipe echo between two threads (notebook 04's echo, 5 interleaved "
                     "repeats) stands in for S0's pipe ping-pong, which ran once here")
PINGPONG_FOR_CPU_TASKS = ("a pipe ping-pong between two tasks on one CPU, where every hop "
                          "switches, stands in for S3's CPU-bound tasks switched at the tick")

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
                  sel.c02_unpinned_over_pinned_switch, timing=True,
                  substitute=ECHO_FOR_PINGPONG, published=2.2 / 1.35,
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
                  "10%", "fraction", 0.05, 0.15, sel.c04_gomaxprocs1_gain, timing=True,
                  published=0.10, tolerance_words="10% or so: 5% to 15%"),
    ), (
        Context("goroutine switch", 170, "ns", sel.goroutine_switch_ns, "memcpy_64kib"),
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
        _about("A thread with Rust's 2 MiB stack reserves about 2 MiB of virtual memory",
               "KiB", 2048, sel.c10_vsz_per_thread),
        _about("A thread with a 2 MiB stack holds about 8.5 KiB resident", "KiB", 8.5,
               sel.c10_rss_per_thread),
        Assertion("One million threads fit within this machine's limits", "threads",
                  1_000_000, None, sel.c10_million_threads, published=1_000_000,
                  tolerance_words="at least one million"),
        Assertion("One million sleeping threads take 38.55 s wall, 6.17 s user, 80.41 s sys",
                  "s", None, None, sel.c10_million_thread_times, published=38.55),
    )),
    Claim("C11", (
        _about("A goroutine holds about 2 KiB resident", "KiB", 2.12,
               sel.c11_rss_per_goroutine,
               substitute="10,000 goroutines blocked on a channel stand in for one million "
                          "sleeping ones"),
        Assertion("One million sleeping goroutines take 2.44 s wall, 16.66 s user, 0.68 s sys",
                  "s", None, None, sel.c11_million_goroutines, published=2.44),
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
        Assertion("With small memory, threads and processes on one CPU take the same time "
                  "within about 1% (processes / threads)", "ratio", 0.99, 1.01,
                  sel.c13_process_over_thread_time, timing=True,
                  substitute=PINGPONG_FOR_CPU_TASKS, published=1.0,
                  tolerance_words="within about 1%"),
    )),
    Claim("C14", (
        Assertion("With an 8 MB working set per task, processes spend much more system time "
                  "than threads (processes / threads)", "ratio", 2.0, None,
                  sel.c14_process_over_thread_sys, timing=True,
                  substitute=PINGPONG_FOR_CPU_TASKS, published=0.74 / 0.084,
                  tolerance_words="much more: at least 2x"),
    )),
    Claim("C15", (
        _about("A sleeping thread takes about 3x the memory of a sleeping goroutine",
               "ratio", 3.0, sel.c15_thread_over_goroutine_rss),
    )),
    Claim("C16", (
        _about("Each thread with a default stack costs about 4 KiB of page tables that RSS "
               "does not show (40 MB / 10,000)", "KiB", 4.0, sel.c16_page_tables_per_thread),
    )),
    Claim("C17", (
        _about("Sleeping threads use about 1.5x the CPU time of goroutines (21 s vs 14 s)",
               "ratio", 21 / 14, sel.c17_threads_over_goroutines_cpu, timing=True),
        _about("Pinning threads round-robin cuts their CPU time by about 40% (21 s to 12 s)",
               "fraction", 0.4, sel.c17_pinning_cut, timing=True),
    )),
)

# The yardsticks with a published value (S0-code: a 64 KiB memcpy takes about 3 us).
PUBLISHED_YARDSTICKS = {"memcpy_64kib": 3000.0}
