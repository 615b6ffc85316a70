"""S6: Piotr Kołaczkowski, "How Much Memory Do You Need to Run 1 Million
Concurrent Tasks?" (2023, pkolaczk.github.io/memory-consumption-of-async).

The program: N tasks that each sleep 10 s, the program's peak memory read from
outside. Published values (MB): at 10,000 tasks Rust threads 48.3, Tokio 4.6,
Go 28.6, Java threads 244.4, Java virtual threads 78.5; at 1,000,000 Tokio
213.6, Go 2,658, Java virtual threads 1,154; and "I could not launch 100,000
threads on my system". The absolute numbers are context (another machine, other
runtime versions); the verdicts are on the relations the post states: async
tasks far smaller than threads, Go and Java virtual threads in between.
"""

from __future__ import annotations

from threadcost.claims.model import Assertion, Claim, Context
from threadcost.claims.read import s6

TEN_K = 10_000
MILLION = 1_000_000

CLAIMS: tuple[Claim, ...] = (
    Claim("C24", (
        Assertion("At 10,000 sleeping tasks a Rust thread program takes far more memory than a "
                  "Tokio one (48.3 MB against 4.6 MB; far: at least 2x)", "ratio", 2.0, None,
                  s6.ratio("rust-thread", "tokio-task", TEN_K), published=48.3 / 4.6,
                  tolerance_words="far more: at least 2x"),
        Assertion("Goroutines sit between: above Tokio tasks (28.6 MB against 4.6 MB)",
                  "ratio", 1.0, None, s6.ratio("goroutine", "tokio-task", TEN_K),
                  published=28.6 / 4.6, tolerance_words="above: more than 1x"),
        Assertion("... and below Rust threads (28.6 MB against 48.3 MB)", "ratio", None, 1.0,
                  s6.ratio("goroutine", "rust-thread", TEN_K), published=28.6 / 48.3,
                  tolerance_words="below: less than 1x"),
        Assertion("Java virtual threads take less than Java platform threads (78.5 MB against "
                  "244.4 MB)", "ratio", None, 1.0,
                  s6.ratio("java-virtual", "java-platform", TEN_K), published=78.5 / 244.4,
                  tolerance_words="less: below 1x"),
    ), (
        Context("Rust threads, 10,000 tasks", 48.3, "MB", s6.peak_mb("rust-thread", TEN_K)),
        Context("Tokio tasks, 10,000 tasks", 4.6, "MB", s6.peak_mb("tokio-task", TEN_K)),
        Context("goroutines, 10,000 tasks", 28.6, "MB", s6.peak_mb("goroutine", TEN_K)),
        Context("Java platform threads, 10,000 tasks", 244.4, "MB",
                s6.peak_mb("java-platform", TEN_K)),
        Context("Java virtual threads, 10,000 tasks", 78.5, "MB",
                s6.peak_mb("java-virtual", TEN_K)),
    )),
    Claim("C25", (
        Assertion("At one million tasks Tokio stays far below Go (213.6 MB against 2,658 MB; "
                  "far: at least 2x)", "ratio", None, 0.5,
                  s6.ratio("tokio-task", "goroutine", MILLION), published=213.6 / 2658,
                  tolerance_words="far below: at most 1/2"),
        Assertion("Java virtual threads sit between Tokio and Go (1,154 MB): below Go",
                  "ratio", None, 1.0, s6.ratio("java-virtual", "goroutine", MILLION),
                  published=1154 / 2658, tolerance_words="below: less than 1x"),
    ), (
        Context("Tokio tasks, 1,000,000 tasks", 213.6, "MB", s6.peak_mb("tokio-task", MILLION)),
        Context("goroutines, 1,000,000 tasks", 2658.0, "MB", s6.peak_mb("goroutine", MILLION)),
        Context("Java virtual threads, 1,000,000 tasks", 1154.0, "MB",
                s6.peak_mb("java-virtual", MILLION)),
        Context("Rust threads started here (S6: could not launch 100,000)", None, "threads",
                s6.threads_reached),
    )),
)
