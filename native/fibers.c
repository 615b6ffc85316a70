/*
 * fibers.c - user-space tasks in C: two ways to switch stacks on one thread.
 *
 * TC_FIBER_UCONTEXT uses glibc's makecontext/swapcontext. swapcontext saves
 * and restores the signal mask as part of the context, which is one
 * rt_sigprocmask system call per switch: a trip into the kernel, although no
 * kernel scheduling happens.
 *
 * TC_FIBER_ASM (x86-64) is a minimal switch written by hand below: it pushes
 * the registers the SysV ABI says a callee must preserve (rbx, rbp, r12-r15,
 * plus the SSE and x87 control words), stores the stack pointer, loads the
 * other fiber's and pops the same set. No system call, no signal mask: the
 * whole switch is a dozen instructions. On other architectures TC_FIBER_ASM
 * falls back to ucontext (tc_fiber_asm_native() says which).
 *
 * Every fiber stack is its own mmap with a PROT_NONE guard page below it, so
 * a fiber that overflows its stack faults (SIGSEGV) instead of overwriting a
 * neighbour. The Python layer never lets valid input get near that: touch
 * depth must leave TC_FIBER_RESERVE_KIB free.
 */
#define _GNU_SOURCE
#include "tc_fibers.h"

#include <alloca.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <ucontext.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#define TC_ASAN_FIBERS 1
#endif
#if defined(__SANITIZE_THREAD__)
void *__tsan_get_current_fiber(void);
void *__tsan_create_fiber(unsigned flags);
void __tsan_destroy_fiber(void *fiber);
void __tsan_switch_to_fiber(void *fiber, unsigned flags);
#define TC_TSAN_FIBERS 1
#endif

#if defined(__x86_64__)
#define TC_HAVE_ASM_SWITCH 1
/* void tc_fibers_switch_x86(void **save_sp, void *load_sp) */
__asm__(
    ".text\n"
    ".p2align 4\n"
    ".globl tc_fibers_switch_x86\n"
    ".hidden tc_fibers_switch_x86\n"
    ".type tc_fibers_switch_x86, @function\n"
    "tc_fibers_switch_x86:\n"
    "    pushq %rbp\n"
    "    pushq %rbx\n"
    "    pushq %r12\n"
    "    pushq %r13\n"
    "    pushq %r14\n"
    "    pushq %r15\n"
    "    subq $8, %rsp\n"
    "    stmxcsr (%rsp)\n"
    "    fnstcw 4(%rsp)\n"
    "    movq %rsp, (%rdi)\n"
    "    movq %rsi, %rsp\n"
    "    ldmxcsr (%rsp)\n"
    "    fldcw 4(%rsp)\n"
    "    addq $8, %rsp\n"
    "    popq %r15\n"
    "    popq %r14\n"
    "    popq %r13\n"
    "    popq %r12\n"
    "    popq %rbx\n"
    "    popq %rbp\n"
    "    ret\n"
    ".size tc_fibers_switch_x86, .-tc_fibers_switch_x86\n"
    /* First entry of a new fiber: the initial frame 'returns' here with the
     * entry function in r12 and its argument in r13. It never returns. */
    ".p2align 4\n"
    ".globl tc_fibers_trampoline_x86\n"
    ".hidden tc_fibers_trampoline_x86\n"
    ".type tc_fibers_trampoline_x86, @function\n"
    "tc_fibers_trampoline_x86:\n"
    "    movq %r13, %rdi\n"
    "    callq *%r12\n"
    "    ud2\n"
    ".size tc_fibers_trampoline_x86, .-tc_fibers_trampoline_x86\n");
void tc_fibers_switch_x86(void **save_sp, void *load_sp);
void tc_fibers_trampoline_x86(void);
#else
#define TC_HAVE_ASM_SWITCH 0
#endif

typedef struct fiber fiber;
typedef void (*fiber_fn)(fiber *);

