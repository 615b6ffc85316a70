"""S12, Ulrich Drepper and Ingo Molnar, NPTL (2002): "running 100,000 concurrent
threads ... creating and destroying the threads did not take more than two
seconds" on IA-32 (one run's total time: read here as the mean over repeats of
the time 100,000 threads take at each repeat's rate)."""

from __future__ import annotations

from threadcost.claims.model import Claim, Reading
from threadcost.claims.read import further as sel

WAVES = ("threads on glibc's default 8 MiB stacks, created and joined in waves below "
         "kernel.pid_max, stand in for NPTL's test (100,000 threads at once on IA-32, where "
         "the address space alone forces stacks far smaller than 8 MiB)")

CLAIMS: tuple[Claim, ...] = (
    Claim("C35", as_published=(
        Reading("Creating and destroying 100,000 threads takes no more than two seconds "
                "(here in waves, the time scaled to 100,000 from each repeat's rate)", "s",
                None, 2.0, sel.s12_seconds, timing=True, published=2.0,
                tolerance_words="no more than 2 s", substitute=WAVES),
        Reading("100,000 threads alive at once", "threads", 100_000, None,
                sel.s12_concurrent, published=100_000.0,
                tolerance_words="at least 100,000"),
    )),
)
