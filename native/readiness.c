/*
 * readiness.c - tokens in flight: K tokens circulating among N tasks in a ring of
 * N channels, waited for by N blocking threads, one epoll loop (level- or
 * edge-triggered) or one io_uring loop (raw system calls: no liburing).
 *
 * Threads: the driver (a new thread, pinned when asked) runs the sweep; the
 * calling thread is the watchdog. Stopping: set `stop`, then write one stop token
 * into every channel (the write ends made non-blocking first), so every thread
 * blocked in read() and every loop waiting returns and sees the flag. Nothing is
 * printed; every thread is joined, every fd closed, every mapping unmapped.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/io_uring.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "tc_readiness.h"

#define EPOLL_BATCH 1024
#define SLICE_MS 50
#define STOP_HOPS 0xFFFFFFFFu
#define HEADROOM_FDS 16 /* fds given back when the channels ran out of them */
/* The stall hook's tokens at most: all of them fit in one channel's buffer, so no
 * writer blocks behind the stalled task. */
#define TC_RD_STALL_TOKENS 64

typedef struct {
    uint32_t left; /* hops still to make */
    int32_t cpu;   /* CPU that wrote it */
} token;

/* One task's counters (written by its own thread only; cache-line apart). */
typedef struct {
    atomic_llong events, retired, reads, empty_reads, writes, cross_cpu;
    char pad[16];
} counters;

typedef struct run run;

typedef struct {
    run *r;
    int index;
} task_arg;

struct run {
    const tc_readiness_config *cfg;
    tc_readiness_result *out;
    int n;                    /* tasks (narrowed by a limit) */
    int (*ch)[2];             /* [i][0] read end, [i][1] write end of channel i */
    int open;                 /* channels made */
    int epfd;
    pthread_t *threads;
    task_arg *args;
    int started;
    counters *c;              /* n entries (threads), or 1 (the loops) */
    atomic_int stop;
    atomic_llong retired;     /* threads: tokens retired in the current entry */
    atomic_llong target;      /* ... the entry is done at this many */
    int done_pipe[2];         /* threads: the last retirement writes a byte here */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int driver_done, driver_status, driver_err;
};

static int limit_of(int err)
{
    if (err == EMFILE || err == ENFILE)
        return TC_RD_LIMIT_FDS;
    if (err == ENOMEM || err == ENOBUFS)
        return TC_RD_LIMIT_MEMORY;
    return TC_RD_LIMIT_NONE;
}

static int stopped(run *r)
{
    return atomic_load_explicit(&r->stop, memory_order_acquire);
}

static int next_of(run *r, int i)
{
    return i + 1 == r->n ? 0 : i + 1;
}

static void add(atomic_llong *a, int64_t v)
{
    atomic_store_explicit(a, atomic_load_explicit(a, memory_order_relaxed) + v,
                          memory_order_relaxed);
}

static int write_all(int fd, const void *buf, size_t len)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t w = write(fd, p, len);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return errno;
        }
        p += w;
        len -= (size_t)w;
    }
    return 0;
}

/* The tokens of one read: count the events, keep those that go on in `fwd`.
 * Returns the tokens forwarded, or -1 for a stop token or a torn read. */
static int take(counters *c, const token *in, ssize_t bytes, token *fwd,
                int64_t *retired)
{
    if (bytes % (ssize_t)sizeof(token) != 0)
        return -1;
    int k = (int)(bytes / (ssize_t)sizeof(token)), m = 0, cpu = sched_getcpu();
    int64_t cross = 0;
    for (int j = 0; j < k; j++) {
        if (in[j].left == STOP_HOPS || in[j].left == 0)
            return -1;
        cross += in[j].cpu != cpu;
        if (in[j].left == 1) {
            (*retired)++;
        } else {
            fwd[m].left = in[j].left - 1;
            fwd[m].cpu = cpu;
            m++;
        }
    }
    add(&c->events, k);
    add(&c->cross_cpu, cross);
    add(&c->retired, *retired);
    return m;
}

/* ------------------------------------------------------------ threads */

static void hold_until_stopped(run *r)
{
    struct timespec ms = {0, 1000000};
    while (!stopped(r))
        nanosleep(&ms, NULL);
}