struct fiber {
    void *map;          /* the whole mapping: guard page + stack */
    size_t map_len;
    char *stack_lo;     /* lowest usable byte (just above the guard) */
    size_t stack_len;
    int impl;
    void *sp;           /* TC_FIBER_ASM: saved stack pointer */
    ucontext_t uc;      /* TC_FIBER_UCONTEXT */
    fiber_fn fn;
    fiber *back;        /* who to return to (the scheduler / main context) */
    fiber *peer;        /* ping-pong partner */
    int id;
    int rounds;
    int done;
    int32_t *trace;     /* order test: shared trace and its cursor */
    int64_t *trace_pos;
    size_t touch_bytes; /* memory test: stack bytes to write */
    /* ping-pong: what A measures */
    int64_t iterations, warmup;
    int64_t *samples;
    int64_t batch_ns;
    int64_t batch_nvcsw, batch_nivcsw; /* kernel switches of this thread in the batch */
    int stopped;                       /* A saw tc_stop_requested() and ended early */
#ifdef TC_ASAN_FIBERS
    void *fake_stack;
#endif
#ifdef TC_TSAN_FIBERS
    void *tsan;
    int tsan_owned;
#endif
};

#ifdef TC_ASAN_FIBERS
static __thread fiber *tls_last_from;
#endif

int tc_fiber_asm_native(void)
{
    return TC_HAVE_ASM_SWITCH;
}

static int effective_impl(int impl)
{
    return (impl == TC_FIBER_ASM && TC_HAVE_ASM_SWITCH) ? TC_FIBER_ASM : TC_FIBER_UCONTEXT;
}

/* Save the current context into `from` and resume `to`. `final` means `from`
 * will never be resumed (lets ASan drop its bookkeeping). */
static void switch_to(fiber *from, fiber *to, int final)
{
#ifdef TC_ASAN_FIBERS
    tls_last_from = from;
    __sanitizer_start_switch_fiber(final ? NULL : &from->fake_stack, to->stack_lo, to->stack_len);
#else
    (void)final;
#endif
#ifdef TC_TSAN_FIBERS
    __tsan_switch_to_fiber(to->tsan, 0);
#endif
#if TC_HAVE_ASM_SWITCH
    if (from->impl == TC_FIBER_ASM) {
        tc_fibers_switch_x86(&from->sp, to->sp);
    } else
#endif
    {
        swapcontext(&from->uc, &to->uc);
    }
#ifdef TC_ASAN_FIBERS
    const void *bottom;
    size_t size;
    __sanitizer_finish_switch_fiber(from->fake_stack, &bottom, &size);
    if (tls_last_from && tls_last_from->stack_len == 0) {
        tls_last_from->stack_lo = (char *)bottom;
        tls_last_from->stack_len = size;
    }
#endif
}

/* Every fiber starts here (through the trampoline or makecontext). */
static void fiber_main(fiber *self)
{
#ifdef TC_ASAN_FIBERS
    const void *bottom;
    size_t size;
    __sanitizer_finish_switch_fiber(NULL, &bottom, &size);
    if (tls_last_from && tls_last_from->stack_len == 0) {
        tls_last_from->stack_lo = (char *)bottom;
        tls_last_from->stack_len = size;
    }
#endif
    self->fn(self);
    self->done = 1;
    for (;;) /* a finished fiber is never resumed; the loop only satisfies the compiler */
        switch_to(self, self->back, 1);
}

static void uc_entry(unsigned int hi, unsigned int lo)
{
    uintptr_t p = ((uintptr_t)hi << 32) | (uintptr_t)lo;
    fiber_main((fiber *)p);
}

/* The calling context as a fiber (no stack of its own to manage). */
static void init_main(fiber *m, int impl)
{
    memset(m, 0, sizeof *m);
    m->impl = impl;
#ifdef TC_TSAN_FIBERS
    m->tsan = __tsan_get_current_fiber();
#endif
}

/* getcontext returns twice, so it lives in a function of its own whose only
 * state is the fiber (no locals for a second return to clobber). */
static __attribute__((noinline)) int uc_prepare(fiber *f)
{
    if (getcontext(&f->uc) != 0)
        return -1;
    f->uc.uc_stack.ss_sp = f->stack_lo;
    f->uc.uc_stack.ss_size = f->stack_len;
    f->uc.uc_link = NULL;
    makecontext(&f->uc, (void (*)(void))uc_entry, 2, (unsigned int)((uintptr_t)f >> 32),
                (unsigned int)((uintptr_t)f & 0xffffffffu));
    return 0;
}

