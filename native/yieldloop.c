/*
 * yieldloop.c - tsuna's futex ping-pong loop structure (see tc_yieldloop.h),
 * written for threadcost from the description of the method; every wait is
 * bounded, every task joined or reaped.
 */
#define _GNU_SOURCE
#include "tc_yieldloop.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define TURN_B 1
#define TURN_A 2

typedef struct {
    int32_t word;
    int32_t abort;           /* either side gave up: the other stops too */
    int64_t b_vol, b_invol;  /* B's switches over the timed iterations */
    int32_t b_done;
} shared_t;

typedef struct {
    shared_t *sh;
    int64_t iterations, warmup, timeout_ns;
    int cpu, use_thread_usage, failed;
} side_t;

static long fx(int32_t *w, int op, int32_t val, const struct timespec *ts)
{
    return syscall(SYS_futex, w, op, val, ts, NULL, 0);
}

static void usage(int who, int64_t *vol, int64_t *invol)
{
    struct rusage ru;
    if (getrusage(who, &ru) != 0) {
        *vol = *invol = 0;
        return;
    }
    *vol = ru.ru_nvcsw;
    *invol = ru.ru_nivcsw;
}

/* Give the turn to the other side: set the word, wake until a sleeper was woken. */
static int give(side_t *s, int32_t turn)
{
    __atomic_store_n(&s->sh->word, turn, __ATOMIC_SEQ_CST);
    int64_t start = tc_now_ns();
    while (fx(&s->sh->word, FUTEX_WAKE, 1, NULL) < 1) {
        if (__atomic_load_n(&s->sh->abort, __ATOMIC_SEQ_CST) ||
            tc_now_ns() - start > s->timeout_ns)
            return -1;
        sched_yield();
    }
    return 0;
}

/* Wait for my turn: yield until the word says so, then sleep until woken. */
static int take(side_t *s, int32_t turn)
{
    struct timespec ts = {0, 100 * 1000 * 1000};
    int64_t start = tc_now_ns();
    for (;;) {
        if (__atomic_load_n(&s->sh->abort, __ATOMIC_SEQ_CST) ||
            tc_now_ns() - start > s->timeout_ns)
            return -1;
        if (__atomic_load_n(&s->sh->word, __ATOMIC_SEQ_CST) != turn) {
            sched_yield();
            continue;
        }
        if (fx(&s->sh->word, FUTEX_WAIT, turn, &ts) == 0)
            return 0;
        /* EAGAIN (word changed), ETIMEDOUT or EINTR: look again */
    }
}

static void *side_b(void *arg)
{
    side_t *s = arg;
    int who = s->use_thread_usage ? RUSAGE_THREAD : RUSAGE_SELF;
    int64_t v0 = 0, i0 = 0, v1 = 0, i1 = 0;
    if (s->cpu >= 0)
        tc_pin_self(s->cpu);
    for (int64_t i = 0; i < s->warmup + s->iterations; i++) {
        if (i == s->warmup)
            usage(who, &v0, &i0);
        sched_yield();
        if (take(s, TURN_B) != 0 || give(s, TURN_A) != 0) {
            s->failed = 1;
            __atomic_store_n(&s->sh->abort, 1, __ATOMIC_SEQ_CST);
            return NULL;
        }
    }
    usage(who, &v1, &i1);
    s->sh->b_vol = v1 - v0;
    s->sh->b_invol = i1 - i0;
    __atomic_store_n(&s->sh->b_done, 1, __ATOMIC_SEQ_CST);
    return NULL;
}

int tc_yieldloop_run(int processes, int64_t iterations, int64_t warmup, int cpu,
                     int timeout_ms, tc_yieldloop_result *out)
{
    if (!out || iterations < 1 || warmup < 0 || timeout_ms < 1)
        return TC_EINVAL;
    memset(out, 0, sizeof *out);
    shared_t *sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                        -1, 0);
    if (sh == MAP_FAILED) {
        out->err = errno;
        return TC_ELIMIT;
    }
    memset(sh, 0, sizeof *sh);
    side_t b = {sh, iterations, warmup, (int64_t)timeout_ms * 1000000LL, cpu, !processes, 0};
    side_t a = b;
    a.use_thread_usage = 1;
    pthread_t tid;
    pid_t pid = -1;
    int status = TC_OK;
    if (processes) {
        pid = fork();
        if (pid == 0) {
            side_b(&b);
            _exit(b.failed ? 1 : 0);
        }
        if (pid < 0) {
            out->err = errno;
            munmap(sh, sizeof *sh);
            return (errno == EAGAIN || errno == ENOMEM) ? TC_ELIMIT : TC_ESYS;
        }
    } else {
        int e = pthread_create(&tid, NULL, side_b, &b);
        if (e != 0) {
            out->err = e;
            munmap(sh, sizeof *sh);
            return e == EAGAIN ? TC_ELIMIT : TC_ESYS;
        }
    }
    /* side A: this thread, pinned the same way (Python calls this in a child process) */
    if (cpu >= 0)
        tc_pin_self(cpu);
    int64_t v0 = 0, i0 = 0, v1 = 0, i1 = 0, t0 = 0, next_poll = 0, paused = 0;
    for (int64_t i = 0; i < warmup + iterations; i++) {
        if (i == warmup) {
            usage(RUSAGE_THREAD, &v0, &i0);
            paused = 0;
            t0 = tc_now_ns();
        }
        if ((i & 15) == 0) { /* the stop flag, polled between round trips, left out of the time */
            int64_t p0 = tc_now_ns();
            int stop = p0 >= next_poll && tc_stop_requested();
            if (p0 >= next_poll)
                next_poll = p0 + TC_STOP_POLL_NS;
            paused += tc_now_ns() - p0;
            if (stop) {
                status = TC_ESTOPPED;
                break;
            }
        }
        if (give(&a, TURN_B) != 0) {
            status = TC_ETIMEOUT;
            break;
        }
        sched_yield();
        if (take(&a, TURN_A) != 0) {
            status = TC_ETIMEOUT;
            break;
        }
        if (i >= warmup)
            out->iterations++;
    }
    out->total_ns = tc_now_ns() - t0 - paused;
    usage(RUSAGE_THREAD, &v1, &i1);
    if (status != TC_OK) {
        __atomic_store_n(&sh->abort, 1, __ATOMIC_SEQ_CST);
        fx(&sh->word, FUTEX_WAKE, INT_MAX, NULL); /* B, asleep, sees the abort at once */
    }
    if (processes) {
        int ws = 0;
        while (waitpid(pid, &ws, 0) < 0 && errno == EINTR)
            ;
    } else {
        pthread_join(tid, NULL);
    }
    if (status == TC_OK && !__atomic_load_n(&sh->b_done, __ATOMIC_SEQ_CST))
        status = TC_ETIMEOUT;
    out->timed_out = status == TC_ETIMEOUT;
    out->voluntary = (v1 - v0) + sh->b_vol;
    out->involuntary = (i1 - i0) + sh->b_invol;
    munmap(sh, sizeof *sh);
    return status;
}
