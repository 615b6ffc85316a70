/*
 * threadcost.h - the shared contract of every C kernel in native/.
 *
 * Rules for kernels (see native/README.md):
 *   - return a tc_status (0 = TC_OK), fill a caller-owned result struct;
 *   - never print, exit, abort or leave a thread/child/fd behind;
 *   - on a system limit, stop, clean up, fill what was measured, set
 *     `err` (errno) and return TC_ELIMIT so Python can report a partial run.
 *
 * Everything between CFFI_BEGIN and CFFI_END is also handed to cffi's cdef()
 * by native/build_native.py, so keep that region to plain declarations and
 * integer #defines (no #include, no #if, no function bodies).
 */
#ifndef THREADCOST_H
#define THREADCOST_H

#include <stddef.h>
#include <stdint.h>

/* CFFI_BEGIN */
#define TC_OK 0
#define TC_EINVAL 1      /* an argument the Python layer should have refused */
#define TC_ENOMEM 2      /* allocation of the kernel's own bookkeeping failed */
#define TC_ELIMIT 3      /* a system limit stopped the run; result is partial */
#define TC_ESYS 4        /* a system call failed; see err */
#define TC_ETIMEOUT 5    /* a watchdog fired: a partner stopped answering */
#define TC_ESTOPPED 6    /* tc_request_stop() was called (Python: SIGINT, SIGTERM) */

/* One reading of /proc/self/status (kB as the kernel reports them). */
typedef struct {
    int64_t vsz_kib;      /* VmSize */
    int64_t rss_kib;      /* VmRSS */
    int64_t rss_anon_kib; /* RssAnon */
    int64_t pte_kib;      /* VmPTE: this process's page tables */
    int64_t stk_kib;      /* VmStk: main thread stack only */
    int64_t threads;      /* Threads */
} tc_proc_status;

/* System-wide kernel memory counters from /proc/meminfo, in kB. */
typedef struct {
    int64_t mem_available_kib;
    int64_t kernel_stack_kib;
    int64_t page_tables_kib;
    int64_t sunreclaim_kib;
} tc_meminfo;

int tc_read_proc_status(tc_proc_status *out);
int tc_read_meminfo(tc_meminfo *out);
int64_t tc_now_ns(void);
/* Median cost of one tc_now_ns() call, measured over `samples` back-to-back reads. */
int64_t tc_timer_overhead_ns(int samples);
/* Pin the calling thread to one CPU; returns 0 or an errno. */
int tc_pin_self(int cpu);
/* CPU the calling thread runs on right now (sched_getcpu), or -1. */
int tc_current_cpu(void);

/*
 * Raise RLIMIT_NOFILE's soft limit to its hard limit (never above fs.nr_open);
 * when that is still below `need` fds, a privileged process also raises the
 * hard limit to `need` (capped at fs.nr_open). Fills the resulting limits.
 * Returns 0 or an errno.
 */
int tc_raise_nofile(int64_t need, int64_t *soft, int64_t *hard);
/* The stop flag: long loops poll tc_stop_requested() at least every 100 ms and end
 * with TC_ESTOPPED, cleaning up as on any other error. It is set by
 * tc_request_stop(), or by a byte arriving on the fd given to tc_set_stop_fd (-1:
 * none): Python points signal.set_wakeup_fd at that pipe, so SIGINT or SIGTERM
 * stops a kernel running in Python's own main thread. Nothing here handles signals. */
void tc_request_stop(void);
void tc_clear_stop(void);
void tc_set_stop_fd(int fd);
int tc_stop_requested(void);
/* CFFI_END */

/* A loop's stop check, cheap enough for every iteration: it reads the clock, and asks
 * tc_stop_requested() (an atomic load and, while Python watches signals, one poll())
 * only once TC_STOP_POLL_NS have passed since the last time. Start `*next_ns` at 0.
 * Call it between timed regions, never inside one. */
#define TC_STOP_POLL_NS 20000000LL /* 20 ms: a stop is seen within ~20 ms of the signal */
static inline int tc_stop_due(int64_t *next_ns)
{
    int64_t now = tc_now_ns();
    if (now < *next_ns)
        return 0;
    *next_ns = now + TC_STOP_POLL_NS;
    return tc_stop_requested();
}

/* Two buffers of `bytes` for a timed memcpy, in one page-aligned region that
 * *region receives (free() it): *dst starts 2 KiB past a page boundary after *src,
 * so dst - src = 2048 (mod 4096) in either direction of copy. Two plain malloc()s
 * leave them 16 bytes apart (mod 4096): the stores of a forward copy then alias,
 * in their low 12 address bits, the loads that follow them (4K aliasing), which
 * slows the copy by 2x to 10x depending on the CPU and its microcode, so the
 * yardstick would time the allocator's layout instead of the machine. Returns
 * TC_OK or TC_ENOMEM; the buffers are not touched. */
int tc_copy_buffers(int64_t bytes, unsigned char **src, unsigned char **dst, void **region);

#endif
