/* malloc_touch.c - claim C07: allocating moves VSZ, only touching moves RSS. */
#define _GNU_SOURCE
#include "tc_malloc_touch.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static void fill_point(tc_touch_point *p, int64_t touched_kib)
{
    tc_proc_status s;
    memset(&s, 0, sizeof s);
    tc_read_proc_status(&s);
    p->touched_kib = touched_kib;
    p->vsz_kib = s.vsz_kib;
    p->rss_kib = s.rss_kib;
    p->rss_anon_kib = s.rss_anon_kib;
}

#define TOUCH_CHUNK ((size_t)1 << 14) /* pages per timed chunk: 64 MiB, ~20 ms */

int tc_malloc_touch(int64_t mib, int allocator, int points,
                    int touch_fraction_permille,
                    tc_touch_point *curve, tc_malloc_touch_result *out)
{
    if (!out || !curve || mib < 1 || mib > (INT64_C(1) << 30) || points < 2 ||
        touch_fraction_permille < 0 || touch_fraction_permille > 1000 ||
        (allocator != TC_ALLOC_MALLOC && allocator != TC_ALLOC_MMAP))
        return TC_EINVAL;
    memset(out, 0, sizeof *out);

    const size_t bytes = (size_t)mib << 20;
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    const size_t pages = bytes / page;
    const size_t touch_pages = pages * (size_t)touch_fraction_permille / 1000;

    if (tc_read_proc_status(&out->before) != TC_OK)
        return TC_ESYS;

    unsigned char *buf;
    if (allocator == TC_ALLOC_MALLOC) {
        buf = malloc(bytes);
    } else {
        buf = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (buf == MAP_FAILED)
            buf = NULL;
    }
    if (!buf) {
        out->err = errno ? errno : ENOMEM;
        return TC_ELIMIT;
    }
    tc_read_proc_status(&out->after_alloc);

    /* Curve point i is read after touching i/(points-1) of the pages to touch. */
    int filled = 0;
    fill_point(&curve[filled++], 0);
    size_t done = 0;
    int64_t busy_ns = 0;
    /* volatile: the stores must happen even though nothing reads them back */
    volatile unsigned char *vbuf = buf;
    int64_t next_poll = 0;
    int stopped = 0;
    for (int i = 1; i < points && !stopped; i++) {
        size_t target = touch_pages * (size_t)i / (size_t)(points - 1);
        /* touched in timed chunks of TOUCH_CHUNK pages; the stop flag is polled
         * between chunks, outside the timing */
        while (done < target) {
            if (tc_stop_due(&next_poll)) {
                stopped = 1;
                break;
            }
            size_t end = target - done < TOUCH_CHUNK ? target : done + TOUCH_CHUNK;
            int64_t t0 = tc_now_ns();
            for (; done < end; done++)
                vbuf[done * page] = (unsigned char)(done | 1);
            busy_ns += tc_now_ns() - t0;
        }
        if (!stopped)
            fill_point(&curve[filled++], (int64_t)(done * page / 1024));
    }
    if (stopped) {
        if (allocator == TC_ALLOC_MALLOC)
            free(buf);
        else
            munmap(buf, bytes);
        return TC_ESTOPPED;
    }
    out->touch_ns = busy_ns;
    out->points_filled = filled;
    tc_read_proc_status(&out->after_touch);

    if (allocator == TC_ALLOC_MALLOC)
        free(buf);
    else
        munmap(buf, bytes);
    tc_read_proc_status(&out->after_free);
    return TC_OK;
}
