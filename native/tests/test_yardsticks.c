/* test_yardsticks.c - tc_yardstick_run called directly with small batches. */
#include "harness.h"
#include "../tc_yardsticks.h"

#define BATCHES 4

static void test_refuses_bad_arguments(void)
{
    double ns[BATCHES];
    tc_yardstick_result out;
    CHECK(tc_yardstick_run(-1, 10, BATCHES, ns, &out) == TC_EINVAL, "kind -1");
    CHECK(tc_yardstick_run(TC_YARD_MEMCPY_COLD, 10, BATCHES, ns, &out) == TC_EINVAL,
          "kind 3 (the cold memcpy has its own entry point)");
    CHECK(tc_yardstick_run(4, 10, BATCHES, ns, &out) == TC_EINVAL, "kind 4");
    tc_cold_pool *pool = NULL;
    CHECK(tc_cold_pool_new(65536, &pool) == TC_EINVAL && pool == NULL, "pool too small");
    CHECK(tc_cold_pool_new(3 * 65536 + 1, &pool) == TC_EINVAL, "pool not a multiple of 64 KiB");
    CHECK(tc_cold_pool_new(4 * 65536, NULL) == TC_EINVAL, "NULL pool");
    CHECK(tc_yardstick_memcpy_cold(NULL, 10, BATCHES, ns, &out) == TC_EINVAL, "no pool");
    tc_held before = tc_held_now();
    CHECK(tc_cold_pool_new(4 * 65536, &pool) == TC_OK && pool != NULL, "a pool of 4 chunks");
    CHECK(tc_yardstick_memcpy_cold(pool, 0, BATCHES, ns, &out) == TC_EINVAL, "ops 0");
    CHECK(tc_yardstick_memcpy_cold(pool, 10, BATCHES, NULL, &out) == TC_EINVAL, "NULL ns");
    CHECK(tc_yardstick_memcpy_cold(pool, 10, 0, ns, &out) == TC_EINVAL, "batches 0");
    tc_cold_pool_free(pool);
    tc_cold_pool_free(NULL);
    CHECK_NOTHING_HELD(before);
    CHECK(tc_yardstick_run(TC_YARD_SYSCALL, 0, BATCHES, ns, &out) == TC_EINVAL, "ops 0");
    CHECK(tc_yardstick_run(TC_YARD_SYSCALL, 10, 0, ns, &out) == TC_EINVAL, "batches 0");
    CHECK(tc_yardstick_run(TC_YARD_SYSCALL, 10, BATCHES, NULL, &out) == TC_EINVAL, "NULL ns");
    CHECK(tc_yardstick_run(TC_YARD_SYSCALL, 10, BATCHES, ns, NULL) == TC_EINVAL, "NULL out");
}

static void run_one(int kind)
{
    double ns[BATCHES];
    tc_yardstick_result out;
    tc_held before = tc_held_now();
    int st = tc_yardstick_run(kind, 20, BATCHES, ns, &out);
    CHECK(st == TC_OK, "status %d (kind %d)", st, kind);
    if (st != TC_OK)
        return;
    CHECK(out.batches_filled == BATCHES, "batches_filled %d", out.batches_filled);
    CHECK(out.ops == 20, "ops %lld", (long long)out.ops);
    CHECK(out.err == 0, "err %d", out.err);
    CHECK(out.timer_overhead_ns >= 0, "timer overhead %lld", (long long)out.timer_overhead_ns);
    for (int i = 0; i < BATCHES; i++)
        CHECK(ns[i] > -1000.0 && ns[i] < 1e9, "batch %d: %f ns per op", i, ns[i]);
    CHECK_NOTHING_HELD(before);
}

static void test_cold_memcpy_wraps_its_pool(void)
{
    double ns[BATCHES];
    tc_yardstick_result out;
    tc_held before = tc_held_now();
    tc_cold_pool *pool = NULL;
    int st = tc_cold_pool_new(4 * 65536, &pool);
    CHECK(st == TC_OK, "pool status %d", st);
    if (st != TC_OK)
        return;
    /* 4 chunks, 4 x 7 operations a call, two calls on one pool: the walk wraps the
     * pool several times and goes on across the calls */
    for (int call = 0; call < 2; call++) {
        st = tc_yardstick_memcpy_cold(pool, 7, BATCHES, ns, &out);
        CHECK(st == TC_OK, "call %d: status %d", call, st);
        if (st != TC_OK)
            break;
        CHECK(out.batches_filled == BATCHES, "batches_filled %d", out.batches_filled);
        for (int i = 0; i < BATCHES; i++)
            CHECK(ns[i] > -1000.0 && ns[i] < 1e9, "batch %d: %f ns per op", i, ns[i]);
    }
    tc_cold_pool_free(pool);
    CHECK_NOTHING_HELD(before);
}

static void test_every_yardstick(void)
{
    run_one(TC_YARD_SYSCALL);
    run_one(TC_YARD_PIPE);
    run_one(TC_YARD_MEMCPY);
}

static void test_stops_on_request(void)
{
    tc_held before = tc_held_now();
    double per_op[4];
    tc_yardstick_result out;
    tc_stopper s;
    tc_stop_later(&s, 0);
    CHECK(tc_yardstick_run(TC_YARD_PIPE, 10, 4, per_op, &out) == TC_ESTOPPED, "pipe");
    tc_stop_done(&s);
    tc_cold_pool *pool = NULL;
    CHECK(tc_cold_pool_new(4 * TC_YARD_MEMCPY_BYTES, &pool) == TC_OK, "pool");
    tc_stop_later(&s, 0);
    CHECK(tc_yardstick_memcpy_cold(pool, 2, 4, per_op, &out) == TC_ESTOPPED, "cold memcpy");
    tc_stop_done(&s);
    tc_cold_pool_free(pool);
    CHECK_HELD(before, 0);
}

int main(void)
{
    RUN(test_refuses_bad_arguments);
    RUN(test_every_yardstick);
    RUN(test_cold_memcpy_wraps_its_pool);
    RUN(test_stops_on_request);
    return tc_summary("yardsticks");
}
