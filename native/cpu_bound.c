/*
 * cpu_bound.c - claims C13/C14 as S3 ran them: a few CPU-bound tasks sharing
 * one CPU, as threads of one process or as separate processes, each without a
 * working set or writing its own array on every outer iteration. What changes
 * between the two is only whether a switch from one task to the next also
 * changes the address space.
 *
 * Every task (thread or child) runs the same function, task_body(), on a
 * MAP_SHARED slot: it pins itself, maps and writes its working set, opens its
 * perf counters, reports ready, and waits at a futex gate. The caller opens the
 * gate (t0), waits on a futex counter until every task is done or the deadline
 * passes (then raises a stop flag the loops check), and reaps them.
 */
#define _GNU_SOURCE
#include "tc_cpu_bound.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef struct {
    int gate;       /* 0 until the caller releases the tasks */
    int stop;       /* 1: stop at the next outer iteration */
    int ready;      /* tasks waiting at the gate */
    int done;       /* tasks finished (completed or stopped) */
    int cpu;
    int64_t limit;
    int64_t ws_ints;
    tc_cpu_task slots[TC_CPU_BOUND_MAX_TASKS];
} shared_state;

typedef struct {
    shared_state *sh;
    int index;
} thread_arg;

static long futex(int *addr, int op, int val, const struct timespec *ts)
{
    /* not FUTEX_PRIVATE: the word may be shared with child processes */
    return syscall(SYS_futex, addr, op, val, ts, NULL, 0);
}

static void bump(int *word)
{
    __atomic_add_fetch(word, 1, __ATOMIC_ACQ_REL);
    futex(word, FUTEX_WAKE, INT_MAX, NULL);
}

static int64_t tv_us(struct timeval tv)
{
    return (int64_t)tv.tv_sec * 1000000 + tv.tv_usec;
}

static int64_t thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Count user and kernel mode; where perf_event_paranoid forbids counting the
 * kernel (EACCES/EPERM), count user mode only and say so in *user_only. */
static int perf_open(uint32_t type, uint64_t config, int *err, int *user_only)
{
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = type;
    a.config = config;
    a.disabled = 1;
    a.exclude_hv = 1;
    int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0 && (errno == EACCES || errno == EPERM)) {
        a.exclude_kernel = 1;
        fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
        if (fd >= 0 && user_only)
            *user_only = 1;
    }
    *err = fd < 0 ? errno : 0;
    return fd;
}

static int64_t perf_read(int fd)
{
    uint64_t v = 0;
    if (fd < 0)
        return -1;
    ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
    if (read(fd, &v, sizeof v) != (ssize_t)sizeof v)
        return -1;
    return (int64_t)v;
}

#define STOP_CHUNK ((int64_t)1 << 20) /* ~1 M divisions or writes: a few ms */

/* S3's prime count, with the working set written at every outer iteration. */
static int64_t count_primes(shared_state *sh, int64_t *ws, int *completed)
{
    int64_t limit = sh->limit, n = sh->ws_ints, primes = 1;
    *completed = 0;
    for (int64_t i = 3; i <= limit; i++) {
        if (__atomic_load_n(&sh->stop, __ATOMIC_RELAXED))
            return primes;
        /* The loops run in chunks of STOP_CHUNK, the stop flag read between chunks, so a
         * stop is seen within milliseconds at any limit; the work is the same. */
        for (int64_t k0 = 0; k0 < n; k0 += STOP_CHUNK) {
            int64_t k1 = n - k0 < STOP_CHUNK ? n : k0 + STOP_CHUNK;
            for (int64_t k = k0; k < k1; k++)
                ws[k] = i;
            if (k1 < n && __atomic_load_n(&sh->stop, __ATOMIC_RELAXED))
                return primes;
        }
        __asm__ volatile("" : : "r"(ws) : "memory"); /* the writes must happen */
        int64_t divisible = 1;
        for (int64_t j0 = 2; j0 <= limit; j0 += STOP_CHUNK) {
            int64_t j1 = limit - j0 < STOP_CHUNK ? limit : j0 + STOP_CHUNK - 1;
            for (int64_t j = j0; j <= j1; j++)
                if (i % j == 0)
                    divisible++;
            if (j1 < limit && __atomic_load_n(&sh->stop, __ATOMIC_RELAXED))
                return primes;
        }
        if (divisible == 2)
            primes++;
    }
    *completed = 1;
    return primes;
}