static void *task_thread(void *p)
{
    task_arg *a = p;
    run *r = a->r;
    counters *c = &r->c[a->index];
    int in = r->ch[a->index][0];
    token buf[TC_RD_READ_TOKENS], fwd[TC_RD_READ_TOKENS];
    for (;;) {
        ssize_t got = read(in, buf, sizeof buf);
        if (got < 0 && errno == EINTR)
            continue;
        if (stopped(r) || got <= 0)
            break;
        add(&c->reads, 1);
        if (r->cfg->test_stall && a->index == r->n / 2) {
            hold_until_stopped(r);
            break;
        }
        int64_t retired = 0;
        int m = take(c, buf, got, fwd, &retired);
        if (m < 0)
            break;
        if (m > 0) {
            add(&c->writes, 1);
            if (write_all(r->ch[next_of(r, a->index)][1], fwd, (size_t)m * sizeof(token)))
                break;
        }
        if (retired > 0) {
            int64_t now = atomic_fetch_add(&r->retired, retired) + retired;
            if (now == atomic_load(&r->target)) {
                unsigned char one = 1;
                if (write_all(r->done_pipe[1], &one, 1))
                    break;
            }
        }
    }
    return NULL;
}

/* ------------------------------------------------------------ the loops */

static void sum_counters(run *r, tc_readiness_point *pt, int sign)
{
    int count = r->cfg->model == TC_RD_THREAD ? r->n + 1 : 1; /* + the driver's */
    for (int i = 0; i < count; i++) {
        counters *c = &r->c[i];
        pt->events += sign * atomic_load_explicit(&c->events, memory_order_relaxed);
        pt->retired += sign * atomic_load_explicit(&c->retired, memory_order_relaxed);
        pt->reads += sign * atomic_load_explicit(&c->reads, memory_order_relaxed);
        pt->empty_reads += sign * atomic_load_explicit(&c->empty_reads, memory_order_relaxed);
        pt->writes += sign * atomic_load_explicit(&c->writes, memory_order_relaxed);
        pt->cross_cpu += sign * atomic_load_explicit(&c->cross_cpu, memory_order_relaxed);
    }
}

/* Put K tokens of `hops` hops in, spread over the ring, by write(2). */
static int inject(run *r, counters *c, int64_t k, int64_t hops)
{
    token t = {(uint32_t)hops, sched_getcpu()};
    for (int64_t j = 0; j < k; j++) {
        int at = (int)(j * r->n / k);
        add(&c->writes, 1);
        int e = write_all(r->ch[at][1], &t, sizeof t);
        if (e)
            return e;
    }
    return 0;
}

static int entry_threads(run *r, int64_t k, int64_t hops)
{
    atomic_store(&r->retired, 0);
    atomic_store(&r->target, k);
    int e = inject(r, &r->c[r->n], k, hops); /* the driver's own slot */
    unsigned char one;
    while (!e) {
        ssize_t got = read(r->done_pipe[0], &one, 1);
        if (got == 1 || stopped(r))
            break;
        if (got < 0 && errno != EINTR)
            e = errno;
    }
    return e;
}

static int entry_epoll(run *r, int64_t k, int64_t hops, int edge, tc_readiness_point *pt)
{
    counters *c = &r->c[0];
    struct epoll_event ev[EPOLL_BATCH];
    token buf[TC_RD_READ_TOKENS], fwd[TC_RD_READ_TOKENS];
    int64_t retired = 0;
    int e = inject(r, c, k, hops);
    while (!e && retired < k && !stopped(r)) {
        int ready = epoll_wait(r->epfd, ev, EPOLL_BATCH, SLICE_MS);
        pt->waits++;
        if (ready < 0) {
            if (errno == EINTR)
                continue;
            return errno;
        }
        pt->wait_events += ready;
        for (int j = 0; j < ready && !e; j++) {
            int i = (int)ev[j].data.u32;
            do {
                ssize_t got = read(r->ch[i][0], buf, sizeof buf);
                if (got < 0 && (errno == EAGAIN || errno == EINTR)) {
                    add(&c->empty_reads, 1);
                    break;
                }
                add(&c->reads, 1);
                if (got <= 0) {
                    e = got == 0 ? EPIPE : errno;
                    break;
                }
                if (r->cfg->test_stall && i == r->n / 2) {
                    epoll_ctl(r->epfd, EPOLL_CTL_DEL, r->ch[i][0], NULL);
                    break;
                }
                int64_t ret = 0;
                int m = take(c, buf, got, fwd, &ret);
                if (m < 0)
                    return stopped(r) ? 0 : EPROTO;
                retired += ret;
                if (m > 0) {
                    add(&c->writes, 1);
                    ssize_t w = write(r->ch[next_of(r, i)][1], fwd, (size_t)m * sizeof(token));
                    if (w < 0)
                        e = errno;
                    else if (w != (ssize_t)(m * sizeof(token)))
                        e = EAGAIN;
                }
            } while (edge && !e);
        }
    }
    return e;
}

