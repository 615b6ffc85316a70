/*
 * harness.h - a tiny test harness for calling C kernels directly.
 *
 * Each native/tests/test_<family>.c is one program: it calls the kernels of
 * native/<family>.c with small parameters and checks statuses, results, and
 * that every call gave back what it took (threads, file descriptors, child
 * processes; mappings within a small tolerance, since the sanitizers' own
 * allocators map memory). native/tests/run_sanitizers.sh builds each program
 * plain, under ASan+UBSan (LeakSanitizer included) and under TSan, and runs it.
 *
 * Unlike the kernels, a test program may print: one line per failed check
 * and a summary on stdout.
 */
#ifndef TC_TEST_HARNESS_H
#define TC_TEST_HARNESS_H

#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define TC_UNDER_SANITIZER 1
#else
#define TC_UNDER_SANITIZER 0
#endif

static int tc_failures;
static int tc_checks;

#define CHECK(cond, ...)                                                      \
    do {                                                                      \
        tc_checks++;                                                          \
        if (!(cond)) {                                                        \
            tc_failures++;                                                    \
            printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);            \
            printf(__VA_ARGS__);                                              \
            printf("\n");                                                     \
        }                                                                     \
    } while (0)

/* Entries of a /proc directory, not counting "." and "..". */
static int tc_count_dir(const char *path)
{
    DIR *d = opendir(path);
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n;
}

static int tc_count_lines(const char *path)
{
    FILE *f = fopen(path, "re");
    if (!f)
        return -1;
    int n = 0, c;
    while ((c = fgetc(f)) != EOF)
        n += c == '\n';
    fclose(f);
    return n;
}

typedef struct {
    int threads;
    int fds;
    int maps;
} tc_held;

static tc_held tc_held_now(void)
{
    tc_held h;
    h.threads = tc_count_dir("/proc/self/task");
    h.fds = tc_count_dir("/proc/self/fd");
    h.maps = tc_count_lines("/proc/self/maps");
    return h;
}

/* 1 if this process has a child (running or zombie), 0 if none. */
static int tc_has_children(void)
{
    int st;
    pid_t r = waitpid(-1, &st, WNOHANG);
    return !(r < 0 && errno == ECHILD);
}

/* Mappings may move a little under the sanitizers' allocators. */
#define TC_MAPS_SLACK (TC_UNDER_SANITIZER ? 64 : 4)

#define CHECK_NOTHING_HELD(before)                                            \
    do {                                                                      \
        tc_held after_ = tc_held_now();                                       \
        CHECK(after_.threads == (before).threads, "threads %d -> %d",         \
              (before).threads, after_.threads);                              \
        CHECK(after_.fds == (before).fds, "open fds %d -> %d", (before).fds,  \
              after_.fds);                                                    \
        CHECK(after_.maps <= (before).maps + TC_MAPS_SLACK,                   \
              "mappings %d -> %d", (before).maps, after_.maps);               \
        CHECK(!tc_has_children(), "a child process was left behind");        \
    } while (0)

#define RUN(test)                                                             \
    do {                                                                      \
        int before_ = tc_failures;                                            \
        test();                                                               \
        printf("%s %s\n", tc_failures == before_ ? "ok  " : "FAIL", #test);   \
    } while (0)

static int tc_summary(const char *name)
{
    printf("%s: %d checks, %d failed\n", name, tc_checks, tc_failures);
    return tc_failures ? 1 : 0;
}

#endif
