/* test_sleepers.c - tc_sleepers_run called directly with a few threads. */
#include "harness.h"
#include "../tc_sleepers.h"

static void test_refuses_bad_arguments(void)
{
    tc_sleepers_result out;
    CHECK(tc_sleepers_run(0, 1000000, 2000000, 0, 0, 0, &out) == TC_EINVAL, "0 threads");
    CHECK(tc_sleepers_run(4, 10, 2000000, 0, 0, 0, &out) == TC_EINVAL, "period 10 ns");
    CHECK(tc_sleepers_run(4, 1000000, 10, 0, 0, 0, &out) == TC_EINVAL, "duration < period");
    CHECK(tc_sleepers_run(4, 1000000, 2000000, -1, 0, 0, &out) == TC_EINVAL, "stagger -1");
    CHECK(tc_sleepers_run(4, 1000000, 2000000, 0, 9, 0, &out) == TC_EINVAL, "pin 9");
    CHECK(tc_sleepers_run(4, 1000000, 2000000, 0, 0, -1, &out) == TC_EINVAL, "stack -1");
    CHECK(tc_sleepers_run(4, 1000000, 2000000, 0, 0, 0, NULL) == TC_EINVAL, "NULL out");
}

static void sleepers(int pin)
{
    tc_sleepers_result out;
    int st = tc_sleepers_run(8, 1000000, 5000000, 500000, pin, TC_SMALL_STACK_KIB, &out);
    CHECK(st == TC_OK, "pin %d: status %d err %d", pin, st, out.err);
    CHECK(out.started == 8 && out.finished == 8, "pin %d: started %lld finished %lld", pin,
          (long long)out.started, (long long)out.finished);
    CHECK(out.wakeups == 8 * 5, "pin %d: wakeups %lld", pin, (long long)out.wakeups);
}

static void test_runs_pinned_and_not(void)
{
    TWICE(sleepers(TC_SLEEPERS_UNPINNED));
    TWICE(sleepers(TC_SLEEPERS_PINNED));
}

static void test_stops_on_request(void)
{
    tc_held before = tc_held_now();
    tc_sleepers_result out;
    tc_stopper s;
    tc_stop_later(&s, 100);
    int st = tc_sleepers_run(8, 50000000, 5000000000LL, 0, TC_SLEEPERS_UNPINNED, TC_SMALL_STACK_KIB, &out);
    int64_t ms = tc_stop_done(&s);
    CHECK(st == TC_ESTOPPED, "status %d", st);
    CHECK(ms >= 0 && ms < TC_STOP_BOUND_MS, "stopped %lld ms after the request", (long long)ms);
    CHECK_HELD(before, 0);
    tc_stop_later(&s, 0);
    st = tc_sleepers_run(8, 1000000, 5000000, 0, TC_SLEEPERS_UNPINNED, TC_SMALL_STACK_KIB, &out);
    tc_stop_done(&s);
    CHECK(st == TC_ESTOPPED && out.started == 0, "stop first: status %d started %lld", st,
          (long long)out.started);
    CHECK_HELD(before, 0);
}

int main(void)
{
    RUN(test_refuses_bad_arguments);
    RUN(test_runs_pinned_and_not);
    RUN(test_stops_on_request);
    return tc_summary("sleepers");
}
