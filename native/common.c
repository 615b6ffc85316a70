/* common.c - helpers shared by every kernel: /proc readers, clock, pinning. */
#define _GNU_SOURCE
#include "threadcost.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

/* Read a whole small /proc file into buf without stdio (async-signal-safe,
 * no allocation, so it may be called between timed regions). */
static int read_small_file(const char *path, char *buf, size_t cap)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno;
    size_t used = 0;
    while (used + 1 < cap) {
        ssize_t n = read(fd, buf + used, cap - 1 - used);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            int e = errno;
            close(fd);
            return e;
        }
        if (n == 0)
            break;
        used += (size_t)n;
    }
    buf[used] = '\0';
    close(fd);
    return 0;
}

/* Value of "Key:   123 kB" in text, or -1 when the key is absent. */
static int64_t field_value(const char *text, const char *key)
{
    size_t klen = strlen(key);
    const char *p = text;
    while (p && *p) {
        if (strncmp(p, key, klen) == 0 && p[klen] == ':')
            return strtoll(p + klen + 1, NULL, 10);
        p = strchr(p, '\n');
        if (p)
            p++;
    }
    return -1;
}

int tc_read_proc_status(tc_proc_status *out)
{
    char buf[8192];
    if (!out)
        return TC_EINVAL;
    if (read_small_file("/proc/self/status", buf, sizeof buf) != 0)
        return TC_ESYS;
    out->vsz_kib = field_value(buf, "VmSize");
    out->rss_kib = field_value(buf, "VmRSS");
    out->rss_anon_kib = field_value(buf, "RssAnon");
    out->pte_kib = field_value(buf, "VmPTE");
    out->stk_kib = field_value(buf, "VmStk");
    out->threads = field_value(buf, "Threads");
    return TC_OK;
}

int tc_read_meminfo(tc_meminfo *out)
{
    char buf[8192];
    if (!out)
        return TC_EINVAL;
    if (read_small_file("/proc/meminfo", buf, sizeof buf) != 0)
        return TC_ESYS;
    out->mem_available_kib = field_value(buf, "MemAvailable");
    out->kernel_stack_kib = field_value(buf, "KernelStack");
    out->page_tables_kib = field_value(buf, "PageTables");
    out->sunreclaim_kib = field_value(buf, "SUnreclaim");
    return TC_OK;
}

static int tc_stop_flag;
static int tc_stop_fd = -1;

void tc_request_stop(void)
{
    __atomic_store_n(&tc_stop_flag, 1, __ATOMIC_SEQ_CST);
}

void tc_clear_stop(void)
{
    __atomic_store_n(&tc_stop_flag, 0, __ATOMIC_SEQ_CST);
}

void tc_set_stop_fd(int fd)
{
    __atomic_store_n(&tc_stop_fd, fd, __ATOMIC_SEQ_CST);
}

int tc_stop_requested(void)
{
    if (__atomic_load_n(&tc_stop_flag, __ATOMIC_ACQUIRE))
        return 1;
    int fd = __atomic_load_n(&tc_stop_fd, __ATOMIC_ACQUIRE);
    if (fd < 0)
        return 0;
    /* a byte waiting here: a signal arrived (Python's signal.set_wakeup_fd) */
    struct pollfd p = {.fd = fd, .events = POLLIN, .revents = 0};
    if (poll(&p, 1, 0) == 1 && (p.revents & POLLIN)) {
        tc_request_stop();
        return 1;
    }
    return 0;
}

int64_t tc_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

int64_t tc_timer_overhead_ns(int samples)
{
    if (samples < 1 || samples > 1000000)
        return -1;
    int64_t *d = malloc(sizeof(int64_t) * (size_t)samples);
    if (!d)
        return -1;
    for (int i = 0; i < samples; i++) {
        int64_t a = tc_now_ns();
        int64_t b = tc_now_ns();
        d[i] = b - a;
    }
    qsort(d, (size_t)samples, sizeof(int64_t), cmp_i64);
    int64_t med = d[samples / 2];
    free(d);
    return med;
}

int tc_pin_self(int cpu)
{
    cpu_set_t set;
    if (cpu < 0 || cpu >= CPU_SETSIZE)
        return EINVAL;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0)
        return errno;
    return 0;
}

int tc_current_cpu(void)
{
    return sched_getcpu();
}

int tc_copy_buffers(int64_t bytes, unsigned char **src, unsigned char **dst, void **region)
{
    const int64_t page = 4096;
    int64_t span = (bytes + page - 1) / page * page; /* src, rounded up to pages */
    void *mem = NULL;
    *src = *dst = NULL;
    *region = NULL;
    if (bytes < 1 || posix_memalign(&mem, (size_t)page, (size_t)(span + 2048 + bytes)) != 0)
        return TC_ENOMEM;
    *region = mem;
    *src = (unsigned char *)mem;
    *dst = (unsigned char *)mem + span + 2048;
    return TC_OK;
}

static rlim_t nr_open(rlim_t fallback)
{
    FILE *f = fopen("/proc/sys/fs/nr_open", "re");
    long long v = 0;
    if (f) {
        if (fscanf(f, "%lld", &v) != 1)
            v = 0;
        fclose(f);
    }
    return v > 0 ? (rlim_t)v : fallback;
}

int tc_raise_nofile(int64_t need, int64_t *soft, int64_t *hard)
{
    struct rlimit rl;
    int err = 0;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return errno;
    rlim_t cap = nr_open(rl.rlim_cur);
    rlim_t want = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > cap ? cap : rl.rlim_max;
    if (rl.rlim_cur < want) {
        struct rlimit nl = {want, rl.rlim_max};
        if (setrlimit(RLIMIT_NOFILE, &nl) != 0)
            err = errno;
        else
            rl.rlim_cur = want;
    }
    /* Still short: a privileged process (CAP_SYS_RESOURCE) may raise the hard
     * limit too, up to fs.nr_open; anyone else keeps the limit it has. */
    if (need > 0 && rl.rlim_cur != RLIM_INFINITY && (rlim_t)need > rl.rlim_cur) {
        rlim_t to = (rlim_t)need > cap ? cap : (rlim_t)need;
        struct rlimit nl = {to, to > rl.rlim_max ? to : rl.rlim_max};
        if (to > rl.rlim_cur && setrlimit(RLIMIT_NOFILE, &nl) == 0) {
            rl = nl;
            err = 0;
        }
    }
    if (soft)
        *soft = rl.rlim_cur == RLIM_INFINITY ? -1 : (int64_t)rl.rlim_cur;
    if (hard)
        *hard = rl.rlim_max == RLIM_INFINITY ? -1 : (int64_t)rl.rlim_max;
    return err;
}