/* Map a stack with its guard page and prepare the first switch into fn. */
static int fiber_create(fiber *f, int impl, size_t stack_bytes, fiber_fn fn, fiber *back)
{
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    memset(f, 0, sizeof *f);
    f->impl = impl;
    f->fn = fn;
    f->back = back;
    f->map_len = stack_bytes + page;
    void *map = mmap(NULL, f->map_len, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (map == MAP_FAILED)
        return errno ? errno : ENOMEM;
    if (mprotect(map, page, PROT_NONE) != 0) {
        int e = errno;
        munmap(map, f->map_len);
        return e;
    }
    f->map = map;
    f->stack_lo = (char *)map + page;
    f->stack_len = stack_bytes;
#if TC_HAVE_ASM_SWITCH
    if (impl == TC_FIBER_ASM) {
        /* Initial frame, as tc_fibers_switch_x86 expects to pop it: control
         * words, r15, r14, r13 (arg), r12 (entry), rbx, rbp, return address.
         * The return address sits at 8 mod 16 so that the trampoline's call
         * leaves fiber_main a 16-byte aligned frame as the ABI demands. */
        uintptr_t top = ((uintptr_t)(f->stack_lo + stack_bytes)) & ~(uintptr_t)15;
        uint64_t *sp = (uint64_t *)top;
        *--sp = (uint64_t)(uintptr_t)tc_fibers_trampoline_x86; /* at top - 8 */
        *--sp = 0;                                     /* rbp */
        *--sp = 0;                                     /* rbx */
        *--sp = (uint64_t)(uintptr_t)fiber_main;       /* r12 */
        *--sp = (uint64_t)(uintptr_t)f;                /* r13 */
        *--sp = 0;                                     /* r14 */
        *--sp = 0;                                     /* r15 */
        *--sp = (uint64_t)0x037F << 32 | 0x1F80;       /* fpu cw | mxcsr */
        f->sp = sp;
    } else
#endif
    {
        if (uc_prepare(f) != 0) {
            int e = errno ? errno : EINVAL;
            munmap(map, f->map_len);
            f->map = NULL;
            return e;
        }
    }
#ifdef TC_TSAN_FIBERS
    f->tsan = __tsan_create_fiber(0);
    f->tsan_owned = 1;
#endif
    return 0;
}

static void fiber_destroy(fiber *f)
{
#ifdef TC_TSAN_FIBERS
    if (f->tsan_owned)
        __tsan_destroy_fiber(f->tsan);
    f->tsan_owned = 0;
#endif
#ifdef TC_ASAN_FIBERS
    /* frames of a parked fiber stay poisoned in ASan's shadow; a later
     * mapping at the same address must not inherit that */
    if (f->map)
        __asan_unpoison_memory_region(f->stack_lo, f->stack_len);
#endif
    if (f->map)
        munmap(f->map, f->map_len);
    f->map = NULL;
}

/* ---- ping-pong ---------------------------------------------------------- */

static void pong_fn(fiber *self)
{
    for (;;)
        switch_to(self, self->peer, 0);
}

/* Loops poll the stop flag between chunks of this many switches (well under 100 ms). */
#define FIBER_CHUNK ((int64_t)1 << 14)

static void ping_fn(fiber *self)
{
    fiber *b = self->peer;
    int64_t next_poll = 0;
    for (int64_t i = 0; i < self->warmup; i++) {
        if ((i & (FIBER_CHUNK - 1)) == 0 && tc_stop_due(&next_poll)) {
            self->stopped = 1;
            return;
        }
        switch_to(self, b, 0);
    }
    int64_t prev = tc_now_ns();
    for (int64_t i = 0; i < self->iterations; i++) {
        switch_to(self, b, 0);
        int64_t now = tc_now_ns();
        self->samples[i] = now - prev;
        prev = now;
        if (now >= next_poll) { /* the poll is left out of every sample */
            if (tc_stop_due(&next_poll)) {
                self->stopped = 1;
                return;
            }
            prev = tc_now_ns();
        }
    }
    struct rusage r0, r1;
    int counted = getrusage(RUSAGE_THREAD, &r0) == 0;
    int64_t batch = 0;
    for (int64_t i0 = 0; i0 < self->iterations; i0 += FIBER_CHUNK) {
        if (tc_stop_due(&next_poll)) { /* between timed chunks */
            self->stopped = 1;
            return;
        }
        int64_t i1 = self->iterations - i0 < FIBER_CHUNK ? self->iterations : i0 + FIBER_CHUNK;
        int64_t t0 = tc_now_ns();
        for (int64_t i = i0; i < i1; i++)
            switch_to(self, b, 0);
        batch += tc_now_ns() - t0;
    }
    self->batch_ns = batch;
    counted = counted && getrusage(RUSAGE_THREAD, &r1) == 0;
    self->batch_nvcsw = counted ? (int64_t)(r1.ru_nvcsw - r0.ru_nvcsw) : -1;
    self->batch_nivcsw = counted ? (int64_t)(r1.ru_nivcsw - r0.ru_nivcsw) : -1;
}

int tc_fiber_pingpong(int impl, int64_t iterations, int64_t warmup, int64_t stack_kib,
                      int64_t *samples, tc_fiber_pingpong_result *out)
{
    if (!out || !samples || iterations < 1 || warmup < 0 || stack_kib < 16 ||
        stack_kib > 1024 * 1024 || (impl != TC_FIBER_ASM && impl != TC_FIBER_UCONTEXT))
        return TC_EINVAL;
    memset(out, 0, sizeof *out);
    impl = effective_impl(impl);
    out->timer_overhead_ns = tc_timer_overhead_ns(10000);
    out->cpu_before = tc_current_cpu();

    fiber *f = calloc(3, sizeof *f);
    if (!f)
        return TC_ENOMEM;
    fiber *m = &f[0], *a = &f[1], *b = &f[2];
    init_main(m, impl);
    size_t bytes = (size_t)stack_kib * 1024;
    int e = fiber_create(a, impl, bytes, ping_fn, m);
    if (e == 0) {
        e = fiber_create(b, impl, bytes, pong_fn, m);
        if (e != 0)
            fiber_destroy(a);
    }
    if (e != 0) {
        free(f);
        out->err = e;
        return TC_ELIMIT;
    }
    a->peer = b;
    b->peer = a;
    a->iterations = iterations;
    a->warmup = warmup;
    a->samples = samples;
    switch_to(m, a, 0); /* returns when A is done; B stays parked */
    out->iterations = iterations;
    out->batch_ns = a->batch_ns;
    out->batch_voluntary = a->batch_nvcsw;
    out->batch_involuntary = a->batch_nivcsw;
    out->cpu_after = tc_current_cpu();
    int stopped = a->stopped;
    fiber_destroy(a);
    fiber_destroy(b);
    free(f);
    return stopped ? TC_ESTOPPED : TC_OK;
}

/* ---- memory of idle fibers ---------------------------------------------- */

static void touch_fn(fiber *self)
{
    size_t n = self->touch_bytes;
    if (n > 0) {
        const size_t page = (size_t)sysconf(_SC_PAGESIZE);
        volatile char *buf = alloca(n);
        /* from the top of the buffer down, the way a stack grows */
        for (size_t off = 0; off < n; off += page)
            buf[n - 1 - off] = (char)1;
        buf[0] = (char)1;
    }
    switch_to(self, self->back, 1); /* park for good */
}

static void fill_mem_point(tc_fiber_mem_point *p, int64_t fibers)
{
    tc_proc_status s;
    memset(&s, 0, sizeof s);
    tc_read_proc_status(&s);
    p->fibers = fibers;
    p->vsz_kib = s.vsz_kib;
    p->rss_kib = s.rss_kib;
    p->rss_anon_kib = s.rss_anon_kib;
}

int tc_fiber_memory(int impl, int64_t count, int64_t stack_kib, int64_t touch_kib,
                    int npoints, tc_fiber_mem_point *points,
                    int64_t *create_ns, int64_t *start_ns, tc_fiber_memory_result *out)
{
    if (!out || !points || !create_ns || !start_ns || count < 1 || count > 1000000 ||
        stack_kib < 16 || stack_kib > 1024 * 1024 || touch_kib < 0 ||
        touch_kib > stack_kib - TC_FIBER_RESERVE_KIB || npoints < 2 ||
        (impl != TC_FIBER_ASM && impl != TC_FIBER_UCONTEXT))
        return TC_EINVAL;
    memset(out, 0, sizeof *out);
    impl = effective_impl(impl);

    fiber *fibers = calloc((size_t)count + 1, sizeof *fibers);
    if (!fibers)
        return TC_ENOMEM;
    fiber *m = &fibers[0];
    init_main(m, impl);
    tc_read_proc_status(&out->before);

    const size_t bytes = (size_t)stack_kib * 1024;
    int status = TC_OK;
    int filled = 0;
    int64_t made = 0;
    fill_mem_point(&points[filled++], 0);
    int64_t next_poll = 0;
    for (int i = 1; i < npoints; i++) {
        int64_t target = count * i / (npoints - 1);
        for (; made < target; made++) {
            if (tc_stop_due(&next_poll)) { /* the fibers made so far are destroyed below */
                status = TC_ESTOPPED;
                break;
            }
            fiber *f = &fibers[made + 1];
            int64_t t0 = tc_now_ns();
            int e = fiber_create(f, impl, bytes, touch_fn, m);
            int64_t t1 = tc_now_ns();
            if (e != 0) {
                out->err = e;
                status = TC_ELIMIT;
                break;
            }
            f->touch_bytes = (size_t)touch_kib * 1024;
            f->id = (int)made;
            switch_to(m, f, 0);
            int64_t t2 = tc_now_ns();
            create_ns[made] = t1 - t0;
            start_ns[made] = t2 - t1;
        }
        fill_mem_point(&points[filled++], made);
        if (status != TC_OK)
            break;
    }
    out->created = made;
    out->points_filled = filled;
    int64_t f0 = tc_now_ns();
    for (int64_t i = 0; i < made; i++)
        fiber_destroy(&fibers[i + 1]);
    out->free_ns = tc_now_ns() - f0;
    free(fibers);
    tc_read_proc_status(&out->after_free);
    return status;
}

/* ---- order -------------------------------------------------------------- */

static void order_fn(fiber *self)
{
    for (int step = 0; step < self->rounds; step++) {
        self->trace[(*self->trace_pos)++] = (int32_t)(self->id * 1000000 + step);
        switch_to(self, self->back, 0);
    }
}

int tc_fiber_order(int impl, int nfibers, int rounds, int64_t stack_kib,
                   int32_t *trace, int *finished)
{
    if (!trace || !finished || nfibers < 1 || nfibers > 1000 || rounds < 1 ||
        rounds > 100000 || stack_kib < 16 || stack_kib > 1024 * 1024 ||
        (impl != TC_FIBER_ASM && impl != TC_FIBER_UCONTEXT))
        return TC_EINVAL;
    *finished = 0;
    impl = effective_impl(impl);
    fiber *fibers = calloc((size_t)nfibers + 1, sizeof *fibers);
    if (!fibers)
        return TC_ENOMEM;
    fiber *m = &fibers[0];
    init_main(m, impl);
    int64_t pos = 0;
    int made = 0, status = TC_OK;
    for (; made < nfibers; made++) {
        fiber *f = &fibers[made + 1];
        int e = fiber_create(f, impl, (size_t)stack_kib * 1024, order_fn, m);
        if (e != 0) {
            status = TC_ELIMIT;
            break;
        }
        f->id = made;
        f->rounds = rounds;
        f->trace = trace;
        f->trace_pos = &pos;
    }
    int64_t next_poll = 0;
    if (status == TC_OK) {
        int live = nfibers;
        while (live > 0) {
            if (tc_stop_due(&next_poll)) { /* unfinished fibers are destroyed below */
                status = TC_ESTOPPED;
                break;
            }
            live = 0;
            for (int i = 0; i < nfibers; i++) {
                fiber *f = &fibers[i + 1];
                if (f->done)
                    continue;
                switch_to(m, f, 0);
                if (!f->done)
                    live++;
            }
        }
        for (int i = 0; i < nfibers; i++)
            *finished += fibers[i + 1].done;
    }
    for (int i = 0; i < made; i++)
        fiber_destroy(&fibers[i + 1]);
    free(fibers);
    return status;
}

/* ---- the system call swapcontext makes ----------------------------------- */

int tc_fiber_sigmask_ns(int64_t ops, int batches, double *ns_per_op, int *err)
{
    if (ops < 1 || batches < 1 || !ns_per_op || !err)
        return TC_EINVAL;
    *err = 0;
    sigset_t cur, old;
    if (sigprocmask(SIG_SETMASK, NULL, &cur) != 0) {
        *err = errno;
        return TC_ESYS;
    }
    int64_t timer = tc_timer_overhead_ns(1000);
    int64_t next_poll = 0;
    for (int b = -1; b < batches; b++) { /* batch -1: warm-up, not kept */
        if (tc_stop_due(&next_poll))  /* between batches; ops is at most 1e6 per batch */
            return TC_ESTOPPED;
        int64_t t0 = tc_now_ns();
        for (int64_t i = 0; i < ops; i++) {
            if (sigprocmask(SIG_SETMASK, &cur, &old) != 0) {
                *err = errno;
                return TC_ESYS;
            }
        }
        int64_t dt = tc_now_ns() - t0 - timer;
        if (b >= 0)
            ns_per_op[b] = (double)(dt > 0 ? dt : 0) / (double)ops;
    }
    return TC_OK;
}
