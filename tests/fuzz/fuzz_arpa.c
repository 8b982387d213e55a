/* fuzz_arpa — an ARPA file through glm_build (glm's ARPA reader and trie builder). A model the
 * builder accepts must open with every check (GLM_OPEN_VERIFY) and answer queries; the fast and
 * reference query paths must agree. B-tree nodes of the smallest size (K = 3) make deep trees from
 * small inputs. Each input is built twice: with floats, and quantized (build_binary -q -b; the bits
 * follow from the input's length, 1..8 and 2..9, so few-bin edge cases come up), whose model must
 * open and answer as well. The float model is built again with -S of 1 byte (the sort's runs of a
 * few records, the finished levels through the temporary file): the same bytes. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_glm_common.h"
#include "fuzz_util.h"
#include "glm.h"
#include "testutil.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *arpa = fz_write("in.arpa", data, size);
    char *out = fz_path("out.glm");
    for (int q = 0; q < 2; q++) {
        glm_build_options opt = {.K = GLM_MIN_K, .progress = -1, .warn = NULL};
        if (q) {
            opt.prob_bits = 1 + (uint32_t)(size % 8);
            opt.backoff_bits = 2 + (uint32_t)(size / 8 % 8);
        }
        glm_build_stats stats;
        smt_err err;
        if (glm_build(arpa, out, &opt, &stats, &err) != 0)
            continue;
        glm_model *m = NULL;
        if (glm_open(&m, out, GLM_OPEN_VERIFY, &err) != 0)
            fz_fail("glm_build wrote a model that glm_open refuses: %s", err.msg);
        if (glm_order(m) != stats.order)
            fz_fail("glm: built order %u, opened order %u", stats.order, glm_order(m));
        if (glm_quantization(m, NULL, NULL) != q)
            fz_fail("glm: built %squantized, opened otherwise", q ? "" : "not ");
        fz_glm_exercise(m, 1);
        glm_close(m);
        if (!q) {
            char *small = fz_path("small.glm");
            opt.sort_memory = 1;
            opt.temp_dir = fz_dir();
            if (glm_build(arpa, small, &opt, &stats, &err) != 0)
                fz_fail("glm_build with -S 1 refuses what the default builds: %s", err.msg);
            size_t na, nb;
            char *da = tu_read_file(out, &na), *db = tu_read_file(small, &nb);
            if (na != nb || memcmp(da, db, na) != 0)
                fz_fail("glm_build with -S 1 writes other bytes");
            free(da);
            free(db);
            unlink(small);
            free(small);
        }
        unlink(out);
    }
    free(arpa);
    free(out);
    return 0;
}
