/* test_cpu_bound.c - tc_cpu_bound_run called directly with small loops. */
#include "harness.h"
#include "../tc_cpu_bound.h"

#include <sched.h>
#include <sys/resource.h>

static int first_cpu(void)
{
    cpu_set_t mask;
    if (sched_getaffinity(0, sizeof mask, &mask) != 0)
        return 0;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &mask))
            return c;
    return 0;
}

static void test_refuses_bad_arguments(void)
{
    tc_cpu_task t[2];
    tc_cpu_bound_result out;
    int64_t s = 1000000000;
    CHECK(tc_cpu_bound_run(7, 2, 0, 100, 0, s, t, &out) == TC_EINVAL, "mode 7");
    CHECK(tc_cpu_bound_run(0, 0, 0, 100, 0, s, t, &out) == TC_EINVAL, "0 tasks");
    CHECK(tc_cpu_bound_run(0, TC_CPU_BOUND_MAX_TASKS + 1, 0, 100, 0, s, t, &out) == TC_EINVAL,
          "too many tasks");
    CHECK(tc_cpu_bound_run(0, 2, -1, 100, 0, s, t, &out) == TC_EINVAL, "cpu -1");
    CHECK(tc_cpu_bound_run(0, 2, 0, 2, 0, s, t, &out) == TC_EINVAL, "limit 2");
    CHECK(tc_cpu_bound_run(0, 2, 0, 100, -1, s, t, &out) == TC_EINVAL, "ws -1");
    CHECK(tc_cpu_bound_run(0, 2, 0, 100, 0, 0, t, &out) == TC_EINVAL, "deadline 0");
    CHECK(tc_cpu_bound_run(0, 2, 0, 100, 0, s, NULL, &out) == TC_EINVAL, "NULL tasks");
    CHECK(tc_cpu_bound_run(0, 2, 0, 100, 0, s, t, NULL) == TC_EINVAL, "NULL out");
}

static void one_run(int mode, int64_t ws_ints)
{
    tc_cpu_task t[3];
    tc_cpu_bound_result out;
    int cpu = first_cpu();
    int st = tc_cpu_bound_run(mode, 3, cpu, 600, ws_ints, 60LL * 1000000000, t, &out);
    CHECK(st == TC_OK, "mode %d: status %d err %d", mode, st, out.err);
    CHECK(out.started == 3 && out.stopped == 3, "mode %d: started %lld stopped %lld", mode,
          (long long)out.started, (long long)out.stopped);
    for (int i = 0; i < 3; i++) {
        /* 109 primes up to 600 */
        CHECK(t[i].completed == 1 && t[i].primes == 109, "task %d: completed %d primes %lld", i,
              t[i].completed, (long long)t[i].primes);
        CHECK(t[i].cpu == cpu, "task %d ran on CPU %d, pinned to %d", i, t[i].cpu, cpu);
        CHECK(t[i].cpu_ns > 0 && t[i].end_ns > 0, "task %d: cpu %lld", i, (long long)t[i].cpu_ns);
    }
    CHECK(out.wall_ns > 0, "wall %lld", (long long)out.wall_ns);
}

static void test_threads_and_processes(void)
{
    TWICE(one_run(TC_CPU_BOUND_THREADS, 0));
    TWICE(one_run(TC_CPU_BOUND_THREADS, 4096));
    TWICE(one_run(TC_CPU_BOUND_PROCESSES, 0));
    TWICE(one_run(TC_CPU_BOUND_PROCESSES, 4096));
}

static void test_deadline_stops_the_tasks(void)
{
    tc_cpu_task t[2];
    tc_cpu_bound_result out;
    tc_held before = tc_held_now();
    /* about 10^12 divisions: only the 50 ms deadline can end it */
    int st = tc_cpu_bound_run(TC_CPU_BOUND_PROCESSES, 2, first_cpu(), 1000000, 0, 50000000,
                              t, &out);
    CHECK(st == TC_ETIMEOUT, "status %d", st);
    CHECK(out.started == 2 && out.stopped == 2, "started %lld stopped %lld",
          (long long)out.started, (long long)out.stopped);
    CHECK(t[0].completed == 0 && t[1].completed == 0, "completed %d %d", t[0].completed,
          t[1].completed);
    CHECK_HELD(before, 0);
}

/* A working set the address-space limit refuses: TC_ELIMIT with ENOMEM, and every
 * task still stopped. Run in a child so the limit stays there; skipped under the
 * sanitizers, whose shadow memory needs an unlimited address space. */
static void test_refused_working_set_is_a_limit(void)
{
    if (TC_UNDER_SANITIZER || tc_under_emulation())
        return;
    pid_t pid = fork();
    if (pid == 0) {
        struct rlimit lim = {(rlim_t)1 << 30, (rlim_t)1 << 30};
        if (setrlimit(RLIMIT_AS, &lim) != 0)
            _exit(3);
        tc_cpu_task t[2];
        tc_cpu_bound_result out;
        /* 2 GiB per task cannot fit under a 1 GiB address space */
        int st = tc_cpu_bound_run(TC_CPU_BOUND_THREADS, 2, first_cpu(), 100, (int64_t)1 << 28,
                                  10LL * 1000000000, t, &out);
        _exit(st == TC_ELIMIT && out.err == ENOMEM && out.stopped == out.started ? 0 : 1);
    }
    int status = 0;
    CHECK(pid > 0 && waitpid(pid, &status, 0) == pid, "fork/wait");
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %d", status);
}

static void test_stops_on_request(void)
{
    for (int mode = TC_CPU_BOUND_THREADS; mode <= TC_CPU_BOUND_PROCESSES; mode++) {
        tc_held before = tc_held_now();
        tc_cpu_task t[2];
        tc_cpu_bound_result out;
        tc_stopper s;
        tc_stop_later(&s, 100);
        int st = tc_cpu_bound_run(mode, 2, first_cpu(), 1000000, 0, 600LL * 1000000000, t,
                                  &out);
        int64_t ms = tc_stop_done(&s);
        CHECK(st == TC_ESTOPPED, "mode %d: status %d", mode, st);
        CHECK(ms >= 0 && ms < TC_STOP_BOUND_MS, "mode %d: stopped %lld ms after the request", mode,
              (long long)ms);
        CHECK(out.stopped == 2, "mode %d: %d tasks joined or reaped", mode, (int)out.stopped);
        CHECK_HELD(before, 0);
    }
}

int main(void)
{
    RUN(test_refuses_bad_arguments);
    RUN(test_threads_and_processes);
    RUN(test_deadline_stops_the_tasks);
    RUN(test_refused_working_set_is_a_limit);
    RUN(test_stops_on_request);
    return tc_summary("cpu_bound");
}
