/* tu_skip_probe.c — a Criterion program whose tests skip on request, run by test_common's skip suite
 * to check what ctest is told: exit 77 (shown as "Skipped") when every test skipped, and a failure
 * when FASTSMT_REQUIRE_SHARED / FASTSMT_REQUIRE_GPU forbid the skip. Not a ctest test itself. */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "testutil.h"

Test(probe, shared)
{
    char *p = tu_shared_path("probe/present.txt");
    if (!p)
        cr_skip_test("shared data absent");
    free(p);
}

Test(probe, gpu)
{
    if (getenv("PROBE_NO_GPU"))
        TU_SKIP_GPU("no GPU (probe)");
}
