/* tc_malloc_touch.h - virtual vs resident memory of one big allocation. */
#ifndef TC_MALLOC_TOUCH_H
#define TC_MALLOC_TOUCH_H
#include "threadcost.h"

/* CFFI_BEGIN */
#define TC_ALLOC_MALLOC 0
#define TC_ALLOC_MMAP 1

typedef struct {
    int64_t touched_kib;   /* bytes written so far, in KiB */
    int64_t vsz_kib;
    int64_t rss_kib;
    int64_t rss_anon_kib;
} tc_touch_point;

typedef struct {
    tc_proc_status before;
    tc_proc_status after_alloc;
    tc_proc_status after_touch;
    tc_proc_status after_free;
    int64_t touch_ns;       /* wall time of the whole touch loop (reads excluded) */
    int points_filled;      /* entries of the caller's curve array written */
    int err;                /* errno of a failed allocation */
} tc_malloc_touch_result;

/*
 * Allocate `mib` MiB with `allocator`, then write one byte per page in order,
 * reading /proc/self/status at `points` evenly spaced moments of the touch
 * (the caller owns `curve`, with room for `points` entries), then free.
 * `touch_fraction_permille` (0..1000) stops the touch early, to show a
 * half-touched buffer. Returns TC_ELIMIT with err=ENOMEM if allocation fails.
 */
int tc_malloc_touch(int64_t mib, int allocator, int points,
                    int touch_fraction_permille,
                    tc_touch_point *curve, tc_malloc_touch_result *out);
/* CFFI_END */

#endif
