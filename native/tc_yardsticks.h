/* tc_yardsticks.h - three small operations that say how fast this machine is. */
#ifndef TC_YARDSTICKS_H
#define TC_YARDSTICKS_H
#include "threadcost.h"

/* CFFI_BEGIN */
#define TC_YARD_SYSCALL 0   /* one empty system call: syscall(SYS_getppid) */
#define TC_YARD_PIPE 1      /* one thread writes 1 byte to a pipe and reads it back */
#define TC_YARD_MEMCPY 2    /* memcpy of 64 KiB between two buffers already in cache */

#define TC_YARD_MEMCPY_COLD 3 /* memcpy of 64 KiB between buffers in no cache (see below) */

#define TC_YARD_MEMCPY_BYTES 65536

typedef struct {
    int64_t ops;            /* operations timed in each batch */
    int batches_filled;     /* entries of the caller's array written */
    int64_t timer_overhead_ns; /* one clock read, subtracted from every batch */
    int err;                /* errno of a failed system call */
} tc_yardstick_result;

/*
 * Time `batches` batches of `ops` operations of `kind`, after one discarded
 * warm-up batch. Each batch is timed as a whole (one clock pair) and its
 * cost per operation, net of one clock read, goes to ns_per_op[i]. The caller
 * owns ns_per_op, with room for `batches` entries. Returns TC_EINVAL for a bad
 * argument, TC_ENOMEM or TC_ESYS (err set) if the buffers or the pipe cannot
 * be made, TC_OK otherwise. Nothing is allocated inside the timed region.
 */
int tc_yardstick_run(int kind, int64_t ops, int batches, double *ns_per_op,
                     tc_yardstick_result *out);

/*
 * TC_YARD_MEMCPY_COLD: like tc_yardstick_run, but each operation copies the next
 * 64 KiB of a source pool into the next 64 KiB of a target pool of the same size,
 * walking forward and wrapping, so that with pools larger than the last-level cache
 * (the caller sizes them) neither side is in any cache when it is copied.
 *
 * tc_cold_pool_new allocates the two pools of `pool_bytes` each and writes every
 * page, so no page fault falls in a timed region; pool_bytes must be a multiple of
 * 64 KiB, at least 128 KiB and at most 4 GiB (TC_EINVAL), TC_ENOMEM when they
 * cannot be had. One pool serves every call of tc_yardstick_memcpy_cold (a study's
 * repeats): each call goes on from the chunk where the last one stopped, so a chunk
 * is copied again only after the whole of both pools was, as within one call.
 * tc_cold_pool_free(NULL) is a no-op. Same return codes as tc_yardstick_run.
 */
typedef struct tc_cold_pool tc_cold_pool;
int tc_cold_pool_new(int64_t pool_bytes, tc_cold_pool **pool);
void tc_cold_pool_free(tc_cold_pool *pool);
int tc_yardstick_memcpy_cold(tc_cold_pool *pool, int64_t ops, int batches,
                             double *ns_per_op, tc_yardstick_result *out);
/* CFFI_END */

#endif
