/* test_indirect.c - the Li/Ding/Shen kernel: one process alone, and two over a pipe pair. */
#include "harness.h"
#include "../tc_indirect.h"

static void test_refuses_bad_arguments(void)
{
    tc_indirect_result out;
    CHECK(tc_indirect_run(7, 0, 8, 10, 2, -1, &out) == TC_EINVAL, "mode 7");
    CHECK(tc_indirect_run(TC_IND_SINGLE, -1, 8, 10, 2, -1, &out) == TC_EINVAL, "array -1");
    CHECK(tc_indirect_run(TC_IND_SINGLE, 0, 0, 10, 2, -1, &out) == TC_EINVAL, "stride 0");
    CHECK(tc_indirect_run(TC_IND_SINGLE, 0, 8, 1, 2, -1, &out) == TC_EINVAL, "1 hop");
    CHECK(tc_indirect_run(TC_IND_SWITCH, 0, 8, 11, 2, -1, &out) == TC_EINVAL, "odd hops");
    CHECK(tc_indirect_run(TC_IND_SWITCH, 0, 8, 10, 2, -1, NULL) == TC_EINVAL, "NULL out");
}

static void one(int mode, int64_t bytes, int64_t stride)
{
    tc_indirect_result out;
    int st = tc_indirect_run(mode, bytes, stride, 20, 4, -1, &out);
    CHECK(st == TC_OK, "mode %d, %lld bytes: status %d err %d", mode, (long long)bytes, st,
          out.err);
    CHECK(out.hops == 20 && out.total_ns > 0, "mode %d: hops %lld ns %lld", mode,
          (long long)out.hops, (long long)out.total_ns);
    CHECK(out.voluntary >= 0 && out.involuntary >= 0, "mode %d: negative switch count", mode);
    if (mode == TC_IND_SWITCH)  /* a partner that blocks on a read has to be switched to */
        CHECK(out.voluntary > 0, "switch mode counted no voluntary switch");
    if (bytes > 0)
        CHECK(out.checksum > 0, "mode %d: the walks left no trace", mode);
}

static void test_both_modes(void)
{
    TWICE(one(TC_IND_SINGLE, 0, 8));
    TWICE(one(TC_IND_SINGLE, 1 << 16, 64));
    TWICE(one(TC_IND_SWITCH, 0, 8));
    TWICE(one(TC_IND_SWITCH, 1 << 16, 64));
}

static void test_stops_on_request(void)
{
    int modes[2] = {TC_IND_SINGLE, TC_IND_SWITCH};
    for (int m = 0; m < 2; m++) {
        tc_held before = tc_held_now();
        tc_indirect_result out;
        tc_stopper s;
        tc_stop_later(&s, 100);
        int st = tc_indirect_run(modes[m], 4096, 64, 200000000, 0, -1, &out);
        int64_t ms = tc_stop_done(&s);
        CHECK(st == TC_ESTOPPED, "mode %d: status %d", modes[m], st);
        CHECK(ms >= 0 && ms < TC_STOP_BOUND_MS, "mode %d: stopped %lld ms after the request", modes[m],
              (long long)ms);
        CHECK_HELD(before, 0);
    }
}

int main(void)
{
    RUN(test_refuses_bad_arguments);
    RUN(test_both_modes);
    RUN(test_stops_on_request);
    return tc_summary("indirect");
}
