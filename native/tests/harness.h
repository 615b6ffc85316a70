/*
 * harness.h - a tiny test harness for calling C kernels directly.
 *
 * Each native/tests/test_<family>.c is one program: it calls the kernels of
 * native/<family>.c with small parameters and checks statuses, results, and
 * that every call gave back what it took (threads, file descriptors, child
 * processes; mappings within a small tolerance, since the sanitizers' own
 * allocators map memory). native/tests/run_sanitizers.sh builds each program
 * plain, under ASan+UBSan (LeakSanitizer included) and under TSan, and runs it.
 *
 * Unlike the kernels, a test program may print: one line per failed check
 * and a summary on stdout.
 */
#ifndef TC_TEST_HARNESS_H
#define TC_TEST_HARNESS_H

#define _GNU_SOURCE
#include <dirent.h>
#include <pthread.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../threadcost.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define TC_UNDER_SANITIZER 1
#else
#define TC_UNDER_SANITIZER 0
#endif

/* How late a stop may end a kernel's loop, after the request. The kernels poll the stop
 * flag at least every 100 ms; the bound leaves room for a loaded machine (a busy CI
 * host ran a ThreadSanitizer fork loop 1.2 s past a request), while the TC_ESTOPPED
 * status each test also checks says the stop, not the end of the run, ended it. */
#define TC_STOP_BOUND_MS (TC_UNDER_SANITIZER ? 5000 : 2000)

static int tc_failures;

/* The tests' small thread stack: 64 KiB, or the C library's minimum where that is larger
 * (glibc's PTHREAD_STACK_MIN is 16 KiB on x86-64, 128 KiB on arm64). */
#define TC_SMALL_STACK_KIB \
    ((int64_t)PTHREAD_STACK_MIN > 64 * 1024 ? (int64_t)PTHREAD_STACK_MIN / 1024 : (int64_t)64)

/* Set by tools/cross_arm64.py, which runs the tests under qemu-user: the emulator lays
 * out the guest's address space itself, so RLIMIT_AS cannot be lowered under it. */
__attribute__((unused)) static int tc_under_emulation(void)
{
    const char *e = getenv("TC_TEST_EMULATED");
    return e && e[0] == '1';
}

__attribute__((unused)) static void *tc_idle_thread(void *arg)
{
    return arg;
}

/* Before main: line-buffer stdout, so a child forked by a kernel never
 * inherits (and repeats) unwritten output; under TSan, start and join one
 * thread so the sanitizer's own background thread exists before any count. */
__attribute__((constructor)) static void tc_harness_init(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
#if defined(__SANITIZE_THREAD__)
    pthread_t t;
    if (pthread_create(&t, NULL, tc_idle_thread, NULL) == 0)
        pthread_join(t, NULL);
    usleep(20000);
#endif
}
static int tc_checks;

/* How long a run may take to end after tc_request_stop(), its start included: a second
 * in a plain build (what the CLI promises); ASan and TSan slow every call several times
 * over, and another job on a core slows them again. */
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define STOP_BOUND_MS 5000
#else
#define STOP_BOUND_MS 1000
#endif

#define CHECK(cond, ...)                                                      \
    do {                                                                      \
        tc_checks++;                                                          \
        if (!(cond)) {                                                        \
            tc_failures++;                                                    \
            printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);            \
            printf(__VA_ARGS__);                                              \
            printf("\n");                                                     \
        }                                                                     \
    } while (0)

/* Entries of a /proc directory, not counting "." and "..". */
static int tc_count_dir(const char *path)
{
    DIR *d = opendir(path);
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n;
}

static int tc_count_lines(const char *path)
{
    FILE *f = fopen(path, "re");
    if (!f)
        return -1;
    int n = 0, c;
    while ((c = fgetc(f)) != EOF)
        n += c == '\n';
    fclose(f);
    return n;
}

typedef struct {
    int threads;
    int fds;
    int maps;
} tc_held;

static tc_held tc_held_now(void)
{
    tc_held h;
    h.threads = tc_count_dir("/proc/self/task");
    h.fds = tc_count_dir("/proc/self/fd");
    h.maps = tc_count_lines("/proc/self/maps");
    return h;
}

/* The threads listed in /proc/self/task, waiting (at most 500 ms) while more than
 * `want` are: a joined thread leaves the list a moment after pthread_join has
 * returned (its exit wakes the joiner before the kernel releases it), a moment
 * that grows when the machine is busy. A thread still there after that is kept. */