static void task_body(shared_state *sh, int index, int is_thread)
{
    tc_cpu_task *t = &sh->slots[index];
    int64_t *ws = NULL;
    size_t ws_bytes = (size_t)sh->ws_ints * sizeof(int64_t);
    int fd_tlb = -1, fd_cs = -1;

    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(sh->cpu, &one);
    if (sched_setaffinity(0, sizeof one, &one) != 0)
        t->err = errno;
    if (!t->err && ws_bytes) {
        void *m = mmap(NULL, ws_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                       -1, 0);
        if (m == MAP_FAILED) {
            t->err = errno;
        } else {
            ws = m;
            memset(ws, 1, ws_bytes); /* fault it in before the gate */
        }
    }
    fd_tlb = perf_open(PERF_TYPE_HW_CACHE,
                       PERF_COUNT_HW_CACHE_DTLB | (PERF_COUNT_HW_CACHE_OP_READ << 8) |
                           (PERF_COUNT_HW_CACHE_RESULT_MISS << 16),
                       &t->dtlb_errno, &t->dtlb_user_only);
    fd_cs = perf_open(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, &t->switches_errno,
                      NULL);

    bump(&sh->ready);
    while (!__atomic_load_n(&sh->gate, __ATOMIC_ACQUIRE))
        futex(&sh->gate, FUTEX_WAIT, 0, NULL);

    struct rusage r0, r1;
    if (fd_tlb >= 0)
        ioctl(fd_tlb, PERF_EVENT_IOC_ENABLE, 0);
    if (fd_cs >= 0)
        ioctl(fd_cs, PERF_EVENT_IOC_ENABLE, 0);
    getrusage(RUSAGE_THREAD, &r0);
    int64_t c0 = thread_cpu_ns();
    if (!t->err)
        t->primes = count_primes(sh, ws, &t->completed);
    int64_t c1 = thread_cpu_ns();
    getrusage(RUSAGE_THREAD, &r1);
    t->dtlb_misses = perf_read(fd_tlb);
    t->perf_switches = perf_read(fd_cs);
    t->end_ns = tc_now_ns();
    t->cpu = sched_getcpu();
    t->cpu_ns = c1 - c0;
    t->user_us = tv_us(r1.ru_utime) - tv_us(r0.ru_utime);
    t->sys_us = tv_us(r1.ru_stime) - tv_us(r0.ru_stime);
    t->vcsw = r1.ru_nvcsw - r0.ru_nvcsw;
    t->ivcsw = r1.ru_nivcsw - r0.ru_nivcsw;
    if (fd_tlb >= 0)
        close(fd_tlb);
    if (fd_cs >= 0)
        close(fd_cs);
    if (ws)
        munmap(ws, ws_bytes);
    if (is_thread) {
        struct rusage life;
        getrusage(RUSAGE_THREAD, &life);
        t->life_user_us = tv_us(life.ru_utime);
        t->life_sys_us = tv_us(life.ru_stime);
    }
    bump(&sh->done);
}

static void *thread_main(void *p)
{
    thread_arg *a = p;
    task_body(a->sh, a->index, 1);
    return NULL;
}

/* Wait until *word >= want (1), the absolute CLOCK_MONOTONIC deadline passes (0) or a
 * stop is requested (-1; polled every TC_STOP_POLL_NS). */
static int wait_count(int *word, int want, int64_t deadline)
{
    int64_t next_poll = 0;
    for (;;) {
        int seen = __atomic_load_n(word, __ATOMIC_ACQUIRE);
        if (seen >= want)
            return 1;
        if (tc_stop_due(&next_poll))
            return -1;
        int64_t left = deadline - tc_now_ns();
        if (left <= 0)
            return 0;
        if (left > TC_STOP_POLL_NS)
            left = TC_STOP_POLL_NS;
        struct timespec ts = {(time_t)(left / 1000000000), (long)(left % 1000000000)};
        futex(word, FUTEX_WAIT, seen, &ts);
    }
}

