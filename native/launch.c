/* launch.c - claim C09 (thread vs process launch) and the time side of C10.
 *
 * Every launch is timed with tc_now_ns() (CLOCK_MONOTONIC through the vDSO)
 * into a caller-owned array; the child reads the clock as its first action and
 * stores it in memory the parent can see (the thread's argument, a shared
 * anonymous page, or for posix_spawn a memfd the child gets as fd 3).
 * Everything started is reaped before a function returns.
 */
#define _GNU_SOURCE
#include "tc_launch.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CLONE_STACK_BYTES (64 * 1024)

/* ---- what the children run ------------------------------------------- */

static void *thread_first_run(void *arg)
{
    *(volatile int64_t *)arg = tc_now_ns();
    return NULL;
}

static int clone_first_run(void *arg)
{
    *(volatile int64_t *)arg = tc_now_ns();
    return 0;
}

/* vfork's child borrows the parent's stack: keep its frame tiny and separate. */
static pid_t __attribute__((noinline)) vfork_child_stamps(volatile int64_t *slot)
{
    pid_t pid = vfork();
    if (pid == 0) {
        *slot = tc_now_ns();
        _exit(0);
    }
    return pid;
}

static pid_t __attribute__((noinline)) fork_child_stamps(volatile int64_t *slot)
{
    pid_t pid = fork();
    if (pid == 0) {
        *slot = tc_now_ns();
        _exit(0);
    }
    return pid;
}

static int reap(pid_t pid)
{
    int st;
    while (waitpid(pid, &st, 0) < 0) {
        if (errno != EINTR)
            return errno;
    }
    return 0;
}

