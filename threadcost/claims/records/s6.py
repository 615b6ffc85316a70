"""S6: Piotr Kołaczkowski, "How Much Memory Do You Need to Run 1 Million
Concurrent Tasks?" (2023, pkolaczk.github.io/memory-consumption-of-async).

Every number below was checked against the post's own source (the Jekyll file
``_posts/2023-05-21-memory-consumption-of-async.md`` of github.com/pkolaczk/
pkolaczk.github.io, where the charts' values are typed as data; unchanged in all
six revisions of the post): Fig. 2 "Peak memory needed to launch 10,000 tasks"
and Fig. 4 "... 1 million tasks", axis "memory [MB]".

The program: N tasks that each sleep 10 s, the program exiting when all have
finished; the post prints the peak memory of the program. It does not say how
the peak was read (no tool named) nor whether MB means 10^6 or 2^20 bytes, and
its Rust programs are not in its repository (only the loop it quotes). Here
(``peer_peak_memory``) every task first waits until all exist, then sleeps
(``tasks_s6_sleep_ms``, shorter than 10 s), and the peak is the program's own
VmHWM in 10^6 bytes; Tokio runs the current_thread runtime, where the post's
runtime flavor is not stated. These change no relation the post states.

The absolute numbers are context (another machine: Xeon E3-1505M v6, Linux 5.15,
Rust 1.69, Go 1.18.1, OpenJDK 21-ea); the verdicts are on the relations the post
states in words, with its sentences, and on the order its charts show where it
states no factor.
"""

from __future__ import annotations

from threadcost.claims import properties
from threadcost.claims.model import WORDS, Assertion, Claim, Context, Published, Quote
from threadcost.claims.records._help import of_source
from threadcost.findings import peak_memory, runtimes

TEN_K = 10_000
MILLION = 1_000_000

FIG2 = "Fig.2: Peak memory needed to launch 10,000 tasks"
NOTE2 = "peak memory at 10,000 tasks (Fig. 2, the chart's data)"
NOTE4 = "peak memory at 1,000,000 tasks (Fig. 4, the chart's data)"

C24 = (Published("rust_thread_10k_mb", 48.3, "MB", NOTE2),
       Published("tokio_10k_mb", 4.6, "MB", NOTE2),
       Published("go_10k_mb", 28.6, "MB", NOTE2),
       Published("java_thread_10k_mb", 244.4, "MB", NOTE2),
       Published("java_virtual_10k_mb", 78.5, "MB", NOTE2))
C25 = (Published("tokio_1m_mb", 213.6, "MB", NOTE4),
       Published("go_1m_mb", 2658.0, "MB", NOTE4),
       Published("java_virtual_1m_mb", 1154.0, "MB", NOTE4),
       Published("threads_launched", 100_000, "threads", "could not be launched: "
                 "the thread programs were left out at 100,000 tasks and above"))
V24 = {p.quantity: p.value for p in C24}
V25 = {p.quantity: p.value for p in C25}

MODIFIED = ("S6's program modified: every task first waits until all exist, then sleeps "
            "(shorter than 10 s), and the peak is the program's own VmHWM in 10^6 bytes")

GO_OVER_THREADS = ("Goroutines are supposed to be very lightweight, but they actually "
                   "consumed more than 50% of RAM required by Rust threads.")
GO_OVER_BEST_RUST = "now it consumes over 6x more memory than the best Rust program."
GO_LOSES = "Now Go loses over 12x to the winner. It also loses over 2x to Java"

SOURCE_DOC = ("2023 post: peak memory of N concurrent tasks that each sleep 10 s, per runtime "
              "(pkolaczk.github.io/memory-consumption-of-async)")
THEIR_MACHINE = ("Intel Xeon E3-1505M v6 3.00GHz, Ubuntu 22.04, Linux 5.15; Rust 1.69, Go 1.18.1, "
                 "OpenJDK 21-ea")

