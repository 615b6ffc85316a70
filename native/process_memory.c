/*
 * process_memory.c - the process side of "what does an idle task hold?": many
 * forked children that only sleep, so Python can read each one's smaps_rollup
 * and status, and the system's kernel counters, while they exist.
 */
#define _GNU_SOURCE
#include "tc_process_memory.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef struct {
    int release;   /* 1: children exit */
    int ready;     /* children asleep */
} procmem_shared;

struct tc_procmem {
    procmem_shared *sh;
    pid_t *pids;
    int64_t started;
};

static long futex(int *addr, int op, int val, const struct timespec *ts)
{
    return syscall(SYS_futex, addr, op, val, ts, NULL, 0);
}

static void child_main(procmem_shared *sh, int64_t touch_kib, int64_t until_ns, pid_t parent)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent)
        _exit(1);
    if (touch_kib > 0) {
        size_t bytes = (size_t)touch_kib * 1024;
        char *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED)
            _exit(2);
        long page = sysconf(_SC_PAGESIZE);
        for (size_t off = 0; off < bytes; off += (size_t)page) {
            /* released early (the parent was asked to stop): no need to finish */
            if ((off & (((size_t)page << 12) - 1)) == 0 &&
                __atomic_load_n(&sh->release, __ATOMIC_ACQUIRE))
                _exit(0);
            m[off] = 1;
        }
    }
    __atomic_add_fetch(&sh->ready, 1, __ATOMIC_ACQ_REL);
    futex(&sh->ready, FUTEX_WAKE, INT_MAX, NULL);
    while (!__atomic_load_n(&sh->release, __ATOMIC_ACQUIRE)) {
        int64_t left = until_ns - tc_now_ns();
        if (left <= 0)
            break;
        struct timespec ts = {(time_t)(left / 1000000000), (long)(left % 1000000000)};
        futex(&sh->release, FUTEX_WAIT, 0, &ts);
    }
    _exit(0);
}

int tc_procmem_start(int64_t count, int64_t touch_kib, int64_t lifetime_ns, int32_t *pids,
                     tc_procmem_result *out, tc_procmem **handle)
{
    if (!pids || !out || !handle || count < 1 || count > 100000 || touch_kib < 0 ||
        touch_kib > ((int64_t)1 << 30) || lifetime_ns < 1)
        return TC_EINVAL;
    memset(out, 0, sizeof *out);
    *handle = NULL;
    tc_procmem *h = calloc(1, sizeof *h);
    if (!h)
        return TC_ENOMEM;
    h->pids = calloc((size_t)count, sizeof *h->pids);
    h->sh = mmap(NULL, sizeof *h->sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                 -1, 0);
    if (!h->pids || h->sh == MAP_FAILED) {
        if (h->sh != MAP_FAILED && h->sh)
            munmap(h->sh, sizeof *h->sh);
        free(h->pids);
        free(h);
        return TC_ENOMEM;
    }
    memset(h->sh, 0, sizeof *h->sh);
    *handle = h;
    int64_t until = tc_now_ns() + lifetime_ns;
    pid_t parent = getpid();
    int status = TC_OK;
    int64_t next_poll = 0;
    for (; h->started < count; h->started++) {
        if (tc_stop_due(&next_poll)) {
            status = TC_ESTOPPED;
            break;
        }
        pid_t pid = fork();
        if (pid < 0) {
            out->err = errno;
            status = TC_ELIMIT;
            break;
        }
        if (pid == 0)
            child_main(h->sh, touch_kib, until, parent);
        h->pids[h->started] = pid;
        pids[h->started] = (int32_t)pid;
    }
    out->started = h->started;
    for (;;) {
        int seen = __atomic_load_n(&h->sh->ready, __ATOMIC_ACQUIRE);
        if (seen >= h->started || status == TC_ESTOPPED)
            break;
        if (tc_stop_due(&next_poll)) {
            status = TC_ESTOPPED;
            break;
        }
        int64_t left = until - tc_now_ns();
        if (left <= 0) {
            if (status == TC_OK)
                status = TC_ETIMEOUT;
            break;
        }
        /* a child that failed to map its memory never gets ready: poll its state */
        struct timespec ts = {0, left < 10000000 ? (long)left : 10000000};
        futex(&h->sh->ready, FUTEX_WAIT, seen, &ts);
        int st;
        pid_t gone = waitpid(-1, &st, WNOHANG);
        if (gone > 0) {
            for (int64_t i = 0; i < h->started; i++)
                if (h->pids[i] == gone) {
                    h->pids[i] = 0; /* reaped here; stop skips it */
                    out->stopped++;
                }
            out->err = ENOMEM;
            status = TC_ELIMIT;
            break;
        }
    }
    out->ready = __atomic_load_n(&h->sh->ready, __ATOMIC_ACQUIRE);
    if (status == TC_ESTOPPED) { /* asked to stop: release and reap every child here */
        tc_procmem_result reaped;
        memset(&reaped, 0, sizeof reaped);
        tc_procmem_stop(h, &reaped);
        out->stopped += reaped.stopped;
        *handle = NULL;
    }
    return status;
}

int tc_procmem_stop(tc_procmem *h, tc_procmem_result *out)
{
    if (!h || !out)
        return TC_EINVAL;
    __atomic_store_n(&h->sh->release, 1, __ATOMIC_RELEASE);
    futex(&h->sh->release, FUTEX_WAKE, INT_MAX, NULL);
    for (int64_t i = 0; i < h->started; i++) {
        if (h->pids[i] <= 0)
            continue;
        int st;
        pid_t r;
        while ((r = waitpid(h->pids[i], &st, 0)) < 0 && errno == EINTR)
            ;
        if (r == h->pids[i])
            out->stopped++;
    }
    munmap(h->sh, sizeof *h->sh);
    free(h->pids);
    free(h);
    return TC_OK;
}
