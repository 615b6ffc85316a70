/* tc_thread_memory.h - memory of N blocked threads: virtual, resident, kernel. */
#ifndef TC_THREAD_MEMORY_H
#define TC_THREAD_MEMORY_H
#include "threadcost.h"

/* CFFI_BEGIN */
/* What the process looked like when thread creation failed (a limit). */
typedef struct {
    int64_t maps;            /* lines of /proc/self/maps (vm.max_map_count counts these) */
    int64_t system_threads;  /* scheduling entities on the system (/proc/loadavg, 4th field) */
    int64_t vsz_kib;         /* VmSize at the failure (RLIMIT_AS counts this) */
    int64_t threads;         /* Threads of this process at the failure */
} tc_limit_probe;

typedef struct {
    tc_proc_status before;   /* this process, before the first pthread_create */
    tc_proc_status during;   /* every started thread running and blocked */
    tc_proc_status after;    /* every thread joined */
    tc_meminfo mem_before;   /* system-wide, same three moments */
    tc_meminfo mem_during;
    tc_meminfo mem_after;
    int64_t rollup_before_kib; /* Rss of /proc/self/smaps_rollup (page walk), with `before` */
    int64_t rollup_during_kib; /* the same, with `during` */
    int64_t requested;       /* threads asked for */
    int64_t started;         /* threads pthread_create accepted */
    int64_t stack_bytes;     /* stack size each thread got (attribute value) */
    int64_t guard_bytes;     /* guard size below each stack */
    int64_t touch_bytes;     /* bytes of its own stack each thread wrote */
    int64_t create_ns;       /* wall time of the creation loop */
    int64_t settle_ns;       /* from the last create until every thread checked in */
    int64_t join_ns;         /* release + join of every thread */
    int64_t ballast;         /* idle threads started first to drain glibc's stack cache */
    int too_deep;            /* threads that refused to touch: not enough stack room */
    int err;                 /* errno of the failed call (limit or system error) */
    tc_limit_probe probe;    /* filled when a limit stopped creation */
} tc_thread_memory_result;

/* Opaque: the running, blocked threads between start and stop. */
typedef struct tc_thread_group tc_thread_group;

/* Default stack size of a new thread in bytes (glibc's default attribute:
 * RLIMIT_STACK, or the architecture default when that is unlimited). */
int64_t tc_default_stack_bytes(void);

/*
 * Read the "before" counters, then start `threads` threads with a stack of
 * `stack_kib` KiB (0: the default). Each thread writes `touch_kib` KiB of its
 * own stack, checks in, and blocks on a futex. `cpus` (may be NULL when
 * ncpus is 0) pins thread i to cpus[i % ncpus] and the caller to cpus[0].
 * When every started thread has checked in, the "during" counters are read.
 *
 * Before the first reading, idle "ballast" threads take every stack glibc has
 * cached that would fit (see `ballast`), so each measured thread maps a new one.
 *
 * TC_OK or TC_ELIMIT (creation failed with EAGAIN/ENOMEM: `started` threads
 * run, `err` and `probe` say why): *group is set and the caller MUST call
 * tc_thread_memory_stop, unless the limit hit the ballast already (*group is
 * NULL, started 0). Any other status: nothing is left running and *group is
 * NULL. TC_ETIMEOUT: threads did not check in within the deadline.
 */
int tc_thread_memory_start(int64_t threads, int64_t stack_kib, int64_t touch_kib,
                           const int *cpus, int ncpus, tc_thread_group **group,
                           tc_thread_memory_result *out);

/* Release and join every thread of the group, read the "after" counters and
 * free the group. Returns TC_OK (or TC_EINVAL for a NULL argument). */
int tc_thread_memory_stop(tc_thread_group *group, tc_thread_memory_result *out);

/* start + stop in one call (no reading in between). */
int tc_thread_memory_run(int64_t threads, int64_t stack_kib, int64_t touch_kib,
                         const int *cpus, int ncpus, tc_thread_memory_result *out);
/* CFFI_END */

#endif
