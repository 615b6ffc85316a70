/* tc_readiness.h - tokens in flight (issue #46): K tokens circulate among N tasks
 * joined in a ring by N channels (Unix socket pairs or pipes). Task i reads channel i
 * and writes channel (i + 1) mod N. A token is 8 bytes: the hops it has left and the
 * CPU that wrote it. One event = one token handled: read from its channel, its hops
 * counted down, and (unless that was its last hop) written on. Every read takes one
 * token and every write puts one, so within a complete run reads == writes == events
 * (the K writes putting the tokens in stand for the last hop's, which retires). */
#ifndef TC_READINESS_H
#define TC_READINESS_H
#include "threadcost.h"

/* CFFI_BEGIN */
/* How the N tasks wait for their channel. */
#define TC_RD_THREAD 0     /* N threads, each blocking in read() on its channel */
#define TC_RD_EPOLL_LT 1   /* one thread, one epoll set, level-triggered: one read per
                              readiness event */
#define TC_RD_EPOLL_ET 2   /* the same, edge-triggered: read until EAGAIN */
#define TC_RD_URING 3      /* one thread, an io_uring (raw system calls): one read always
                              queued per task, each write queued as it is made */

#define TC_RD_SOCKETPAIR 0 /* socketpair(AF_UNIX, SOCK_STREAM) */
#define TC_RD_PIPE 1       /* pipe2 */

/* Which limit stopped or narrowed the run (result.limit). */
#define TC_RD_LIMIT_NONE 0
#define TC_RD_LIMIT_FDS 1      /* EMFILE or ENFILE: the run goes on with the tasks made */
#define TC_RD_LIMIT_THREADS 2  /* pthread_create EAGAIN: the run goes on with the threads made */
#define TC_RD_LIMIT_MEMORY 3   /* ENOMEM */
#define TC_RD_LIMIT_URING 4    /* io_uring_setup refused (ENOSYS, EPERM, EACCES): not run */
#define TC_RD_LIMIT_BUFFER 5   /* a channel's buffer full (EAGAIN writing): the sweep stops */

#define TC_RD_STEP_NONE 0
#define TC_RD_STEP_CHANNELS 1
#define TC_RD_STEP_SPAWN 2
#define TC_RD_STEP_EPOLL 3
#define TC_RD_STEP_URING 4
#define TC_RD_STEP_PIN 5
#define TC_RD_STEP_RUN 6

#define TC_RD_MAX_TASKS 10000
#define TC_RD_MAX_POINTS 32    /* entries of a sweep */
#define TC_RD_READ_TOKENS 1    /* tokens one read takes */

typedef struct {
    int model;                /* TC_RD_* */
    int channel;              /* TC_RD_SOCKETPAIR or TC_RD_PIPE */
    int tasks;                /* N, 1 .. TC_RD_MAX_TASKS */
    int cpu;                  /* every thread of the run on this CPU; -1: not pinned */
    int points;               /* sweep entries, 1 .. TC_RD_MAX_POINTS, measured in order */
    int64_t tokens[32];       /* K of each entry, 1 .. tasks */
    int64_t hops[32];         /* hops of every token of each entry, >= 1 */
    int stack_kib;            /* task thread stack, KiB (0: the system default) */
    int timeout_ms;           /* watchdog: no event handled for this long ends the run */
    int raise_hard_nofile;    /* 1: short of fds, a privileged process raises the hard limit */
    int test_stall;           /* test hook: task tasks / 2 keeps the tokens it reads */
    int test_uring_errno;     /* test hook: > 0, io_uring_setup is taken to fail with it */
} tc_readiness_config;

typedef struct {
    int64_t tokens;           /* K */
    int64_t hops;             /* hops of each token */
    int64_t events;           /* tokens handled (= tokens * hops when complete) */
    int64_t retired;          /* tokens that made their last hop */
    int64_t wall_ns;          /* from the first token written to the last retired */
    int64_t cpu_ns;           /* user + system CPU time of the process, same window */
    int64_t reads;            /* reads that took a token (io_uring: reads completed) */
    int64_t empty_reads;      /* reads besides, that found nothing (EAGAIN) */
    int64_t writes;           /* write system calls (io_uring: writes completed); the
                                 K writes putting the tokens in included */
    int64_t waits;            /* epoll_wait or io_uring_enter calls */
    int64_t wait_events;      /* ready fds epoll_wait returned, or read completions reaped */
    int64_t voluntary;        /* context switches of the process (getrusage), same window */
    int64_t involuntary;
    int64_t cross_cpu;        /* events whose token was written on another CPU than the
                                 one reading it (sched_getcpu at both ends) */
} tc_readiness_point;

typedef struct {
    int64_t completed;        /* sweep entries measured */
    int64_t tasks_ready;      /* tasks set up (the N measured when a limit narrowed it) */
    int64_t nofile_soft;      /* RLIMIT_NOFILE after raising */
    int64_t nofile_hard;
    tc_readiness_point warmup;            /* every task one token, one hop: untimed */
    tc_readiness_point point[32];
    int cpu_after_pin;        /* sched_getcpu() of the driver after pinning */
    int timed_out;            /* 1: the watchdog fired */
    int limit;                /* TC_RD_LIMIT_* */
    int err;                  /* errno of the failed call */
    int where;                /* TC_RD_STEP_* of the failure or limit */
} tc_readiness_result;

/*
 * Set up N tasks of cfg->model on N channels, hand every task one token once (the
 * warm-up, untimed), then for each sweep entry put tokens[i] tokens in (spread
 * evenly over the ring), each making hops[i] hops, and time them until the last is
 * retired. The driver is a new thread (pinned to cfg->cpu when >= 0, as is every
 * task thread); the calling thread is the watchdog. A limit met while setting up
 * fds or threads narrows N to the tasks made (tasks_ready) and the run goes on,
 * returning TC_ELIMIT with `limit` naming it; io_uring refused returns TC_ELIMIT
 * with TC_RD_LIMIT_URING and nothing measured. Every thread is joined and every fd
 * closed on every path.
 */
int tc_readiness_run(const tc_readiness_config *cfg, tc_readiness_result *out);
/* CFFI_END */

#endif
