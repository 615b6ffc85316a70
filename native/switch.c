/*
 * switch.c - context-switch cost: two tasks ping-pong a token.
 *
 * Side A (a new thread of this process) passes a token to side B (a new
 * thread, or a forked child process) and waits for it to come back: one round
 * trip. The token travels through a pipe pair, a mutex + condition variable,
 * a futex word per side, or an eventfd pair. Each side may write a working
 * set of its own memory before passing the token on (the lmbench lat_ctx -s
 * idea: the cache and TLB footprint a real task would drag along).
 *
 * The calling thread is the watchdog: it never takes part in the ping-pong,
 * so its CPU affinity is never changed, and when no round trip completes
 * within timeout_ms it stops both sides (an abort flag plus a wake-up through
 * every mechanism) and returns TC_ETIMEOUT. Every path releases what it made:
 * threads are joined, the child is reaped (SIGKILL after a grace period if it
 * does not exit on request), fds are closed and mappings unmapped.
 */
#define _GNU_SOURCE
#include "tc_switch.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_MESSAGE 4096          /* PIPE_BUF: a hop's write is atomic */
#define MAX_ITERATIONS 100000000LL
#define LINE 64                   /* bytes between two stores of a working-set touch */
#define CHILD_GRACE_MS 1000       /* time a child gets to exit after an abort */

/* Memory both sides see: MAP_SHARED, so it also works across fork(). */
typedef struct {
    int token_a;                  /* futex: 1 when A may go on */
    int token_b;                  /* futex: 1 when B may go on */
    int turn;                     /* condvar: 0 A's turn, 1 B's turn (under mu) */
    int abort;                    /* atomic: stop now */
    int b_ready;                  /* atomic: B is set up and waiting */
    int b_done;                   /* atomic: B finished and wrote its results */
    int64_t progress;             /* atomic: round trips A completed (warm-up included) */
    pthread_mutex_t mu;
    pthread_cond_t cond_a;
    pthread_cond_t cond_b;
    int b_status;                 /* TC_* of side B */
    int b_err;
    int b_where;
    tc_switch_side b_side;
    int32_t cpu_b[];              /* record_cpus: B's CPU per timed round trip */
} shared_t;

typedef struct {
    const tc_switch_config *cfg;
    shared_t *sh;
    size_t sh_bytes;
    int pipe_ab[2];               /* A -> B */
    int pipe_ba[2];               /* B -> A */
    int efd_ab;
    int efd_ba;
    int futex_private;            /* FUTEX_PRIVATE_FLAG for threads, 0 across processes */
    int sync_made;                /* mu and the condvars were initialised */
    int64_t *samples;
    int32_t *cpu_a;
    /* side A's outcome, read by the watchdog after joining A */
    int a_status;
    int a_err;
    int a_where;
    int64_t completed;
    int64_t total_ns;
    tc_switch_side a_side;
    /* the watchdog's own wake-up when A is done */
    int a_done;                   /* under done_mu */
    int stopped;                  /* the watchdog saw tc_stop_requested() */
    pthread_mutex_t done_mu;
    pthread_cond_t done_cond;
} ctx_t;

/* ------------------------------------------------------------------ helpers */

static long sys_futex(int *addr, int op, int val)
{
    return syscall(SYS_futex, addr, op, val, NULL, NULL, 0);
}

static int is_limit_errno(int e)
{
    return e == EAGAIN || e == ENOMEM || e == EMFILE || e == ENFILE;
}

static int64_t tv_ns(struct timeval tv)
{
    return (int64_t)tv.tv_sec * 1000000000LL + (int64_t)tv.tv_usec * 1000LL;
}

static void usage_now(struct rusage *ru)
{
    if (getrusage(RUSAGE_THREAD, ru) != 0)
        memset(ru, 0, sizeof *ru);
}

static void usage_delta(const struct rusage *a, const struct rusage *b, tc_switch_side *s)
{
    s->voluntary = (int64_t)(b->ru_nvcsw - a->ru_nvcsw);
    s->involuntary = (int64_t)(b->ru_nivcsw - a->ru_nivcsw);
    s->user_ns = tv_ns(b->ru_utime) - tv_ns(a->ru_utime);
    s->sys_ns = tv_ns(b->ru_stime) - tv_ns(a->ru_stime);
}

