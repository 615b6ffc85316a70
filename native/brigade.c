/*
 * brigade.c - a bucket brigade of N tasks joined by N+1 pipes or Unix socket
 * pairs (config.transport: S5 used socket pairs; a "pipe" below is either).
 *
 * A byte enters pipe 0; task i reads pipe i and writes pipe i+1; the driver
 * reads pipe N. Every hop is one read() and one write() on a pipe; what differs
 * between kinds is what happens between them:
 *   thread     - the reader blocks in read(): the kernel wakes it when the
 *                byte arrives and switches to it (one thread switch per hop);
 *   epoll      - one thread waits in epoll_wait() and runs the state machine
 *                of whichever task's pipe became readable (no thread switch);
 *   one-thread - one thread reads and writes every pipe in order: the pipe I/O
 *                alone, with neither a switch nor a readiness wait.
 *
 * Threads: the driver (a new thread, pinned when asked) times the trips; the
 * calling thread is the watchdog. Stopping: set `stop`, then write one wake
 * byte into every pipe, so each thread blocked in read() returns and sees the
 * flag. Nothing is printed; every thread is joined and every fd closed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "tc_brigade.h"

#define WAKE_BYTE 0xFF
#define EPOLL_BATCH 64
#define EPOLL_SLICE_MS 50

typedef struct brigade brigade;

typedef struct {
    brigade *b;
    int index;
} task_arg;

struct brigade {
    const tc_brigade_config *cfg;
    tc_brigade_result *out;
    int64_t *trip_ns;
    int n;
    int (*fds)[2];          /* n + 1 pipes: [i][0] read end, [i][1] write end */
    int pipes_open;
    int epfd;
    pthread_t *threads;     /* task threads (kind thread) */
    task_arg *args;
    int started;
    atomic_int stop;
    atomic_llong trips;     /* trips done, warm-up included */
    atomic_int task_err;    /* first errno a task thread met */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int driver_done;
    int driver_status;
    int driver_err;
};

static int64_t rusage_switches(int64_t *invol)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0) {
        *invol = 0;
        return 0;
    }
    *invol = ru.ru_nivcsw;
    return ru.ru_nvcsw;
}

/* Open fds of this process (entries of /proc/self/fd but the one reading it). */
static int64_t count_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return -1;
    int64_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        n += e->d_name[0] != '.';
    closedir(d);
    return n - 1;
}

static int limit_of(int err, int fds_step)
{
    if (err == EMFILE || err == ENFILE)
        return TC_BR_LIMIT_FDS;
    if (err == ENOMEM || err == ENOBUFS)
        return TC_BR_LIMIT_MEMORY;
    if (err == EAGAIN)
        return fds_step ? TC_BR_LIMIT_MEMORY : TC_BR_LIMIT_THREADS;
    return TC_BR_LIMIT_NONE;
}

static int read_one(int fd, unsigned char *c)
{
    for (;;) {
        ssize_t r = read(fd, c, 1);
        if (r == 1)
            return 0;
        if (r == 0)
            return EPIPE;
        if (errno != EINTR)
            return errno;
    }
}

static int write_one(int fd, unsigned char c)
{
    for (;;) {
        ssize_t r = write(fd, &c, 1);
        if (r == 1)
            return 0;
        if (r < 0 && errno != EINTR)
            return errno;
    }
}

static int stopped(brigade *b)
{
    return atomic_load_explicit(&b->stop, memory_order_acquire);
}

static int stalls_here(brigade *b, int index)
{
    return b->cfg->test_stall_after >= 0 && index == b->n / 2 &&
           atomic_load_explicit(&b->trips, memory_order_relaxed) >= b->cfg->test_stall_after;
}

/* The test hook's stalled task: hold the byte until told to stop. */
static void hold_until_stopped(brigade *b)
{
    struct timespec ms = {0, 1000000};
    while (!stopped(b))
        nanosleep(&ms, NULL);
}

/* ------------------------------------------------------------ thread tasks */

static void *task_thread(void *p)
{
    task_arg *a = p;
    brigade *b = a->b;
    int in = b->fds[a->index][0], next = b->fds[a->index + 1][1];
    for (;;) {
        unsigned char c;
        int e = read_one(in, &c);
        if (stopped(b))
            break;
        if (e == 0 && stalls_here(b, a->index)) {
            hold_until_stopped(b);
            break;
        }
        if (e == 0)
            e = write_one(next, c);
        if (e != 0) {
            int zero = 0;
            atomic_compare_exchange_strong(&b->task_err, &zero, e);
            break;
        }
    }
    return NULL;
}

