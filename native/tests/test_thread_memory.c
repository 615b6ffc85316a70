/* test_thread_memory.c - tc_thread_memory_* called directly with few threads. */
#include "harness.h"
#include "../tc_thread_memory.h"

#include <signal.h>
#include <stdint.h>
#include <sys/auxv.h>
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
    /* The kernel reads `after` right after joining its threads. A joined thread leaves the
     * count a moment after its joiner is woken (tc_threads_settled): natively a few
     * microseconds of the kernel's exit path, too short for this reading to see; under
     * qemu-user the guest's thread wakes its joiner (clears its tid) and then its host
     * thread still runs qemu's own teardown before it exits, and the guest reads the
     * host's /proc, so that reading counted one of them now and then (1 or 2 failed checks
     * in 2 of 3 runs). There the check is on the count once it has settled (500 ms at
     * most). */
    if (tc_under_emulation()) {
        int64_t settled = tc_threads_settled((int)threads_before_call);
        CHECK(settled == threads_before_call, "threads after %lld (%lld right after the "
              "join), before the call %lld", (long long)settled, (long long)out.after.threads,
              (long long)threads_before_call);
    } else {
        CHECK(out.after.threads == threads_before_call, "threads after %lld, before the call "
              "%lld", (long long)out.after.threads, (long long)threads_before_call);
    }
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

/* The stack floor, per architecture: the smallest thread stack the C library accepts,
 * sysconf(_SC_THREAD_STACK_MIN) rounded up to whole pages (threadcost.sysinfo's
 * thread_stack_min_kib, which validates every thread stack size), must hold a thread
 * that takes a signal: the kernel writes the CPU's whole register state (AVX-512 and AMX
 * on x86-64, SVE and SME on arm64: getauxval(AT_MINSIGSTKSZ)) onto the stack the thread
 * is running on, and the handler runs below it. glibc's PTHREAD_STACK_MIN is 16 KiB on
 * x86-64 and 128 KiB on arm64 (two 64 KiB pages); one page less is refused. */
static uintptr_t floor_top;              /* the thread's frame, near its stack's top */
static volatile uintptr_t floor_deepest; /* the handler's frame, below the signal frame */
static volatile int floor_handled;

static void floor_handler(int sig)
{
    char text[256];  /* a handler that does a little work, as real ones do */
    int n = snprintf(text, sizeof text, "signal %d at %p", sig, (void *)text);
    floor_deepest = (uintptr_t)__builtin_frame_address(0);
    floor_handled = n > 0;
}

static void *floor_thread(void *unused)
{
    (void)unused;
    floor_top = (uintptr_t)__builtin_frame_address(0);
    return (void *)(intptr_t)pthread_kill(pthread_self(), SIGUSR1);  /* delivered here */
}

static void test_the_smallest_stack_holds_a_signal_frame(void)
{
    long page = sysconf(_SC_PAGESIZE);
    long min = sysconf(_SC_THREAD_STACK_MIN);
    CHECK(page > 0 && min > 0, "page %ld, _SC_THREAD_STACK_MIN %ld", page, min);
    if (page <= 0 || min <= 0)
        return;
    size_t floor = (size_t)((min + page - 1) / page * page);
    unsigned long frame = getauxval(AT_MINSIGSTKSZ);  /* 0 where the kernel does not say */
    pthread_attr_t attr;
    pthread_attr_init(&attr);
#if defined(__GLIBC__)
    if (frame + (unsigned long)page <= floor)  /* the floor is glibc's constant, not the frame */
        CHECK(pthread_attr_setstacksize(&attr, floor - (size_t)page) == EINVAL,
              "one page below the %zu-byte floor was accepted", floor);
#endif
    CHECK(pthread_attr_setstacksize(&attr, floor) == 0, "the %zu-byte floor was refused", floor);

    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = floor_handler;
    sigemptyset(&sa.sa_mask);
    CHECK(sigaction(SIGUSR1, &sa, &old) == 0, "sigaction errno %d", errno);
    floor_handled = 0;
    pthread_t t;
    void *ret = (void *)1;
    int rc = pthread_create(&t, &attr, floor_thread, NULL);
    CHECK(rc == 0, "pthread_create with a %zu-byte stack: %d", floor, rc);
    if (rc == 0)
        pthread_join(t, &ret);
    sigaction(SIGUSR1, &old, NULL);
    pthread_attr_destroy(&attr);
    CHECK(ret == NULL && floor_handled, "the signal was not handled on the thread (ret %p)", ret);
    uintptr_t used = floor_top > floor_deepest ? floor_top - floor_deepest : 0;
    if (!TC_UNDER_SANITIZER && !tc_under_emulation())  /* those run handlers elsewhere */
        CHECK(used > 0 && used < floor, "signal frame and handler used %lu bytes of %zu",
              (unsigned long)used, floor);
    printf("note: thread stack floor %zu KiB; AT_MINSIGSTKSZ %lu bytes; a signal on a thread "
           "used %lu bytes of its stack\n", floor / 1024, frame, (unsigned long)used);

    /* The kernel, at that floor. */
    tc_thread_memory_result out;
    int st = tc_thread_memory_run(4, (int64_t)(floor / 1024), 0, NULL, 0, &out);
    CHECK(st == TC_OK && out.stack_bytes == (int64_t)floor, "status %d err %d stack %lld",
          st, out.err, (long long)out.stack_bytes);
}

int main(void)
{
    RUN(test_refuses_bad_arguments);
    RUN(test_run_gives_everything_back);
    RUN(test_small_stacks_and_pinning);
    RUN(test_start_then_stop);
    RUN(test_limit_is_reported);
    RUN(test_stops_on_request);
    RUN(test_the_smallest_stack_holds_a_signal_frame);
    return tc_summary("thread_memory");
}
