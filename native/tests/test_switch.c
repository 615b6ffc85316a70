/* test_switch.c - the ping-pong and baseline kernels called directly with a
 * few hundred round trips, every mechanism, threads and processes, and the
 * watchdog (a partner that stops answering must not hang the caller). */
#include "harness.h"
#include "../tc_switch.h"

#include <time.h>

#define N 200

static const char *mech_name[] = {"pipe", "condvar", "futex", "eventfd"};
static const char *task_name[] = {"threads", "processes"};

static tc_switch_config config(int mechanism, int tasks)
{
    tc_switch_config c;
    memset(&c, 0, sizeof c);
    c.mechanism = mechanism;
    c.tasks = tasks;
    c.cpu_a = -1;
    c.cpu_b = -1;
    c.iterations = N;
    c.warmup = 20;
    c.working_set_bytes = 0;
    c.message_bytes = 1;
    c.per_sample = 1;
    c.record_cpus = 1;
    c.timeout_ms = 5000;
    c.test_stall_after = -1;
    return c;
}

static void test_refuses_bad_arguments(void)
{
    int64_t rt[N];
    int32_t ca[N], cb[N];
    tc_switch_result out;
    tc_switch_config c = config(TC_SW_PIPE, TC_SW_THREADS);
    CHECK(tc_switch_pingpong(NULL, rt, ca, cb, &out) == TC_EINVAL, "NULL config");
    CHECK(tc_switch_pingpong(&c, rt, ca, cb, NULL) == TC_EINVAL, "NULL out");
    c.mechanism = 99;
    CHECK(tc_switch_pingpong(&c, rt, ca, cb, &out) == TC_EINVAL, "mechanism 99");
    c = config(TC_SW_PIPE, 99);
    CHECK(tc_switch_pingpong(&c, rt, ca, cb, &out) == TC_EINVAL, "tasks 99");
    c = config(TC_SW_PIPE, TC_SW_THREADS);
    c.iterations = 0;
    CHECK(tc_switch_pingpong(&c, rt, ca, cb, &out) == TC_EINVAL, "0 iterations");
    c = config(TC_SW_PIPE, TC_SW_THREADS);
    c.per_sample = 1;
    CHECK(tc_switch_pingpong(&c, NULL, ca, cb, &out) == TC_EINVAL, "per_sample, NULL samples");
    int err = 0;
    int64_t batch[4];
    CHECK(tc_switch_baseline(99, -1, 4, 4, 0, 1, batch, &err) == TC_EINVAL, "baseline 99");
    CHECK(tc_switch_baseline(TC_SWB_EMPTY_SYSCALL, -1, 0, 4, 0, 1, batch, &err) == TC_EINVAL,
          "0 samples");
    CHECK(tc_switch_baseline(TC_SWB_EMPTY_SYSCALL, -1, 4, 4, 0, 1, NULL, &err) == TC_EINVAL,
          "NULL batch_ns");
}

static void pingpong(int mechanism, int tasks, int pinned)
{
    int64_t rt[N];
    int32_t ca[N], cb[N];
    tc_switch_result out;
    tc_switch_config c = config(mechanism, tasks);
    if (pinned) {
        int cpu = tc_current_cpu();
        c.cpu_a = c.cpu_b = cpu < 0 ? 0 : cpu;
    }
    int st = tc_switch_pingpong(&c, rt, ca, cb, &out);
    CHECK(st == TC_OK, "%s/%s: status %d err %d where %d", mech_name[mechanism],
          task_name[tasks], st, out.err, out.where);
    CHECK(out.completed == N && !out.timed_out, "%s/%s: completed %lld timed_out %d",
          mech_name[mechanism], task_name[tasks], (long long)out.completed, out.timed_out);
    for (int i = 0; i < N && st == TC_OK; i++)
        CHECK(rt[i] > 0, "%s/%s: round trip %d = %lld ns", mech_name[mechanism],
              task_name[tasks], i, (long long)rt[i]);
    if (pinned && st == TC_OK)
        CHECK(ca[N - 1] == c.cpu_a && cb[N - 1] == c.cpu_b, "%s/%s: pinned to %d, ran on %d/%d",
              mech_name[mechanism], task_name[tasks], c.cpu_a, ca[N - 1], cb[N - 1]);
}

