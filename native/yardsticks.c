/* yardsticks.c - an empty syscall, a lone pipe write+read and a 64 KiB memcpy
 * (between cached buffers, and between buffers in no cache).
 *
 * These do not measure threads: they say how fast this machine is at the
 * operations a context switch and a launch are made of, so a published number
 * from another machine can be set against a measured scale (see
 * threadcost/experiments/yardsticks.py).
 */
#define _GNU_SOURCE
#include "tc_yardsticks.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Keep the compiler from dropping or merging the measured operations. */
#define CLOBBER(p) __asm__ __volatile__("" : : "r"(p) : "memory")

static int one_batch(int kind, int64_t ops, int fds[2], unsigned char *a,
                     unsigned char *b, int *err) {
    char byte = 'x';
    for (int64_t i = 0; i < ops; i++) {
        switch (kind) {
        case TC_YARD_SYSCALL:
            (void)syscall(SYS_getppid);
            break;
        case TC_YARD_PIPE:
            if (write(fds[1], &byte, 1) != 1 || read(fds[0], &byte, 1) != 1) {
                *err = errno;
                return TC_ESYS;
            }
            break;
        default: /* TC_YARD_MEMCPY, alternating direction so both stay hot */
            if (i & 1)
                memcpy(a, b, TC_YARD_MEMCPY_BYTES);
            else
                memcpy(b, a, TC_YARD_MEMCPY_BYTES);
            CLOBBER(a);
            CLOBBER(b);
            break;
        }
    }
    return TC_OK;
}

int tc_yardstick_run(int kind, int64_t ops, int batches, double *ns_per_op,
                     tc_yardstick_result *out) {
    if (out == NULL || ns_per_op == NULL || ops < 1 || ops > 100000000 || batches < 1 ||
        kind < TC_YARD_SYSCALL || kind > TC_YARD_MEMCPY)
        return TC_EINVAL;
    memset(out, 0, sizeof(*out));
    out->ops = ops;
    int fds[2] = {-1, -1};
    unsigned char *a = NULL, *b = NULL;
    void *region = NULL;
    int status = TC_OK;
    if (kind == TC_YARD_PIPE && pipe(fds) != 0) {
        out->err = errno;
        return TC_ESYS;
    }
    if (kind == TC_YARD_MEMCPY) {
        if (tc_copy_buffers(TC_YARD_MEMCPY_BYTES, &a, &b, &region) != TC_OK) {
            status = TC_ENOMEM;
            goto done;
        }
        memset(a, 1, TC_YARD_MEMCPY_BYTES);
        memset(b, 2, TC_YARD_MEMCPY_BYTES);
    }
    out->timer_overhead_ns = tc_timer_overhead_ns(1000);
    status = one_batch(kind, ops, fds, a, b, &out->err); /* warm-up, discarded */
    int64_t next_poll = 0;
    for (int i = 0; i < batches && status == TC_OK; i++) {
        if (tc_stop_due(&next_poll)) { /* between batches, outside the timing */
            status = TC_ESTOPPED;
            break;
        }
        int64_t t0 = tc_now_ns();
        status = one_batch(kind, ops, fds, a, b, &out->err);
        int64_t t1 = tc_now_ns();
        if (status != TC_OK)
            break;
        ns_per_op[i] = (double)(t1 - t0 - out->timer_overhead_ns) / (double)ops;
        out->batches_filled = i + 1;
    }
done:
    if (fds[0] >= 0)
        close(fds[0]);
    if (fds[1] >= 0)
        close(fds[1]);
    free(region);
    return status;
}

static void cold_batch(int64_t ops, unsigned char *a, unsigned char *b, int64_t chunks,
                       int64_t *next) {
    for (int64_t i = 0; i < ops; i++) {
        int64_t at = (*next % chunks) * TC_YARD_MEMCPY_BYTES;
        memcpy(b + at, a + at, TC_YARD_MEMCPY_BYTES);
        CLOBBER(a);
        CLOBBER(b);
        *next += 1;
    }
}

struct tc_cold_pool {
    unsigned char *a, *b;  /* source and target pools, each pool_bytes */
    int64_t chunks;        /* 64 KiB chunks per pool */
    int64_t next;          /* the next chunk to copy: the walk goes on across calls */
};

int tc_cold_pool_new(int64_t pool_bytes, tc_cold_pool **pool) {
    if (pool == NULL)
        return TC_EINVAL;
    *pool = NULL;
    if (pool_bytes < 2 * TC_YARD_MEMCPY_BYTES || pool_bytes > ((int64_t)4 << 30) ||
        pool_bytes % TC_YARD_MEMCPY_BYTES != 0)
        return TC_EINVAL;
    tc_cold_pool *p = calloc(1, sizeof(*p));
    if (p == NULL)
        return TC_ENOMEM;
    p->a = malloc((size_t)pool_bytes);
    p->b = malloc((size_t)pool_bytes);
    if (p->a == NULL || p->b == NULL) {
        tc_cold_pool_free(p);
        return TC_ENOMEM;
    }
    memset(p->a, 1, (size_t)pool_bytes); /* map every page before any timing */
    memset(p->b, 2, (size_t)pool_bytes);
    p->chunks = pool_bytes / TC_YARD_MEMCPY_BYTES;
    *pool = p;
    return TC_OK;
}

void tc_cold_pool_free(tc_cold_pool *pool) {
    if (pool == NULL)
        return;
    free(pool->a);
    free(pool->b);
    free(pool);
}

int tc_yardstick_memcpy_cold(tc_cold_pool *pool, int64_t ops, int batches,
                             double *ns_per_op, tc_yardstick_result *out) {
    if (pool == NULL || out == NULL || ns_per_op == NULL || ops < 1 || ops > 100000000 ||
        batches < 1)
        return TC_EINVAL;
    memset(out, 0, sizeof(*out));
    out->ops = ops;
    out->timer_overhead_ns = tc_timer_overhead_ns(1000);
    cold_batch(ops, pool->a, pool->b, pool->chunks, &pool->next); /* warm-up, discarded */
    int64_t next_poll = 0;
    for (int i = 0; i < batches; i++) {
        if (tc_stop_due(&next_poll)) /* between batches, outside the timing */
            return TC_ESTOPPED;
        int64_t t0 = tc_now_ns();
        cold_batch(ops, pool->a, pool->b, pool->chunks, &pool->next);
        int64_t t1 = tc_now_ns();
        ns_per_op[i] = (double)(t1 - t0 - out->timer_overhead_ns) / (double)ops;
        out->batches_filled = i + 1;
    }
    return TC_OK;
}
