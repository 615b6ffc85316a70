/*
 * sleepers.c - claims C15/C17 (and the thread side of C10): many OS threads
 * that do nothing but sleep and wake up. What do they cost in resident memory
 * and in CPU time, unpinned and pinned round-robin to the CPUs?
 */
#define _GNU_SOURCE
#include "tc_sleepers.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <limits.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

typedef struct {
    int64_t period_ns;
    int64_t wakeups_each;
    int64_t stagger_ns;
    int64_t wakeups;    /* atomically added by each thread at its end */
    int64_t finished;
    int gate;           /* 0 until every thread is created: timing starts there */
    int stop;           /* 1: asked to stop (tc_stop_requested): sleep no more */
} sleep_plan;

typedef struct {
    sleep_plan *plan;
    uint32_t index;
} sleeper_arg;

static void sleep_ns(int64_t ns)
{
    struct timespec ts = {(time_t)(ns / 1000000000), (long)(ns % 1000000000)};
    while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR)
        ;
}

static void *sleeper(void *p)
{
    sleeper_arg *a = p;
    sleep_plan *plan = a->plan;
    while (!__atomic_load_n(&plan->gate, __ATOMIC_ACQUIRE))
        syscall(SYS_futex, &plan->gate, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
    if (plan->stagger_ns > 0) {
        /* a multiplicative hash of the index: a fixed, spread-out delay */
        uint64_t h = (uint64_t)(a->index * 2654435761u) % (uint64_t)plan->stagger_ns;
        sleep_ns((int64_t)h);
    }
    /* asked to stop during the stagger: sleep no more */
    int64_t each = __atomic_load_n(&plan->stop, __ATOMIC_RELAXED) ? 0 : plan->wakeups_each;
    int64_t done = 0;
    for (int64_t i = 0; i < each; i++) {
        sleep_ns(plan->period_ns);
        done++;
        if (__atomic_load_n(&plan->stop, __ATOMIC_RELAXED))
            break;
    }
    __atomic_add_fetch(&plan->wakeups, done, __ATOMIC_RELAXED);
    __atomic_add_fetch(&plan->finished, 1, __ATOMIC_RELEASE);
    return NULL;
}

static int64_t tv_us(struct timeval tv)
{
    return (int64_t)tv.tv_sec * 1000000 + tv.tv_usec;
}

/* Reset VmHWM to the current RSS (Linux >= 4.0); 1 on success. */
static int reset_hwm(void)
{
    int fd = open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    int ok = write(fd, "5", 1) == 1;
    close(fd);
    return ok;
}

static int64_t read_hwm_kib(void)
{
    char buf[8192];
    int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    char *p = strstr(buf, "VmHWM:");
    return p ? strtoll(p + 6, NULL, 10) : -1;
}

static void sample(tc_sleepers_result *out)
{
    tc_proc_status s;
    if (tc_read_proc_status(&s) != TC_OK)
        return;
    if (s.rss_kib > out->peak_rss_kib)
        out->peak_rss_kib = s.rss_kib;
    if (s.vsz_kib > out->peak_vsz_kib)
        out->peak_vsz_kib = s.vsz_kib;
    if (s.threads > out->peak_threads)
        out->peak_threads = s.threads;
}

int tc_sleepers_run(int64_t count, int64_t period_ns, int64_t duration_ns,
                    int64_t stagger_ns, int pin, int64_t stack_kib,
                    tc_sleepers_result *out)
{
    if (!out || count < 1 || count > 1000000 || period_ns < 1000 ||
        duration_ns < period_ns || stagger_ns < 0 || stack_kib < 0 ||
        (pin != TC_SLEEPERS_UNPINNED && pin != TC_SLEEPERS_PINNED))
        return TC_EINVAL;
    memset(out, 0, sizeof *out);

    cpu_set_t mask;
    int cpu_list[CPU_SETSIZE];
    int ncpu = 0;
    if (sched_getaffinity(0, sizeof mask, &mask) != 0) {
        out->err = errno;
        return TC_ESYS;
    }
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &mask))
            cpu_list[ncpu++] = c;
    out->cpus = ncpu;
    if (ncpu == 0)
        return TC_ESYS;

    pthread_t *tids = calloc((size_t)count, sizeof *tids);
    sleeper_arg *args = calloc((size_t)count, sizeof *args);
    sleep_plan *plan = calloc(1, sizeof *plan);
    if (!tids || !args || !plan) {
        free(tids);
        free(args);
        free(plan);
        return TC_ENOMEM;
    }
    plan->period_ns = period_ns;
    plan->wakeups_each = duration_ns / period_ns;
    plan->stagger_ns = stagger_ns;

    pthread_attr_t attr;
    pthread_attr_init(&attr);
    if (stack_kib > 0 && pthread_attr_setstacksize(&attr, (size_t)stack_kib * 1024) != 0) {
        pthread_attr_destroy(&attr);
        free(tids);
        free(args);
        free(plan);
        return TC_EINVAL;
    }

    tc_read_proc_status(&out->before);
    out->hwm_reset = reset_hwm();
    out->peak_rss_kib = out->before.rss_kib;
    out->peak_vsz_kib = out->before.vsz_kib;
    struct rusage ru0, ru1;
    int64_t t_spawn = tc_now_ns();

    int status = TC_OK;
    int64_t started = 0;
    int64_t next_poll = 0;
    for (; started < count; started++) {
        if (tc_stop_due(&next_poll)) { /* the threads started so far are stopped below */
            status = TC_ESTOPPED;
            break;
        }
        args[started].plan = plan;
        args[started].index = (uint32_t)started;
        if (pin == TC_SLEEPERS_PINNED) {
            cpu_set_t one;
            CPU_ZERO(&one);
            CPU_SET(cpu_list[started % ncpu], &one);
            pthread_attr_setaffinity_np(&attr, sizeof one, &one);
        }
        int e = pthread_create(&tids[started], &attr, sleeper, &args[started]);
        if (e != 0) {
            out->err = e;
            status = TC_ELIMIT;
            break;
        }
    }
    pthread_attr_destroy(&attr);
    out->started = started;
    /* every thread exists (and waits at the gate): the timed run starts now */
    getrusage(RUSAGE_SELF, &ru0);
    int64_t t0 = tc_now_ns();
    out->spawn_ns = t0 - t_spawn;
    __atomic_store_n(&plan->gate, 1, __ATOMIC_RELEASE);
    syscall(SYS_futex, &plan->gate, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);

    /* sample memory while they run, every period (at most every 10 ms, so a
     * long period does not leave the caller asleep long after the last thread) */
    int64_t sample_ns = period_ns < 10000000 ? period_ns : 10000000;
    while (__atomic_load_n(&plan->finished, __ATOMIC_ACQUIRE) < started) {
        if (status == TC_ESTOPPED || tc_stop_due(&next_poll)) {
            /* each sleeper ends after the sleep it is in (one period: the measured
             * sleep itself is left as it is), then all are joined */
            status = TC_ESTOPPED;
            __atomic_store_n(&plan->stop, 1, __ATOMIC_RELEASE);
            break;
        }
        sample(out);
        sleep_ns(sample_ns);
    }
    for (int64_t i = 0; i < started; i++)
        pthread_join(tids[i], NULL);
    out->wall_ns = tc_now_ns() - t0;
    getrusage(RUSAGE_SELF, &ru1);
    out->user_us = tv_us(ru1.ru_utime) - tv_us(ru0.ru_utime);
    out->sys_us = tv_us(ru1.ru_stime) - tv_us(ru0.ru_stime);
    out->vcsw = ru1.ru_nvcsw - ru0.ru_nvcsw;
    out->ivcsw = ru1.ru_nivcsw - ru0.ru_nivcsw;
    out->hwm_kib = read_hwm_kib();
    if (out->hwm_reset && out->hwm_kib > out->peak_rss_kib)
        out->peak_rss_kib = out->hwm_kib;
    out->finished = plan->finished;
    out->wakeups = plan->wakeups;
    free(tids);
    free(args);
    free(plan);
    return status;
}