/* ------------------------------------------------------------ io_uring */

typedef struct {
    int fd;
    unsigned sq_entries, cq_entries;
    void *sq_map, *cq_map;
    size_t sq_len, cq_len;
    struct io_uring_sqe *sqes;
    size_t sqes_len;
    unsigned *sq_head, *sq_tail, *sq_mask, *sq_array;
    unsigned *cq_head, *cq_tail, *cq_mask;
    struct io_uring_cqe *cqes;
    unsigned queued;          /* SQEs written but not yet submitted */
    token (*rbuf)[TC_RD_READ_TOKENS];  /* a read buffer per task */
    token (*wbuf)[TC_RD_READ_TOKENS];  /* write buffers, a free list of slots */
    int *free_slots;
    int nfree;
} uring;

#define UD_WRITE (1ULL << 32)

static int uring_enter(uring *u, unsigned submit, unsigned wait, tc_readiness_point *pt)
{
    for (;;) {
        long ret = syscall(__NR_io_uring_enter, u->fd, submit, wait,
                           wait ? IORING_ENTER_GETEVENTS : 0, NULL, 0);
        if (pt)
            pt->waits++;
        if (ret >= 0) {
            u->queued -= (unsigned)ret < submit ? (unsigned)ret : submit;
            return 0;
        }
        if (errno != EINTR)
            return errno;
    }
}

static struct io_uring_sqe *uring_sqe(uring *u, tc_readiness_point *pt, int *err)
{
    unsigned tail = *u->sq_tail;
    unsigned head = __atomic_load_n(u->sq_head, __ATOMIC_ACQUIRE);
    if (tail - head >= u->sq_entries) {
        *err = uring_enter(u, u->queued, 0, pt);
        if (*err)
            return NULL;
        head = __atomic_load_n(u->sq_head, __ATOMIC_ACQUIRE);
        if (tail - head >= u->sq_entries) {
            *err = EBUSY;
            return NULL;
        }
    }
    unsigned idx = tail & *u->sq_mask;
    struct io_uring_sqe *s = &u->sqes[idx];
    memset(s, 0, sizeof *s);
    u->sq_array[idx] = idx;
    __atomic_store_n(u->sq_tail, tail + 1, __ATOMIC_RELEASE);
    u->queued++;
    return s;
}

static int uring_read(run *r, uring *u, int i, tc_readiness_point *pt)
{
    int e = 0;
    struct io_uring_sqe *s = uring_sqe(u, pt, &e);
    if (!s)
        return e;
    s->opcode = IORING_OP_READ;
    s->fd = r->ch[i][0];
    s->addr = (uint64_t)(uintptr_t)u->rbuf[i];
    s->len = sizeof u->rbuf[i];
    s->user_data = (uint64_t)i;
    return 0;
}

static int uring_write(run *r, uring *u, int to, const token *t, int m, tc_readiness_point *pt)
{
    if (u->nfree == 0)
        return ENOBUFS;
    int e = 0;
    struct io_uring_sqe *s = uring_sqe(u, pt, &e);
    if (!s)
        return e;
    int slot = u->free_slots[--u->nfree];
    memcpy(u->wbuf[slot], t, (size_t)m * sizeof(token));
    s->opcode = IORING_OP_WRITE;
    s->fd = r->ch[to][1];
    s->addr = (uint64_t)(uintptr_t)u->wbuf[slot];
    s->len = (unsigned)((size_t)m * sizeof(token));
    s->user_data = UD_WRITE | (uint64_t)slot;
    return 0;
}

