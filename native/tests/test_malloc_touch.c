/* test_malloc_touch.c - tc_malloc_touch called directly with small sizes. */
#include "harness.h"
#include "../tc_malloc_touch.h"

#include <sys/resource.h>

#define POINTS 5

static void test_refuses_bad_arguments(void)
{
    tc_touch_point curve[POINTS];
    tc_malloc_touch_result out;
    CHECK(tc_malloc_touch(0, TC_ALLOC_MALLOC, POINTS, 1000, curve, &out) == TC_EINVAL, "mib 0");
    CHECK(tc_malloc_touch(-1, TC_ALLOC_MALLOC, POINTS, 1000, curve, &out) == TC_EINVAL,
          "mib -1");
    CHECK(tc_malloc_touch(INT64_MAX, TC_ALLOC_MMAP, POINTS, 1000, curve, &out) == TC_EINVAL,
          "mib INT64_MAX");
    CHECK(tc_malloc_touch(8, 7, POINTS, 1000, curve, &out) == TC_EINVAL, "allocator 7");
    CHECK(tc_malloc_touch(8, TC_ALLOC_MALLOC, 1, 1000, curve, &out) == TC_EINVAL, "1 point");
    CHECK(tc_malloc_touch(8, TC_ALLOC_MALLOC, POINTS, 1001, curve, &out) == TC_EINVAL,
          "fraction 1001");
    CHECK(tc_malloc_touch(8, TC_ALLOC_MALLOC, POINTS, -1, curve, &out) == TC_EINVAL,
          "fraction -1");
    CHECK(tc_malloc_touch(8, TC_ALLOC_MALLOC, POINTS, 1000, NULL, &out) == TC_EINVAL,
          "NULL curve");
    CHECK(tc_malloc_touch(8, TC_ALLOC_MALLOC, POINTS, 1000, curve, NULL) == TC_EINVAL,
          "NULL out");
}

static void run_one(int allocator, int permille)
{
    const int64_t mib = 8;
    tc_touch_point curve[POINTS];
    tc_malloc_touch_result out;
    tc_held before = tc_held_now();
    int st = tc_malloc_touch(mib, allocator, POINTS, permille, curve, &out);
    CHECK(st == TC_OK, "status %d (allocator %d)", st, allocator);
    if (st != TC_OK)
        return;
    CHECK(out.points_filled == POINTS, "points_filled %d", out.points_filled);
    int64_t want = mib * 1024 * permille / 1000;
    int64_t page_kib = sysconf(_SC_PAGESIZE) / 1024;
    CHECK(curve[0].touched_kib == 0, "first point touched %lld", (long long)curve[0].touched_kib);
    for (int i = 1; i < POINTS; i++)
        CHECK(curve[i].touched_kib >= curve[i - 1].touched_kib, "curve not monotonic at %d", i);
    CHECK(curve[POINTS - 1].touched_kib <= want &&
              curve[POINTS - 1].touched_kib > want - page_kib,
          "touched %lld KiB, wanted %lld", (long long)curve[POINTS - 1].touched_kib,
          (long long)want);
    CHECK(out.touch_ns >= 0, "touch_ns %lld", (long long)out.touch_ns);
    CHECK(out.err == 0, "err %d", out.err);
    if (!TC_UNDER_SANITIZER) {
        /* the sanitizers' allocators reserve memory their own way */
        int64_t grew = out.after_touch.rss_kib - out.after_alloc.rss_kib;
        CHECK(grew >= want - 1024 && grew <= want + 4096, "rss grew %lld KiB for %lld",
              (long long)grew, (long long)want);
    }
    CHECK_NOTHING_HELD(before);
}

static void test_small_runs(void)
{
    run_one(TC_ALLOC_MALLOC, 1000);
    run_one(TC_ALLOC_MMAP, 1000);
    run_one(TC_ALLOC_MALLOC, 0);
    run_one(TC_ALLOC_MMAP, 250);
}

/* Under a lowered RLIMIT_AS (in a forked child, so the limit does not stay)
 * a big request must come back as TC_ELIMIT with ENOMEM, not crash. */
static void test_limit_is_reported(void)
{
    if (TC_UNDER_SANITIZER) {
        printf("skip test_limit_is_reported: the sanitizers reserve terabytes of "
               "address space, so RLIMIT_AS cannot be lowered under them\n");
        return;
    }
    if (tc_under_emulation()) {
        printf("skip test_limit_is_reported: under qemu-user, which lays out the address "
               "space itself, RLIMIT_AS cannot be lowered\n");
        return;
    }
    pid_t pid = fork();
    if (pid == 0) {
        tc_proc_status s;
        tc_read_proc_status(&s);
        rlim_t cap = (rlim_t)(s.vsz_kib + 64 * 1024) * 1024;
        struct rlimit rl = {cap, cap};
        tc_touch_point curve[POINTS];
        tc_malloc_touch_result out;
        if (setrlimit(RLIMIT_AS, &rl) != 0)
            _exit(10);
        int a = tc_malloc_touch(1024, TC_ALLOC_MALLOC, POINTS, 1000, curve, &out);
        int a_err = out.err;
        int b = tc_malloc_touch(1024, TC_ALLOC_MMAP, POINTS, 1000, curve, &out);
        _exit(a == TC_ELIMIT && b == TC_ELIMIT && a_err == ENOMEM && out.err == ENOMEM ? 0 : 11);
    }
    CHECK(pid > 0, "fork failed");
    if (pid <= 0)
        return;
    int st = 0;
    waitpid(pid, &st, 0);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status %d (10: setrlimit, 11: not "
          "TC_ELIMIT/ENOMEM)", st);
}

static void test_stops_on_request(void)
{
    tc_held before = tc_held_now();
    tc_touch_point curve[4];
    tc_malloc_touch_result out;
    tc_stopper s;
    tc_stop_later(&s, 0);
    int st = tc_malloc_touch(64, TC_ALLOC_MMAP, 4, 1000, curve, &out);
    tc_stop_done(&s);
    CHECK(st == TC_ESTOPPED, "status %d", st);
    CHECK_HELD(before, 0);
}

int main(void)
{
    RUN(test_refuses_bad_arguments);
    RUN(test_small_runs);
    RUN(test_limit_is_reported);
    RUN(test_stops_on_request);
    return tc_summary("malloc_touch");
}
