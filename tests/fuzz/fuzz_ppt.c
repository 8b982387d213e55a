/* fuzz_ppt — a .ppt file through ppt_open, lookups, iteration, ppt_verify and ppt_dump. The input
 * is opened as it is, then with a consistent container (fz_fix_container: file size and checksums
 * made to match) so that mutations reach the group and record checks. probingpt.h promises that a
 * damaged table gives an error, never a crash, also without SMT_OPEN_VERIFY: lookups and iteration
 * run on tables opened without it. */
#include <stdlib.h>
#include <string.h>

#include "fuzz_ppt_common.h"
#include "fuzz_util.h"
#include "probingpt.h"

static void try_open(const char *path, unsigned flags)
{
    ppt_table *t = NULL;
    smt_err err;
    if (ppt_open(&t, path, flags, &err) == 0) {
        int vrc = fz_ppt_exercise(t, 0);
        if ((flags & SMT_OPEN_VERIFY) && vrc != 0)
            fz_fail("ppt: opened with SMT_OPEN_VERIFY, ppt_verify then fails");
        ppt_close(t);
    }
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned seed);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned seed)
{
    return fz_container_mutate(data, size, max_size, seed);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *path = fz_write("in.ppt", data, size);
    try_open(path, 0);
    free(path);

    uint8_t *buf = malloc(size ? size : 1);
    if (!buf)
        fz_fail("out of memory");
    memcpy(buf, data, size);
    fz_fix_container(buf, size);
    path = fz_write("in.ppt", buf, size);
    free(buf);
    try_open(path, 0);
    try_open(path, SMT_OPEN_VERIFY | SMT_OPEN_READ);
    free(path);
    return 0;
}
