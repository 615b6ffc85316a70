/* tc_indirect.h - the direct and indirect cost of a context switch, measured
 * the way Li, Ding and Shen did (ExpCS 2007): two processes passing a token
 * through pipes, each walking its own array between hops, against one process
 * doing the same walks and pipe calls alone (claim S10). */
#ifndef TC_INDIRECT_H
#define TC_INDIRECT_H
#include "threadcost.h"

/* CFFI_BEGIN */
#define TC_IND_SINGLE 0   /* one process: walk, write+read its own pipe; no switch */
#define TC_IND_SWITCH 1   /* two processes: walk, pass the token, the other walks, back */

typedef struct {
    int64_t hops;            /* timed hops: walks each followed by a pipe hand-off */
    int64_t total_ns;        /* wall time of the timed hops */
    int64_t voluntary;       /* context switches of both processes over the timed hops */
    int64_t involuntary;     /* (getrusage RUSAGE_SELF in each process) */
    int64_t checksum;        /* sum the walks produced, so they cannot be optimised out */
    int err;                 /* errno of a failed call */
} tc_indirect_result;

/*
 * TC_IND_SWITCH: this process forks a partner; both pin to `cpu` (-1: no
 * pinning). A round trip: A walks its array, writes one byte to B, B (woken)
 * walks its own array and writes one byte back. A hop is one walk and one
 * hand-off, so a round trip is two hops and, on one CPU, two switches.
 * TC_IND_SINGLE: this process alone walks one array and writes and reads one
 * byte through its own pipe per hop. A walk reads and writes one byte every
 * `stride_bytes` of an `array_bytes` array (0: no walk), with the same code in
 * both modes and both processes. The arrays are mapped with their pages in;
 * `warmup_hops` untimed hops first (they bring the arrays into the caches), then
 * `hops` timed ones (both even for TC_IND_SWITCH). Nothing is left behind; a
 * partner that dies makes the read fail with TC_ESYS.
 */
int tc_indirect_run(int mode, int64_t array_bytes, int64_t stride_bytes, int64_t hops,
                    int64_t warmup_hops, int cpu, tc_indirect_result *out);
/* CFFI_END */

#endif
