/* tc_process_memory.h - many idle forked children: what does one idle process hold? */
#ifndef TC_PROCESS_MEMORY_H
#define TC_PROCESS_MEMORY_H
#include "threadcost.h"

/* CFFI_BEGIN */
typedef struct tc_procmem tc_procmem;   /* the children of one start, until stop */

typedef struct {
    int64_t started;     /* children forked */
    int64_t ready;       /* children that touched their memory and went to sleep */
    int64_t stopped;     /* children reaped by tc_procmem_stop */
    int err;             /* errno of the fork (or mmap) that failed */
} tc_procmem_result;

/*
 * Fork `count` children of the calling process. Each writes one byte per page
 * of `touch_kib` KiB of fresh private memory (0: none), reports ready and
 * sleeps on a shared futex until tc_procmem_stop, or until `lifetime_ns` has
 * passed (then it exits by itself), and dies with its parent (PDEATHSIG). The
 * call returns when every child is asleep (or after lifetime_ns: TC_ETIMEOUT).
 * `pids` receives `count` process ids. A refused fork stops forking and
 * returns TC_ELIMIT with the children already started (stop them all the same).
 * On any status but TC_EINVAL/TC_ENOMEM, *handle must be passed to tc_procmem_stop.
 */
int tc_procmem_start(int64_t count, int64_t touch_kib, int64_t lifetime_ns, int32_t *pids,
                     tc_procmem_result *out, tc_procmem **handle);
/* Wake every child, reap it, free the handle. Fills out->stopped. */
int tc_procmem_stop(tc_procmem *handle, tc_procmem_result *out);
/* CFFI_END */

#endif