/* ------------------------------------------------------------ one trip per kind */

/* kind thread: the byte goes in, the threads pass it on, it comes out. */
static int trip_threads(brigade *b, unsigned char v, unsigned char *got)
{
    int e = write_one(b->fds[0][1], v);
    if (e == 0)
        e = read_one(b->fds[b->n][0], got);
    return e;
}

/* kind one-thread: this thread does every hop itself. */
static int trip_one_thread(brigade *b, unsigned char v, unsigned char *got)
{
    int e = write_one(b->fds[0][1], v);
    unsigned char c = v;
    for (int i = 0; i < b->n && e == 0; i++) {
        if (stalls_here(b, i)) {
            hold_until_stopped(b);
            return 0;
        }
        e = read_one(b->fds[i][0], &c);
        if (e == 0)
            e = write_one(b->fds[i + 1][1], c);
    }
    if (e == 0)
        e = read_one(b->fds[b->n][0], got);
    return e;
}

/* kind epoll: wait for readiness, run the ready task's step, until the byte
 * is readable at the end of the brigade. A task's step: read the byte its pipe
 * holds (non-blocking), write it downstream, wait again. */
static int trip_epoll(brigade *b, unsigned char v, unsigned char *got)
{
    struct epoll_event ev[EPOLL_BATCH];
    int e = write_one(b->fds[0][1], v);
    while (e == 0) {
        int k = epoll_wait(b->epfd, ev, EPOLL_BATCH, EPOLL_SLICE_MS);
        if (k < 0) {
            if (errno == EINTR)
                continue;
            return errno;
        }
        if (k == 0 && stopped(b))
            return 0;
        for (int j = 0; j < k; j++) {
            int i = (int)ev[j].data.u32;
            unsigned char c;
            if (i == b->n)
                return read_one(b->fds[b->n][0], got);
            if (stalls_here(b, i)) { /* stop watching it: the byte stays put */
                epoll_ctl(b->epfd, EPOLL_CTL_DEL, b->fds[i][0], NULL);
                continue;
            }
            ssize_t r = read(b->fds[i][0], &c, 1);
            if (r == 1)
                e = write_one(b->fds[i + 1][1], c);
            else if (r == 0)
                e = EPIPE;
            else if (errno != EAGAIN && errno != EINTR)
                e = errno;
            if (e)
                break;
        }
    }
    return e;
}

/* ------------------------------------------------------------ the driver */

static void *driver_thread(void *p)
{
    brigade *b = p;
    const tc_brigade_config *cfg = b->cfg;
    tc_brigade_result *out = b->out;
    int status = TC_OK, err = 0;
    if (cfg->cpu >= 0) {
        err = tc_pin_self(cfg->cpu);
        if (err) {
            status = TC_ESYS;
            out->where = TC_BR_STEP_PIN;
        }
    }
    out->cpu_after_pin = tc_current_cpu();
    out->timer_overhead_ns = tc_timer_overhead_ns(1001);
    int64_t total = cfg->warmup + cfg->iterations;
    int64_t vol0 = 0, invol0 = 0, t_start = 0;
    for (int64_t t = 0; t < total && status == TC_OK; t++) {
        if (t == cfg->warmup) {
            tc_read_proc_status(&out->ready);
            tc_read_meminfo(&out->mem_ready);
            out->fds_ready = count_fds();
            vol0 = rusage_switches(&invol0);
            t_start = tc_now_ns();
        }
        unsigned char v = (unsigned char)(1 + t % 200), got = 0;
        int64_t t0 = tc_now_ns();
        int e;
        switch (cfg->kind) {
        case TC_BR_THREAD:
            e = trip_threads(b, v, &got);
            break;
        case TC_BR_EPOLL:
            e = trip_epoll(b, v, &got);
            break;
        default:
            e = trip_one_thread(b, v, &got);
            break;
        }
        int64_t t1 = tc_now_ns();
        if (stopped(b))
            break;
        if (e) {
            status = TC_ESYS;
            err = e;
            out->where = TC_BR_STEP_TRIP;
            break;
        }
        out->bytes_sent++;
        if (got == v)
            out->bytes_arrived++;
        else
            out->bytes_wrong++;
        if (t >= cfg->warmup) {
            b->trip_ns[t - cfg->warmup] = t1 - t0;
            out->completed++;
        }
        atomic_store_explicit(&b->trips, t + 1, memory_order_relaxed);
    }
    if (out->completed > 0) {
        out->total_ns = tc_now_ns() - t_start;
        int64_t invol1;
        int64_t vol1 = rusage_switches(&invol1);
        out->voluntary = vol1 - vol0;
        out->involuntary = invol1 - invol0;
    }
    pthread_mutex_lock(&b->mu);
    b->driver_done = 1;
    b->driver_status = status;
    b->driver_err = err;
    pthread_cond_signal(&b->cv);
    pthread_mutex_unlock(&b->mu);
    return NULL;
}

