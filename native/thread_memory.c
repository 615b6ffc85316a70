/* thread_memory.c - claims C05, C06, C08, C10, C12, C16: what N blocked threads
 * cost in virtual memory, resident memory and kernel memory.
 *
 * The threads do nothing but (optionally) write part of their own stack,
 * check in, and sleep on a futex, so everything the counters move by is the
 * price of the threads themselves.
 */
#define _GNU_SOURCE
#include "tc_thread_memory.h"

#include <alloca.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* Room a thread keeps below its touched region for its own frames and libc. */
#define TOUCH_SAFETY_BYTES (16 * 1024)
/* Deadline for the threads to check in: a base plus a little per thread. */
#define CHECKIN_BASE_NS (20LL * 1000000000LL)
#define CHECKIN_PER_THREAD_NS (2LL * 1000000LL)

/* At most this many idle threads are started to drain glibc's stack cache. */
#define BALLAST_MAX 1024

struct tc_thread_group {
    pthread_t *ids;
    struct tc_thread_group *ballast;  /* idle threads holding formerly cached stacks */
    int64_t started;
    size_t touch_bytes;
    size_t stack_bytes;
    size_t page;
    _Atomic int running;   /* threads that checked in */
    _Atomic int release;   /* 0 while threads must stay blocked */
    _Atomic int too_deep;  /* threads that found too little stack to touch */
};

static long futex(_Atomic int *addr, int op, int val, const struct timespec *timeout)
{
    return syscall(SYS_futex, (int *)addr, op, val, timeout, NULL, 0);
}

/* Write one byte per page of `bytes` of this thread's stack, top down (the way
 * a deep call chain would). noinline: the alloca must live in its own frame. */
static __attribute__((noinline)) void touch_stack(size_t bytes, size_t page)
{
    volatile unsigned char *p = alloca(bytes);
    for (size_t off = bytes; off >= page; off -= page)
        p[off - page] = 1;
}

/* Bytes of stack left below the caller's frame, or 0 when unknown. Computed
 * without pthread_getattr_np, which would malloc (and so create a malloc arena
 * per thread, polluting the very counters being measured): glibc keeps the
 * thread descriptor (pthread_self()) at the top of the stack block, so the
 * room is the stack size minus what lies between here and that top (plus a
 * margin for the descriptor itself). */
static size_t stack_room(size_t stack_bytes)
{
    /* This frame's address on the thread's own stack: a local's address would not do
     * under ASan, whose use-after-return detection (on by default since GCC 13) moves
     * locals to a heap-allocated fake stack. */
    uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
    uintptr_t top = (uintptr_t)pthread_self() + 8192;
    if (top <= sp || top - sp >= stack_bytes)
        return 0;
    return stack_bytes - (top - sp);
}

static void *worker(void *arg)
{
    struct tc_thread_group *g = arg;
    if (g->touch_bytes > 0) {
        if (g->touch_bytes + TOUCH_SAFETY_BYTES <= stack_room(g->stack_bytes))
            touch_stack(g->touch_bytes, g->page);
        else
            atomic_fetch_add(&g->too_deep, 1);
    }
    atomic_fetch_add(&g->running, 1);
    futex(&g->running, FUTEX_WAKE_PRIVATE, 1, NULL);
    while (atomic_load(&g->release) == 0)
        futex(&g->release, FUTEX_WAIT_PRIVATE, 0, NULL);
    return NULL;
}

/* Count '\n' in a /proc file of any size, through a fixed buffer (no malloc:
 * this runs when a limit may have left no room to allocate). */
static int64_t count_lines(const char *path)
{
    char buf[16384];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    int64_t lines = 0;
    for (;;) {
        ssize_t n = read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        for (ssize_t i = 0; i < n; i++)
            lines += buf[i] == '\n';
    }
    close(fd);
    return lines;
}

/* Rss of /proc/self/smaps_rollup in kB (the kernel walks the page tables for
 * it, independently of the VmRSS counters), or -1. Fixed buffer, no malloc. */
