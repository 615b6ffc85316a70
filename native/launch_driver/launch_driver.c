/* launch_driver.c - runs one tc_launch_series in a small, clean process.
 *
 * fork() copies the parent's page tables, so timing it from a Python process
 * (tens of MiB of interpreter, numpy, pandas) measures Python, not a launch.
 * threadcost/experiments/launch.py starts this static program instead, with
 *
 *   launch_driver KIND ITERATIONS WARMUP STACK_KIB PARENT_TOUCH_KIB PAUSE_NS SPAWN_PATH
 *                 [BASELINE_ITERATIONS]
 *
 * and reads back, on stdout, seven int64 (status, err, warmup_done, done,
 * touched_kib, rss_before_touch_kib, rss_after_touch_kib) followed by the
 * warm-up samples and the timed samples, four int64 each (tc_launch_sample).
 * With BASELINE_ITERATIONS > 0, three more int64 follow (status, err, total_ns)
 * of tc_launch_plain_loop, run in the same process right after the series.
 * Exit status 2: bad arguments; 1: out of memory or stdout failed; 3: stopped by
 * SIGINT or SIGTERM (the series ends within ~20 ms, its children reaped, and nothing
 * is written); 0 otherwise (the kernel's own status, e.g. TC_ELIMIT, is in the first
 * field).
 * Built by the Makefile (or on first use by launch.py) into build/native/.
 */
#include "tc_launch.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int parse(const char *text, int64_t lo, int64_t hi, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (errno || *end || end == text || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

static int write_all(const void *buf, size_t len)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t n = write(STDOUT_FILENO, p, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

/* SIGINT/SIGTERM: raise the stop flag the kernels poll (an atomic store: signal-safe). */
static void on_stop_signal(int sig)
{
    (void)sig;
    tc_request_stop();
}

int main(int argc, char **argv)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    int64_t kind, iterations, warmup, stack_kib, touch_kib, pause_ns, baseline = 0;
    if ((argc != 8 && argc != 9) || (argc == 9 && parse(argv[8], 0, 10000000, &baseline)) || parse(argv[1], 0, 5, &kind) || parse(argv[2], 1, 10000000, &iterations) ||
        parse(argv[3], 0, 1000000, &warmup) || parse(argv[4], 0, 1 << 30, &stack_kib) ||
        parse(argv[5], 0, INT64_C(1) << 40, &touch_kib) ||
        parse(argv[6], 0, INT64_C(1) << 40, &pause_ns))
        return 2;
    tc_launch_sample *first = calloc((size_t)(warmup > 0 ? warmup : 1), sizeof *first);
    tc_launch_sample *samples = calloc((size_t)iterations, sizeof *samples);
    if (!first || !samples) {
        free(first);
        free(samples);
        return 1;
    }
    tc_launch_result r = {0};
    int status = tc_launch_series((int)kind, (int)iterations, (int)warmup, stack_kib,
                                  touch_kib, pause_ns, argv[7], first, samples, &r);
    if (status == TC_ESTOPPED) {
        free(first);
        free(samples);
        return 3;
    }
    int64_t head[7] = {status, r.err, r.warmup_done, r.done, r.touched_kib,
                       r.rss_before_touch_kib, r.rss_after_touch_kib};
    int bad = write_all(head, sizeof head) ||
              write_all(first, sizeof *first * (size_t)r.warmup_done) ||
              write_all(samples, sizeof *samples * (size_t)r.done);
    if (!bad && baseline > 0) {
        int64_t total = 0;
        int err = 0;
        int64_t tail[3];
        tail[0] = tc_launch_plain_loop((int)baseline, &total, &err);
        if (tail[0] == TC_ESTOPPED) {
            free(first);
            free(samples);
            return 3;
        }
        tail[1] = err;
        tail[2] = total;
        bad = write_all(tail, sizeof tail);
    }
    free(first);
    free(samples);
    return bad ? 1 : 0;
}
