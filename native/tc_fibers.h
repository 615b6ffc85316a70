/* tc_fibers.h - user-space tasks in C: fibers on small mmap'd stacks. */
#ifndef TC_FIBERS_H
#define TC_FIBERS_H
#include "threadcost.h"

/* CFFI_BEGIN */
#define TC_FIBER_UCONTEXT 0   /* glibc makecontext/swapcontext */
#define TC_FIBER_ASM 1        /* hand-written register switch (x86-64 only) */

/* 1 when TC_FIBER_ASM is a real hand-written switch on this build; 0 when it
 * falls back to ucontext (any architecture but x86-64). */
int tc_fiber_asm_native(void);

/* Bytes of the fiber stack the kernel keeps for the fiber's own frames, the
 * switch frame and a signal frame: touch depth must leave this much free. */
#define TC_FIBER_RESERVE_KIB 12

typedef struct {
    int64_t iterations;      /* timed round trips done */
    int64_t batch_ns;        /* wall time of `iterations` round trips with no clock reads inside */
    int64_t timer_overhead_ns; /* median cost of one tc_now_ns(), measured first */
    int cpu_before;          /* CPU the caller ran on before / after (pinning check) */
    int cpu_after;
    int err;
    int64_t batch_voluntary;   /* this thread's context switches during the batch, */
    int64_t batch_involuntary; /* from getrusage(RUSAGE_THREAD); -1 if unreadable */
} tc_fiber_pingpong_result;

/*
 * Two fibers, A and B, each on its own `stack_kib` KiB stack (plus a guard
 * page), on the calling thread. A switches to B and B straight back: one
 * round trip is two switches. `warmup` untimed round trips first, then
 * `iterations` round trips with one tc_now_ns() between each (samples[i] is
 * round trip i, one clock read included; the caller owns `samples`), then
 * `iterations` more with no clock read inside (batch_ns).
 */
int tc_fiber_pingpong(int impl, int64_t iterations, int64_t warmup, int64_t stack_kib,
                      int64_t *samples, tc_fiber_pingpong_result *out);

typedef struct {
    int64_t fibers;          /* idle fibers alive at this reading */
    int64_t vsz_kib;
    int64_t rss_kib;
    int64_t rss_anon_kib;
} tc_fiber_mem_point;

typedef struct {
    int64_t created;         /* fibers created and parked */
    int points_filled;       /* entries of `points` written */
    tc_proc_status before;
    tc_proc_status after_free;
    int64_t free_ns;         /* unmapping every created fiber (its stack), all together */
    int err;                 /* errno of the mmap/mprotect that failed (TC_ELIMIT) */
} tc_fiber_memory_result;

/*
 * Create `count` fibers one after another. Each gets a `stack_kib` KiB stack
 * with a PROT_NONE guard page below it, is started, writes one byte per page
 * of `touch_kib` KiB of its own stack, and parks (switches back for good).
 * create_ns[i] is the time to map the stack, set the guard and prepare the
 * context; start_ns[i] is the first switch in, the touch and the switch back.
 * /proc/self/status is read at `npoints` evenly spaced fiber counts (0 and
 * `count` included). Everything is unmapped before returning; free_ns is the
 * time that took (free_ns / created: the end of a fiber's life).
 */
int tc_fiber_memory(int impl, int64_t count, int64_t stack_kib, int64_t touch_kib,
                    int npoints, tc_fiber_mem_point *points,
                    int64_t *create_ns, int64_t *start_ns, tc_fiber_memory_result *out);

/*
 * `nfibers` fibers each run `rounds` steps, yielding to a round-robin
 * scheduler after each. Each step appends id * 1000000 + step to `trace`
 * (room for nfibers * rounds entries), where `step` lives on the fiber's
 * own stack: the trace shows both the order and that each stack survived.
 * `*finished` counts fibers that ran to their end.
 */
int tc_fiber_order(int impl, int nfibers, int rounds, int64_t stack_kib,
                   int32_t *trace, int *finished);
/*
 * The system call swapcontext makes on every switch, alone: `batches` timed
 * batches of `ops` calls of sigprocmask(SIG_SETMASK, &current, &old) (one
 * rt_sigprocmask that changes nothing), after one untimed batch. ns_per_op[i]
 * is batch i's time per call, net of one clock read. TC_ESYS with *err set if
 * the call fails.
 */
int tc_fiber_sigmask_ns(int64_t ops, int batches, double *ns_per_op, int *err);
/* CFFI_END */

#endif
