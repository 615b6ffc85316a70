/* test_readiness.c - tokens in flight called directly: every model hands every token
 * its hops (one read, one event each), bad configurations are refused, a refused
 * io_uring is a named limit, the watchdog ends a stalled ring, a low fd limit narrows
 * the ring and says so, and nothing is left behind. */
#include <sys/resource.h>

#include "harness.h"
#include "../tc_readiness.h"

static const char *model_name[] = {"thread", "epoll-lt", "epoll-et", "io_uring"};

static tc_readiness_config config(int model, int tasks)
{
    tc_readiness_config c;
    memset(&c, 0, sizeof c);
    c.model = model;
    c.channel = TC_RD_SOCKETPAIR;
    c.tasks = tasks;
    c.cpu = -1;
    c.points = 3;
    c.tokens[0] = 1;
    c.tokens[1] = tasks / 4 > 1 ? tasks / 4 : 1;
    c.tokens[2] = tasks;
    for (int i = 0; i < c.points; i++)
        c.hops[i] = 8;
    c.stack_kib = (int)TC_SMALL_STACK_KIB;
    c.timeout_ms = 5000;
    return c;
}

static void test_refuses_bad_arguments(void)
{
    tc_readiness_result out;
    tc_readiness_config c = config(TC_RD_EPOLL_LT, 8);
    CHECK(tc_readiness_run(NULL, &out) == TC_EINVAL, "NULL config");
    CHECK(tc_readiness_run(&c, NULL) == TC_EINVAL, "NULL out");
    c.model = 99;
    CHECK(tc_readiness_run(&c, &out) == TC_EINVAL, "model 99");
    c = config(TC_RD_EPOLL_LT, 8);
    c.channel = 7;
    CHECK(tc_readiness_run(&c, &out) == TC_EINVAL, "channel 7");
    c = config(TC_RD_EPOLL_LT, 8);
    c.tasks = TC_RD_MAX_TASKS + 1;
    CHECK(tc_readiness_run(&c, &out) == TC_EINVAL, "too many tasks");
    c = config(TC_RD_EPOLL_LT, 8);
    c.tokens[2] = 9;
    CHECK(tc_readiness_run(&c, &out) == TC_EINVAL, "more tokens than tasks");
    c = config(TC_RD_EPOLL_LT, 8);
    c.hops[0] = 0;
    CHECK(tc_readiness_run(&c, &out) == TC_EINVAL, "0 hops");
    c = config(TC_RD_EPOLL_LT, 8);
    c.points = TC_RD_MAX_POINTS + 1;
    CHECK(tc_readiness_run(&c, &out) == TC_EINVAL, "too many points");
    c = config(TC_RD_EPOLL_LT, 8);
    c.timeout_ms = 0;
    CHECK(tc_readiness_run(&c, &out) == TC_EINVAL, "0 timeout");
    c = config(TC_RD_EPOLL_LT, 8);
    c.cpu = 1024; /* glibc's CPU_SETSIZE: beyond what CPU_SET can name */
    CHECK(tc_readiness_run(&c, &out) == TC_EINVAL, "cpu 1024");
}

/* Every token makes its hops: as many events as tokens x hops, one read each, every
 * write counted (the K writes putting the tokens in included), every token retired. */
static void ring(int model, int channel, int tasks, int pinned)
{
    tc_readiness_result out;
    tc_readiness_config c = config(model, tasks);
    c.channel = channel;
    if (pinned) {
        int cpu = tc_current_cpu();
        c.cpu = cpu < 0 ? 0 : cpu;
    }
    int st = tc_readiness_run(&c, &out);
    if (st == TC_ELIMIT && out.limit == TC_RD_LIMIT_URING) {
        printf("skip: io_uring refused here (errno %d)\n", out.err);
        return;
    }
    CHECK(st == TC_OK, "%s x%d: status %d err %d where %d", model_name[model], tasks, st,
          out.err, out.where);
    CHECK(out.completed == c.points && !out.timed_out && out.tasks_ready == tasks,
          "%s x%d: completed %lld of %d, %lld tasks", model_name[model], tasks,
          (long long)out.completed, c.points, (long long)out.tasks_ready);
    for (int i = 0; i < out.completed; i++) {
        const tc_readiness_point *p = &out.point[i];
        CHECK(p->tokens == c.tokens[i] && p->events == c.tokens[i] * c.hops[i] &&
              p->retired == c.tokens[i],
              "%s K=%lld: events %lld retired %lld", model_name[model],
              (long long)p->tokens, (long long)p->events, (long long)p->retired);
        CHECK(p->reads == p->events && p->writes == p->events,
              "%s K=%lld: reads %lld writes %lld events %lld", model_name[model],
              (long long)p->tokens, (long long)p->reads, (long long)p->writes,
              (long long)p->events);
        CHECK(p->wall_ns > 0, "%s K=%lld: wall %lld ns", model_name[model],
              (long long)p->tokens, (long long)p->wall_ns);
        if (model != TC_RD_THREAD)
            CHECK(p->waits > 0 && p->wait_events >= p->waits / 2,
                  "%s K=%lld: %lld waits, %lld events", model_name[model],
                  (long long)p->tokens, (long long)p->waits, (long long)p->wait_events);
    }
}

