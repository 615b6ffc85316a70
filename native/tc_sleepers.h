/* tc_sleepers.h - many C threads that mostly sleep: memory and CPU of the lot. */
#ifndef TC_SLEEPERS_H
#define TC_SLEEPERS_H
#include "threadcost.h"

/* CFFI_BEGIN */
#define TC_SLEEPERS_UNPINNED 0   /* the scheduler places threads freely */
#define TC_SLEEPERS_PINNED 1     /* thread i pinned to CPU i mod n of the affinity mask */

typedef struct {
    int64_t started;          /* threads created */
    int64_t finished;         /* threads that ran all their wake-ups */
    int64_t wakeups;          /* sleeps completed, all threads together */
    int64_t wall_ns;          /* gate (every thread created) to last join */
    int64_t spawn_ns;         /* time to create all threads */
    int64_t user_us;          /* getrusage(RUSAGE_SELF) change from the gate to the last join */
    int64_t sys_us;
    int64_t vcsw;             /* voluntary / involuntary context switches (same) */
    int64_t ivcsw;
    tc_proc_status before;    /* this process before creating any thread */
    int64_t peak_rss_kib;     /* largest VmRSS seen by the sampler (every period) */
    int64_t peak_vsz_kib;     /* largest VmSize seen by the sampler */
    int64_t peak_threads;     /* largest Threads seen by the sampler */
    int64_t hwm_kib;          /* VmHWM at the end (only meaningful if hwm_reset) */
    int hwm_reset;            /* 1 if VmHWM could be reset before the run */
    int cpus;                 /* CPUs of the affinity mask (pinned mode) */
    int err;                  /* errno of the pthread_create that failed */
} tc_sleepers_result;

/*
 * Start `count` threads with `stack_kib` KiB stacks (0: the system default).
 * Every thread waits at a gate until all are created; timing (wall, rusage)
 * starts when the gate opens, so creating them is not in it. Thread i first
 * sleeps a pseudo-random stagger below `stagger_ns` (so they do
 * not all wake together), then sleeps `period_ns` at a time until it has
 * slept `duration_ns` in total (duration_ns / period_ns wake-ups). The calling
 * thread samples /proc/self/status every `period_ns` (at most 10 ms) while they run and
 * joins them all. A refused pthread_create stops creating, lets the threads
 * already started finish, and returns TC_ELIMIT.
 */
int tc_sleepers_run(int64_t count, int64_t period_ns, int64_t duration_ns,
                    int64_t stagger_ns, int pin, int64_t stack_kib,
                    tc_sleepers_result *out);
/* CFFI_END */

#endif
