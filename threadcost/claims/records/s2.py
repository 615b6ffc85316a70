"""S2 (Blandy, thread-memory): idle-thread RSS, virtual size and kernel memory (C12)."""

from __future__ import annotations

from threadcost.claims import properties, whys
from threadcost.claims.model import Claim, Context, Published
from threadcost.claims.records._help import about_reading, of_source, values
from threadcost.findings.memory import (
    SLAB_NOT_COUNTED,
    SLABTOP,
    SUNRECLAIM,
    c12_kernel_slope,
    c12_rss_slope,
    c12_vsz_slope,
    slab_slope,
)

C12 = (Published("per_thread_rss_kib", 8, "KiB", "slope of pmap RSS totals over 100..1000 "
                 "threads step 50"),
       Published("per_thread_vsz_kib", 8196, "KiB", "slope of virtual size"),
       Published("per_thread_kernel_kib", 11, "KiB", "kernel memory per thread (estimate)"))
V = values(*C12)

SOURCE_DOC = ("README of a C program measuring idle-thread RSS with pmap over 100..1000 "
                      "threads")

claim = of_source("S2", SOURCE_DOC, "not stated")

# S2's kernel memory: the slope of slabtop's active size (measure.sh, the commented-out
# awk on "Active / Total Size"; threads-memory.c, the commented-out "sudo slabtop -o")
SLAB_BY_SUNRECLAIM = (f"{SUNRECLAIM} stands in for S2's count, {SLABTOP}: it leaves out the "
                      f"reclaimable caches and counts whole slab pages; {SLAB_NOT_COUNTED}")

CLAIMS: tuple[Claim, ...] = (
    claim("C12",
          words=("Each idle thread costs about 8 KiB of RSS (slope of pmap totals, 100..1000 "
                 "threads step 50; virtual about 8,196 KiB per thread), plus about 11 KiB of "
                 "kernel memory per thread."),
          pages=("02_thread_memory",), experiments=("thread_memory",),
          flips_on=properties.IDLE_THREAD,
          published=C12, as_published=(
        about_reading("RSS per idle thread: slope over 100..1,000 threads", "KiB",
                      V["per_thread_rss_kib"], c12_rss_slope,
                      "each new thread costs around 8KiB of RSS", why=whys.IDLE_THREAD_RSS),
        about_reading("Virtual memory per idle thread: slope over 100..1,000 threads", "KiB",
                      V["per_thread_vsz_kib"], c12_vsz_slope,
                      "virtual memory reserved, in KiB"),
        about_reading("Kernel memory per idle thread, counted as slab: slope over 100..1,000 "
                      "threads", "KiB", V["per_thread_kernel_kib"], slab_slope,
                      "each of these threads consumes around 11KiB of memory in the kernel",
                      substitute=SLAB_BY_SUNRECLAIM),
    ), context=(Context("kernel stack + page tables + unreclaimable slab per thread (a wider "
                        "count than S2's slab alone)", None, "KiB", c12_kernel_slope),)),
)
