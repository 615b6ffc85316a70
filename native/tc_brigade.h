/* tc_brigade.h - I/O-readiness switching: a "bucket brigade" of N tasks joined by
 * N+1 links, pipes or Unix socket pairs (claims C18-C23). A byte enters link 0; task
 * i reads link i and writes link i+1; the driver reads link N. One trip = N+1 hops (N task hand-offs plus
 * the driver's own read). */
#ifndef TC_BRIGADE_H
#define TC_BRIGADE_H
#include "threadcost.h"

/* CFFI_BEGIN */
/* What the N tasks are. */
#define TC_BR_THREAD 0      /* N threads, each blocking in read() then write()ing on */
#define TC_BR_EPOLL 1       /* one thread, non-blocking pipes, an epoll loop running a
                               per-task state machine when its pipe is readable */
#define TC_BR_ONE_THREAD 2  /* one thread doing every read and write in order: the I/O
                               alone, no switch and no readiness wait (the baseline) */

/* What joins task i to task i+1 (config.transport). */
#define TC_BR_PIPE 0        /* pipe2(): [0] the read end, [1] the write end */
#define TC_BR_SOCKETPAIR 1  /* socketpair(AF_UNIX, SOCK_STREAM): [0] read, [1] written
                               (S5's transport: Rust's UnixStream::pair) */

/* Which limit stopped the set-up (result.limit). */
#define TC_BR_LIMIT_NONE 0
#define TC_BR_LIMIT_FDS 1      /* pipe2/epoll: EMFILE or ENFILE (RLIMIT_NOFILE, fs.file-max) */
#define TC_BR_LIMIT_THREADS 2  /* pthread_create: EAGAIN (pids.max, threads-max, pid_max) */
#define TC_BR_LIMIT_MEMORY 3   /* ENOMEM from a stack, a pipe or the kernel */

#define TC_BR_STEP_NONE 0
#define TC_BR_STEP_PIPES 1     /* creating the links (pipes or socket pairs) */
#define TC_BR_STEP_SPAWN 2     /* starting the task threads or the driver */
#define TC_BR_STEP_EPOLL 3     /* epoll_create1 / epoll_ctl */
#define TC_BR_STEP_TRIP 4      /* a read or write during the trips */
#define TC_BR_STEP_PIN 5       /* sched_setaffinity */

#define TC_BR_MAX_TASKS 100000

typedef struct {
    int kind;                 /* TC_BR_* */
    int tasks;                /* N, 1 .. TC_BR_MAX_TASKS */
    int cpu;                  /* every thread of the brigade on this CPU; -1: not pinned */
    int64_t iterations;       /* timed trips */
    int64_t warmup;           /* untimed trips first */
    int stack_kib;            /* task thread stack, KiB (0: the system default) */
    int raise_hard_nofile;    /* 1: short of fds, a privileged process also raises
                                 RLIMIT_NOFILE's hard limit (see below); 0: only the soft */
    int timeout_ms;           /* watchdog: no trip completed for this long ends the run */
    int64_t test_stall_after; /* test hook: the middle task stops passing the byte after
                                 this many trips (warm-up included); -1: never */
    int transport;            /* TC_BR_PIPE or TC_BR_SOCKETPAIR */
} tc_brigade_config;

typedef struct {
    int64_t completed;        /* timed trips done (= iterations unless stopped) */
    int64_t tasks_ready;      /* tasks set up (threads started, or pipes for one thread) */
    int64_t bytes_sent;       /* bytes the driver wrote into pipe 0 (warm-up included) */
    int64_t bytes_arrived;    /* bytes it read back from pipe N carrying the value sent */
    int64_t bytes_wrong;      /* bytes read back carrying another value */
    int64_t total_ns;         /* wall time of the timed trips */
    int64_t timer_overhead_ns;/* median cost of one clock read (subtract once per trip) */
    int64_t nofile_soft;      /* RLIMIT_NOFILE after raising the soft limit to the hard */
    int64_t nofile_hard;
    tc_proc_status before;    /* /proc/self/status before any pipe or task existed */
    tc_proc_status ready;     /* ... with every task up and the warm-up done */
    int64_t fds_before;       /* open fds of the process at the same two moments */
    int64_t fds_ready;
    tc_meminfo mem_before;    /* /proc/meminfo at the same two moments */
    tc_meminfo mem_ready;
    int64_t voluntary;        /* context switches of the whole process, timed trips */
    int64_t involuntary;
    int cpu_after_pin;        /* sched_getcpu() of the driver after pinning */
    int timed_out;            /* 1: the watchdog fired */
    int limit;                /* TC_BR_LIMIT_* when status is TC_ELIMIT */
    int err;                  /* errno of the failed call */
    int where;                /* TC_BR_STEP_* of the failure */
} tc_brigade_result;

/*
 * Build a brigade of cfg->tasks tasks of cfg->kind, pass cfg->warmup untimed
 * trips, then cfg->iterations timed ones; trip_ns[i] (caller-owned,
 * `iterations` entries) is the time of trip i from the driver's write into
 * pipe 0 to its read of pipe N, one clock read included. The driver is a new
 * thread (pinned to cfg->cpu when >= 0, as is every task thread), so the
 * caller's affinity never changes; the calling thread is the watchdog. On a
 * system limit while setting up, everything is released, tasks_ready says how
 * far it got, and TC_ELIMIT is returned with `limit` naming the limit. Every
 * thread is joined and every fd closed on every path.
 */
int tc_brigade_run(const tc_brigade_config *cfg, int64_t *trip_ns, tc_brigade_result *out);
/* CFFI_END */

#endif
