/* spawn_target.c - the tiny program `threadcost launch --kind posix_spawn` starts.
 *
 * Built statically (no dynamic loader to run) by the Makefile, or on first use
 * by threadcost/experiments/launch.py, into build/native/spawn_target. It reads
 * CLOCK_MONOTONIC once, stores the reading at offset 0 of fd 3 (a memfd the
 * launcher passes) when fd 3 is open, and exits.
 */
#include <time.h>
#include <unistd.h>

int main(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    long long ns = (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
    if (pwrite(3, &ns, sizeof ns, 0) != (ssize_t)sizeof ns)
        return 1;
    return 0;
}
