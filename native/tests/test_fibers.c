/* test_fibers.c - the fiber kernels (ucontext and hand-written switch)
 * called directly with a few fibers. */
#include "harness.h"
#include "../tc_fibers.h"

#define N 16
#define POINTS 5

/* native/fibers.c tells ASan and TSan about every stack switch (their fiber
 * annotations), so both implementations run under both. Valgrind is not told
 * (no VALGRIND_STACK_REGISTER), so under it the fibers' stacks look like
 * uninitialised memory: the fiber runs are skipped there, with the reason. */
#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#endif
#endif
#ifndef RUNNING_ON_VALGRIND
#define RUNNING_ON_VALGRIND 0
#endif

static const char *impl_name[] = {"ucontext", "asm"};

static void test_refuses_bad_arguments(void)
{
    int64_t samples[N], cns[N], sns[N];
    tc_fiber_pingpong_result pr;
    tc_fiber_memory_result mr;
    tc_fiber_mem_point pts[POINTS];
    int32_t trace[N];
    int fin;
    CHECK(tc_fiber_pingpong(7, N, 2, 64, samples, &pr) == TC_EINVAL, "impl 7");
    CHECK(tc_fiber_pingpong(TC_FIBER_UCONTEXT, 0, 2, 64, samples, &pr) == TC_EINVAL, "0 it");
    CHECK(tc_fiber_pingpong(TC_FIBER_UCONTEXT, N, -1, 64, samples, &pr) == TC_EINVAL,
          "warmup -1");
    CHECK(tc_fiber_pingpong(TC_FIBER_UCONTEXT, N, 2, 8, samples, &pr) == TC_EINVAL, "stack 8");
    CHECK(tc_fiber_pingpong(TC_FIBER_UCONTEXT, N, 2, 64, NULL, &pr) == TC_EINVAL, "NULL");
    CHECK(tc_fiber_memory(TC_FIBER_ASM, 0, 64, 0, POINTS, pts, cns, sns, &mr) == TC_EINVAL,
          "0 fibers");
    CHECK(tc_fiber_memory(TC_FIBER_ASM, N, 64, -1, POINTS, pts, cns, sns, &mr) == TC_EINVAL,
          "touch -1");
    CHECK(tc_fiber_memory(TC_FIBER_ASM, N, 64, 64, POINTS, pts, cns, sns, &mr) == TC_EINVAL,
          "touch = whole stack");
    CHECK(tc_fiber_memory(TC_FIBER_ASM, N, 64, 0, 1, pts, cns, sns, &mr) == TC_EINVAL,
          "1 point");
    CHECK(tc_fiber_order(TC_FIBER_ASM, 0, 2, 64, trace, &fin) == TC_EINVAL, "0 fibers");
    CHECK(tc_fiber_order(TC_FIBER_ASM, 4, 0, 64, trace, &fin) == TC_EINVAL, "0 rounds");
}

static void pingpong(int impl)
{
    int64_t samples[N];
    tc_fiber_pingpong_result out;
    int st = tc_fiber_pingpong(impl, N, 4, 64, samples, &out);
    CHECK(st == TC_OK, "%s: status %d err %d", impl_name[impl], st, out.err);
    CHECK(out.iterations == N, "%s: iterations %lld", impl_name[impl],
          (long long)out.iterations);
    for (int i = 0; i < N; i++)
        CHECK(samples[i] > 0, "%s: sample %d = %lld", impl_name[impl], i,
              (long long)samples[i]);
}

static void memory(int impl)
{
    int64_t cns[N], sns[N];
    tc_fiber_memory_result out;
    tc_fiber_mem_point pts[POINTS];
    int st = tc_fiber_memory(impl, N, 64, 16, POINTS, pts, cns, sns, &out);
    CHECK(st == TC_OK, "%s: status %d err %d", impl_name[impl], st, out.err);
    CHECK(out.created == N && out.points_filled == POINTS, "%s: created %lld points %d",
          impl_name[impl], (long long)out.created, out.points_filled);
    CHECK(pts[0].fibers == 0 && pts[POINTS - 1].fibers == N, "%s: points %lld..%lld",
          impl_name[impl], (long long)pts[0].fibers, (long long)pts[POINTS - 1].fibers);
}

static void order(int impl)
{
    enum { F = 4, R = 3 };
    int32_t trace[F * R];
    int finished = -1;
    int st = tc_fiber_order(impl, F, R, 64, trace, &finished);
    CHECK(st == TC_OK && finished == F, "%s: status %d finished %d", impl_name[impl], st,
          finished);
    /* round-robin: step s of every fiber before step s+1 of any */
    for (int i = 1; i < F * R; i++)
        CHECK(trace[i] % 1000000 >= trace[i - 1] % 1000000, "%s: trace out of order at %d",
              impl_name[impl], i);
}

static void test_each_implementation(void)
{
    for (int impl = TC_FIBER_UCONTEXT; impl <= TC_FIBER_ASM; impl++) {
        if (RUNNING_ON_VALGRIND) {
            printf("skip %s fibers under valgrind: it cannot follow a stack switch "
                   "that is not registered with it\n", impl_name[impl]);
            continue;
        }
        TWICE(pingpong(impl));
        TWICE(memory(impl));
        TWICE(order(impl));
    }
}

static void sigmask_yardstick(void)
{
    double ns[3];
    int err = -1;
    CHECK(tc_fiber_sigmask_ns(100, 3, ns, &err) == TC_OK && err == 0, "sigmask err %d", err);
    for (int i = 0; i < 3; i++)
        CHECK(ns[i] >= 0, "sigmask batch %d: %f", i, ns[i]);
    CHECK(tc_fiber_sigmask_ns(0, 3, ns, &err) == TC_EINVAL, "sigmask 0 ops");
    CHECK(tc_fiber_sigmask_ns(10, 0, ns, &err) == TC_EINVAL, "sigmask 0 batches");
}

static void test_sigmask_yardstick(void)
{
    TWICE(sigmask_yardstick());
}

static void test_stops_on_request(void)
{
    tc_held before = tc_held_now();
    const int64_t n = 2000000;
    int64_t *samples = calloc((size_t)n, sizeof *samples);
    tc_fiber_pingpong_result out;
    if (samples) {
        tc_stopper s;
        tc_stop_later(&s, 100);
        int st = tc_fiber_pingpong(TC_FIBER_UCONTEXT, n, 0, 64, samples, &out);
        int64_t ms = tc_stop_done(&s);
        CHECK(st == TC_ESTOPPED, "ping-pong: status %d", st);
        CHECK(ms >= 0 && ms < TC_STOP_BOUND_MS, "stopped %lld ms after the request", (long long)ms);
        free(samples);
    }
    tc_stopper s;
    int32_t trace[64];
    int finished = 0;
    tc_stop_later(&s, 0);
    CHECK(tc_fiber_order(TC_FIBER_ASM, 4, 8, 64, trace, &finished) == TC_ESTOPPED, "order");
    tc_stop_done(&s);
    double per_op[4];
    int err = 0;
    tc_stop_later(&s, 0);
    CHECK(tc_fiber_sigmask_ns(10, 4, per_op, &err) == TC_ESTOPPED, "sigmask");
    tc_stop_done(&s);
    CHECK_HELD(before, 0);
}

int main(void)
{
    RUN(test_refuses_bad_arguments);
    RUN(test_sigmask_yardstick);
    RUN(test_each_implementation);
    RUN(test_stops_on_request);
    return tc_summary("fibers");
}
