"""S3 (Tamilarasan): CPU-bound threads vs processes on one core (C13, C14)."""

from __future__ import annotations

from threadcost.claims import selectors as sel
from threadcost.claims import whys
from threadcost.claims.model import Claim, Context, Published, Reading
from threadcost.claims.read import as_published as ap
from threadcost.claims.records._help import about_reading, values

C13 = (Published("threads_vs_processes_wall_ratio", 1.01, "ratio", "5 CPU-bound tasks on one "
                 "core; small memory; within about 1%"),)
C14 = (Published("process_sys_s", 0.74, "s", "5 processes with an 8 MB working set each; "
                 "total system time"),
       Published("thread_sys_s", 0.084, "s", "5 threads with an 8 MB working set each; total "
                 "system time"),
       Published("process_over_thread_sys_ratio", 8.8, "ratio", "derived: 0.74 / 0.084"))
V = values(*C14)
C13_UP_FRONT = ("Inconclusive here for want of power: a band of +/- 1% needs an interval "
                "narrower than 1% of a run's wall time, and these repeats give a wider one "
                "(the power row says by how much).")
C14_UP_FRONT = ("Inconclusive here for want of resolution: the threads' system time is a few "
                "scheduler ticks, and getrusage counts CPU time in whole ticks.")
SYS_QUOTE = "The sys time for running threads program is 0.084s for all 5 threads"

CLAIMS: tuple[Claim, ...] = (
    Claim("C13", source="S3", published=C13, up_front=C13_UP_FRONT, as_published=(
        Reading("The wall-time ratio of 5 small-memory CPU-bound processes to 5 such "
                "threads on one CPU",
                "ratio", 0.99, 1.01, sel.c13_process_over_thread_time, timing=True,
                published=1.0, tolerance_words="within about 1%",
                quote="There is not much difference in the time taken to run the program in "
                      "5 threads and 5 processes(~1% diff)"),)),
    Claim("C14", source="S3", published=C14, up_front=C14_UP_FRONT, as_published=(
        about_reading("5 processes with an 8 MB working set each: total system time", "s",
                      V["process_sys_s"], ap.cpu_bound_total("processes", "whole_sys_s"),
                      "sys 0m0.740s", timing=True, why=(whys.tick,)),
        about_reading("5 threads with an 8 MB working set each: total system time", "s",
                      V["thread_sys_s"], ap.cpu_bound_total("threads", "whole_sys_s"),
                      SYS_QUOTE, timing=True, why=(whys.tick,)),
    ), shape=(
        Reading("Processes spend much more system time than threads (processes / threads)",
                "ratio", 2.0, None, sel.c14_process_over_thread_sys, timing=True,
                published=0.74 / 0.084, tolerance_words="much more: at least 2x",
                quote="the runtime for processes is more than the threads"),
    ), context=(Context("dTLB load misses, processes / threads (S3's TLB explanation)", None,
                        "ratio", sel.c14_dtlb_ratio),)),
)
