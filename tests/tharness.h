/* tharness.h — a minimal harness for the threaded tests. They are plain programs rather than
 * Criterion suites because Criterion cannot start under ThreadSanitizer (Criterion issue #274), and CI
 * runs them under TSan. Each prints one "name: N passed, N failed" line and exits non-zero on failure. */
#ifndef THARNESS_H
#define THARNESS_H

#include <stdio.h>

static int th_passed, th_failed;

#define TH_CHECK(cond, ...)                                                                        \
    do {                                                                                           \
        if (cond) {                                                                                \
            th_passed++;                                                                           \
        } else {                                                                                   \
            th_failed++;                                                                           \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond);               \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
        }                                                                                          \
    } while (0)

/* Prints the closing line; returns the exit status for main. */
static inline int th_summary(const char *name)
{
    printf("%s: %d passed, %d failed\n", name, th_passed, th_failed);
    return th_failed ? 1 : 0;
}

#ifndef TU_SKIP_CODE
#define TU_SKIP_CODE 77
#endif

/* Tests that need data which is absent print this and return TU_SKIP_CODE for main, which ctest
 * shows as "Skipped" (SKIP_RETURN_CODE), never "Passed". */
static inline int th_skip(const char *name, const char *why)
{
    printf("%s: skipped: %s\n", name, why);
    return TU_SKIP_CODE;
}

#endif
