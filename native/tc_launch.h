/* tc_launch.h - what it costs to start a thread, against starting a process (C09, C10). */
#ifndef TC_LAUNCH_H
#define TC_LAUNCH_H
#include "threadcost.h"

/* CFFI_BEGIN */
#define TC_LAUNCH_THREAD 0       /* pthread_create + pthread_join */
#define TC_LAUNCH_FORK 1         /* fork, child _exit(0), waitpid */
#define TC_LAUNCH_VFORK 2        /* vfork, child _exit(0), waitpid */
#define TC_LAUNCH_POSIX_SPAWN 3  /* posix_spawn of a tiny binary, waitpid */
#define TC_LAUNCH_CLONE 4        /* clone(CLONE_VM|CLONE_VFORK), child returns, waitpid */
#define TC_LAUNCH_FORK_EXEC 5    /* fork, child execve of the same tiny binary, waitpid */

/* One launch, every time relative to t0 = just before the create call. */
typedef struct {
    int64_t create_ns;     /* t0 -> the create call returned in the parent */
    int64_t first_run_ns;  /* t0 -> the child's first instruction (its own clock read) */
    int64_t join_ns;       /* end of the pause after create -> join/waitpid returned */
    int64_t lifecycle_ns;  /* create_ns + join_ns (t0 -> joined when there is no pause) */
} tc_launch_sample;

typedef struct {
    int warmup_done;              /* entries of `first` written */
    int done;                     /* entries of `samples` written */
    int64_t touched_kib;          /* memory the parent held, every page written */
    int64_t rss_before_touch_kib; /* this process's VmRSS before / after touching it */
    int64_t rss_after_touch_kib;
    int err;                      /* errno of the failed call, 0 when none failed */
} tc_launch_result;

/*
 * `warmup` launches recorded into `first` (the very first ones, e.g. fresh
 * thread stacks), then `iterations` launches into `samples`; both arrays are
 * the caller's. The parent first maps and touches `parent_touch_kib` KiB and
 * holds it for the whole series. `pause_ns` > 0 sleeps between create and
 * join (outside both timed regions) so the child has surely finished.
 * `stack_kib` (threads only): 0 for the default. `spawn_path`: the binary
 * posix_spawn starts (it may write its CLOCK_MONOTONIC ns to fd 3).
 * A failed create stops the run: TC_ELIMIT (EAGAIN/ENOMEM) or TC_ESYS, err set.
 */
int tc_launch_series(int kind, int iterations, int warmup, int64_t stack_kib,
                     int64_t parent_touch_kib, int64_t pause_ns, const char *spawn_path,
                     tc_launch_sample *first, tc_launch_sample *samples,
                     tc_launch_result *out);

/* A plain pthread_create(NULL attr) + pthread_join loop, timed as a whole:
 * the baseline "written the obvious way". Fills total_ns; err on failure. */
int tc_launch_plain_loop(int iterations, int64_t *total_ns, int *err);

typedef struct {
    int created;               /* threads started (n unless a limit stopped it) */
    int64_t create_total_ns;   /* first create called -> last create returned */
    int64_t join_total_ns;     /* release -> last join returned */
    int64_t user_us;           /* getrusage(RUSAGE_SELF) growth over the burst */
    int64_t sys_us;
    int64_t threads_alive;     /* Threads: in /proc/self/status with all alive */
    int64_t vsz_delta_kib;     /* VmSize / VmRSS growth with all alive */
    int64_t rss_delta_kib;
    int err;
} tc_burst_result;

/* Start n threads that all block until released (so all are alive at once),
 * timing each create into create_ns[n] (caller's array); read the process
 * status, release them all and join them all. */
int tc_launch_burst(int n, int64_t stack_kib, int64_t *create_ns, tc_burst_result *out);

/* `iterations` timed memcpy calls of `bytes` (after `warmup` untimed ones)
 * between two pre-touched buffers, each into samples[i]. */
int tc_memcpy_series(int64_t bytes, int iterations, int warmup, int64_t *samples);
/* CFFI_END */

#endif
