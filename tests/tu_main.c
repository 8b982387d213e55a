/* tu_main.c — the main() of every Criterion test program (added by fastsmt_add_test).
 *
 * It is Criterion's own main with one addition: a program whose every test skipped (no ../shared,
 * no GPU, no python3-torch...) tested nothing, so it exits with TU_SKIP_CODE, which ctest shows as
 * "Skipped" (the test's SKIP_RETURN_CODE) instead of "Passed". A failure or crash still exits 1. */
#include <criterion/criterion.h>
#include <criterion/hooks.h>
#include <stdio.h>

#ifndef TU_SKIP_CODE
#define TU_SKIP_CODE 77
#endif

static struct {
    int seen;
    size_t tests, skipped, failed, crashed;
} tu_stats;

ReportHook(POST_ALL)(struct criterion_global_stats *s)
{
    tu_stats.seen = 1;
    tu_stats.tests = s->nb_tests;
    tu_stats.skipped = s->tests_skipped;
    tu_stats.failed = s->tests_failed;
    tu_stats.crashed = s->tests_crashed;
}

int main(int argc, char *argv[])
{
    struct criterion_test_set *tests = criterion_initialize();
    int result = 0;
    if (criterion_handle_args(argc, argv, true))
        result = !criterion_run_all_tests(tests);
    criterion_finalize(tests);
    if (result == 0 && tu_stats.seen && tu_stats.tests > 0 && tu_stats.skipped == tu_stats.tests &&
        tu_stats.failed == 0 && tu_stats.crashed == 0) {
        fprintf(stderr, "all %zu tests skipped: nothing was tested (exit %d, shown as skipped)\n",
                tu_stats.tests, TU_SKIP_CODE);
        return TU_SKIP_CODE;
    }
    return result;
}
