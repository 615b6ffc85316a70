/* tc_yieldloop.h - the futex ping-pong loop of tsuna's contextswitch programs,
 * with its sched_yield() calls, so the switches of one of its iterations can be
 * counted by the kernel (claim S9; the repository's issue asks how many). */
#ifndef TC_YIELDLOOP_H
#define TC_YIELDLOOP_H
#include "threadcost.h"

/* CFFI_BEGIN */
typedef struct {
    int64_t iterations;   /* timed iterations done */
    int64_t total_ns;     /* wall time of the timed iterations */
    int64_t voluntary;    /* context switches of both sides over the timed iterations */
    int64_t involuntary;  /* (getrusage: RUSAGE_THREAD for a thread, RUSAGE_SELF for a child) */
    int timed_out;        /* 1: a side waited longer than timeout_ms; the run stopped */
    int err;              /* errno of a failed call */
} tc_yieldloop_result;

/*
 * One iteration, in the structure of tsuna's timectxsw.c / timetctxsw.c (the
 * method, written anew): A sets a shared word to "B's turn" and calls
 * FUTEX_WAKE until it has woken a sleeper (sched_yield between tries), calls
 * sched_yield once, then waits for its own turn: sched_yield until the word
 * says so, then FUTEX_WAIT until woken. B does the mirror image, starting
 * with a sched_yield. `processes`: B is a forked child sharing the word
 * through a MAP_SHARED page (else a thread). Both pinned to `cpu` (-1: not).
 * `warmup` untimed iterations, then `iterations` timed. No wait lasts past
 * timeout_ms: then TC_ETIMEOUT, partner stopped, nothing left behind.
 */
int tc_yieldloop_run(int processes, int64_t iterations, int64_t warmup, int cpu,
                     int timeout_ms, tc_yieldloop_result *out);
/* CFFI_END */

#endif
