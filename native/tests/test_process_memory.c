/* test_process_memory.c - tc_procmem_start/stop called directly with a few children. */
#include "harness.h"
#include "../tc_process_memory.h"

#include <signal.h>

static void test_refuses_bad_arguments(void)
{
    int32_t pids[4];
    tc_procmem_result out;
    tc_procmem *h;
    int64_t s = 1000000000;
    CHECK(tc_procmem_start(0, 0, s, pids, &out, &h) == TC_EINVAL, "0 children");
    CHECK(tc_procmem_start(4, -1, s, pids, &out, &h) == TC_EINVAL, "touch -1");
    CHECK(tc_procmem_start(4, 0, 0, pids, &out, &h) == TC_EINVAL, "lifetime 0");
    CHECK(tc_procmem_start(4, 0, s, NULL, &out, &h) == TC_EINVAL, "NULL pids");
    CHECK(tc_procmem_start(4, 0, s, pids, NULL, &h) == TC_EINVAL, "NULL out");
    CHECK(tc_procmem_start(4, 0, s, pids, &out, NULL) == TC_EINVAL, "NULL handle");
    CHECK(tc_procmem_stop(NULL, &out) == TC_EINVAL, "NULL handle to stop");
}

static void children(int64_t touch_kib)
{
    int32_t pids[5];
    tc_procmem_result out;
    tc_procmem *h = NULL;
    int st = tc_procmem_start(5, touch_kib, 30LL * 1000000000, pids, &out, &h);
    CHECK(st == TC_OK, "status %d err %d", st, out.err);
    CHECK(out.started == 5 && out.ready == 5, "started %lld ready %lld",
          (long long)out.started, (long long)out.ready);
    for (int i = 0; i < 5; i++)
        CHECK(pids[i] > 0 && kill(pids[i], 0) == 0, "child %d (pid %d) is alive", i, pids[i]);
    CHECK(tc_procmem_stop(h, &out) == TC_OK, "stop");
    CHECK(out.stopped == 5, "stopped %lld", (long long)out.stopped);
}

static void test_children_sleep_until_stopped(void)
{
    TWICE(children(0));
    TWICE(children(256));
}

static void test_children_leave_by_themselves_after_their_lifetime(void)
{
    int32_t pids[2];
    tc_procmem_result out;
    tc_procmem *h = NULL;
    int st = tc_procmem_start(2, 0, 50000000, pids, &out, &h);
    CHECK(st == TC_OK || st == TC_ETIMEOUT, "status %d", st);
    usleep(200000);
    CHECK(tc_procmem_stop(h, &out) == TC_OK, "stop");
    CHECK(out.stopped == 2, "stopped %lld", (long long)out.stopped);
}

static void test_stops_on_request(void)
{
    tc_held before = tc_held_now();
    int32_t pids[4];
    tc_procmem_result out;
    tc_procmem *h = NULL;
    tc_stopper s;
    tc_stop_later(&s, 0);
    int st = tc_procmem_start(4, 0, 10LL * 1000000000, pids, &out, &h);
    tc_stop_done(&s);
    CHECK(st == TC_ESTOPPED && h == NULL && out.started == 0, "status %d", st);
    CHECK_HELD(before, 0);
}

int main(void)
{
    RUN(test_refuses_bad_arguments);
    RUN(test_children_sleep_until_stopped);
    RUN(test_children_leave_by_themselves_after_their_lifetime);
    RUN(test_stops_on_request);
    return tc_summary("process_memory");
}
