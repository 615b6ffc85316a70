"""S3 (Tamilarasan): CPU-bound threads vs processes on one core (C13, C14)."""

from __future__ import annotations

from threadcost.claims import properties
from threadcost.claims.model import WORDS, AssertionVerdict, Claim, Context, Published, Reading, Why
from threadcost.claims.records._help import about_reading, of_source, values
from threadcost.findings import cpu_bound
from threadcost.findings.cpu_bound import (
    c13_process_over_thread_time,
    c14_dtlb_ratio,
    c14_process_over_thread_sys,
)
from threadcost.measured.runs import Runs

C13 = (Published("threads_vs_processes_wall_ratio", 1.01, "ratio", "5 CPU-bound tasks on one "
                 "core; small memory; within about 1%"),)
C14 = (Published("process_sys_s", 0.74, "s", "5 processes with an 8 MB working set each; "
                 "total system time"),
       Published("thread_sys_s", 0.084, "s", "5 threads with an 8 MB working set each; total "
                 "system time"),
       Published("process_user_s", 145.88, "s", "the processes' total user time"),
       Published("thread_user_s", 145.932, "s", "the threads' user time"),
       Published("process_over_thread_sys_ratio", 8.8, "ratio", "derived: 0.74 / 0.084"),
       Published("process_sys_ms_per_user_s", 0.74 / 145.88 * 1000, "ms",
                 "derived: system time per second of user time, 0.74 s / 145.88 s"),
       Published("thread_sys_ms_per_user_s", 0.084 / 145.932 * 1000, "ms",
                 "derived: 0.084 s / 145.932 s"))
V = values(*C14)
# S3 ran Go programs (goroutines in one process, or one process each, under taskset); the
# cpu_bound experiment is a C rewrite of the same work, much shorter: each loop is sized on
# the machine by a short calibration so a run lasts about a declared time of CPU


def _rewrite(memory: str) -> str:
    # (the sizes and targets a run used are its own: page 04 prints them from the run)
    return ("a C rewrite of S3's Go programs (the same prime loop, " + memory + ", 5 "
            "threads or 5 processes on one CPU, the loop sized on this machine by a short "
            "calibration so that a run lasts about a second of CPU or less, where S3's "
            "lasted minutes; runs stored before the calibration used a fixed size, which "
            "the setup row gives)")


C_REWRITE = _rewrite("each task with its own 1M-integer working set")  # 8 MB
# C13 is the small-memory case: the run's tasks with no working set beyond the loop's
SMALL_REWRITE = _rewrite("no working set beyond the loop's own variables")
C13_UP_FRONT = ("Inconclusive here for want of power: a band of +/- 1% needs an interval "
                "narrower than 1% of a run's wall time, and these repeats give a wider one "
                "(the power row says by how much).")
C14_UP_FRONT = ("Inconclusive here for want of resolution: the threads' system time is a few "
                "scheduler ticks, and getrusage counts CPU time in whole ticks. S3's runs "
                "lasted minutes, these about a second or less, so the system time is read per "
                "second of user time, never as absolute seconds.")


def _setup_cost(runs: Runs, v: AssertionVerdict) -> Why | None:
    """System time per user second larger than S3's: how much of the reading's own
    tasks' (threads' or processes') system time is spent outside their loops (creating
    the tasks, faulting in their working sets, exiting), a fixed cost that S3's 180x
    longer runs spread over more work. Each mode is explained by its own runs, never by
    the other's."""
    mode = str(v.setup.get("mode", ""))
    got = cpu_bound.setup_share(runs, mode) if mode else None
    if got is None or v.published is None or v.measured is None or v.measured <= v.published:
        return None
    loops, whole, run_id = got
    user = cpu_bound.own_user_s(runs, mode)
    if whole <= 0 or loops >= whole or user is None:
        return None
    s3_user = {"processes": V["process_user_s"], "threads": V["thread_user_s"]}.get(mode)
    if s3_user is None:
        return None
    longer = float(f"{s3_user / user:.2g}")  # two figures: "about 180 times"
    return Why(f"of the {mode}' {whole * 1000:.1f} ms of system time per run (mean over "
               f"repeats), {loops * 1000:.1f} ms fall inside the tasks' loops and "
               f"{(whole - loops) * 1000:.1f} ms outside them (creating the tasks, faulting "
               "in their 8 MB working sets, exiting): a fixed cost per run, which S3's runs, "
               f"about {longer:,.0f} times longer (user time), spread over more work",
               {"sys_loops_s": loops, "sys_outside_loops_s": whole - loops}, run_id)


SYS_QUOTE = "The sys time for running threads program is 0.084s for all 5 threads"

SOURCE_DOC = "Post on context-switch overhead of threads vs processes pinned to one core"

claim = of_source("S3", SOURCE_DOC, "not stated")

CLAIMS: tuple[Claim, ...] = (
    claim("C13",
          words=("CPU-bound work in 5 threads vs 5 processes pinned to one core: about the same "
                 "wall time (within about 1%) when each task's memory is small."),
          pages=("04_context_switch",), experiments=("cpu_bound",), flips_on=properties.CPUS,
          published=C13, up_front=C13_UP_FRONT, as_published=(
        Reading("The wall-time ratio of 5 small-memory CPU-bound processes to 5 such "
                "threads on one CPU",
                "ratio", 0.99, 1.01, c13_process_over_thread_time, timing=True,
                substitute=SMALL_REWRITE,
                published=1.0, tolerance_words="within about 1%",
                quote="There is not much difference in the time taken to run the program in "
                      "5 threads and 5 processes(~1% diff)"),)),
    claim("C14",
          words=("With a 1M-integer (8 MB) working set per task, processes spend much more "
                 "system time than threads (0.74 s vs 0.084 s total), attributed to switching "
                 "address spaces (TLB)."),
          pages=("04_context_switch",), experiments=("cpu_bound",), flips_on=properties.TICK,
          published=C14, up_front=C14_UP_FRONT, as_published=(
        about_reading("5 processes with an 8 MB working set each: system time per second "
                      "of user time (S3: 0.74 s / 145.88 s)", "ms",
                      V["process_sys_ms_per_user_s"], cpu_bound.sys_per_user_ms("processes"),
                      "sys 0m0.740s", timing=True, substitute=C_REWRITE,
                      why=(_setup_cost,)),
        about_reading("5 threads with an 8 MB working set each: system time per second of "
                      "user time (S3: 0.084 s / 145.93 s)", "ms",
                      V["thread_sys_ms_per_user_s"], cpu_bound.sys_per_user_ms("threads"),
                      SYS_QUOTE, timing=True, substitute=C_REWRITE,
                      why=(_setup_cost,)),
    ), shape=(
        Reading("Processes spend much more system time than threads (processes / threads)",
                "ratio", 2.0, None, c14_process_over_thread_sys, timing=True,
                substitute=C_REWRITE,
                published=0.74 / 0.084, tolerance_words="much more: at least 2x", states=WORDS,
                quote="the runtime for processes is more than the threads"),
    ), context=(Context("dTLB load misses, processes / threads (S3's TLB explanation)", None,
                        "ratio", c14_dtlb_ratio),)),
)
