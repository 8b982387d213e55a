/* fuzz_glm — a .glm file through glm_open and queries. The input's container is first opened as
 * it is (without queries: an unverified model is only promised to open safely), then made
 * consistent (file size, checksums: fz_fix_container) so that mutations reach the structural checks
 * of GLM_OPEN_VERIFY; a model that passes them must answer every query without a fault. */
#include <stdlib.h>
#include <string.h>

#include "fuzz_glm_common.h"
#include "fuzz_util.h"
#include "glm.h"

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned seed);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned seed)
{
    return fz_container_mutate(data, size, max_size, seed);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    smt_err err;
    glm_model *m = NULL;
    char *path = fz_write("in.glm", data, size);
    if (glm_open(&m, path, 0, &err) == 0)
        glm_close(m);
    m = NULL;
    free(path);

    uint8_t *buf = malloc(size ? size : 1);
    if (!buf)
        fz_fail("out of memory");
    memcpy(buf, data, size);
    fz_fix_container(buf, size);
    path = fz_write("in.glm", buf, size);
    free(buf);
    if (glm_open(&m, path, GLM_OPEN_VERIFY, &err) == 0) {
        fz_glm_exercise(m, 0);
        glm_close(m);
    }
    if (glm_open(&m, path, GLM_OPEN_VERIFY | GLM_OPEN_READ | GLM_OPEN_INDEX, &err) == 0) {
        fz_glm_exercise(m, 0);
        glm_close(m);
    }
    free(path);
    return 0;
}
