/*
 * indirect.c - direct and indirect context-switch cost after Li, Ding and
 * Shen (ExpCS 2007). See tc_indirect.h. The method (two processes over a pipe
 * pair, each touching its own array with a stride, against one process doing
 * the same touches and pipe calls alone) is theirs; the code is this
 * project's own.
 */
#define _GNU_SOURCE
#include "tc_indirect.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct {
    volatile int64_t voluntary, involuntary, checksum;
    volatile int ready;
} partner_report;

/* The pages are populated by the mmap call, in one pass, not faulted one by one by
 * the first walk: the same pages before the timed hops either way, a few times
 * cheaper (64 MiB: 16,384 faults of a few µs each in a guest). */
static unsigned char *map_array(int64_t bytes)
{
    if (bytes <= 0)
        return NULL;
    void *mem = mmap(NULL, (size_t)bytes, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    return mem == MAP_FAILED ? NULL : mem;
}

/* One walk, called by every mode: the single run, the switch run's parent and its
 * partner all execute these same instructions at the same address. Inlined, each
 * mode had its own copy of the loop, laid out at its own offset, and at a small
 * stride the walk is bound by how fast the loop issues, not by memory: the single
 * run's copy, whose 26-byte loop straddled a 64-byte boundary, ran up to a third
 * slower per access than the switch run's copies (the reference machine's AMD
 * guest, in some periods: 0.55 against 0.42 ns), so the single run took longer
 * than the switch run and c2 came out negative. noinline keeps one copy (whatever
 * its layout costs, every mode pays it); aligned(64) starts it on a cache line, so
 * its loop (16-byte aligned by -O2, a few instructions in) stays within one. */
static __attribute__((noinline, aligned(64))) int64_t walk(unsigned char *a, int64_t bytes,
                                                            int64_t stride)
{
    int64_t sum = 0;
    if (!a)
        return 0;
    for (int64_t i = 0; i < bytes; i += stride) {
        a[i] = (unsigned char)(a[i] + 1);
        sum += a[i];
    }
    return sum;
}

static int full_write(int fd)
{
    char c = 1;
    for (;;) {
        ssize_t n = write(fd, &c, 1);
        if (n == 1)
            return 0;
        if (n < 0 && errno == EINTR)
            continue;
        return n < 0 ? errno : EPIPE;
    }
}

static int full_read(int fd)
{
    char c;
    for (;;) {
        ssize_t n = read(fd, &c, 1);
        if (n == 1)
            return 0;
        if (n < 0 && errno == EINTR)
            continue;
        return n < 0 ? errno : EPIPE; /* 0: the partner is gone */
    }
}

static void switches(int64_t *vol, int64_t *invol)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0) {
        *vol = *invol = 0;
        return;
    }
    *vol = ru.ru_nvcsw;
    *invol = ru.ru_nivcsw;
}

/* Between hops: every 16th hop, poll the stop flag (at most every TC_STOP_POLL_NS). The
 * time this takes is added to *paused, which the caller leaves out of its total. */
static int stop_between_hops(int64_t h, int64_t *next_poll, int64_t *paused)
{
    if ((h & 15) != 0)
        return 0;
    int64_t p0 = tc_now_ns();
    int stop = 0;
    if (p0 >= *next_poll) {
        *next_poll = p0 + TC_STOP_POLL_NS;
        stop = tc_stop_requested();
    }
    *paused += tc_now_ns() - p0;
    return stop;
}

static int run_single(int64_t bytes, int64_t stride, int64_t hops, int64_t warmup,
                      tc_indirect_result *out)
{
    int p[2];
    if (pipe(p) != 0) {
        out->err = errno;
        return TC_ESYS;
    }
    unsigned char *a = map_array(bytes);
    int status = TC_OK;
    if (bytes > 0 && !a) {
        out->err = errno;
        status = TC_ELIMIT;
        goto done;
    }
    int64_t sum = 0, v0 = 0, i0 = 0, v1 = 0, i1 = 0, t0 = 0, next_poll = 0, paused = 0;
    for (int64_t h = 0; h < warmup + hops; h++) {
        if (h == warmup) {
            switches(&v0, &i0);
            paused = 0;
            t0 = tc_now_ns();
        }
        if (stop_between_hops(h, &next_poll, &paused)) {
            status = TC_ESTOPPED;
            goto done;
        }
        sum += walk(a, bytes, stride);
        int e = full_write(p[1]);
        if (e == 0)
            e = full_read(p[0]);
        if (e != 0) {
            out->err = e;
            status = TC_ESYS;
            goto done;
        }
    }
    out->total_ns = tc_now_ns() - t0 - paused;
    switches(&v1, &i1);
    out->hops = hops;
    out->voluntary = v1 - v0;
    out->involuntary = i1 - i0;
    out->checksum = sum;
done:
    if (a)
        munmap(a, (size_t)bytes);
    close(p[0]);
    close(p[1]);
    return status;
}