static void test_every_model(void)
{
    for (int m = TC_RD_THREAD; m <= TC_RD_URING; m++) {
        TWICE(ring(m, TC_RD_SOCKETPAIR, 1, 0));
        TWICE(ring(m, TC_RD_SOCKETPAIR, 40, 0));
        TWICE(ring(m, TC_RD_PIPE, 40, 0));
        TWICE(ring(m, TC_RD_SOCKETPAIR, 40, 1));
    }
}

/* A kernel or a container that refuses io_uring: a named limit, nothing measured. */
static void refused_uring(void)
{
    tc_readiness_result out;
    tc_readiness_config c = config(TC_RD_URING, 8);
    c.test_uring_errno = ENOSYS;
    int st = tc_readiness_run(&c, &out);
    CHECK(st == TC_ELIMIT && out.limit == TC_RD_LIMIT_URING && out.err == ENOSYS,
          "status %d limit %d err %d", st, out.limit, out.err);
    CHECK(out.completed == 0, "completed %lld", (long long)out.completed);
}

static void test_refused_io_uring_is_a_named_limit(void)
{
    TWICE(refused_uring());
}

/* One task keeps the tokens it reads: the watchdog ends the run. */
static void stall(int model)
{
    tc_readiness_result out;
    tc_readiness_config c = config(model, 16);
    c.test_stall = 1;
    c.timeout_ms = 100;
    int st = tc_readiness_run(&c, &out);
    if (st == TC_ELIMIT && out.limit == TC_RD_LIMIT_URING)
        return;
    CHECK(st == TC_ETIMEOUT && out.timed_out == 1, "%s: status %d timed_out %d",
          model_name[model], st, out.timed_out);
}

static void test_watchdog_ends_a_stalled_ring(void)
{
    for (int m = TC_RD_THREAD; m <= TC_RD_URING; m++)
        TWICE(stall(m));
}

/* 64 fds for 100 tasks (2 fds each): the ring is narrowed to what fits, measured, and
 * the limit named. */
static void fd_limit(int model)
{
    tc_readiness_result out;
    tc_readiness_config c = config(model, 100);
    c.points = 1;
    c.tokens[0] = 1;
    int st = tc_readiness_run(&c, &out);
    if (st == TC_ELIMIT && out.limit == TC_RD_LIMIT_URING)
        return;
    CHECK(st == TC_ELIMIT && out.limit == TC_RD_LIMIT_FDS,
          "%s: status %d limit %d err %d", model_name[model], st, out.limit, out.err);
    CHECK(out.tasks_ready > 0 && out.tasks_ready < 100, "%s: %lld tasks ready",
          model_name[model], (long long)out.tasks_ready);
}

static void test_fd_limit_is_named(void)
{
    struct rlimit old, low = {64, 64};
    getrlimit(RLIMIT_NOFILE, &old);
    if (setrlimit(RLIMIT_NOFILE, &low) != 0) {
        printf("skip: cannot lower RLIMIT_NOFILE\n");
        return;
    }
    for (int m = TC_RD_THREAD; m <= TC_RD_URING; m++)
        TWICE(fd_limit(m));
    /* a hard limit can only be raised back by a privileged process */
    if (setrlimit(RLIMIT_NOFILE, &old) != 0) {
        struct rlimit back = {64, 64};
        setrlimit(RLIMIT_NOFILE, &back);
    }
}

int main(void)
{
    RUN(test_refuses_bad_arguments);
    RUN(test_every_model);
    RUN(test_refused_io_uring_is_a_named_limit);
    RUN(test_watchdog_ends_a_stalled_ring);
    RUN(test_fd_limit_is_named);
    return tc_summary("readiness");
}
