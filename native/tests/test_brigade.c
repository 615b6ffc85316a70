/* test_brigade.c - the bucket brigade called directly: every kind, pinned and
 * not, every byte arrives, the watchdog ends a stalled brigade, a small fd
 * limit is reported as a limit, and nothing is left behind. */
#include <sys/resource.h>
#include <time.h>

#include "harness.h"
#include "../tc_brigade.h"

#define N 100

static const char *kind_name[] = {"thread", "epoll", "one-thread"};

static tc_brigade_config config(int kind, int tasks)
{
    tc_brigade_config c;
    memset(&c, 0, sizeof c);
    c.kind = kind;
    c.tasks = tasks;
    c.cpu = -1;
    c.iterations = N;
    c.warmup = 10;
    c.stack_kib = TC_SMALL_STACK_KIB;
    c.timeout_ms = 5000;
    c.test_stall_after = -1;
    return c;
}

static void test_refuses_bad_arguments(void)
{
    int64_t trips[N];
    tc_brigade_result out;
    tc_brigade_config c = config(TC_BR_THREAD, 4);
    CHECK(tc_brigade_run(NULL, trips, &out) == TC_EINVAL, "NULL config");
    CHECK(tc_brigade_run(&c, trips, NULL) == TC_EINVAL, "NULL out");
    CHECK(tc_brigade_run(&c, NULL, &out) == TC_EINVAL, "NULL trips");
    c.kind = 99;
    CHECK(tc_brigade_run(&c, trips, &out) == TC_EINVAL, "kind 99");
    c = config(TC_BR_THREAD, 0);
    CHECK(tc_brigade_run(&c, trips, &out) == TC_EINVAL, "0 tasks");
    c = config(TC_BR_THREAD, 4);
    c.iterations = 0;
    CHECK(tc_brigade_run(&c, trips, &out) == TC_EINVAL, "0 iterations");
    c = config(TC_BR_THREAD, 4);
    c.timeout_ms = 0;
    CHECK(tc_brigade_run(&c, trips, &out) == TC_EINVAL, "0 timeout");
    c = config(TC_BR_THREAD, 4);
    c.cpu = 1024; /* glibc's CPU_SETSIZE: beyond what CPU_SET can name */
    CHECK(tc_brigade_run(&c, trips, &out) == TC_EINVAL, "cpu 1024");
    c = config(TC_BR_THREAD, 4);
    c.transport = 7;
    CHECK(tc_brigade_run(&c, trips, &out) == TC_EINVAL, "transport 7");
}

/* S5's transport: every kind passes every byte through Unix socket pairs, 2 fds a link,
 * and leaves nothing open. */
static void test_socket_pairs(void)
{
    for (int kind = TC_BR_THREAD; kind <= TC_BR_ONE_THREAD; kind++) {
        int64_t trips[N];
        tc_brigade_result out;
        tc_brigade_config c = config(kind, 6);
        c.transport = TC_BR_SOCKETPAIR;
        int st = tc_brigade_run(&c, trips, &out);
        CHECK(st == TC_OK, "%s socketpair: status %d err %d where %d", kind_name[kind], st,
              out.err, out.where);
        CHECK(out.bytes_arrived == N + 10 && out.bytes_wrong == 0,
              "%s socketpair: arrived %lld wrong %lld", kind_name[kind],
              (long long)out.bytes_arrived, (long long)out.bytes_wrong);
        CHECK(out.fds_ready == out.fds_before + 2 * 7 + (kind == TC_BR_EPOLL),
              "%s socketpair: fds %lld -> %lld", kind_name[kind], (long long)out.fds_before,
              (long long)out.fds_ready);
    }
}

static void brigade(int kind, int tasks, int pinned)
{
    int64_t trips[N];
    tc_brigade_result out;
    tc_brigade_config c = config(kind, tasks);
    if (pinned) {
        int cpu = tc_current_cpu();
        c.cpu = cpu < 0 ? 0 : cpu;
    }
    int st = tc_brigade_run(&c, trips, &out);
    CHECK(st == TC_OK, "%s x%d: status %d err %d where %d", kind_name[kind], tasks, st,
          out.err, out.where);
    CHECK(out.completed == N && !out.timed_out, "%s x%d: completed %lld", kind_name[kind],
          tasks, (long long)out.completed);
    CHECK(out.bytes_sent == N + 10 && out.bytes_arrived == N + 10 && out.bytes_wrong == 0,
          "%s x%d: sent %lld arrived %lld wrong %lld", kind_name[kind], tasks,
          (long long)out.bytes_sent, (long long)out.bytes_arrived, (long long)out.bytes_wrong);
    CHECK(out.tasks_ready == tasks, "%s: %lld tasks ready", kind_name[kind],
          (long long)out.tasks_ready);
    if (kind == TC_BR_THREAD)
        CHECK(out.ready.threads >= out.before.threads + tasks, "%s: threads %lld -> %lld",
              kind_name[kind], (long long)out.before.threads, (long long)out.ready.threads);
    CHECK(out.fds_ready == out.fds_before + 2 * (tasks + 1) + (kind == TC_BR_EPOLL),
          "%s x%d: fds %lld -> %lld", kind_name[kind], tasks, (long long)out.fds_before,
          (long long)out.fds_ready);
    for (int i = 0; i < N && st == TC_OK; i++)
        CHECK(trips[i] > 0, "%s: trip %d = %lld ns", kind_name[kind], i, (long long)trips[i]);
    if (pinned && st == TC_OK)
        CHECK(out.cpu_after_pin == c.cpu, "%s: pinned to %d, ran on %d", kind_name[kind], c.cpu,
              out.cpu_after_pin);
}

