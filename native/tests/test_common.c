/* test_common.c - the shared helpers of native/common.c, called directly. */
#include "harness.h"
#include "../threadcost.h"

static void test_refuses_null_and_bad_arguments(void)
{
    CHECK(tc_read_proc_status(NULL) == TC_EINVAL, "NULL status accepted");
    CHECK(tc_read_meminfo(NULL) == TC_EINVAL, "NULL meminfo accepted");
    CHECK(tc_timer_overhead_ns(0) == -1, "0 samples accepted");
    CHECK(tc_timer_overhead_ns(-3) == -1, "negative samples accepted");
    CHECK(tc_timer_overhead_ns(2000000) == -1, "too many samples accepted");
    CHECK(tc_pin_self(-1) == EINVAL, "cpu -1 accepted");
    CHECK(tc_pin_self(1 << 20) == EINVAL, "cpu 2^20 accepted");
}

static void test_readers_fill_plausible_values(void)
{
    tc_held before = tc_held_now();
    tc_proc_status s;
    tc_meminfo m;
    CHECK(tc_read_proc_status(&s) == TC_OK, "status read failed");
    CHECK(s.vsz_kib > 0 && s.rss_kib > 0, "vsz %lld rss %lld", (long long)s.vsz_kib,
          (long long)s.rss_kib);
    CHECK(s.threads >= 1, "threads %lld", (long long)s.threads);
    CHECK(tc_read_meminfo(&m) == TC_OK, "meminfo read failed");
    CHECK(m.mem_available_kib > 0, "MemAvailable %lld", (long long)m.mem_available_kib);
    CHECK_NOTHING_HELD(before);
}

static void test_clock_and_pinning(void)
{
    int64_t a = tc_now_ns(), b = tc_now_ns();
    CHECK(b >= a, "clock went backwards %lld -> %lld", (long long)a, (long long)b);
    CHECK(tc_timer_overhead_ns(1000) >= 0, "timer overhead negative");
    int cpu = tc_current_cpu();
    CHECK(cpu >= 0, "sched_getcpu %d", cpu);
    if (cpu >= 0) {
        CHECK(tc_pin_self(cpu) == 0, "pinning to the current cpu %d failed", cpu);
        CHECK(tc_current_cpu() == cpu, "not on cpu %d after pinning", cpu);
    }
}

int main(void)
{
    RUN(test_refuses_null_and_bad_arguments);
    RUN(test_readers_fill_plausible_values);
    RUN(test_clock_and_pinning);
    return tc_summary("common");
}