static void pause_for(int64_t ns)
{
    if (ns <= 0)
        return;
    struct timespec ts = {.tv_sec = ns / 1000000000LL, .tv_nsec = ns % 1000000000LL};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

static int limit_or_sys(int err)
{
    return (err == EAGAIN || err == ENOMEM) ? TC_ELIMIT : TC_ESYS;
}

/* ---- the series -------------------------------------------------------- */

typedef struct {
    int kind;
    pthread_attr_t attr;
    int use_attr;
    volatile int64_t *slot;   /* where the child writes its first clock read */
    char *clone_stack;
    int memfd;
    posix_spawn_file_actions_t fa;
    int fa_ready;
    const char *spawn_path;
    char *spawn_argv[2];
    char *spawn_envp[1];
} launcher;

/* fork, then in the child the stamp fd at 3 and execve of the tiny binary
 * (what posix_spawn does for it, written the classic way). */
static pid_t fork_exec_child(launcher *l)
{
    pid_t pid = fork();
    if (pid == 0) {
        if (l->memfd == 3) {
            if (fcntl(3, F_SETFD, 0) != 0)
                _exit(127);
        } else if (dup2(l->memfd, 3) != 3) {
            _exit(127);
        }
        execve(l->spawn_path, l->spawn_argv, l->spawn_envp);
        _exit(127);
    }
    return pid;
}

/* The launch kinds that start the tiny binary (its clock read comes back in a memfd). */
static int execs_binary(int kind)
{
    return kind == TC_LAUNCH_POSIX_SPAWN || kind == TC_LAUNCH_FORK_EXEC;
}

/* One create; returns 0 or an errno, and the handle to join. */
static int do_create(launcher *l, pthread_t *tid, pid_t *pid)
{
    switch (l->kind) {
    case TC_LAUNCH_THREAD:
        return pthread_create(tid, l->use_attr ? &l->attr : NULL, thread_first_run,
                              (void *)l->slot);
    case TC_LAUNCH_FORK:
        *pid = fork_child_stamps(l->slot);
        return *pid < 0 ? errno : 0;
    case TC_LAUNCH_VFORK:
        *pid = vfork_child_stamps(l->slot);
        return *pid < 0 ? errno : 0;
    case TC_LAUNCH_CLONE:
        *pid = clone(clone_first_run, l->clone_stack + CLONE_STACK_BYTES,
                     CLONE_VM | CLONE_VFORK | SIGCHLD, (void *)l->slot);
        return *pid < 0 ? errno : 0;
    case TC_LAUNCH_POSIX_SPAWN:
        return posix_spawn(pid, l->spawn_path, &l->fa, NULL, l->spawn_argv, l->spawn_envp);
    case TC_LAUNCH_FORK_EXEC:
        *pid = fork_exec_child(l);
        return *pid < 0 ? errno : 0;
    default:
        return EINVAL;
    }
}

static int do_join(launcher *l, pthread_t tid, pid_t pid)
{
    if (l->kind == TC_LAUNCH_THREAD)
        return pthread_join(tid, NULL);
    return reap(pid);
}

/* The child's clock read: from the shared slot, or for posix_spawn from the memfd. */
static int64_t child_stamp(launcher *l)
{
    if (execs_binary(l->kind)) {
        int64_t v = 0;
        if (pread(l->memfd, &v, sizeof v, 0) != (ssize_t)sizeof v)
            return 0;
        return v;
    }
    return *l->slot;
}

static void clear_stamp(launcher *l)
{
    *l->slot = 0;
    if (execs_binary(l->kind)) {
        int64_t zero = 0;
        if (pwrite(l->memfd, &zero, sizeof zero, 0) != (ssize_t)sizeof zero)
            *l->slot = 0;
    }
}

static void launcher_close(launcher *l)
{
    if (l->fa_ready)
        posix_spawn_file_actions_destroy(&l->fa);
    if (l->memfd >= 0)
        close(l->memfd);
    if (l->clone_stack)
        munmap(l->clone_stack, CLONE_STACK_BYTES);
    if (l->use_attr)
        pthread_attr_destroy(&l->attr);
    if (l->slot)
        munmap((void *)l->slot, (size_t)sysconf(_SC_PAGESIZE));
}

static int launcher_open(launcher *l, int kind, int64_t stack_kib, const char *spawn_path,
                         int *err)
{
    memset(l, 0, sizeof *l);
    l->kind = kind;
    l->memfd = -1;
    void *page = mmap(NULL, (size_t)sysconf(_SC_PAGESIZE), PROT_READ | PROT_WRITE,
                      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED) {
        *err = errno;
        return limit_or_sys(errno);
    }
    l->slot = page;
    if (kind == TC_LAUNCH_THREAD && stack_kib > 0) {
        int e = pthread_attr_init(&l->attr);
        if (e == 0) {
            l->use_attr = 1;
            e = pthread_attr_setstacksize(&l->attr, (size_t)stack_kib * 1024);
        }
        if (e != 0) {
            *err = e;
            return TC_EINVAL;
        }
    }
    if (kind == TC_LAUNCH_CLONE) {
        void *stack = mmap(NULL, CLONE_STACK_BYTES, PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
        if (stack == MAP_FAILED) {
            *err = errno;
            return limit_or_sys(errno);
        }
        l->clone_stack = stack;
    }
    if (execs_binary(kind)) {
        if (!spawn_path)
            return TC_EINVAL;
        l->spawn_path = spawn_path;
        l->spawn_argv[0] = (char *)spawn_path;
        l->memfd = memfd_create("threadcost-spawn-stamp", MFD_CLOEXEC);
        if (l->memfd < 0 || ftruncate(l->memfd, 8) != 0) {
            *err = errno;
            return TC_ESYS;
        }
        int e = 0;
        if (kind == TC_LAUNCH_POSIX_SPAWN) {  /* fork+exec moves the fd itself */
            e = posix_spawn_file_actions_init(&l->fa);
            if (e == 0) {
                l->fa_ready = 1;
                e = posix_spawn_file_actions_adddup2(&l->fa, l->memfd, 3);
            }
        }
        if (e != 0) {
            *err = e;
            return TC_ESYS;
        }
    }
    return TC_OK;
}

/* Map and write every page of `kib` KiB; 4 KiB pages (no THP) so fork copies
 * one page-table entry per page, as in an ordinary heap. */
static void *touch_parent_memory(int64_t kib, int *err, int *stopped)
{
    size_t bytes = (size_t)kib * 1024;
    void *mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED) {
        *err = errno;
        return NULL;
    }
    madvise(mem, bytes, MADV_NOHUGEPAGE);
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    volatile unsigned char *v = mem;
    int64_t next_poll = 0;
    for (size_t off = 0; off < bytes; off += page) {
        if (tc_stop_due(&next_poll)) {
            munmap(mem, bytes);
            *stopped = 1;
            return NULL;
        }
        v[off] = (unsigned char)(off / page) | 1;
    }
    return mem;
}

int tc_launch_series(int kind, int iterations, int warmup, int64_t stack_kib,
                     int64_t parent_touch_kib, int64_t pause_ns, const char *spawn_path,
                     tc_launch_sample *first, tc_launch_sample *samples,
                     tc_launch_result *out)
{
    if (!out || !samples || iterations < 1 || warmup < 0 || (warmup > 0 && !first) ||
        kind < TC_LAUNCH_THREAD || kind > TC_LAUNCH_FORK_EXEC || stack_kib < 0 ||
        parent_touch_kib < 0 || pause_ns < 0)
        return TC_EINVAL;
    memset(out, 0, sizeof *out);

    tc_proc_status st;
    memset(&st, 0, sizeof st);
    tc_read_proc_status(&st);
    out->rss_before_touch_kib = st.rss_kib;
    void *held = NULL;
    if (parent_touch_kib > 0) {
        int stopped = 0;
        held = touch_parent_memory(parent_touch_kib, &out->err, &stopped);
        if (!held)
            return stopped ? TC_ESTOPPED : TC_ELIMIT;
    }
    out->touched_kib = parent_touch_kib;
    tc_read_proc_status(&st);
    out->rss_after_touch_kib = st.rss_kib;

    launcher l;
    int status = launcher_open(&l, kind, stack_kib, spawn_path, &out->err);
    const int total = warmup + iterations;
    int64_t next_poll = 0;
    for (int i = 0; status == TC_OK && i < total; i++) {
        if (tc_stop_due(&next_poll)) {  /* between launches, outside the timed regions */
            status = TC_ESTOPPED;
            break;
        }
        pthread_t tid;
        pid_t pid = -1;
        clear_stamp(&l);
        int64_t t0 = tc_now_ns();
        int e = do_create(&l, &tid, &pid);
        int64_t t1 = tc_now_ns();
        if (e != 0) {
            out->err = e;
            status = limit_or_sys(e);
            break;
        }
        pause_for(pause_ns);
        int64_t t2 = pause_ns > 0 ? tc_now_ns() : t1;
        e = do_join(&l, tid, pid);
        int64_t t3 = tc_now_ns();
        if (e != 0) {
            out->err = e;
            status = TC_ESYS;
            break;
        }
        int64_t stamp = child_stamp(&l);
        tc_launch_sample *s = i < warmup ? &first[i] : &samples[i - warmup];
        s->create_ns = t1 - t0;
        s->first_run_ns = stamp > 0 ? stamp - t0 : -1;
        s->join_ns = t3 - t2;
        s->lifecycle_ns = (t1 - t0) + (t3 - t2);
        if (i < warmup)
            out->warmup_done = i + 1;
        else
            out->done = i - warmup + 1;
    }
    launcher_close(&l);
    if (held)
        munmap(held, (size_t)parent_touch_kib * 1024);
    return status;
}

/* ---- the baseline written the obvious way --------------------------------- */

static void *empty_thread(void *arg)
{
    return arg;
}

int tc_launch_plain_loop(int iterations, int64_t *total_ns, int *err)
{
    if (iterations < 1 || !total_ns || !err)
        return TC_EINVAL;
    *err = 0;
    int64_t t0 = tc_now_ns();
    int64_t next_poll = 0;
    for (int i = 0; i < iterations; i++) {
        /* polled every 1,024 launches (~10 ms), so the loop stays the obvious one */
        if ((i & 1023) == 1023 && tc_stop_due(&next_poll)) {
            *total_ns = tc_now_ns() - t0;
            return TC_ESTOPPED;
        }
        pthread_t t;
        int e = pthread_create(&t, NULL, empty_thread, NULL);
        if (e != 0) {
            *err = e;
            *total_ns = tc_now_ns() - t0;
            return limit_or_sys(e);
        }
        pthread_join(t, NULL);
    }
    *total_ns = tc_now_ns() - t0;
    return TC_OK;
}

/* ---- a burst of threads, all alive at once ------------------------------- */

static void *wait_for_release(void *arg)
{
    int fd = *(const int *)arg;
    char c;
    while (read(fd, &c, 1) < 0 && errno == EINTR) {
    }
    return NULL;
}

static int64_t rusage_us(const struct timeval *tv)
{
    return (int64_t)tv->tv_sec * 1000000 + tv->tv_usec;
}

int tc_launch_burst(int n, int64_t stack_kib, int64_t *create_ns, tc_burst_result *out)
{
    if (!out || !create_ns || n < 1 || stack_kib < 0)
        return TC_EINVAL;
    memset(out, 0, sizeof *out);
    pthread_t *tids = calloc((size_t)n, sizeof *tids);
    if (!tids)
        return TC_ENOMEM;
    int release[2];
    if (pipe2(release, O_CLOEXEC) != 0) {
        out->err = errno;
        free(tids);
        return limit_or_sys(errno == EMFILE || errno == ENFILE ? EAGAIN : errno);
    }
    pthread_attr_t attr;
    int use_attr = 0;
    if (stack_kib > 0) {
        if (pthread_attr_init(&attr) != 0) {
            close(release[0]);
            close(release[1]);
            free(tids);
            return TC_ESYS;
        }
        use_attr = 1;
        if (pthread_attr_setstacksize(&attr, (size_t)stack_kib * 1024) != 0) {
            pthread_attr_destroy(&attr);
            close(release[0]);
            close(release[1]);
            free(tids);
            return TC_EINVAL;
        }
    }
    tc_proc_status before, alive;
    memset(&before, 0, sizeof before);
    memset(&alive, 0, sizeof alive);
    tc_read_proc_status(&before);
    struct rusage ru0, ru1;
    getrusage(RUSAGE_SELF, &ru0);

    int status = TC_OK;
    int64_t start = tc_now_ns();
    int64_t next_poll = 0;
    for (int i = 0; i < n; i++) {
        if (tc_stop_due(&next_poll)) {  /* the threads started so far are joined below */
            status = TC_ESTOPPED;
            break;
        }
        int64_t t0 = tc_now_ns();
        int e = pthread_create(&tids[i], use_attr ? &attr : NULL, wait_for_release,
                               &release[0]);
        int64_t t1 = tc_now_ns();
        if (e != 0) {
            out->err = e;
            status = limit_or_sys(e);
            break;
        }
        create_ns[i] = t1 - t0;
        out->created = i + 1;
    }
    out->create_total_ns = tc_now_ns() - start;
    tc_read_proc_status(&alive);

    int64_t r0 = tc_now_ns();
    close(release[1]);  /* every blocked read() now returns 0 */
    for (int i = 0; i < out->created; i++)
        pthread_join(tids[i], NULL);
    out->join_total_ns = tc_now_ns() - r0;
    getrusage(RUSAGE_SELF, &ru1);
    close(release[0]);

    out->user_us = rusage_us(&ru1.ru_utime) - rusage_us(&ru0.ru_utime);
    out->sys_us = rusage_us(&ru1.ru_stime) - rusage_us(&ru0.ru_stime);
    out->threads_alive = alive.threads;
    out->vsz_delta_kib = alive.vsz_kib - before.vsz_kib;
    out->rss_delta_kib = alive.rss_kib - before.rss_kib;
    if (use_attr)
        pthread_attr_destroy(&attr);
    free(tids);
    return status;
}

/* ---- the memcpy yardstick --------------------------------------------------- */

int tc_memcpy_series(int64_t bytes, int iterations, int warmup, int64_t *samples)
{
    if (bytes < 1 || bytes > (INT64_C(1) << 30) || iterations < 1 || warmup < 0 || !samples)
        return TC_EINVAL;
    unsigned char *src, *dst;
    void *region;
    if (tc_copy_buffers(bytes, &src, &dst, &region) != TC_OK)
        return TC_ENOMEM;
    memset(src, 0x5a, (size_t)bytes);
    memset(dst, 0xa5, (size_t)bytes);
    int64_t next_poll = 0;
    for (int i = 0; i < warmup + iterations; i++) {
        if (tc_stop_due(&next_poll)) {
            free(region);
            return TC_ESTOPPED;
        }
        int64_t t0 = tc_now_ns();
        memcpy(dst, src, (size_t)bytes);
        __asm__ volatile("" : : "r"(dst) : "memory");  /* the copy must happen */
        int64_t t1 = tc_now_ns();
        if (i >= warmup)
            samples[i - warmup] = t1 - t0;
        src[i % bytes] ^= 1;  /* a different source each time */
    }
    free(region);
    return TC_OK;
}