static unsigned pow2_at_least(unsigned v)
{
    unsigned p = 1;
    while (p < v)
        p <<= 1;
    return p;
}

static void uring_close(uring *u)
{
    if (u->sqes && u->sqes != MAP_FAILED)
        munmap(u->sqes, u->sqes_len);
    if (u->cq_map && u->cq_map != MAP_FAILED && u->cq_map != u->sq_map)
        munmap(u->cq_map, u->cq_len);
    if (u->sq_map && u->sq_map != MAP_FAILED)
        munmap(u->sq_map, u->sq_len);
    if (u->fd >= 0)
        close(u->fd);
    free(u->rbuf);
    free(u->wbuf);
    free(u->free_slots);
    memset(u, 0, sizeof *u);
    u->fd = -1;
}

static int uring_open(run *r, uring *u, int slots)
{
    struct io_uring_params p;
    memset(&p, 0, sizeof p);
    memset(u, 0, sizeof *u);
    u->fd = -1;
    unsigned want = pow2_at_least((unsigned)(2 * r->n + 16));
    if (want > 32768)
        want = 32768;
    p.flags = IORING_SETUP_CQSIZE;
    p.cq_entries = pow2_at_least((unsigned)(r->n + slots + 16));
    if (r->cfg->test_uring_errno > 0)
        return r->cfg->test_uring_errno;
    long fd = syscall(__NR_io_uring_setup, want, &p);
    if (fd < 0)
        return errno;
    u->fd = (int)fd;
    u->sq_entries = p.sq_entries;
    u->cq_entries = p.cq_entries;
    u->sq_len = p.sq_off.array + p.sq_entries * sizeof(unsigned);
    u->cq_len = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
    int single = (p.features & IORING_FEAT_SINGLE_MMAP) != 0;
    if (single && u->cq_len > u->sq_len)
        u->sq_len = u->cq_len;
    u->sq_map = mmap(NULL, u->sq_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
                     u->fd, IORING_OFF_SQ_RING);
    if (u->sq_map == MAP_FAILED)
        return errno;
    u->cq_map = single ? u->sq_map
                       : mmap(NULL, u->cq_len, PROT_READ | PROT_WRITE,
                              MAP_SHARED | MAP_POPULATE, u->fd, IORING_OFF_CQ_RING);
    if (u->cq_map == MAP_FAILED)
        return errno;
    u->sqes_len = p.sq_entries * sizeof(struct io_uring_sqe);
    u->sqes = mmap(NULL, u->sqes_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
                   u->fd, IORING_OFF_SQES);
    if (u->sqes == MAP_FAILED)
        return errno;
    char *sq = u->sq_map, *cq = u->cq_map;
    u->sq_head = (unsigned *)(sq + p.sq_off.head);
    u->sq_tail = (unsigned *)(sq + p.sq_off.tail);
    u->sq_mask = (unsigned *)(sq + p.sq_off.ring_mask);
    u->sq_array = (unsigned *)(sq + p.sq_off.array);
    u->cq_head = (unsigned *)(cq + p.cq_off.head);
    u->cq_tail = (unsigned *)(cq + p.cq_off.tail);
    u->cq_mask = (unsigned *)(cq + p.cq_off.ring_mask);
    u->cqes = (struct io_uring_cqe *)(cq + p.cq_off.cqes);
    u->rbuf = calloc((size_t)r->n, sizeof *u->rbuf);
    u->wbuf = calloc((size_t)slots, sizeof *u->wbuf);
    u->free_slots = calloc((size_t)slots, sizeof *u->free_slots);
    if (!u->rbuf || !u->wbuf || !u->free_slots)
        return ENOMEM;
    for (int s = 0; s < slots; s++)
        u->free_slots[s] = s;
    u->nfree = slots;
    int e = 0;
    for (int i = 0; i < r->n && !e; i++) /* one read queued per task, for good */
        e = uring_read(r, u, i, NULL);
    if (!e)
        e = uring_enter(u, u->queued, 0, NULL);
    return e;
}

