"""S12, Ulrich Drepper and Ingo Molnar, NPTL (2002): "running 100,000 concurrent
threads ... creating and destroying the threads did not take more than two
seconds" on IA-32 (one run's total time: read here as the mean over repeats of
the time 100,000 threads take at each repeat's rate)."""

from __future__ import annotations

from threadcost.claims import properties
from threadcost.claims.model import Claim, Published, Quote, Reading
from threadcost.claims.records._help import of_source
from threadcost.findings import more_sources as sel

WAVES = ("threads on glibc's default 8 MiB stacks, created and joined in waves below "
         "kernel.pid_max, stand in for NPTL's test (100,000 threads at once on IA-32, where "
         "the address space alone forces stacks far smaller than 8 MiB)")

SOURCE_DOC = "[ANNOUNCE] Native POSIX Thread Library 0.1 (linux-kernel, September 2002)"

claim = of_source("S12", SOURCE_DOC, "IA-32 (Ingo Molnar: a dual-P4 test box)")

# the source's sentences, each reading's among them
C35_QUOTES = (Quote(("Even on IA-32 with its limited address space and memory handling "
                         "running 100,000 concurrent threads was no problem at all, creating and "
                         "destroying the threads did not take more than two seconds."),
                       ("linux-kernel, Ulrich Drepper's announcement of 19 September 2002 "
                         "(https://lore.kernel.org/lkml/3D8A6EC1.1010809@redhat.com/), read as "
                         "quoted in Bill Davidsen's reply of 20 September 2002 "
                         "(http://lkml.iu.edu/hypermail/linux/kernel/0209.2/1235.html)")),
                  Quote(("on the dual-P4 testbox i have started and stopped 100,000 *parallel* "
                         "threads in less than 2 seconds."),
                       ("linux-kernel, Ingo Molnar, 20 September 2002 (Message-ID "
                         "Pine.LNX.4.44.0209200954220.27825-100000@localhost.localdomain)")),)

CLAIMS: tuple[Claim, ...] = (
    claim("C35",
          words=("Even on IA-32, running 100,000 concurrent threads was no problem, and creating "
                 "and destroying the threads did not take more than two seconds."),
          quotes=C35_QUOTES,
          published=(Published("threads", 100000, "threads", "100,000 concurrent threads"),
                     Published("create_destroy_s", 2, "s",
                               "did not take more than two seconds (an upper bound)"),),
          pages=("08_more_sources",), experiments=("thread_waves",), flips_on=properties.PID_MAX,
          as_published=(
        Reading("Creating and destroying 100,000 threads takes no more than two seconds "
                "(here in waves, the time scaled to 100,000 from each repeat's rate)", "s",
                None, 2.0, sel.s12_seconds, timing=True, published=2.0,
                tolerance_words="no more than 2 s", substitute=WAVES, quote=C35_QUOTES[1].text),
        Reading("100,000 threads alive at once", "threads", 100_000, None,
                sel.s12_concurrent, published=100_000.0,
                tolerance_words="at least 100,000", quote=C35_QUOTES[0].text),
    )),
)
