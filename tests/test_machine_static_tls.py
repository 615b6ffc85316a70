"""The machine card's static_tls_bytes is the elementary quantity behind an idle thread's
resident memory: a thread's stack block holds the thread descriptor and the static TLS
above its first frame, and an idle thread keeps resident exactly the pages those span.
A small C program shows it with mincore() (exact, no counters): with 8 KiB more of
thread-local data, the same idle thread keeps two pages more. The card also records the
transparent huge page settings, which decide how many pages one fault makes resident."""

from __future__ import annotations

import platform
import subprocess
from pathlib import Path

import pytest

from threadcost import cbuild
from threadcost.host import machine, sysinfo

pytestmark = pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="glibc only")

# One idle thread: the static TLS size (the card's measure, taken in this process) and
# the resident pages of its stack block, counted from the top with mincore().
PROGRAM = r"""
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
extern void _dl_get_tls_static_info(size_t *, size_t *);
__thread char tc_thread_data[EXTRA_TLS + 1];
static pthread_barrier_t started, done;
static void *idle(void *unused)
{
    (void)unused;
    pthread_barrier_wait(&started);
    pthread_barrier_wait(&done);
    return NULL;
}
int main(void)
{
    size_t tls = 0, align = 0;
    _dl_get_tls_static_info(&tls, &align);
    pthread_barrier_init(&started, NULL, 2);
    pthread_barrier_init(&done, NULL, 2);
    pthread_t t;
    if (pthread_create(&t, NULL, idle, NULL) != 0)
        return 2;
    pthread_barrier_wait(&started);
    pthread_attr_t attr;
    void *low;
    size_t size;
    if (pthread_getattr_np(t, &attr) != 0 || pthread_attr_getstack(&attr, &low, &size) != 0)
        return 3;
    long page = sysconf(_SC_PAGESIZE);
    unsigned char *vec = malloc(size / (size_t)page);
    if (!vec || mincore(low, size, vec) != 0)
        return 4;
    int resident = 0;
    for (size_t i = 0; i < size / (size_t)page; i++)
        resident += vec[i] & 1;
    printf("%zu %d %ld\n", tls, resident, page);
    pthread_barrier_wait(&done);
    pthread_join(t, NULL);
    free(vec);
    pthread_attr_destroy(&attr);
    return 0;
}
"""


def test_the_card_records_the_static_tls_size() -> None:
    size = machine.static_tls_bytes()
    assert size is not None and 2048 <= size < 1 << 20  # the descriptor alone is > 2 KiB
    card = machine.fingerprint(include_git=False)
    assert card["static_tls_bytes"] == size
    assert card["thread_stack_min_kib"] == sysinfo.thread_stack_min_kib()


@pytest.mark.skipif(cbuild.compiler() is None, reason="no C compiler")
def test_an_idle_thread_keeps_the_pages_its_static_tls_spans(tmp_path: Path) -> None:
    source = tmp_path / "idle.c"
    source.write_text(PROGRAM)
    seen = {}
    for extra in (0, 8192):
        binary = cbuild.compile_program([source], tmp_path / f"idle{extra}", program="idle.c",
                                        extra=[f"-DEXTRA_TLS={extra}"])
        out = subprocess.run([str(binary)], capture_output=True, text=True, check=True,
                             timeout=30).stdout.split()
        tls, resident, page = map(int, out)
        seen[extra] = (tls, resident)
        # the descriptor and static TLS, plus the thread's first frames (under 1 KiB)
        assert -(-tls // page) <= resident <= -(-(tls + 1024) // page), (extra, out)
    assert seen[8192][0] - seen[0][0] >= 8192
    assert seen[8192][1] - seen[0][1] == 8192 // page


def test_the_card_records_transparent_huge_pages(tmp_path: Path) -> None:
    """How many pages one fault makes resident depends on these settings; read from a
    sysfs tree as a 6.8+ kernel lays it out (multi-size THP)."""
    (tmp_path / "enabled").write_text("always [madvise] never\n")
    (tmp_path / "defrag").write_text("always defer defer+madvise [madvise] never\n")
    for size, choice in (("2048kB", "always [inherit] madvise never"),
                         ("16kB", "always inherit madvise [never]")):
        (tmp_path / f"hugepages-{size}").mkdir()
        (tmp_path / f"hugepages-{size}" / "enabled").write_text(choice + "\n")
    assert sysinfo.transparent_hugepages(tmp_path) == {
        "enabled": "madvise", "defrag": "madvise",
        "sizes": {"16kB": "never", "2048kB": "inherit"}}
    assert sysinfo.transparent_hugepages(tmp_path / "absent") is None
    assert "transparent_hugepages" in machine.fingerprint(include_git=False)