/* Reap every completion there is; queue what each asks for. */
static int uring_reap(run *r, uring *u, int64_t *retired, tc_readiness_point *pt)
{
    counters *c = &r->c[0];
    token fwd[TC_RD_READ_TOKENS];
    unsigned head = *u->cq_head;
    unsigned tail = __atomic_load_n(u->cq_tail, __ATOMIC_ACQUIRE);
    int e = 0;
    while (head != tail && !e) {
        struct io_uring_cqe *q = &u->cqes[head & *u->cq_mask];
        uint64_t ud = q->user_data;
        int res = q->res;
        head++;
        __atomic_store_n(u->cq_head, head, __ATOMIC_RELEASE);
        if (ud & UD_WRITE) {
            int slot = (int)(ud & 0xFFFFFFFFu);
            u->free_slots[u->nfree++] = slot;
            if (res < 0)
                e = -res;
            continue;
        }
        int i = (int)ud;
        pt->wait_events++;
        if (res == -EAGAIN || res == -EINTR) {
            add(&c->empty_reads, 1);
            e = uring_read(r, u, i, pt);
            continue;
        }
        if (res <= 0) {
            e = res == 0 ? EPIPE : -res;
            break;
        }
        add(&c->reads, 1);
        if (r->cfg->test_stall && i == r->n / 2)
            continue; /* no read queued again: the tokens it took stay */
        int64_t ret = 0;
        int m = take(c, u->rbuf[i], res, fwd, &ret);
        if (m < 0)
            return stopped(r) ? 0 : EPROTO;
        *retired += ret;
        if (m > 0) {
            add(&c->writes, 1);
            e = uring_write(r, u, next_of(r, i), fwd, m, pt);
        }
        if (!e)
            e = uring_read(r, u, i, pt);
    }
    return e;
}

static int entry_uring(run *r, uring *u, int64_t k, int64_t hops, tc_readiness_point *pt)
{
    counters *c = &r->c[0];
    token t = {(uint32_t)hops, sched_getcpu()};
    int64_t retired = 0;
    int e = 0;
    for (int64_t j = 0; j < k && !e; j++) {
        add(&c->writes, 1);
        e = uring_write(r, u, (int)(j * r->n / k), &t, 1, pt);
    }
    while (!e && retired < k && !stopped(r)) {
        e = uring_enter(u, u->queued, 1, pt);
        if (!e)
            e = uring_reap(r, u, &retired, pt);
    }
    return e;
}

/* ------------------------------------------------------------ the driver */