static void test_every_kind(void)
{
    for (int k = TC_BR_THREAD; k <= TC_BR_ONE_THREAD; k++) {
        TWICE(brigade(k, 1, 0));
        TWICE(brigade(k, 50, 0));
        TWICE(brigade(k, 50, 1));
    }
}

/* The middle task stops passing the byte after 20 trips: the watchdog must end
 * the run with TC_ETIMEOUT and leave nothing behind. */
static void stall(int kind)
{
    int64_t trips[N];
    tc_brigade_result out;
    tc_brigade_config c = config(kind, 20);
    c.test_stall_after = 20;
    c.timeout_ms = 100;
    int st = tc_brigade_run(&c, trips, &out);
    CHECK(st == TC_ETIMEOUT && out.timed_out == 1, "%s: status %d timed_out %d",
          kind_name[kind], st, out.timed_out);
    CHECK(out.completed < N, "%s: completed %lld", kind_name[kind], (long long)out.completed);
}

static void test_watchdog_ends_a_stalled_brigade(void)
{
    for (int k = TC_BR_THREAD; k <= TC_BR_ONE_THREAD; k++)
        TWICE(stall(k));
}

/* A stalled brigade whose watchdog would wait a minute ends within STOP_BOUND_MS of
 * tc_request_stop() (set from another thread 50 ms in) with TC_ESTOPPED. */
static void *request_stop_later(void *arg)
{
    (void)arg;
    struct timespec ts = {0, 50 * 1000 * 1000};
    nanosleep(&ts, NULL);
    tc_request_stop();
    return NULL;
}

static void stopped(int kind)
{
    int64_t trips[N];
    tc_brigade_result out;
    tc_brigade_config c = config(kind, 20);
    c.test_stall_after = 20;
    c.timeout_ms = 60000;
    tc_clear_stop();
    pthread_t t;
    CHECK(pthread_create(&t, NULL, request_stop_later, NULL) == 0, "pthread_create");
    int64_t t0 = tc_now_ns();
    int st = tc_brigade_run(&c, trips, &out);
    int64_t took_ms = (tc_now_ns() - t0) / 1000000;
    pthread_join(t, NULL);
    tc_clear_stop();
    CHECK(st == TC_ESTOPPED, "%s: status %d", kind_name[kind], st);
    CHECK(took_ms < STOP_BOUND_MS, "%s: stopped after %lld ms", kind_name[kind], (long long)took_ms);
}

static void test_stop_flag_ends_a_run(void)
{
    for (int k = TC_BR_THREAD; k <= TC_BR_ONE_THREAD; k++)
        stopped(k);
}

/* RLIMIT_NOFILE's hard limit lowered to 64: a brigade of 100 tasks needs 202
 * fds, so the pipes run out; the kernel names the fd limit and releases all. */
static void fd_limit(int kind)
{
    int64_t trips[N];
    tc_brigade_result out;
    tc_brigade_config c = config(kind, 100);
    int st = tc_brigade_run(&c, trips, &out);
    CHECK(st == TC_ELIMIT && out.limit == TC_BR_LIMIT_FDS, "%s: status %d limit %d err %d",
          kind_name[kind], st, out.limit, out.err);
    CHECK(out.tasks_ready < 100, "%s: %lld tasks ready", kind_name[kind],
          (long long)out.tasks_ready);
    CHECK(out.nofile_soft == 64, "soft limit %lld", (long long)out.nofile_soft);
}

static void test_fd_limit_is_named(void)
{
    struct rlimit old, low = {32, 64};
    getrlimit(RLIMIT_NOFILE, &old);
    if (setrlimit(RLIMIT_NOFILE, &low) != 0) {
        printf("skip: cannot lower RLIMIT_NOFILE\n");
        return;
    }
    for (int k = TC_BR_THREAD; k <= TC_BR_ONE_THREAD; k++)
        TWICE(fd_limit(k));
    /* a hard limit can only be raised back by a privileged process */
    if (setrlimit(RLIMIT_NOFILE, &old) != 0) {
        struct rlimit back = {64, 64};
        setrlimit(RLIMIT_NOFILE, &back);
    }
}

int main(void)
{
    RUN(test_refuses_bad_arguments);
    RUN(test_every_kind);
    RUN(test_socket_pairs);
    RUN(test_watchdog_ends_a_stalled_brigade);
    RUN(test_stop_flag_ends_a_run);
    RUN(test_fd_limit_is_named);
    return tc_summary("brigade");
}