/* ------------------------------------------------------------ set-up, tear-down */

/* Stop every thread of the brigade and wait for it. */
static void stop_all(brigade *b)
{
    atomic_store_explicit(&b->stop, 1, memory_order_seq_cst);
    for (int i = 0; i < b->pipes_open; i++) {
        unsigned char c = WAKE_BYTE;
        ssize_t r;
        do
            r = write(b->fds[i][1], &c, 1);
        while (r < 0 && errno == EINTR);
    }
    for (int i = 0; i < b->started; i++)
        pthread_join(b->threads[i], NULL);
    b->started = 0;
}

static void release(brigade *b)
{
    if (b->epfd >= 0)
        close(b->epfd);
    for (int i = 0; i < b->pipes_open; i++) {
        close(b->fds[i][0]);
        close(b->fds[i][1]);
    }
    free(b->fds);
    free(b->threads);
    free(b->args);
}

static int setup_epoll(brigade *b)
{
    b->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (b->epfd < 0)
        return errno;
    for (int i = 0; i <= b->n; i++) {
        int fl = fcntl(b->fds[i][0], F_GETFL);
        if (fl < 0 || fcntl(b->fds[i][0], F_SETFL, fl | O_NONBLOCK) < 0)
            return errno;
        struct epoll_event ev;
        memset(&ev, 0, sizeof ev);
        ev.events = EPOLLIN;
        ev.data.u32 = (uint32_t)i;
        if (epoll_ctl(b->epfd, EPOLL_CTL_ADD, b->fds[i][0], &ev) != 0)
            return errno;
    }
    return 0;
}

static int start_tasks(brigade *b)
{
    pthread_attr_t attr;
    int e = pthread_attr_init(&attr);
    if (e)
        return e;
    if (b->cfg->stack_kib > 0)
        e = pthread_attr_setstacksize(&attr, (size_t)b->cfg->stack_kib * 1024);
    if (!e && b->cfg->cpu >= 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(b->cfg->cpu, &set);
        e = pthread_attr_setaffinity_np(&attr, sizeof set, &set);
    }
    for (int i = 0; i < b->n && !e; i++) {
        b->args[i].b = b;
        b->args[i].index = i;
        e = pthread_create(&b->threads[i], &attr, task_thread, &b->args[i]);
        if (!e) {
            b->started++;
            b->out->tasks_ready = b->started;
        }
    }
    pthread_attr_destroy(&attr);
    return e;
}

static int64_t mono_ms(void)
{
    return tc_now_ns() / 1000000;
}

/* The calling thread: wait for the driver; end the run when no trip has
 * completed for timeout_ms, or when asked to stop (tc_request_stop: polled every
 * <= 100 ms). Returns 1 when asked to stop. */
static int watch(brigade *b)
{
    int asked = 0;
    int slice = b->cfg->timeout_ms < 100 ? b->cfg->timeout_ms : 100;
    long long seen = -1;
    int64_t last_progress = mono_ms();
    pthread_mutex_lock(&b->mu);
    while (!b->driver_done) {
        struct timespec dl;
        clock_gettime(CLOCK_REALTIME, &dl);
        dl.tv_nsec += (long)slice * 1000000L;
        dl.tv_sec += dl.tv_nsec / 1000000000L;
        dl.tv_nsec %= 1000000000L;
        pthread_cond_timedwait(&b->cv, &b->mu, &dl);
        if (b->driver_done)
            break;
        if (tc_stop_requested()) {
            asked = 1;
            break;
        }
        long long now_trips = atomic_load_explicit(&b->trips, memory_order_relaxed);
        int64_t now = mono_ms();
        if (now_trips != seen) {
            seen = now_trips;
            last_progress = now;
        } else if (now - last_progress >= b->cfg->timeout_ms) {
            b->out->timed_out = 1;
            break;
        }
    }
    pthread_mutex_unlock(&b->mu);
    return asked;
}