/* The partner: answers every hop after its own walk; reports its switches. */
static void partner(int in, int out_fd, int64_t bytes, int64_t stride, int64_t trips,
                    int64_t warm_trips, partner_report *rep, int cpu)
{
    if (cpu >= 0)
        tc_pin_self(cpu);
    unsigned char *a = map_array(bytes);
    if (bytes > 0 && !a)
        _exit(2);
    int64_t sum = 0, v0 = 0, i0 = 0, v1 = 0, i1 = 0;
    for (int64_t t = 0; t < warm_trips + trips; t++) {
        if (full_read(in) != 0)
            _exit(3);
        if (t == warm_trips)
            switches(&v0, &i0);
        sum += walk(a, bytes, stride);
        if (full_write(out_fd) != 0)
            _exit(3);
    }
    switches(&v1, &i1);
    rep->voluntary = v1 - v0;
    rep->involuntary = i1 - i0;
    rep->checksum = sum;
    rep->ready = 1;
    _exit(0);
}

static int run_switch(int64_t bytes, int64_t stride, int64_t hops, int64_t warmup, int cpu,
                      tc_indirect_result *out)
{
    int64_t trips = hops / 2, warm_trips = warmup / 2;
    int to_b[2], to_a[2];
    if (pipe(to_b) != 0) {
        out->err = errno;
        return TC_ESYS;
    }
    if (pipe(to_a) != 0) {
        out->err = errno;
        close(to_b[0]);
        close(to_b[1]);
        return TC_ESYS;
    }
    partner_report *rep = mmap(NULL, sizeof *rep, PROT_READ | PROT_WRITE,
                               MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    unsigned char *a = NULL;
    int status = TC_OK;
    pid_t pid = -1;
    if (rep == MAP_FAILED) {
        rep = NULL;
        out->err = errno;
        status = TC_ELIMIT;
        goto done;
    }
    memset((void *)rep, 0, sizeof *rep);
    pid = fork();
    if (pid < 0) {
        out->err = errno;
        status = (errno == EAGAIN || errno == ENOMEM) ? TC_ELIMIT : TC_ESYS;
        goto done;
    }
    if (pid == 0) {
        close(to_b[1]);
        close(to_a[0]);
        partner(to_b[0], to_a[1], bytes, stride, trips, warm_trips, rep, cpu);
    }
    close(to_b[0]);
    to_b[0] = -1;
    close(to_a[1]);
    to_a[1] = -1;
    if (cpu >= 0)
        tc_pin_self(cpu);
    a = map_array(bytes);
    if (bytes > 0 && !a) {
        out->err = errno;
        status = TC_ELIMIT;
        goto done;
    }
    int64_t sum = 0, v0 = 0, i0 = 0, v1 = 0, i1 = 0, t0 = 0, next_poll = 0, paused = 0;
    for (int64_t t = 0; t < warm_trips + trips; t++) {
        if (t == warm_trips) {
            switches(&v0, &i0);
            paused = 0;
            t0 = tc_now_ns();
        }
        if (stop_between_hops(t, &next_poll, &paused)) {
            status = TC_ESTOPPED; /* the partner reads EOF below, exits and is reaped */
            goto done;
        }
        sum += walk(a, bytes, stride);
        int e = full_write(to_b[1]);
        if (e == 0)
            e = full_read(to_a[0]);
        if (e != 0) {
            out->err = e;
            status = TC_ESYS;
            goto done;
        }
    }
    out->total_ns = tc_now_ns() - t0 - paused;
    switches(&v1, &i1);
    out->hops = 2 * trips;
    out->voluntary = v1 - v0;
    out->involuntary = i1 - i0;
    out->checksum = sum;
done:
    if (to_b[1] >= 0)
        close(to_b[1]); /* the partner reads EOF and exits if it is still waiting */
    if (to_a[0] >= 0)
        close(to_a[0]);
    if (to_b[0] >= 0)
        close(to_b[0]);
    if (to_a[1] >= 0)
        close(to_a[1]);
    if (pid > 0) {
        int ws = 0;
        while (waitpid(pid, &ws, 0) < 0 && errno == EINTR)
            ;
        if (status == TC_OK && (!WIFEXITED(ws) || WEXITSTATUS(ws) != 0 || !rep->ready)) {
            status = TC_ESYS;
            out->err = ECHILD;
        } else if (status == TC_OK) {
            out->voluntary += rep->voluntary;
            out->involuntary += rep->involuntary;
            out->checksum += rep->checksum;
        }
    }
    if (a)
        munmap(a, (size_t)bytes);
    if (rep)
        munmap((void *)rep, sizeof *rep);
    return status;
}

int tc_indirect_run(int mode, int64_t array_bytes, int64_t stride_bytes, int64_t hops,
                    int64_t warmup_hops, int cpu, tc_indirect_result *out)
{
    if (!out || array_bytes < 0 || stride_bytes < 1 || hops < 2 || warmup_hops < 0 ||
        (mode != TC_IND_SINGLE && mode != TC_IND_SWITCH) ||
        (mode == TC_IND_SWITCH && (hops % 2 != 0 || warmup_hops % 2 != 0)))
        return TC_EINVAL;
    memset(out, 0, sizeof *out);
    if (mode == TC_IND_SINGLE) {
        if (cpu >= 0) { /* pins the caller: Python runs this in a child process */
            int e = tc_pin_self(cpu);
            if (e != 0) {
                out->err = e;
                return TC_ESYS;
            }
        }
        return run_single(array_bytes, stride_bytes, hops, warmup_hops, out);
    }
    return run_switch(array_bytes, stride_bytes, hops, warmup_hops, cpu, out);
}
