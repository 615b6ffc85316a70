/* test_thread_memory.c - tc_thread_memory_* called directly with few threads. */
#include "harness.h"
#include "../tc_thread_memory.h"

#include <sys/resource.h>

static void test_refuses_bad_arguments(void)
{
    tc_thread_memory_result out;
    tc_thread_group *g = (tc_thread_group *)&out; /* must be reset to NULL or untouched */
    int cpus[1] = {-1};
    CHECK(tc_thread_memory_run(0, 0, 0, NULL, 0, &out) == TC_EINVAL, "0 threads");
    CHECK(tc_thread_memory_run(-5, 0, 0, NULL, 0, &out) == TC_EINVAL, "-5 threads");
    CHECK(tc_thread_memory_run(4, -1, 0, NULL, 0, &out) == TC_EINVAL, "stack -1");
    CHECK(tc_thread_memory_run(4, 0, -1, NULL, 0, &out) == TC_EINVAL, "touch -1");
    CHECK(tc_thread_memory_run(4, 0, 0, NULL, 1, &out) == TC_EINVAL, "ncpus 1, cpus NULL");
    CHECK(tc_thread_memory_run(4, 0, 0, cpus, 1, &out) == TC_EINVAL, "cpu -1");
    CHECK(tc_thread_memory_run(4, TC_SMALL_STACK_KIB, 2 * TC_SMALL_STACK_KIB, NULL, 0, &out) == TC_EINVAL, "touch > stack");
    CHECK(tc_thread_memory_run(4, 0, 0, NULL, 0, NULL) == TC_EINVAL, "NULL out");
    CHECK(tc_thread_memory_start(4, 0, 0, NULL, 0, NULL, &out) == TC_EINVAL, "NULL group");
    int st = tc_thread_memory_start(4, TC_SMALL_STACK_KIB, 2 * TC_SMALL_STACK_KIB, NULL, 0, &g, &out);
    CHECK(st == TC_EINVAL && g == NULL, "touch > stack via start: st %d", st);
    CHECK(tc_thread_memory_stop(NULL, &out) == TC_EINVAL, "stop NULL group");
}

/* The kernel may start idle "ballast" threads before its first reading (to
 * drain glibc's stack cache), so `before` and `during` include them; what
 * must hold is: 16 more threads during, and this process's count back after. */
static void run_sixteen(void)
{
    tc_thread_memory_result out;
    int64_t threads_before_call = tc_held_now().threads;
    int st = tc_thread_memory_run(16, 0, 16, NULL, 0, &out);
    CHECK(st == TC_OK, "status %d err %d", st, out.err);
    CHECK(out.requested == 16 && out.started == 16, "started %lld of %lld",
          (long long)out.started, (long long)out.requested);
    CHECK(out.during.threads >= out.before.threads + 16, "threads during %lld before %lld",
          (long long)out.during.threads, (long long)out.before.threads);
    CHECK(out.after.threads == threads_before_call, "threads after %lld, before the call %lld",
          (long long)out.after.threads, (long long)threads_before_call);
    CHECK(out.too_deep == 0, "too_deep %d", out.too_deep);
}

static void test_run_gives_everything_back(void)
{
    TWICE(run_sixteen());
}

static void run_pinned_small_stacks(void)
{
    tc_thread_memory_result out;
    int cpu = tc_current_cpu();
    int cpus[1] = {cpu < 0 ? 0 : cpu};
    int st = tc_thread_memory_run(8, TC_SMALL_STACK_KIB, 16, cpus, 1, &out);
    CHECK(st == TC_OK, "status %d err %d", st, out.err);
    CHECK(out.stack_bytes == TC_SMALL_STACK_KIB * 1024, "stack_bytes %lld", (long long)out.stack_bytes);
}

static void test_small_stacks_and_pinning(void)
{
    TWICE(run_pinned_small_stacks());
}

static void test_start_then_stop(void)
{
    tc_held before = tc_held_now();
    tc_thread_memory_result out;
    tc_thread_group *g = NULL;
    int st = tc_thread_memory_start(10, 0, 0, NULL, 0, &g, &out);
    CHECK(st == TC_OK && g != NULL, "status %d", st);
    if (!g)
        return;
    tc_held during = tc_held_now();
    CHECK(during.threads >= before.threads + 10, "threads while started %d, before %d",
          during.threads, before.threads);
    CHECK(tc_thread_memory_stop(g, &out) == TC_OK, "stop failed");
    CHECK_NOTHING_HELD(before);
}

/* Under a lowered RLIMIT_AS (in a forked child) thread stacks run out: the
 * kernel must return TC_ELIMIT with a partial count and join what it started. */
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
        rlim_t cap = (rlim_t)(s.vsz_kib + 64 * 1024) * 1024; /* room for ~7 8-MiB stacks */
        struct rlimit rl = {cap, cap};
        if (setrlimit(RLIMIT_AS, &rl) != 0)
            _exit(10);
        tc_thread_memory_result out;
        tc_thread_group *g = NULL;
        int st = tc_thread_memory_start(200, 8192, 0, NULL, 0, &g, &out);
        if (st != TC_ELIMIT || !g)
            _exit(11);
        if (out.started < 1 || out.started >= 200 || (out.err != EAGAIN && out.err != ENOMEM))
            _exit(12);
        tc_thread_memory_stop(g, &out);
        tc_proc_status now;
        tc_read_proc_status(&now);
        _exit(now.threads == 1 ? 0 : 13);
    }
    CHECK(pid > 0, "fork failed");
    if (pid <= 0)
        return;
    int st = 0;
    waitpid(pid, &st, 0);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0,
          "child status %d (10 setrlimit, 11 not TC_ELIMIT, 12 counts, 13 threads left)", st);
}

static void test_stops_on_request(void)
{
    tc_held before = tc_held_now();
    tc_thread_memory_result out;
    tc_stopper s;
    tc_stop_later(&s, 0);
    int st = tc_thread_memory_run(16, TC_SMALL_STACK_KIB, 0, NULL, 0, &out);
    tc_stop_done(&s);
    CHECK(st == TC_ESTOPPED && out.started == 0, "status %d started %lld", st,
          (long long)out.started);
    CHECK_HELD(before, 0);
}

int main(void)
{
    RUN(test_refuses_bad_arguments);
    RUN(test_run_gives_everything_back);
    RUN(test_small_stacks_and_pinning);
    RUN(test_start_then_stop);
    RUN(test_limit_is_reported);
    RUN(test_stops_on_request);
    return tc_summary("thread_memory");
}