static int64_t cpu_time_ns(int64_t *vol, int64_t *invol)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0) {
        *vol = *invol = 0;
        return 0;
    }
    *vol = ru.ru_nvcsw;
    *invol = ru.ru_nivcsw;
    return ((int64_t)ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000LL +
           ((int64_t)ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000LL;
}

static int one_entry(run *r, uring *u, int64_t k, int64_t hops, tc_readiness_point *pt)
{
    memset(pt, 0, sizeof *pt);
    pt->tokens = k;
    pt->hops = hops;
    sum_counters(r, pt, -1);
    int64_t v0, i0, v1, i1;
    int64_t cpu0 = cpu_time_ns(&v0, &i0);
    int64_t t0 = tc_now_ns();
    int e;
    switch (r->cfg->model) {
    case TC_RD_THREAD:
        e = entry_threads(r, k, hops);
        break;
    case TC_RD_URING:
        e = entry_uring(r, u, k, hops, pt);
        break;
    default:
        e = entry_epoll(r, k, hops, r->cfg->model == TC_RD_EPOLL_ET, pt);
        break;
    }
    int64_t t1 = tc_now_ns();
    int64_t cpu1 = cpu_time_ns(&v1, &i1);
    pt->wall_ns = t1 - t0;
    pt->cpu_ns = cpu1 - cpu0;
    pt->voluntary = v1 - v0;
    pt->involuntary = i1 - i0;
    sum_counters(r, pt, 1);
    return e;
}

static void *driver_thread(void *p)
{
    run *r = p;
    const tc_readiness_config *cfg = r->cfg;
    tc_readiness_result *out = r->out;
    int status = TC_OK, err = 0;
    uring u;
    memset(&u, 0, sizeof u);
    u.fd = -1;
    if (cfg->cpu >= 0 && (err = tc_pin_self(cfg->cpu)) != 0) {
        status = TC_ESYS;
        out->where = TC_RD_STEP_PIN;
    }
    out->cpu_after_pin = tc_current_cpu();
    if (status == TC_OK && cfg->model == TC_RD_URING) {
        int64_t kmax = r->n;
        for (int i = 0; i < cfg->points; i++)
            kmax = cfg->tokens[i] > kmax ? cfg->tokens[i] : kmax;
        err = uring_open(r, &u, (int)(2 * kmax + 64));
        if (err) {
            out->where = TC_RD_STEP_URING;
            out->limit = limit_of(err);
            if (err == ENOSYS || err == EPERM || err == EACCES || err == EINVAL)
                out->limit = TC_RD_LIMIT_URING;
            status = out->limit != TC_RD_LIMIT_NONE ? TC_ELIMIT : TC_ESYS;
        }
    }
    if (status == TC_OK) { /* warm-up: every task one token, one hop */
        err = one_entry(r, &u, r->n, 1, &out->warmup);
        if (err)
            status = TC_ESYS;
    }
    for (int i = 0; i < cfg->points && status == TC_OK && !stopped(r); i++) {
        int64_t k = cfg->tokens[i] < r->n ? cfg->tokens[i] : r->n;
        err = one_entry(r, &u, k, cfg->hops[i], &out->point[i]);
        if (stopped(r))
            break;
        if (err) {
            out->where = TC_RD_STEP_RUN;
            status = err == EAGAIN ? TC_ELIMIT : TC_ESYS;
            if (err == EAGAIN)
                out->limit = TC_RD_LIMIT_BUFFER;
            break;
        }
        out->completed++;
    }
    uring_close(&u);
    pthread_mutex_lock(&r->mu);
    r->driver_done = 1;
    r->driver_status = status;
    r->driver_err = err;
    pthread_cond_signal(&r->cv);
    pthread_mutex_unlock(&r->mu);
    return NULL;
}

/* ------------------------------------------------------------ set-up, tear-down */

static void stop_all(run *r)
{
    atomic_store_explicit(&r->stop, 1, memory_order_seq_cst);
    token t = {STOP_HOPS, -1};
    for (int i = 0; i < r->open; i++) {
        int fl = fcntl(r->ch[i][1], F_GETFL);
        if (fl >= 0)
            fcntl(r->ch[i][1], F_SETFL, fl | O_NONBLOCK);
        ssize_t w;
        do
            w = write(r->ch[i][1], &t, sizeof t);
        while (w < 0 && errno == EINTR);
    }
    if (r->done_pipe[1] >= 0) {
        unsigned char one = 1;
        ssize_t w;
        do
            w = write(r->done_pipe[1], &one, 1);
        while (w < 0 && errno == EINTR);
    }
    for (int i = 0; i < r->started; i++)
        pthread_join(r->threads[i], NULL);
    r->started = 0;
}

static void release(run *r)
{
    if (r->epfd >= 0)
        close(r->epfd);
    for (int i = 0; i < r->open; i++) {
        close(r->ch[i][0]);
        close(r->ch[i][1]);
    }
    if (r->done_pipe[0] >= 0) {
        close(r->done_pipe[0]);
        close(r->done_pipe[1]);
    }
    free(r->ch);
    free(r->threads);
    free(r->args);
    free(r->c);
}

static int make_channel(int kind, int fds[2])
{
    if (kind == TC_RD_PIPE)
        return pipe2(fds, O_CLOEXEC) == 0 ? 0 : errno;
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
        return errno;
    fds[0] = sv[1]; /* read end */
    fds[1] = sv[0]; /* write end */
    return 0;
}

/* Make the channels; short of fds, give some back and narrow N. */
static int make_channels(run *r)
{
    for (int i = 0; i < r->n; i++) {
        int e = make_channel(r->cfg->channel, r->ch[i]);
        if (e) {
            r->out->where = TC_RD_STEP_CHANNELS;
            r->out->err = e;
            r->out->limit = limit_of(e);
            if (r->out->limit != TC_RD_LIMIT_FDS)
                return e;
            while (r->open > 1 && r->open > i - HEADROOM_FDS / 2) {
                r->open--;
                close(r->ch[r->open][0]);
                close(r->ch[r->open][1]);
            }
            r->n = r->open;
            return r->open > 0 ? 0 : e;
        }
        r->open++;
    }
    return 0;
}

static int nonblocking(int fd)
{
    int fl = fcntl(fd, F_GETFL);
    return fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0 ? errno : 0;
}

static int setup_epoll(run *r)
{
    r->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (r->epfd < 0)
        return errno;
    for (int i = 0; i < r->n; i++) {
        int e = nonblocking(r->ch[i][0]);
        if (!e)
            e = nonblocking(r->ch[i][1]);
        if (e)
            return e;
        struct epoll_event ev;
        memset(&ev, 0, sizeof ev);
        ev.events = EPOLLIN | (r->cfg->model == TC_RD_EPOLL_ET ? EPOLLET : 0);
        ev.data.u32 = (uint32_t)i;
        if (epoll_ctl(r->epfd, EPOLL_CTL_ADD, r->ch[i][0], &ev) != 0)
            return errno;
    }
    return 0;
}

/* Start the task threads; short of threads, stop at those made and narrow N. */
static int start_tasks(run *r)
{
    pthread_attr_t attr;
    int e = pthread_attr_init(&attr);
    if (e)
        return e;
    if (r->cfg->stack_kib > 0)
        e = pthread_attr_setstacksize(&attr, (size_t)r->cfg->stack_kib * 1024);
    if (!e && r->cfg->cpu >= 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(r->cfg->cpu, &set);
        e = pthread_attr_setaffinity_np(&attr, sizeof set, &set);
    }
    for (int i = 0; i < r->n && !e; i++) {
        r->args[i].r = r;
        r->args[i].index = i;
        e = pthread_create(&r->threads[i], &attr, task_thread, &r->args[i]);
        if (!e)
            r->started++;
    }
    pthread_attr_destroy(&attr);
    if (e == EAGAIN && r->started > 0) {
        r->out->where = TC_RD_STEP_SPAWN;
        r->out->err = e;
        r->out->limit = TC_RD_LIMIT_THREADS;
        r->n = r->started;
        return 0;
    }
    return e;
}

static int64_t progress(run *r)
{
    int count = r->cfg->model == TC_RD_THREAD ? r->started : 1;
    int64_t sum = 0;
    for (int i = 0; i < count; i++)
        sum += atomic_load_explicit(&r->c[i].events, memory_order_relaxed);
    return sum;
}

/* The calling thread: wait for the driver; end the run when no event has been
 * handled for timeout_ms, or when asked to stop. Returns 1 when asked to stop. */
static int watch(run *r)
{
    int asked = 0;
    int slice = r->cfg->timeout_ms < 100 ? r->cfg->timeout_ms : 100;
    int64_t seen = -1, last = tc_now_ns() / 1000000;
    pthread_mutex_lock(&r->mu);
    while (!r->driver_done) {
        struct timespec dl;
        clock_gettime(CLOCK_REALTIME, &dl);
        dl.tv_nsec += (long)slice * 1000000L;
        dl.tv_sec += dl.tv_nsec / 1000000000L;
        dl.tv_nsec %= 1000000000L;
        pthread_cond_timedwait(&r->cv, &r->mu, &dl);
        if (r->driver_done)
            break;
        if (tc_stop_requested()) {
            asked = 1;
            break;
        }
        int64_t now_events = progress(r), now = tc_now_ns() / 1000000;
        if (now_events != seen) {
            seen = now_events;
            last = now;
        } else if (now - last >= r->cfg->timeout_ms) {
            r->out->timed_out = 1;
            break;
        }
    }
    pthread_mutex_unlock(&r->mu);
    return asked;
}

static int valid(const tc_readiness_config *cfg)
{
    if (cfg->model < TC_RD_THREAD || cfg->model > TC_RD_URING || cfg->channel < 0 ||
        cfg->channel > TC_RD_PIPE || cfg->tasks < 1 || cfg->tasks > TC_RD_MAX_TASKS ||
        cfg->points < 1 || cfg->points > TC_RD_MAX_POINTS || cfg->timeout_ms < 1 ||
        cfg->stack_kib < 0 || cfg->cpu < -1 || cfg->cpu >= CPU_SETSIZE)
        return 0;
    for (int i = 0; i < cfg->points; i++)
        if (cfg->tokens[i] < 1 || cfg->tokens[i] > cfg->tasks || cfg->hops[i] < 1 ||
            cfg->hops[i] >= (int64_t)STOP_HOPS ||
            (cfg->test_stall && cfg->tokens[i] > TC_RD_STALL_TOKENS))
            return 0;
    return 1;
}

int tc_readiness_run(const tc_readiness_config *cfg, tc_readiness_result *out)
{
    if (!cfg || !out)
        return TC_EINVAL;
    memset(out, 0, sizeof *out);
    if (!valid(cfg))
        return TC_EINVAL;
    int64_t need = cfg->raise_hard_nofile ? 2 * (int64_t)cfg->tasks + 64 : 0;
    tc_raise_nofile(need, &out->nofile_soft, &out->nofile_hard);

    run r;
    memset(&r, 0, sizeof r);
    r.cfg = cfg;
    r.out = out;
    r.n = cfg->tasks;
    r.epfd = -1;
    r.done_pipe[0] = r.done_pipe[1] = -1;
    atomic_init(&r.stop, 0);
    atomic_init(&r.retired, 0);
    atomic_init(&r.target, 0);
    int threads = cfg->model == TC_RD_THREAD;
    r.ch = calloc((size_t)r.n, sizeof *r.ch);
    /* threads: one slot per task, and one more for the driver's injections (a task's
     * counters have one writer each: its own thread) */
    r.c = calloc(threads ? (size_t)r.n + 1 : 1, sizeof *r.c);
    if (threads) {
        r.threads = calloc((size_t)r.n, sizeof *r.threads);
        r.args = calloc((size_t)r.n, sizeof *r.args);
    }
    if (!r.ch || !r.c || (threads && (!r.threads || !r.args))) {
        release(&r);
        return TC_ENOMEM;
    }
    int e = 0;
    if (threads && pipe2(r.done_pipe, O_CLOEXEC) != 0) {
        e = errno;
        r.done_pipe[0] = r.done_pipe[1] = -1;
        out->where = TC_RD_STEP_CHANNELS;
    }
    if (!e)
        e = make_channels(&r);
    if (!e && (cfg->model == TC_RD_EPOLL_LT || cfg->model == TC_RD_EPOLL_ET)) {
        e = setup_epoll(&r);
        if (e)
            out->where = TC_RD_STEP_EPOLL;
    }
    if (!e && threads) {
        e = start_tasks(&r);
        if (e)
            out->where = TC_RD_STEP_SPAWN;
    }
    out->tasks_ready = r.n;
    if (e) {
        out->err = e;
        out->limit = limit_of(e);
        stop_all(&r);
        release(&r);
        return out->limit != TC_RD_LIMIT_NONE ? TC_ELIMIT : TC_ESYS;
    }
    int status = TC_OK;
    pthread_mutex_init(&r.mu, NULL);
    pthread_cond_init(&r.cv, NULL);
    pthread_t driver;
    pthread_attr_t dattr;
    pthread_attr_init(&dattr);
    pthread_attr_setstacksize(&dattr, 256 * 1024);
    e = pthread_create(&driver, &dattr, driver_thread, &r);
    pthread_attr_destroy(&dattr);
    if (e) {
        out->err = e;
        out->where = TC_RD_STEP_SPAWN;
        out->limit = e == EAGAIN ? TC_RD_LIMIT_THREADS : limit_of(e);
        status = out->limit != TC_RD_LIMIT_NONE ? TC_ELIMIT : TC_ESYS;
    } else {
        int asked = watch(&r);
        stop_all(&r);
        pthread_join(driver, NULL);
        if (asked)
            status = TC_ESTOPPED;
        else if (out->timed_out)
            status = TC_ETIMEOUT;
        else if (r.driver_status != TC_OK) {
            status = r.driver_status;
            out->err = r.driver_err;
        } else if (out->limit != TC_RD_LIMIT_NONE)
            status = TC_ELIMIT; /* narrowed N, measured */
    }
    if (!stopped(&r))
        stop_all(&r);
    pthread_cond_destroy(&r.cv);
    pthread_mutex_destroy(&r.mu);
    release(&r);
    return status;
}
