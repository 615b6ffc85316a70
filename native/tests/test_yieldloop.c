/* test_yieldloop.c - tsuna's futex + sched_yield loop, between threads and processes. */
#include "harness.h"
#include "../tc_yieldloop.h"

static void test_refuses_bad_arguments(void)
{
    tc_yieldloop_result out;
    CHECK(tc_yieldloop_run(0, 0, 0, -1, 1000, &out) == TC_EINVAL, "0 iterations");
    CHECK(tc_yieldloop_run(0, 10, -1, -1, 1000, &out) == TC_EINVAL, "warmup -1");
    CHECK(tc_yieldloop_run(0, 10, 0, -1, 0, &out) == TC_EINVAL, "timeout 0");
    CHECK(tc_yieldloop_run(0, 10, 0, -1, 1000, NULL) == TC_EINVAL, "NULL out");
}

static void loop(int processes)
{
    tc_yieldloop_result out;
    int st = tc_yieldloop_run(processes, 50, 5, -1, 5000, &out);
    CHECK(st == TC_OK, "processes=%d: status %d err %d", processes, st, out.err);
    CHECK(out.iterations == 50 && out.total_ns > 0 && !out.timed_out,
          "processes=%d: iterations %lld", processes, (long long)out.iterations);
    /* each side sleeps in FUTEX_WAIT once per iteration */
    CHECK(out.voluntary >= 50, "processes=%d: voluntary %lld", processes,
          (long long)out.voluntary);
}

static void test_threads_and_processes(void)
{
    TWICE(loop(0));
    TWICE(loop(1));
}

static void test_stops_on_request(void)
{
    for (int processes = 0; processes < 2; processes++) {
        tc_held before = tc_held_now();
        tc_yieldloop_result out;
        tc_stopper s;
        tc_stop_later(&s, 100);
        int st = tc_yieldloop_run(processes, 100000000, 0, -1, 10000, &out);
        int64_t ms = tc_stop_done(&s);
        CHECK(st == TC_ESTOPPED, "processes %d: status %d", processes, st);
        CHECK(ms >= 0 && ms < TC_STOP_BOUND_MS, "processes %d: stopped %lld ms after the request",
              processes, (long long)ms);
        CHECK_HELD(before, 0);
    }
}

int main(void)
{
    RUN(test_refuses_bad_arguments);
    RUN(test_threads_and_processes);
    RUN(test_stops_on_request);
    return tc_summary("yieldloop");
}