claim = of_source("S6", SOURCE_DOC, THEIR_MACHINE)

CLAIMS: tuple[Claim, ...] = (
    claim("C24",
          words=("At 10,000 tasks (Fig. 2, peak memory): Rust threads 48.3 MB, Tokio 4.6 MB, Go "
                 "28.6 MB, Java threads 244.4 MB, Java virtual threads 78.5 MB; goroutines "
                 "'consumed more than 50% of RAM required by Rust threads' and 'over 6x more "
                 "memory than the best Rust program'."),
          quotes=(Quote(("Let's launch N concurrent tasks, where each task waits for 10 seconds "
                         "and then the program exists after all tasks finish."),
                       "https://pkolaczk.github.io/memory-consumption-of-async/"),
                  Quote(("Fig.2: Peak memory needed to launch 10,000 tasks (chart data: Rust "
                         "threads 48.3, Rust tokio 4.6, Go 28.6, Java threads 244.4, Java "
                         "virtual threads 78.5; axis memory [MB])"),
                       ("https://pkolaczk.github.io/memory-consumption-of-async/ (values in "
                         "https://github.com/pkolaczk/pkolaczk.github.io/blob/master/_posts/2023-05-21-memory-consumption-of-async.md)")),
                  Quote(("Goroutines are supposed to be very lightweight, but they actually "
                         "consumed more than 50% of RAM required by Rust threads."),
                       "https://pkolaczk.github.io/memory-consumption-of-async/"),
                  Quote("now it consumes over 6x more memory than the best Rust program.",
                       "https://pkolaczk.github.io/memory-consumption-of-async/"),
                  Quote(("And this is true for Java threads, which indeed consumed almost 250 MB "
                         "of RAM."),
                       "https://pkolaczk.github.io/memory-consumption-of-async/"),),
          pages=("05_user_space_tasks",), experiments=("peer_peak_memory",),
          flips_on=properties.TOOLCHAINS,
          published=C24, shape=(
        Assertion("At 10,000 sleeping tasks a Rust thread program takes more memory "
                  "than a Tokio one (the chart's order: 48.3 MB against 4.6 MB; the post "
                  "states no factor)", "ratio", 1.0, None,
                  peak_memory.ratio("rust-thread", "tokio-task", TEN_K),
                  published=V24["rust_thread_10k_mb"] / V24["tokio_10k_mb"],
                  tolerance_words="more: above 1x (the chart's order)", quote=FIG2,
                  substitute=MODIFIED, states=WORDS),
        Assertion("Goroutines take over 6x the memory of the best Rust program "
                  "(Tokio: 28.6 MB against 4.6 MB)", "ratio", 6.0, None,
                  peak_memory.ratio("goroutine", "tokio-task", TEN_K),
                  published=V24["go_10k_mb"] / V24["tokio_10k_mb"],
                  tolerance_words="over 6x", quote=GO_OVER_BEST_RUST, substitute=MODIFIED,
                  states=WORDS),
        Assertion("Goroutines take more than 50% of the memory of Rust threads, and "
                  "less than Rust threads (28.6 MB against 48.3 MB)", "ratio", 0.5, 1.0,
                  peak_memory.ratio("goroutine", "rust-thread", TEN_K),
                  published=V24["go_10k_mb"] / V24["rust_thread_10k_mb"],
                  tolerance_words="more than 50%, below 1x (the chart's order)",
                  quote=GO_OVER_THREADS, substitute=MODIFIED, states=WORDS),
        Assertion("Java virtual threads take less than Java platform threads (the "
                  "chart's order: 78.5 MB against 244.4 MB)", "ratio", None, 1.0,
                  peak_memory.ratio("java-virtual", "java-platform", TEN_K),
                  published=V24["java_virtual_10k_mb"] / V24["java_thread_10k_mb"],
                  tolerance_words="less: below 1x (the chart's order)", quote=FIG2,
                  substitute=MODIFIED, states=WORDS),
    ), context=(
        Context("Rust threads, 10,000 tasks", V24["rust_thread_10k_mb"], "MB",
                peak_memory.peak_mb("rust-thread", TEN_K)),
        Context("Tokio tasks, 10,000 tasks", V24["tokio_10k_mb"], "MB",
                peak_memory.peak_mb("tokio-task", TEN_K)),
        Context("goroutines, 10,000 tasks", V24["go_10k_mb"], "MB",
                peak_memory.peak_mb("goroutine", TEN_K)),
        Context("Java platform threads, 10,000 tasks", V24["java_thread_10k_mb"], "MB",
                peak_memory.peak_mb("java-platform", TEN_K)),
        Context("Java virtual threads, 10,000 tasks", V24["java_virtual_10k_mb"], "MB",
                peak_memory.peak_mb("java-virtual", TEN_K)),
        Context("kernel memory per Java platform thread (beside its peak RSS)", None, "KiB",
                runtimes.java_kernel_side),
    )),
    claim("C25",
          words=("At one million tasks (Fig. 4, peak memory): Tokio 213.6 MB, Go 2,658 MB, Java "
                 "virtual threads 1,154 MB; 'Now Go loses over 12x to the winner. It also loses "
                 "over 2x to Java'; 'I could not launch 100,000 threads on my system'."),
          quotes=(Quote(("Fig.4: Peak memory needed to launch 1 million tasks (chart data: Rust "
                         "tokio 213.6, Go 2658, Java virtual threads 1154; axis memory [MB])"),
                       ("https://pkolaczk.github.io/memory-consumption-of-async/ (values in "
                         "https://github.com/pkolaczk/pkolaczk.github.io/blob/master/_posts/2023-05-21-memory-consumption-of-async.md)")),
                  Quote(("I could not launch 100,000 threads on my system, so the threads "
                         "benchmarks had to be excluded."),
                       "https://pkolaczk.github.io/memory-consumption-of-async/"),
                  Quote("Now Go loses over 12x to the winner. It also loses over 2x to Java",
                       "https://pkolaczk.github.io/memory-consumption-of-async/"),),
          pages=("05_user_space_tasks",), experiments=("peer_peak_memory",),
          flips_on=properties.TOOLCHAINS,
          published=C25, shape=(
        Assertion("At one million tasks Go loses over 12x to Tokio, the winner "
                  "(213.6 MB against 2,658 MB)", "ratio", None, 1 / 12,
                  peak_memory.ratio("tokio-task", "goroutine", MILLION),
                  published=V25["tokio_1m_mb"] / V25["go_1m_mb"],
                  tolerance_words="over 12x: Tokio / Go below 1/12", quote=GO_LOSES,
                  substitute=MODIFIED, states=WORDS),
        Assertion("... and over 2x to Java virtual threads (1,154 MB against "
                  "2,658 MB)", "ratio", None, 0.5,
                  peak_memory.ratio("java-virtual", "goroutine", MILLION),
                  published=V25["java_virtual_1m_mb"] / V25["go_1m_mb"],
                  tolerance_words="over 2x: Java virtual / Go below 1/2", quote=GO_LOSES,
                  substitute=MODIFIED, states=WORDS),
    ), context=(
        Context("Tokio tasks, 1,000,000 tasks", V25["tokio_1m_mb"], "MB",
                peak_memory.peak_mb("tokio-task", MILLION)),
        Context("goroutines, 1,000,000 tasks", V25["go_1m_mb"], "MB",
                peak_memory.peak_mb("goroutine", MILLION)),
        Context("Java virtual threads, 1,000,000 tasks", V25["java_virtual_1m_mb"], "MB",
                peak_memory.peak_mb("java-virtual", MILLION)),
        Context("Rust threads started here (S6: could not launch 100,000)", None, "threads",
                peak_memory.threads_reached),
    )),
)
