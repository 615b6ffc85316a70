/* tc_switch.h - context-switch cost: two tasks ping-pong a token (claims C01-C03, C13, C14). */
#ifndef TC_SWITCH_H
#define TC_SWITCH_H
#include "threadcost.h"

/* CFFI_BEGIN */
/* How the token travels. */
#define TC_SW_PIPE 0        /* a pipe each way, message_bytes per hop */
#define TC_SW_CONDVAR 1     /* one mutex, a condition variable per side, a turn flag */
#define TC_SW_FUTEX 2       /* a futex word per side (PRIVATE for threads, shared for processes) */
#define TC_SW_EVENTFD 3     /* an eventfd each way */

/* What the two tasks are. */
#define TC_SW_THREADS 0     /* two threads of this process */
#define TC_SW_PROCESSES 1   /* a thread of this process and a forked child process */

/* Baselines: one task doing the work of a hop without any partner (no switch). */
#define TC_SWB_EMPTY_SYSCALL 0  /* syscall(SYS_getppid) */
#define TC_SWB_LOCK_UNLOCK 1    /* uncontended pthread_mutex_lock + unlock */
#define TC_SWB_SELF_PIPE 2      /* write message_bytes to its own pipe, read them back */
#define TC_SWB_SELF_EVENTFD 3   /* write its own eventfd, read it back */
#define TC_SWB_SELF_FUTEX 4     /* FUTEX_WAKE with no waiter + FUTEX_WAIT on a changed word */
#define TC_SWB_SELF_CONDVAR 5   /* lock, set flag, signal with no waiter, unlock */
#define TC_SWB_TOUCH 6          /* write one word per 64-byte line of a warm working set */
#define TC_SWB_TIMER 7          /* one tc_now_ns() (CLOCK_MONOTONIC, vDSO) */
#define TC_SWB_GETCPU 8         /* one sched_getcpu() */

typedef struct {
    int mechanism;            /* TC_SW_* */
    int tasks;                /* TC_SW_THREADS or TC_SW_PROCESSES */
    int cpu_a;                /* CPU of side A (the timing side), -1: not pinned */
    int cpu_b;                /* CPU of side B (the echoing side), -1: not pinned */
    int64_t iterations;       /* timed round trips */
    int64_t warmup;           /* untimed round trips before the timed ones */
    int64_t working_set_bytes;/* each side writes this much of its own memory per hop */
    int message_bytes;        /* pipe only: bytes per hop (1 .. 4096) */
    int per_sample;           /* 1: a timestamp per round trip; 0: only start and end */
    int record_cpus;          /* 1: both sides note sched_getcpu() every round trip */
    int timeout_ms;           /* watchdog: no progress for this long ends the run */
    int64_t test_stall_after; /* test hook: B stops answering after this many round
                                 trips (warm-up included); -1: never */
} tc_switch_config;

typedef struct {
    int64_t voluntary;        /* context switches during the timed region (getrusage) */
    int64_t involuntary;
    int64_t user_ns;          /* CPU time during the timed region */
    int64_t sys_ns;
    int cpu_after_pin;        /* sched_getcpu() right after pinning (or start, unpinned) */
    int pin_err;              /* errno of sched_setaffinity, 0 if fine or not pinned */
} tc_switch_side;

typedef struct {
    int64_t completed;        /* timed round trips done (= iterations unless stopped) */
    int64_t total_ns;         /* wall time of the whole timed region */
    tc_switch_side a;         /* the timing side (a thread of this process) */
    tc_switch_side b;         /* the echoing side (thread or child process) */
    int timed_out;            /* 1: the watchdog fired */
    int child_killed;         /* 1: the child did not exit on request and was SIGKILLed */
    int err;                  /* errno of a failed system call */
    int where;                /* which step failed (TC_SW_STEP_*), for the message */
} tc_switch_result;

#define TC_SW_STEP_NONE 0
#define TC_SW_STEP_SETUP 1     /* pipes, eventfds, shared memory, mutex/cond init */
#define TC_SW_STEP_SPAWN 2     /* pthread_create or fork */
#define TC_SW_STEP_WORKSET 3   /* mapping a working set */
#define TC_SW_STEP_PINGPONG 4  /* a read/write/futex call during the ping-pong */
#define TC_SW_STEP_PIN 5       /* sched_setaffinity */

/*
 * Ping-pong `cfg->warmup + cfg->iterations` round trips between side A (a new
 * thread) and side B (a new thread, or a forked child). A round trip: A writes
 * its working set, passes the token to B, B writes its working set, passes it
 * back. With per_sample, A stores the duration of round trip i in
 * round_trip_ns[i] (caller-owned, `iterations` entries, may be NULL otherwise);
 * with record_cpus, cpu_a[i] and cpu_b[i] get the CPU each side ran on.
 * The calling thread is the watchdog: if no round trip completes within
 * timeout_ms it stops both sides and returns TC_ETIMEOUT. Everything created
 * (threads, child, fds, mappings) is released on every path.
 */
int tc_switch_pingpong(const tc_switch_config *cfg, int64_t *round_trip_ns,
                       int32_t *cpu_a, int32_t *cpu_b, tc_switch_result *out);

/*
 * One task, pinned to `cpu` (-1: not pinned), repeats a baseline operation:
 * `samples` timed batches of `batch` operations each; batch_ns[i] is the time
 * of batch i (divide by batch for one operation). The task is a new thread so
 * the caller's affinity is never changed.
 */
int tc_switch_baseline(int kind, int cpu, int samples, int batch,
                       int64_t working_set_bytes, int message_bytes,
                       int64_t *batch_ns, int *err);
/* CFFI_END */

#endif