static void test_every_mechanism(void)
{
    for (int m = TC_SW_PIPE; m <= TC_SW_EVENTFD; m++)
        for (int t = TC_SW_THREADS; t <= TC_SW_PROCESSES; t++) {
            TWICE(pingpong(m, t, 0));
            TWICE(pingpong(m, t, 1));
        }
}

/* B stops answering after 50 round trips: the watchdog must end the run
 * with TC_ETIMEOUT and leave nothing behind. */
static void stall(int mechanism, int tasks)
{
    int64_t rt[N];
    int32_t ca[N], cb[N];
    tc_switch_result out;
    tc_switch_config c = config(mechanism, tasks);
    c.test_stall_after = 50;
    c.timeout_ms = 50;
    int st = tc_switch_pingpong(&c, rt, ca, cb, &out);
    CHECK(st == TC_ETIMEOUT && out.timed_out == 1, "%s/%s: status %d timed_out %d",
          mech_name[mechanism], task_name[tasks], st, out.timed_out);
    CHECK(out.completed < N, "%s/%s: completed %lld", mech_name[mechanism], task_name[tasks],
          (long long)out.completed);
}

static void test_watchdog_ends_a_stalled_partner(void)
{
    for (int m = TC_SW_PIPE; m <= TC_SW_EVENTFD; m++)
        for (int t = TC_SW_THREADS; t <= TC_SW_PROCESSES; t++)
            TWICE(stall(m, t));
}

/* The stop flag, set from another thread 50 ms in, ends a run meant to last far
 * longer within the watchdog's 100 ms poll, with TC_ESTOPPED and nothing left. */
static void *request_stop_later(void *arg)
{
    (void)arg;
    struct timespec ts = {0, 50 * 1000 * 1000};
    nanosleep(&ts, NULL);
    tc_request_stop();
    return NULL;
}

static void stopped(int mechanism, int tasks)
{
    tc_switch_result out;
    tc_switch_config c = config(mechanism, tasks);
    c.iterations = 10000000;  /* the most a run may ask for: tens of seconds */
    c.per_sample = 0;
    c.record_cpus = 0;
    tc_clear_stop();
    pthread_t t;
    CHECK(pthread_create(&t, NULL, request_stop_later, NULL) == 0, "pthread_create");
    int64_t t0 = tc_now_ns();
    int st = tc_switch_pingpong(&c, NULL, NULL, NULL, &out);
    int64_t took_ms = (tc_now_ns() - t0) / 1000000;
    pthread_join(t, NULL);
    tc_clear_stop();
    CHECK(st == TC_ESTOPPED, "%s/%s: status %d", mech_name[mechanism], task_name[tasks], st);
    CHECK(took_ms < STOP_BOUND_MS, "%s/%s: stopped after %lld ms", mech_name[mechanism],
          task_name[tasks], (long long)took_ms);
}

static void test_stop_flag_ends_a_run(void)
{
    for (int m = TC_SW_PIPE; m <= TC_SW_EVENTFD; m++)
        for (int t = TC_SW_THREADS; t <= TC_SW_PROCESSES; t++)
            stopped(m, t);
}

static void baselines(void)
{
    int64_t batch[8];
    for (int kind = TC_SWB_EMPTY_SYSCALL; kind <= TC_SWB_GETCPU; kind++) {
        int err = 0;
        int st = tc_switch_baseline(kind, -1, 8, 16, 4096, 1, batch, &err);
        CHECK(st == TC_OK, "baseline %d: status %d err %d", kind, st, err);
        for (int i = 0; i < 8 && st == TC_OK; i++)
            CHECK(batch[i] > 0, "baseline %d batch %d = %lld", kind, i, (long long)batch[i]);
    }
}

static void test_baselines(void)
{
    TWICE(baselines());
}

int main(void)
{
    RUN(test_refuses_bad_arguments);
    RUN(test_every_mechanism);
    RUN(test_watchdog_ends_a_stalled_partner);
    RUN(test_stop_flag_ends_a_run);
    RUN(test_baselines);
    return tc_summary("switch");
}