static int64_t rollup_rss_kib(void)
{
    char buf[4096];
    int fd = open("/proc/self/smaps_rollup", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    size_t used = 0;
    for (;;) {
        ssize_t n = read(fd, buf + used, sizeof buf - 1 - used);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        used += (size_t)n;
        if (used >= sizeof buf - 1)
            break;
    }
    close(fd);
    buf[used] = '\0';
    const char *p = strstr(buf, "\nRss:");
    return p ? strtoll(p + 5, NULL, 10) : -1;
}

/* 4th field of /proc/loadavg is "runnable/existing" scheduling entities. */
static int64_t system_threads(void)
{
    char buf[256];
    int fd = open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    char *slash = strchr(buf, '/');
    return slash ? strtoll(slash + 1, NULL, 10) : -1;
}

static void probe_limit(tc_limit_probe *p)
{
    tc_proc_status s;
    memset(&s, 0, sizeof s);
    tc_read_proc_status(&s);
    p->maps = count_lines("/proc/self/maps");
    p->system_threads = system_threads();
    p->vsz_kib = s.vsz_kib;
    p->threads = s.threads;
}

int64_t tc_default_stack_bytes(void)
{
    pthread_attr_t attr;
    size_t size = 0;
    if (pthread_getattr_default_np(&attr) != 0)
        return -1;
    pthread_attr_getstacksize(&attr, &size);
    pthread_attr_destroy(&attr);
    return (int64_t)size;
}

/* Wake every thread, join them all, free the group (and its ballast). */
static void release_and_join(struct tc_thread_group *g)
{
    atomic_store(&g->release, 1);
    futex(&g->release, FUTEX_WAKE_PRIVATE, INT_MAX, NULL);
    for (int64_t i = 0; i < g->started; i++)
        pthread_join(g->ids[i], NULL);
    if (g->ballast)
        release_and_join(g->ballast);
    free(g->ids);
    free(g);
}

/* Wait (sleeping on the futex) until `want` threads checked in, the deadline, or a
 * stop request (TC_ESTOPPED; polled every TC_STOP_POLL_NS). */
static int wait_checkins(struct tc_thread_group *g, int64_t want)
{
    const int64_t deadline = tc_now_ns() + CHECKIN_BASE_NS + CHECKIN_PER_THREAD_NS * want;
    int64_t next_poll = 0;
    for (;;) {
        int seen = atomic_load(&g->running);
        if (seen >= want)
            return TC_OK;
        if (tc_stop_due(&next_poll))
            return TC_ESTOPPED;
        int64_t left = deadline - tc_now_ns();
        if (left <= 0)
            return TC_ETIMEOUT;
        struct timespec ts = {0, left > TC_STOP_POLL_NS ? TC_STOP_POLL_NS : (long)left};
        futex(&g->running, FUTEX_WAIT_PRIVATE, seen, &ts);
    }
}

/*
 * glibc keeps the stacks of finished threads in a cache, and a forked child
 * inherits its parent's other threads' stacks there (the forkserver that runs
 * our measurements has a few, from numpy's thread pool). A measured thread that
 * reused one would add no virtual size and already-resident pages. So before
 * the first reading, start idle threads with the same attributes until one of
 * them needs a fresh mapping (VmSize grows): every fitting cached stack is then
 * held by this ballast and the measured threads all get new stacks.
 */
static int drain_stack_cache(struct tc_thread_group *b, const pthread_attr_t *attr)
{
    while (b->started < BALLAST_MAX) {
        tc_proc_status s0, s1;
        memset(&s0, 0, sizeof s0);
        memset(&s1, 0, sizeof s1);
        tc_read_proc_status(&s0);
        int rc = pthread_create(&b->ids[b->started], attr, worker, b);
        if (rc != 0)
            return rc;
        b->started++;
        tc_read_proc_status(&s1);
        if (s1.vsz_kib > s0.vsz_kib)
            break;
    }
    int waited = wait_checkins(b, b->started);
    return waited == TC_OK ? 0 : waited == TC_ESTOPPED ? -1 : ETIMEDOUT;
}

static int make_attr(pthread_attr_t *attr, int64_t stack_kib, tc_thread_memory_result *out)
{
    int rc = pthread_attr_init(attr);
    if (rc != 0)
        return rc;
    if (stack_kib > 0)
        rc = pthread_attr_setstacksize(attr, (size_t)stack_kib * 1024);
    size_t size = 0, guard = 0;
    if (rc == 0)
        rc = pthread_attr_getstacksize(attr, &size);
    if (rc == 0)
        rc = pthread_attr_getguardsize(attr, &guard);
    if (rc != 0) {
        pthread_attr_destroy(attr);
        return rc;
    }
    if (stack_kib == 0) {  /* an unset size reads 0 on some libcs: ask the default */
        int64_t def = tc_default_stack_bytes();
        if (size == 0 && def > 0)
            size = (size_t)def;
    }
    out->stack_bytes = (int64_t)size;
    out->guard_bytes = (int64_t)guard;
    return 0;
}

int tc_thread_memory_start(int64_t threads, int64_t stack_kib, int64_t touch_kib,
                           const int *cpus, int ncpus, tc_thread_group **group,
                           tc_thread_memory_result *out)
{
    if (!out || !group || threads < 1 || threads > INT_MAX / 2 || stack_kib < 0 ||
        stack_kib > (INT64_C(1) << 30) || touch_kib < 0 || ncpus < 0 ||
        (ncpus > 0 && !cpus))
        return TC_EINVAL;
    *group = NULL;
    memset(out, 0, sizeof *out);
    for (int i = 0; i < ncpus; i++)
        if (cpus[i] < 0 || cpus[i] >= CPU_SETSIZE)
            return TC_EINVAL;
    out->requested = threads;

    pthread_attr_t attr;
    int rc = make_attr(&attr, stack_kib, out);
    if (rc != 0) {
        out->err = rc;
        return TC_EINVAL;
    }
    out->touch_bytes = touch_kib * 1024;
    if (out->touch_bytes + TOUCH_SAFETY_BYTES > out->stack_bytes && touch_kib > 0) {
        pthread_attr_destroy(&attr);
        return TC_EINVAL;  /* would overflow the stack: Python refuses this first */
    }

    /* Bookkeeping is allocated and touched before the first reading, so it
     * does not count as the threads' memory. */
    struct tc_thread_group *g = calloc(1, sizeof *g);
    struct tc_thread_group *b = calloc(1, sizeof *b);
    pthread_t *ids = g ? calloc((size_t)threads, sizeof *ids) : NULL;
    pthread_t *bids = b ? calloc(BALLAST_MAX, sizeof *bids) : NULL;
    if (!ids || !bids) {
        free(ids);
        free(bids);
        free(g);
        free(b);
        pthread_attr_destroy(&attr);
        return TC_ENOMEM;
    }
    g->ids = ids;
    b->ids = bids;
    b->page = (size_t)sysconf(_SC_PAGESIZE);
    atomic_init(&b->running, 0);
    atomic_init(&b->release, 0);
    atomic_init(&b->too_deep, 0);
    g->ballast = b;
    g->touch_bytes = (size_t)out->touch_bytes;
    g->stack_bytes = (size_t)out->stack_bytes;
    g->page = (size_t)sysconf(_SC_PAGESIZE);
    atomic_init(&g->running, 0);
    atomic_init(&g->release, 0);
    atomic_init(&g->too_deep, 0);

    rc = drain_stack_cache(b, &attr);
    out->ballast = b->started;
    if (rc < 0) {  /* asked to stop while the ballast checked in */
        pthread_attr_destroy(&attr);
        release_and_join(g);
        return TC_ESTOPPED;
    }
    if (rc != 0) {  /* no room for even the ballast: nothing is left running */
        out->err = rc;
        if (rc == EAGAIN || rc == ENOMEM)
            probe_limit(&out->probe);
        pthread_attr_destroy(&attr);
        release_and_join(g);
        return rc == EAGAIN || rc == ENOMEM ? TC_ELIMIT : TC_ESYS;
    }

    tc_read_proc_status(&out->before);
    tc_read_meminfo(&out->mem_before);
    out->rollup_before_kib = rollup_rss_kib();

    int status = TC_OK;
    int64_t t0 = tc_now_ns();
    int64_t next_poll = 0;
    for (int64_t i = 0; i < threads; i++) {
        if (tc_stop_due(&next_poll)) { /* the threads started so far are joined below */
            status = TC_ESTOPPED;
            break;
        }
        if (ncpus > 0) {
            cpu_set_t set;
            CPU_ZERO(&set);
            CPU_SET(cpus[i % ncpus], &set);
            rc = pthread_attr_setaffinity_np(&attr, sizeof set, &set);
            if (rc != 0) {
                out->err = rc;
                status = TC_ESYS;
                break;
            }
        }
        rc = pthread_create(&ids[i], &attr, worker, g);
        if (rc != 0) {
            out->err = rc;
            if (rc == EAGAIN || rc == ENOMEM) {
                status = TC_ELIMIT;
                probe_limit(&out->probe);
            } else {
                status = TC_ESYS;
            }
            break;
        }
        g->started = i + 1;
    }
    int64_t t1 = tc_now_ns();
    pthread_attr_destroy(&attr);
    out->create_ns = t1 - t0;
    out->started = g->started;

    int waited = wait_checkins(g, g->started);
    out->settle_ns = tc_now_ns() - t1;
    out->too_deep = atomic_load(&g->too_deep);
    if (waited != TC_OK && status != TC_ESTOPPED)
        status = waited;
    if (status == TC_OK || status == TC_ELIMIT) {
        tc_read_proc_status(&out->during);
        tc_read_meminfo(&out->mem_during);
        out->rollup_during_kib = rollup_rss_kib();
        *group = g;
        return status;
    }
    /* system error or timeout: leave nothing behind */
    release_and_join(g);
    tc_read_proc_status(&out->after);
    tc_read_meminfo(&out->mem_after);
    return status;
}

int tc_thread_memory_stop(tc_thread_group *group, tc_thread_memory_result *out)
{
    if (!group || !out)
        return TC_EINVAL;
    int64_t t0 = tc_now_ns();
    release_and_join(group);
    out->join_ns = tc_now_ns() - t0;
    tc_read_proc_status(&out->after);
    tc_read_meminfo(&out->mem_after);
    return TC_OK;
}

int tc_thread_memory_run(int64_t threads, int64_t stack_kib, int64_t touch_kib,
                         const int *cpus, int ncpus, tc_thread_memory_result *out)
{
    tc_thread_group *g = NULL;
    int status = tc_thread_memory_start(threads, stack_kib, touch_kib, cpus, ncpus, &g, out);
    if (g)
        tc_thread_memory_stop(g, out);
    return status;
}