static void sleep_us(long us)
{
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static int aborted(const shared_t *sh)
{
    return __atomic_load_n(&sh->abort, __ATOMIC_ACQUIRE);
}

/* Pin the calling thread (cpu >= 0) and note where it runs. */
static int pin_side(int cpu, tc_switch_side *side)
{
    side->pin_err = 0;
    if (cpu >= 0) {
        int e = tc_pin_self(cpu);
        if (e != 0) {
            side->pin_err = e;
            return e;
        }
    }
    side->cpu_after_pin = sched_getcpu();
    return 0;
}

/* A private working set, every page faulted in before timing starts. */
static volatile uint64_t *map_working_set(int64_t bytes, int *err)
{
    if (bytes <= 0)
        return NULL;
    void *p = mmap(NULL, (size_t)bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        *err = errno;
        return NULL;
    }
    memset(p, 1, (size_t)bytes);
    return (volatile uint64_t *)p;
}

/* Write one 8-byte word in every 64-byte line: the whole set passes through the cache. */
/* One copy of the working-set walk, called by every timed loop and its baseline (as
 * indirect.c's walk): inlined, each caller had its own copy of the loop at its own
 * alignment, and a loop that crosses a 64-byte boundary can run slower, so the
 * switch and its baseline would have timed different machine code. */
__attribute__((noinline, aligned(64)))
static void touch(volatile uint64_t *ws, int64_t bytes, uint64_t value)
{
    const int64_t step = LINE / (int64_t)sizeof(uint64_t);
    const int64_t words = bytes / (int64_t)sizeof(uint64_t);
    for (int64_t i = 0; i < words; i += step)
        ws[i] = value;
}

static int write_full(int fd, const void *buf, size_t n)
{
    const char *p = buf;
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* 0: got n bytes; 1: aborted; -1: error (errno). */
static int read_full(const shared_t *sh, int fd, void *buf, size_t n)
{
    char *p = buf;
    while (n > 0) {
        ssize_t r = read(fd, p, n);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (r == 0) {
            errno = EPIPE;
            return -1;
        }
        if (aborted(sh))
            return 1;
        p += r;
        n -= (size_t)r;
    }
    return 0;
}

/* ------------------------------------------------------- the token's path */

/* Pass the token to the other side. to_b: A passes to B; else B passes to A.
 * condvar: the caller holds mu. 0 or -1 (errno). */
static int give(ctx_t *c, int to_b, const char *msg)
{
    shared_t *sh = c->sh;
    switch (c->cfg->mechanism) {
    case TC_SW_PIPE:
        return write_full(to_b ? c->pipe_ab[1] : c->pipe_ba[1], msg,
                          (size_t)c->cfg->message_bytes);
    case TC_SW_EVENTFD: {
        uint64_t one = 1;
        return write_full(to_b ? c->efd_ab : c->efd_ba, &one, sizeof one);
    }
    case TC_SW_FUTEX: {
        int *word = to_b ? &sh->token_b : &sh->token_a;
        __atomic_store_n(word, 1, __ATOMIC_RELEASE);
        if (sys_futex(word, FUTEX_WAKE | c->futex_private, 1) < 0)
            return -1;
        return 0;
    }
    case TC_SW_CONDVAR:
        sh->turn = to_b ? 1 : 0;
        return pthread_cond_signal(to_b ? &sh->cond_b : &sh->cond_a) == 0 ? 0 : -1;
    }
    errno = EINVAL;
    return -1;
}

/* Wait for the token. for_a: A waits; else B waits. condvar: the caller holds mu.
 * 0: got it; 1: aborted; -1: error (errno). */
static int take(ctx_t *c, int for_a, char *msg)
{
    shared_t *sh = c->sh;
    switch (c->cfg->mechanism) {
    case TC_SW_PIPE:
        return read_full(sh, for_a ? c->pipe_ba[0] : c->pipe_ab[0], msg,
                         (size_t)c->cfg->message_bytes);
    case TC_SW_EVENTFD: {
        uint64_t v;
        int r = read_full(sh, for_a ? c->efd_ba : c->efd_ab, &v, sizeof v);
        return r;
    }
    case TC_SW_FUTEX: {
        int *word = for_a ? &sh->token_a : &sh->token_b;
        while (__atomic_load_n(word, __ATOMIC_ACQUIRE) == 0) {
            if (aborted(sh))
                return 1;
            if (sys_futex(word, FUTEX_WAIT | c->futex_private, 0) < 0 &&
                errno != EAGAIN && errno != EINTR)
                return -1;
        }
        __atomic_store_n(word, 0, __ATOMIC_RELAXED);
        return aborted(sh) ? 1 : 0;
    }
    case TC_SW_CONDVAR: {
        int want = for_a ? 0 : 1;
        pthread_cond_t *cv = for_a ? &sh->cond_a : &sh->cond_b;
        while (sh->turn != want) {
            if (aborted(sh))
                return 1;
            int e = pthread_cond_wait(cv, &sh->mu);
            if (e != 0) {
                errno = e;
                return -1;
            }
        }
        return aborted(sh) ? 1 : 0;
    }
    }
    errno = EINVAL;
    return -1;
}

/* Stop both sides: set abort, then wake whoever waits, through every mechanism.
 * holding_mu: the caller holds the condvar mutex. Safe to call more than once,
 * from A, from B (thread or child) and from the watchdog. */
static void stop_all(ctx_t *c, int holding_mu)
{
    shared_t *sh = c->sh;
    __atomic_store_n(&sh->abort, 1, __ATOMIC_SEQ_CST);
    const tc_switch_config *cfg = c->cfg;
    if (cfg->mechanism == TC_SW_PIPE) {
        char z = 0;
        /* one byte is enough: a reader checks abort after every read */
        if (write(c->pipe_ab[1], &z, 1) < 0) { /* nothing more can be done */ }
        if (write(c->pipe_ba[1], &z, 1) < 0) { }
    } else if (cfg->mechanism == TC_SW_EVENTFD) {
        uint64_t one = 1;
        if (write(c->efd_ab, &one, sizeof one) < 0) { }
        if (write(c->efd_ba, &one, sizeof one) < 0) { }
    } else if (cfg->mechanism == TC_SW_FUTEX) {
        __atomic_store_n(&sh->token_a, 1, __ATOMIC_SEQ_CST);
        __atomic_store_n(&sh->token_b, 1, __ATOMIC_SEQ_CST);
        sys_futex(&sh->token_a, FUTEX_WAKE | c->futex_private, INT_MAX);
        sys_futex(&sh->token_b, FUTEX_WAKE | c->futex_private, INT_MAX);
    } else if (cfg->mechanism == TC_SW_CONDVAR && c->sync_made) {
        int locked = 0;
        if (!holding_mu) {
            struct timespec dl;
            clock_gettime(CLOCK_REALTIME, &dl);
            dl.tv_nsec += 500 * 1000000L;
            if (dl.tv_nsec >= 1000000000L) {
                dl.tv_sec++;
                dl.tv_nsec -= 1000000000L;
            }
            locked = pthread_mutex_timedlock(&sh->mu, &dl) == 0;
        }
        pthread_cond_broadcast(&sh->cond_a);
        pthread_cond_broadcast(&sh->cond_b);
        if (locked)
            pthread_mutex_unlock(&sh->mu);
    }
}

/* ------------------------------------------------------------------ side B */

/* Runs in B's thread or in the child. Results go to shared memory. */
static void run_side_b(ctx_t *c)
{
    const tc_switch_config *cfg = c->cfg;
    shared_t *sh = c->sh;
    char msg[MAX_MESSAGE];
    memset(msg, 'b', sizeof msg);
    int st = TC_OK, where = TC_SW_STEP_NONE, err = 0;
    volatile uint64_t *ws = NULL;
    struct rusage r0, r1;
    memset(&r0, 0, sizeof r0);
    memset(&r1, 0, sizeof r1);
    int holding = 0;
    const int64_t total = cfg->warmup + cfg->iterations;
    int64_t i = 0;

    if (pin_side(cfg->cpu_b, &sh->b_side) != 0) {
        st = TC_ESYS;
        where = TC_SW_STEP_PIN;
        err = sh->b_side.pin_err;
        goto out;
    }
    if (cfg->working_set_bytes > 0) {
        ws = map_working_set(cfg->working_set_bytes, &err);
        if (!ws) {
            st = is_limit_errno(err) ? TC_ELIMIT : TC_ESYS;
            where = TC_SW_STEP_WORKSET;
            goto out;
        }
    }
    if (cfg->mechanism == TC_SW_CONDVAR) {
        pthread_mutex_lock(&sh->mu);
        holding = 1;
    }
    __atomic_store_n(&sh->b_ready, 1, __ATOMIC_RELEASE);

    for (i = 0; i < total; i++) {
        if (i == cfg->warmup)
            usage_now(&r0);
        if (cfg->test_stall_after >= 0 && i >= cfg->test_stall_after) {
            /* test hook: stop answering (without holding the mutex) until stopped */
            if (holding) {
                pthread_mutex_unlock(&sh->mu);
                holding = 0;
            }
            while (!aborted(sh))
                sleep_us(1000);
            break;
        }
        int r = take(c, 0, msg);
        if (r == 1)
            break;
        if (r < 0) {
            st = TC_ESYS;
            where = TC_SW_STEP_PINGPONG;
            err = errno;
            break;
        }
        if (cfg->record_cpus && i >= cfg->warmup)
            sh->cpu_b[i - cfg->warmup] = (int32_t)sched_getcpu();
        if (ws)
            touch(ws, cfg->working_set_bytes, (uint64_t)i);
        if (give(c, 0, msg) != 0) {
            st = TC_ESYS;
            where = TC_SW_STEP_PINGPONG;
            err = errno;
            break;
        }
    }
    if (i == total) {
        usage_now(&r1);
        usage_delta(&r0, &r1, &sh->b_side);
    }
    if (holding)
        pthread_mutex_unlock(&sh->mu);
out:
    if (st != TC_OK)
        stop_all(c, 0);
    if (ws)
        munmap((void *)ws, (size_t)cfg->working_set_bytes);
    sh->b_status = st;
    sh->b_err = err;
    sh->b_where = where;
    __atomic_store_n(&sh->b_done, 1, __ATOMIC_RELEASE);
}

static void *side_b_thread(void *arg)
{
    run_side_b(arg);
    return NULL;
}

/* ------------------------------------------------------------------ side A */

static void a_finish(ctx_t *c)
{
    pthread_mutex_lock(&c->done_mu);
    c->a_done = 1;
    pthread_cond_signal(&c->done_cond);
    pthread_mutex_unlock(&c->done_mu);
}

static void *side_a_thread(void *arg)
{
    ctx_t *c = arg;
    const tc_switch_config *cfg = c->cfg;
    shared_t *sh = c->sh;
    char msg[MAX_MESSAGE];
    memset(msg, 'a', sizeof msg);
    volatile uint64_t *ws = NULL;
    int holding = 0;
    int st = TC_OK, where = TC_SW_STEP_NONE, err = 0;
    struct rusage r0, r1;
    int64_t done = 0;

    if (pin_side(cfg->cpu_a, &c->a_side) != 0) {
        st = TC_ESYS;
        where = TC_SW_STEP_PIN;
        err = c->a_side.pin_err;
        goto out;
    }
    if (cfg->working_set_bytes > 0) {
        ws = map_working_set(cfg->working_set_bytes, &err);
        if (!ws) {
            st = is_limit_errno(err) ? TC_ELIMIT : TC_ESYS;
            where = TC_SW_STEP_WORKSET;
            goto out;
        }
    }
    /* B sets itself up (pinning, its working set) outside any timed region */
    while (!__atomic_load_n(&sh->b_ready, __ATOMIC_ACQUIRE)) {
        if (aborted(sh) || __atomic_load_n(&sh->b_done, __ATOMIC_ACQUIRE))
            goto out;
        sleep_us(100);
    }
    if (cfg->mechanism == TC_SW_CONDVAR) {
        pthread_mutex_lock(&sh->mu);
        holding = 1;
    }
    for (int64_t i = 0; i < cfg->warmup; i++) {
        if (ws)
            touch(ws, cfg->working_set_bytes, (uint64_t)i);
        int r = give(c, 1, msg);
        if (r == 0)
            r = take(c, 1, msg);
        if (r == 1)
            goto unlock;
        if (r < 0) {
            st = TC_ESYS;
            where = TC_SW_STEP_PINGPONG;
            err = errno;
            goto unlock;
        }
        __atomic_store_n(&sh->progress, i + 1, __ATOMIC_RELAXED);
    }

    usage_now(&r0);
    const int64_t t_start = tc_now_ns();
    int64_t prev = t_start;
    for (int64_t i = 0; i < cfg->iterations; i++) {
        if (ws)
            touch(ws, cfg->working_set_bytes, (uint64_t)i);
        int r = give(c, 1, msg);
        if (r == 0)
            r = take(c, 1, msg);
        if (r != 0) {
            if (r < 0) {
                st = TC_ESYS;
                where = TC_SW_STEP_PINGPONG;
                err = errno;
            }
            break;
        }
        if (cfg->per_sample) {
            int64_t now = tc_now_ns();
            c->samples[i] = now - prev;
            prev = now;
        }
        if (cfg->record_cpus)
            c->cpu_a[i] = (int32_t)sched_getcpu();
        done = i + 1;
        __atomic_store_n(&sh->progress, cfg->warmup + done, __ATOMIC_RELAXED);
    }
    c->total_ns = tc_now_ns() - t_start;
    usage_now(&r1);
    usage_delta(&r0, &r1, &c->a_side);
    c->completed = done;
unlock:
    if (holding)
        pthread_mutex_unlock(&sh->mu);
out:
    if (st != TC_OK)
        stop_all(c, 0);
    if (ws)
        munmap((void *)ws, (size_t)cfg->working_set_bytes);
    c->a_status = st;
    c->a_err = err;
    c->a_where = where;
    a_finish(c);
    return NULL;
}

/* --------------------------------------------------------------- watchdog */

/* Wait until A is done; fire if no round trip completes for timeout_ms, or if
 * the child dies first. Returns 1 if it fired. *reaped is set when the child
 * was reaped here. */
static int watch(ctx_t *c, pid_t child, int *reaped)
{
    const int64_t timeout_ns = (int64_t)c->cfg->timeout_ms * 1000000LL;
    int64_t interval_ns = timeout_ns / 4;
    if (interval_ns > 100000000LL)
        interval_ns = 100000000LL;
    if (interval_ns < 1000000LL)
        interval_ns = 1000000LL;
    int64_t last = -1, last_change = tc_now_ns();
    int fired = 0;

    pthread_mutex_lock(&c->done_mu);
    while (!c->a_done) {
        struct timespec dl;
        clock_gettime(CLOCK_MONOTONIC, &dl);
        int64_t ns = (int64_t)dl.tv_nsec + interval_ns;
        dl.tv_sec += (time_t)(ns / 1000000000LL);
        dl.tv_nsec = (long)(ns % 1000000000LL);
        pthread_cond_timedwait(&c->done_cond, &c->done_mu, &dl);
        if (c->a_done || fired)
            continue;
        int64_t now = tc_now_ns();
        int64_t p = __atomic_load_n(&c->sh->progress, __ATOMIC_RELAXED);
        int child_gone = 0;
        if (child > 0 && !*reaped) {
            int status;
            if (waitpid(child, &status, WNOHANG) == child) {
                *reaped = 1;
                child_gone = !__atomic_load_n(&c->sh->b_done, __ATOMIC_ACQUIRE);
            }
        }
        if (p != last) {
            last = p;
            last_change = now;
        }
        if (tc_stop_requested()) {  /* asked to stop: polled every <= 100 ms */
            c->stopped = 1;
            fired = 1;
            pthread_mutex_unlock(&c->done_mu);
            stop_all(c, 0);
            pthread_mutex_lock(&c->done_mu);
            continue;
        }
        if (child_gone || now - last_change > timeout_ns) {
            fired = 1;
            pthread_mutex_unlock(&c->done_mu);
            stop_all(c, 0);
            pthread_mutex_lock(&c->done_mu);
        }
    }
    pthread_mutex_unlock(&c->done_mu);
    return fired;
}

/* Reap the child: it exits by itself once done or aborted; if it does not
 * within the grace period, SIGKILL it. Returns 1 if it had to be killed. */
static int reap_child(pid_t child)
{
    int status;
    for (int waited = 0; waited < CHILD_GRACE_MS; waited++) {
        pid_t r = waitpid(child, &status, WNOHANG);
        if (r == child || (r < 0 && errno != EINTR))
            return 0;
        sleep_us(1000);
    }
    kill(child, SIGKILL);
    while (waitpid(child, &status, 0) < 0 && errno == EINTR)
        ;
    return 1;
}

/* ------------------------------------------------------------ setup/teardown */

static int check_config(const tc_switch_config *cfg)
{
    long ncpu = sysconf(_SC_NPROCESSORS_CONF);
    if (ncpu < 1)
        ncpu = CPU_SETSIZE;
    if (cfg->mechanism < TC_SW_PIPE || cfg->mechanism > TC_SW_EVENTFD)
        return 0;
    if (cfg->tasks != TC_SW_THREADS && cfg->tasks != TC_SW_PROCESSES)
        return 0;
    if (cfg->cpu_a < -1 || cfg->cpu_a >= CPU_SETSIZE || cfg->cpu_b < -1 ||
        cfg->cpu_b >= CPU_SETSIZE)
        return 0;
    if (cfg->iterations < 1 || cfg->iterations > MAX_ITERATIONS || cfg->warmup < 0 ||
        cfg->warmup > MAX_ITERATIONS)
        return 0;
    if (cfg->working_set_bytes < 0 || cfg->working_set_bytes > ((int64_t)1 << 40))
        return 0;
    if (cfg->message_bytes < 1 || cfg->message_bytes > MAX_MESSAGE)
        return 0;
    if (cfg->timeout_ms < 1 || cfg->timeout_ms > 3600 * 1000)
        return 0;
    if (cfg->test_stall_after < -1)
        return 0;
    return 1;
}

static void close_fd(int *fd)
{
    if (*fd >= 0) {
        close(*fd);
        *fd = -1;
    }
}

static void teardown(ctx_t *c)
{
    close_fd(&c->pipe_ab[0]);
    close_fd(&c->pipe_ab[1]);
    close_fd(&c->pipe_ba[0]);
    close_fd(&c->pipe_ba[1]);
    close_fd(&c->efd_ab);
    close_fd(&c->efd_ba);
    if (c->sh) {
        if (c->sync_made) {
            pthread_cond_destroy(&c->sh->cond_a);
            pthread_cond_destroy(&c->sh->cond_b);
            pthread_mutex_destroy(&c->sh->mu);
        }
        munmap(c->sh, c->sh_bytes);
        c->sh = NULL;
    }
}

static int setup(ctx_t *c, tc_switch_result *out)
{
    const tc_switch_config *cfg = c->cfg;
    const int shared = cfg->tasks == TC_SW_PROCESSES;
    size_t cpus = cfg->record_cpus ? (size_t)cfg->iterations : 0;
    c->sh_bytes = sizeof(shared_t) + cpus * sizeof(int32_t);
    void *m = mmap(NULL, c->sh_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                   -1, 0);
    if (m == MAP_FAILED) {
        out->err = errno;
        return is_limit_errno(errno) ? TC_ELIMIT : TC_ESYS;
    }
    c->sh = m; /* zero-filled */
    c->futex_private = shared ? 0 : FUTEX_PRIVATE_FLAG;

    if (cfg->mechanism == TC_SW_PIPE) {
        if (pipe2(c->pipe_ab, O_CLOEXEC) != 0 || pipe2(c->pipe_ba, O_CLOEXEC) != 0)
            goto fail;
    } else if (cfg->mechanism == TC_SW_EVENTFD) {
        c->efd_ab = eventfd(0, EFD_CLOEXEC);
        if (c->efd_ab < 0)
            goto fail;
        c->efd_ba = eventfd(0, EFD_CLOEXEC);
        if (c->efd_ba < 0)
            goto fail;
    } else if (cfg->mechanism == TC_SW_CONDVAR) {
        pthread_mutexattr_t ma;
        pthread_condattr_t ca;
        pthread_mutexattr_init(&ma);
        pthread_condattr_init(&ca);
        if (shared) {
            pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED);
            pthread_condattr_setpshared(&ca, PTHREAD_PROCESS_SHARED);
        }
        int e = pthread_mutex_init(&c->sh->mu, &ma);
        if (e == 0) {
            e = pthread_cond_init(&c->sh->cond_a, &ca);
            if (e == 0) {
                e = pthread_cond_init(&c->sh->cond_b, &ca);
                if (e != 0)
                    pthread_cond_destroy(&c->sh->cond_a);
            }
            if (e != 0)
                pthread_mutex_destroy(&c->sh->mu);
        }
        pthread_mutexattr_destroy(&ma);
        pthread_condattr_destroy(&ca);
        if (e != 0) {
            errno = e;
            goto fail;
        }
        c->sync_made = 1;
        c->sh->turn = 0;
    }
    return TC_OK;
fail:
    out->err = errno;
    out->where = TC_SW_STEP_SETUP;
    return is_limit_errno(out->err) ? TC_ELIMIT : TC_ESYS;
}

int tc_switch_pingpong(const tc_switch_config *cfg, int64_t *round_trip_ns,
                       int32_t *cpu_a, int32_t *cpu_b, tc_switch_result *out)
{
    if (!out || !cfg)
        return TC_EINVAL;
    memset(out, 0, sizeof *out);
    if (!check_config(cfg) || (cfg->per_sample && !round_trip_ns) ||
        (cfg->record_cpus && (!cpu_a || !cpu_b)))
        return TC_EINVAL;

    ctx_t c;
    memset(&c, 0, sizeof c);
    c.cfg = cfg;
    c.pipe_ab[0] = c.pipe_ab[1] = c.pipe_ba[0] = c.pipe_ba[1] = -1;
    c.efd_ab = c.efd_ba = -1;
    c.samples = round_trip_ns;
    c.cpu_a = cpu_a;
    out->a.cpu_after_pin = out->b.cpu_after_pin = -1;

    int st = setup(&c, out);
    if (st != TC_OK) {
        teardown(&c);
        return st;
    }
    pthread_condattr_t wa;
    pthread_condattr_init(&wa);
    pthread_condattr_setclock(&wa, CLOCK_MONOTONIC);
    pthread_mutex_init(&c.done_mu, NULL);
    pthread_cond_init(&c.done_cond, &wa);
    pthread_condattr_destroy(&wa);

    pid_t child = -1;
    pthread_t tb, ta;
    int have_b = 0, have_a = 0, reaped = 0;

    /* B first: fork before this process gains the A thread */
    if (cfg->tasks == TC_SW_PROCESSES) {
        pid_t parent = getpid();
        child = fork();
        if (child == 0) {
            /* the child: a copy of this thread only; no malloc, no stdio */
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            if (getppid() != parent)
                _exit(1);
            run_side_b(&c);
            _exit(0);
        }
        if (child < 0) {
            out->err = errno;
            out->where = TC_SW_STEP_SPAWN;
            st = is_limit_errno(out->err) ? TC_ELIMIT : TC_ESYS;
            goto done;
        }
    } else {
        int e = pthread_create(&tb, NULL, side_b_thread, &c);
        if (e != 0) {
            out->err = e;
            out->where = TC_SW_STEP_SPAWN;
            st = is_limit_errno(e) ? TC_ELIMIT : TC_ESYS;
            goto done;
        }
        have_b = 1;
    }
    {
        int e = pthread_create(&ta, NULL, side_a_thread, &c);
        if (e != 0) {
            stop_all(&c, 0);
            out->err = e;
            out->where = TC_SW_STEP_SPAWN;
            st = is_limit_errno(e) ? TC_ELIMIT : TC_ESYS;
            goto done;
        }
        have_a = 1;
    }

    out->timed_out = watch(&c, child, &reaped);

done:
    if (have_a)
        pthread_join(ta, NULL);
    if (have_b)
        pthread_join(tb, NULL);
    if (child > 0 && !reaped)
        out->child_killed = reap_child(child);

    if (have_a) {
        out->completed = c.completed;
        out->total_ns = c.total_ns;
        out->a = c.a_side;
        out->b = c.sh->b_side;
        if (cfg->record_cpus && c.completed > 0)
            memcpy(cpu_b, c.sh->cpu_b, (size_t)c.completed * sizeof(int32_t));
        if (st == TC_OK) {
            if (c.stopped) {
                st = TC_ESTOPPED;
            } else if (out->timed_out) {
                st = TC_ETIMEOUT;
            } else if (c.a_status != TC_OK) {
                st = c.a_status;
                out->err = c.a_err;
                out->where = c.a_where;
            } else if (!__atomic_load_n(&c.sh->b_done, __ATOMIC_ACQUIRE)) {
                st = TC_ETIMEOUT;  /* the child vanished without reporting */
            } else if (c.sh->b_status != TC_OK) {
                st = c.sh->b_status;
                out->err = c.sh->b_err;
                out->where = c.sh->b_where;
            } else if (c.completed < cfg->iterations) {
                st = TC_ETIMEOUT;
            }
        }
    }
    pthread_cond_destroy(&c.done_cond);
    pthread_mutex_destroy(&c.done_mu);
    teardown(&c);
    return st;
}

/* --------------------------------------------------------------- baselines */

typedef struct {
    int kind;
    int cpu;
    int samples;
    int batch;
    int64_t ws_bytes;
    int message_bytes;
    int64_t *batch_ns;
    int status;
    int err;
} baseline_t;

static int baseline_batch(baseline_t *b, int fds[2], int efd, int *word,
                          pthread_mutex_t *mu, pthread_cond_t *cv, int *flag,
                          volatile uint64_t *ws, char *msg, int64_t *elapsed)
{
    const int n = b->batch;
    volatile int64_t sink = 0;
    int64_t t0 = tc_now_ns();
    switch (b->kind) {
    case TC_SWB_EMPTY_SYSCALL:
        for (int j = 0; j < n; j++)
            sink = syscall(SYS_getppid);
        break;
    case TC_SWB_LOCK_UNLOCK:
        for (int j = 0; j < n; j++) {
            pthread_mutex_lock(mu);
            pthread_mutex_unlock(mu);
        }
        break;
    case TC_SWB_SELF_PIPE:
        for (int j = 0; j < n; j++) {
            if (write_full(fds[1], msg, (size_t)b->message_bytes) != 0)
                return -1;
            size_t got = 0;
            while (got < (size_t)b->message_bytes) {
                ssize_t r = read(fds[0], msg + got, (size_t)b->message_bytes - got);
                if (r <= 0) {
                    if (r < 0 && errno == EINTR)
                        continue;
                    return -1;
                }
                got += (size_t)r;
            }
        }
        break;
    case TC_SWB_SELF_EVENTFD:
        for (int j = 0; j < n; j++) {
            uint64_t v = 1;
            if (write_full(efd, &v, sizeof v) != 0 || read(efd, &v, sizeof v) != sizeof v)
                return -1;
        }
        break;
    case TC_SWB_SELF_FUTEX:
        for (int j = 0; j < n; j++) {
            /* a wake nobody waits for, then a wait whose word already changed */
            __atomic_store_n(word, 1, __ATOMIC_RELEASE);
            sys_futex(word, FUTEX_WAKE | FUTEX_PRIVATE_FLAG, 1);
            sys_futex(word, FUTEX_WAIT | FUTEX_PRIVATE_FLAG, 0);
            __atomic_store_n(word, 0, __ATOMIC_RELAXED);
        }
        break;
    case TC_SWB_SELF_CONDVAR:
        for (int j = 0; j < n; j++) {
            pthread_mutex_lock(mu);
            *flag = !*flag;
            pthread_cond_signal(cv);
            pthread_mutex_unlock(mu);
        }
        break;
    case TC_SWB_TOUCH:
        for (int j = 0; j < n; j++)
            touch(ws, b->ws_bytes, (uint64_t)j);
        break;
    case TC_SWB_TIMER:
        for (int j = 0; j < n; j++)
            sink = tc_now_ns();
        break;
    case TC_SWB_GETCPU:
        for (int j = 0; j < n; j++)
            sink = sched_getcpu();
        break;
    }
    *elapsed = tc_now_ns() - t0;
    (void)sink;
    return 0;
}

static void *baseline_thread(void *arg)
{
    baseline_t *b = arg;
    int fds[2] = {-1, -1}, efd = -1, word = 0, flag = 0;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    char msg[MAX_MESSAGE];
    volatile uint64_t *ws = NULL;
    memset(msg, 'x', sizeof msg);
    pthread_mutex_init(&mu, NULL);
    pthread_cond_init(&cv, NULL);

    b->status = TC_OK;
    if (b->cpu >= 0) {
        int e = tc_pin_self(b->cpu);
        if (e != 0) {
            b->status = TC_ESYS;
            b->err = e;
            goto out;
        }
    }
    if (b->kind == TC_SWB_SELF_PIPE && pipe2(fds, O_CLOEXEC) != 0) {
        b->err = errno;
        b->status = is_limit_errno(errno) ? TC_ELIMIT : TC_ESYS;
        goto out;
    }
    if (b->kind == TC_SWB_SELF_EVENTFD) {
        efd = eventfd(0, EFD_CLOEXEC);
        if (efd < 0) {
            b->err = errno;
            b->status = is_limit_errno(errno) ? TC_ELIMIT : TC_ESYS;
            goto out;
        }
    }
    if (b->kind == TC_SWB_TOUCH && b->ws_bytes > 0) {
        ws = map_working_set(b->ws_bytes, &b->err);
        if (!ws) {
            b->status = is_limit_errno(b->err) ? TC_ELIMIT : TC_ESYS;
            goto out;
        }
    }
    /* warm-up: a tenth of the samples, untimed */
    int64_t elapsed, next_poll = 0;
    for (int i = 0; i < b->samples / 10 + 1; i++) {
        if (tc_stop_due(&next_poll)) { /* between batches, outside the timing */
            b->status = TC_ESTOPPED;
            goto out;
        }
        if (baseline_batch(b, fds, efd, &word, &mu, &cv, &flag, ws, msg, &elapsed) != 0) {
            b->status = TC_ESYS;
            b->err = errno;
            goto out;
        }
    }
    for (int i = 0; i < b->samples; i++) {
        if (tc_stop_due(&next_poll)) {
            b->status = TC_ESTOPPED;
            goto out;
        }
        if (baseline_batch(b, fds, efd, &word, &mu, &cv, &flag, ws, msg, &elapsed) != 0) {
            b->status = TC_ESYS;
            b->err = errno;
            goto out;
        }
        b->batch_ns[i] = elapsed;
    }
out:
    if (ws)
        munmap((void *)ws, (size_t)b->ws_bytes);
    close_fd(&fds[0]);
    close_fd(&fds[1]);
    close_fd(&efd);
    pthread_cond_destroy(&cv);
    pthread_mutex_destroy(&mu);
    return NULL;
}

int tc_switch_baseline(int kind, int cpu, int samples, int batch,
                       int64_t working_set_bytes, int message_bytes,
                       int64_t *batch_ns, int *err)
{
    if (!batch_ns || !err || kind < TC_SWB_EMPTY_SYSCALL || kind > TC_SWB_GETCPU ||
        cpu < -1 || cpu >= CPU_SETSIZE || samples < 1 || samples > 10000000 || batch < 1 ||
        batch > 1000000 || message_bytes < 1 || message_bytes > MAX_MESSAGE ||
        working_set_bytes < 0 || working_set_bytes > ((int64_t)1 << 40) ||
        (kind == TC_SWB_TOUCH && working_set_bytes == 0))
        return TC_EINVAL;
    *err = 0;
    baseline_t b;
    memset(&b, 0, sizeof b);
    b.kind = kind;
    b.cpu = cpu;
    b.samples = samples;
    b.batch = batch;
    b.ws_bytes = working_set_bytes;
    b.message_bytes = message_bytes;
    b.batch_ns = batch_ns;
    pthread_t t;
    int e = pthread_create(&t, NULL, baseline_thread, &b);
    if (e != 0) {
        *err = e;
        return is_limit_errno(e) ? TC_ELIMIT : TC_ESYS;
    }
    pthread_join(t, NULL);
    *err = b.err;
    return b.status;
}