__attribute__((unused)) static int tc_threads_settled(int want)
{
    struct timespec t0, now, pause = {0, 1000 * 1000};
    int n = tc_count_dir("/proc/self/task");
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (n > want) {
        clock_gettime(CLOCK_MONOTONIC, &now);
        if ((now.tv_sec - t0.tv_sec) * 1000 + (now.tv_nsec - t0.tv_nsec) / 1000000 >= 500)
            break;
        nanosleep(&pause, NULL);
        n = tc_count_dir("/proc/self/task");
    }
    return n;
}

/* 1 if this process has a child (running or zombie), 0 if none. */
static int tc_has_children(void)
{
    int st;
    pid_t r = waitpid(-1, &st, WNOHANG);
    return !(r < 0 && errno == ECHILD);
}

/* Mappings may move a little under ASan's allocator; TSan maps its own
 * per-thread state as threads come and go, so under TSan mappings are not
 * compared (the plain, valgrind and ASan runs compare them). */
#if defined(__SANITIZE_THREAD__)
#define TC_MAPS_SLACK (1 << 28)
#elif defined(__SANITIZE_ADDRESS__)
#define TC_MAPS_SLACK 64
#else
#define TC_MAPS_SLACK 4
#endif

/* Threads, fds and children must be back after every call. Mappings only
 * after a warm-up call: glibc keeps per-thread malloc arenas (and, unless
 * run_sanitizers.sh turns its cache off, the stacks of joined threads) for
 * reuse, so the first calls legitimately leave mappings; the same call again
 * must not add more. */
#define CHECK_HELD(before, check_maps)                                        \
    do {                                                                      \
        tc_held after_ = tc_held_now();                                       \
        after_.threads = tc_threads_settled((before).threads);                \
        CHECK(after_.threads == (before).threads, "threads %d -> %d",         \
              (before).threads, after_.threads);                              \
        CHECK(after_.fds == (before).fds, "open fds %d -> %d", (before).fds,  \
              after_.fds);                                                    \
        if (check_maps)                                                       \
            CHECK(after_.maps <= (before).maps + TC_MAPS_SLACK,               \
                  "mappings %d -> %d", (before).maps, after_.maps);           \
        CHECK(!tc_has_children(), "a child process was left behind");        \
    } while (0)

#define CHECK_NOTHING_HELD(before) CHECK_HELD(before, 1)

/* Run `body` twice; the first time warms caches (see CHECK_HELD). */
#define TWICE(body)                                                           \
    for (int round_ = 0; round_ < 2; round_++) {                              \
        tc_held before_round_ = tc_held_now();                                \
        body;                                                                 \
        CHECK_HELD(before_round_, round_ == 1);                               \
    }

#define RUN(test)                                                             \
    do {                                                                      \
        int before_ = tc_failures;                                            \
        test();                                                               \
        printf("%s %s\n", tc_failures == before_ ? "ok  " : "FAIL", #test);   \
    } while (0)

/* A stop request from another thread `ms` milliseconds from now, as SIGINT arrives
 * while a kernel runs (0: now, before the call). tc_stop_done() joins that thread and
 * clears the flag; it returns the milliseconds from the request to the call's end. */
typedef struct {
    pthread_t thread;
    int ms;
    int started;
    int64_t asked_ns;
} tc_stopper;

static void *tc_stopper_main(void *arg)
{
    tc_stopper *s = arg;
    usleep((useconds_t)s->ms * 1000);
    __atomic_store_n(&s->asked_ns, tc_now_ns(), __ATOMIC_SEQ_CST);
    tc_request_stop();
    return NULL;
}

__attribute__((unused)) static void tc_stop_later(tc_stopper *s, int ms)
{
    s->ms = ms;
    s->started = 0;
    s->asked_ns = 0;
    if (ms <= 0) {
        s->asked_ns = tc_now_ns();
        tc_request_stop();
    } else {
        s->started = pthread_create(&s->thread, NULL, tc_stopper_main, s) == 0;
    }
}

__attribute__((unused)) static int64_t tc_stop_done(tc_stopper *s)
{
    int64_t end = tc_now_ns();
    if (s->started)
        pthread_join(s->thread, NULL);
    tc_clear_stop();
    int64_t asked = __atomic_load_n(&s->asked_ns, __ATOMIC_SEQ_CST);
    return asked ? (end - asked) / 1000000 : -1;
}

static int tc_summary(const char *name)
{
    printf("%s: %d checks, %d failed\n", name, tc_checks, tc_failures);
    return tc_failures ? 1 : 0;
}

#endif