int tc_cpu_bound_run(int mode, int tasks, int cpu, int64_t limit, int64_t ws_ints,
                     int64_t deadline_ns, tc_cpu_task *task_out, tc_cpu_bound_result *out)
{
    if (!task_out || !out || (mode != TC_CPU_BOUND_THREADS && mode != TC_CPU_BOUND_PROCESSES) ||
        tasks < 1 || tasks > TC_CPU_BOUND_MAX_TASKS || cpu < 0 || cpu >= CPU_SETSIZE ||
        limit < 3 || limit > 100000000 || ws_ints < 0 || ws_ints > ((int64_t)1 << 30) ||
        deadline_ns < 1)
        return TC_EINVAL;
    memset(out, 0, sizeof *out);
    memset(task_out, 0, sizeof *task_out * (size_t)tasks);

    shared_state *sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE,
                            MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED) {
        out->err = errno;
        return TC_ENOMEM;
    }
    memset(sh, 0, sizeof *sh);
    sh->cpu = cpu;
    sh->limit = limit;
    sh->ws_ints = ws_ints;
    pthread_t tids[TC_CPU_BOUND_MAX_TASKS];
    pid_t pids[TC_CPU_BOUND_MAX_TASKS];
    thread_arg args[TC_CPU_BOUND_MAX_TASKS];
    struct rusage self0, self1, kids0, kids1;
    int status = TC_OK;
    int started = 0;
    pid_t parent = getpid();

    getrusage(RUSAGE_SELF, &self0);
    getrusage(RUSAGE_CHILDREN, &kids0);
    for (; started < tasks; started++) {
        if (mode == TC_CPU_BOUND_THREADS) {
            args[started].sh = sh;
            args[started].index = started;
            int e = pthread_create(&tids[started], NULL, thread_main, &args[started]);
            if (e != 0) {
                out->err = e;
                status = TC_ELIMIT;
                break;
            }
        } else {
            pid_t pid = fork();
            if (pid < 0) {
                out->err = errno;
                status = TC_ELIMIT;
                break;
            }
            if (pid == 0) {
                /* a child never outlives its parent, whatever happens to it */
                prctl(PR_SET_PDEATHSIG, SIGKILL);
                if (getppid() != parent)
                    _exit(1);
                task_body(sh, started, 0);
                _exit(0);
            }
            pids[started] = pid;
        }
    }
    out->started = started;
    int64_t deadline = tc_now_ns() + deadline_ns;
    if (status != TC_OK)
        __atomic_store_n(&sh->stop, 1, __ATOMIC_RELEASE);
    int waited = wait_count(&sh->ready, started, deadline);
    if (waited != 1) {
        __atomic_store_n(&sh->stop, 1, __ATOMIC_RELEASE);
        status = waited < 0 ? TC_ESTOPPED : TC_ETIMEOUT;
    }
    int64_t t0 = tc_now_ns();
    __atomic_store_n(&sh->gate, 1, __ATOMIC_RELEASE);
    futex(&sh->gate, FUTEX_WAKE, INT_MAX, NULL);
    waited = wait_count(&sh->done, started, deadline);
    if (waited != 1) {  /* the tasks see `stop` within a chunk, then are joined or reaped */
        __atomic_store_n(&sh->stop, 1, __ATOMIC_RELEASE);
        if (status == TC_OK)
            status = waited < 0 ? TC_ESTOPPED : TC_ETIMEOUT;
    }
    for (int i = 0; i < started; i++) {
        if (mode == TC_CPU_BOUND_THREADS) {
            pthread_join(tids[i], NULL);
            out->stopped++;
        } else {
            struct rusage ru;
            int st;
            pid_t r;
            while ((r = wait4(pids[i], &st, 0, &ru)) < 0 && errno == EINTR)
                ;
            if (r == pids[i]) {
                out->stopped++;
                sh->slots[i].life_user_us = tv_us(ru.ru_utime);
                sh->slots[i].life_sys_us = tv_us(ru.ru_stime);
            }
        }
    }
    getrusage(RUSAGE_SELF, &self1);
    getrusage(RUSAGE_CHILDREN, &kids1);
    int64_t last = t0;
    for (int i = 0; i < started; i++) {
        task_out[i] = sh->slots[i];
        if (sh->slots[i].end_ns > last)
            last = sh->slots[i].end_ns;
        if (sh->slots[i].err && status == TC_OK) {
            out->err = sh->slots[i].err;
            status = sh->slots[i].err == ENOMEM ? TC_ELIMIT : TC_ESYS;
        }
    }
    out->wall_ns = last - t0;
    out->self_user_us = tv_us(self1.ru_utime) - tv_us(self0.ru_utime);
    out->self_sys_us = tv_us(self1.ru_stime) - tv_us(self0.ru_stime);
    out->children_user_us = tv_us(kids1.ru_utime) - tv_us(kids0.ru_utime);
    out->children_sys_us = tv_us(kids1.ru_stime) - tv_us(kids0.ru_stime);
    munmap(sh, sizeof *sh);
    return status;
}
