/*
 * brigade_ref.c - a minimal, independent bucket brigade: the yardstick the
 * brigade kernel (native/brigade.c) is checked against.
 *
 *   brigade_ref THREADS ITERATIONS WARMUP CPU
 *
 * Pins the whole process to CPU (-1: no pinning), then measures two brigades
 * of THREADS tasks over THREADS+1 pipes: "thread" (one thread per task,
 * blocking read then write) and "one-thread" (one thread does every read and
 * write in order). Prints one JSON line with the mean time per hop of each:
 * wall time of ITERATIONS trips / (ITERATIONS * (THREADS + 1)). No per-trip
 * clock reads, no watchdog, nothing shared with the kernel's code.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static int (*pipes)[2];
static int ntasks;

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void *task(void *arg)
{
    long i = (long)arg;
    char c;
    while (read(pipes[i][0], &c, 1) == 1) {
        int stop = c == 0;  /* the stop byte: pass it on and end */
        if (write(pipes[i + 1][1], &c, 1) != 1 || stop)
            break;
    }
    return NULL;
}

static int trip_threads(void)
{
    char c = 'x';
    return write(pipes[0][1], &c, 1) == 1 && read(pipes[ntasks][0], &c, 1) == 1;
}

static int trip_one_thread(void)
{
    char c = 'x';
    if (write(pipes[0][1], &c, 1) != 1)
        return 0;
    for (int i = 0; i < ntasks; i++)
        if (read(pipes[i][0], &c, 1) != 1 || write(pipes[i + 1][1], &c, 1) != 1)
            return 0;
    return read(pipes[ntasks][0], &c, 1) == 1;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Mean per hop over the whole run; *median gets the median trip per hop. */
static double measure(int (*trip)(void), long iterations, long warmup, double *trips,
                      double *median)
{
    for (long i = 0; i < warmup; i++)
        if (!trip())
            return -1;
    double t0 = now_ns();
    for (long i = 0; i < iterations; i++) {
        double a = now_ns();
        if (!trip())
            return -1;
        trips[i] = now_ns() - a;
    }
    double mean = (now_ns() - t0) / ((double)iterations * (ntasks + 1));
    qsort(trips, (size_t)iterations, sizeof *trips, cmp_double);
    *median = trips[iterations / 2] / (ntasks + 1);
    return mean;
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: brigade_ref THREADS ITERATIONS WARMUP CPU\n");
        return 2;
    }
    ntasks = atoi(argv[1]);
    long iterations = atol(argv[2]), warmup = atol(argv[3]);
    int cpu = atoi(argv[4]);
    if (ntasks < 1 || iterations < 1 || warmup < 0 || cpu < -1 || cpu >= CPU_SETSIZE) {
        fprintf(stderr, "brigade_ref: THREADS >= 1, ITERATIONS >= 1, WARMUP >= 0, "
                        "-1 <= CPU < %d\n", CPU_SETSIZE);
        return 2;
    }
    if (cpu >= 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(cpu, &set);
        if (sched_setaffinity(0, sizeof set, &set) != 0) {
            perror("brigade_ref: sched_setaffinity");
            return 1;
        }
    }
    pipes = calloc((size_t)ntasks + 1, sizeof *pipes);
    for (int i = 0; pipes && i <= ntasks; i++)
        if (pipe(pipes[i]) != 0) {
            perror("brigade_ref: pipe");
            return 1;
        }
    double *trips = calloc((size_t)iterations, sizeof *trips);
    double one_med = 0, thr_med = 0;
    if (!trips || !pipes) {
        fprintf(stderr, "brigade_ref: out of memory\n");
        return 1;
    }
    double one = measure(trip_one_thread, iterations, warmup, trips, &one_med);
    pthread_t *th = calloc((size_t)ntasks, sizeof *th);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 64 * 1024);
    for (long i = 0; th && i < ntasks; i++)
        if (pthread_create(&th[i], &attr, task, (void *)i) != 0) {
            perror("brigade_ref: pthread_create");
            return 1;
        }
    double thr = measure(trip_threads, iterations, warmup, trips, &thr_med);
    char stop = 0, c;
    if (write(pipes[0][1], &stop, 1) != 1 || read(pipes[ntasks][0], &c, 1) != 1)
        return 1;
    for (int i = 0; i < ntasks; i++)
        pthread_join(th[i], NULL);
    printf("{\"tasks\": %d, \"thread_per_hop_ns\": %.1f, \"one_thread_per_hop_ns\": %.1f, "
           "\"thread_p50_per_hop_ns\": %.1f, \"one_thread_p50_per_hop_ns\": %.1f}\n",
           ntasks, thr, one, thr_med, one_med);
    free(trips);
    free(th);
    free(pipes);
    return thr > 0 && one > 0 ? 0 : 1;
}
