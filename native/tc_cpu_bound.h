/* tc_cpu_bound.h - S3's experiment (claims C13/C14): CPU-bound tasks sharing one
 * CPU, as threads of one process or as processes, with or without a working set. */
#ifndef TC_CPU_BOUND_H
#define TC_CPU_BOUND_H
#include "threadcost.h"

/* CFFI_BEGIN */
#define TC_CPU_BOUND_THREADS 0     /* the tasks are threads of this process */
#define TC_CPU_BOUND_PROCESSES 1   /* the tasks are forked child processes */
#define TC_CPU_BOUND_MAX_TASKS 64

/* One task. The "work" phase runs from the start gate to the end of its loop. */
typedef struct {
    int64_t end_ns;          /* tc_now_ns() when its work ended (same clock as the gate) */
    int64_t cpu_ns;          /* CLOCK_THREAD_CPUTIME_ID over the work phase */
    int64_t user_us;         /* getrusage(RUSAGE_THREAD) change over the work phase */
    int64_t sys_us;
    int64_t vcsw;            /* voluntary / involuntary switches over the work phase */
    int64_t ivcsw;
    int64_t life_user_us;    /* the task's whole life: RUSAGE_THREAD at its end for a */
    int64_t life_sys_us;     /* thread; wait4's rusage for a process (includes exit) */
    int64_t dtlb_misses;     /* perf dTLB-load-misses over the work phase, -1 if refused */
    int64_t perf_switches;   /* perf context-switches over the work phase, -1 if refused */
    int64_t primes;          /* the answer, so the work cannot be optimised away */
    int dtlb_errno;          /* errno of perf_event_open for each counter, 0 if it opened */
    int switches_errno;
    int dtlb_user_only;      /* 1: perf allowed user-mode counting only (perf_event_paranoid) */
    int cpu;                 /* CPU it ran on at the end (sched_getcpu) */
    int err;                 /* errno if its working set could not be mapped or pinned */
    int completed;           /* 1 if it ran its whole loop */
} tc_cpu_task;

typedef struct {
    int64_t started;         /* tasks created (threads or children) */
    int64_t stopped;         /* tasks joined or reaped */
    int64_t wall_ns;         /* gate release to the last task's end */
    int64_t self_user_us;    /* getrusage(RUSAGE_SELF) + (RUSAGE_CHILDREN) change from */
    int64_t self_sys_us;     /* before the first create to after the last join/wait */
    int64_t children_user_us;
    int64_t children_sys_us;
    int err;                 /* errno of the call that failed */
} tc_cpu_bound_result;

/*
 * Run `tasks` tasks (threads or processes, `mode`), every one pinned to `cpu`.
 * Each first maps and writes its own working set of `ws_ints` 64-bit integers
 * (0: none), waits at a start gate, then counts primes below `limit` the naive
 * way (S3's loop: every i from 3 to limit tried against every j from 2 to limit),
 * writing every integer of its working set at the start of each outer
 * iteration. After `deadline_ns` the tasks are told to stop (TC_ETIMEOUT, the
 * stopped ones have completed = 0). A refused thread or fork stops creating,
 * lets the started ones finish and returns TC_ELIMIT. `task_out` has `tasks`
 * entries.
 */
int tc_cpu_bound_run(int mode, int tasks, int cpu, int64_t limit, int64_t ws_ints,
                     int64_t deadline_ns, tc_cpu_task *task_out, tc_cpu_bound_result *out);
/* CFFI_END */

#endif