int tc_brigade_run(const tc_brigade_config *cfg, int64_t *trip_ns, tc_brigade_result *out)
{
    if (!cfg || !out)
        return TC_EINVAL;
    memset(out, 0, sizeof *out);
    if (cfg->kind < TC_BR_THREAD || cfg->kind > TC_BR_ONE_THREAD || cfg->tasks < 1 ||
        cfg->tasks > TC_BR_MAX_TASKS || cfg->iterations < 1 || cfg->warmup < 0 ||
        cfg->timeout_ms < 1 || cfg->stack_kib < 0 || cfg->cpu < -1 ||
        cfg->cpu >= CPU_SETSIZE || !trip_ns ||
        (cfg->transport != TC_BR_PIPE && cfg->transport != TC_BR_SOCKETPAIR))
        return TC_EINVAL;

    int64_t need = cfg->raise_hard_nofile ? 2 * (int64_t)cfg->tasks + 64 : 0;
    tc_raise_nofile(need, &out->nofile_soft, &out->nofile_hard);
    tc_read_proc_status(&out->before);
    tc_read_meminfo(&out->mem_before);
    out->fds_before = count_fds();

    brigade b;
    memset(&b, 0, sizeof b);
    b.cfg = cfg;
    b.out = out;
    b.trip_ns = trip_ns;
    b.n = cfg->tasks;
    b.epfd = -1;
    atomic_init(&b.stop, 0);
    atomic_init(&b.trips, 0);
    atomic_init(&b.task_err, 0);
    b.fds = calloc((size_t)b.n + 1, sizeof *b.fds);
    if (cfg->kind == TC_BR_THREAD) {
        b.threads = calloc((size_t)b.n, sizeof *b.threads);
        b.args = calloc((size_t)b.n, sizeof *b.args);
    }
    if (!b.fds || (cfg->kind == TC_BR_THREAD && (!b.threads || !b.args))) {
        release(&b);
        return TC_ENOMEM;
    }

    int status = TC_OK, e = 0;
    for (int i = 0; i <= b.n; i++) {
        int made = cfg->transport == TC_BR_SOCKETPAIR
                       ? socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, b.fds[i])
                       : pipe2(b.fds[i], O_CLOEXEC);
        if (made != 0) {
            e = errno;
            out->where = TC_BR_STEP_PIPES;
            out->limit = limit_of(e, 1);
            break;
        }
        b.pipes_open++;
    }
    if (!e && cfg->kind == TC_BR_EPOLL) {
        e = setup_epoll(&b);
        if (e) {
            out->where = TC_BR_STEP_EPOLL;
            out->limit = limit_of(e, 1);
        }
    }
    if (!e && cfg->kind == TC_BR_THREAD) {
        e = start_tasks(&b);
        if (e) {
            out->where = TC_BR_STEP_SPAWN;
            out->limit = limit_of(e, 0);
        }
    } else if (!e) {
        out->tasks_ready = b.n;
    }
    if (e) {
        out->err = e;
        if (out->where == TC_BR_STEP_PIPES)
            out->tasks_ready = b.pipes_open > 0 ? b.pipes_open - 1 : 0;
        status = out->limit != TC_BR_LIMIT_NONE ? TC_ELIMIT : TC_ESYS;
        stop_all(&b);
        release(&b);
        return status;
    }

    pthread_mutex_init(&b.mu, NULL);
    pthread_cond_init(&b.cv, NULL);
    pthread_t driver;
    pthread_attr_t dattr;
    pthread_attr_init(&dattr);
    pthread_attr_setstacksize(&dattr, 256 * 1024);
    e = pthread_create(&driver, &dattr, driver_thread, &b);
    pthread_attr_destroy(&dattr);
    if (e) {
        out->err = e;
        out->where = TC_BR_STEP_SPAWN;
        out->limit = limit_of(e, 0);
        status = out->limit != TC_BR_LIMIT_NONE ? TC_ELIMIT : TC_ESYS;
    } else {
        int asked = watch(&b);
        stop_all(&b); /* task threads: woken by a byte each, then joined */
        pthread_join(driver, NULL);
        if (asked) {
            status = TC_ESTOPPED;
        } else if (out->timed_out) {
            status = TC_ETIMEOUT;
        } else if (b.driver_status != TC_OK) {
            status = b.driver_status;
            out->err = b.driver_err;
        } else if (atomic_load(&b.task_err)) {
            status = TC_ESYS;
            out->err = atomic_load(&b.task_err);
            out->where = TC_BR_STEP_TRIP;
        }
    }
    if (!stopped(&b))
        stop_all(&b);
    pthread_cond_destroy(&b.cv);
    pthread_mutex_destroy(&b.mu);
    release(&b);
    return status;
}
