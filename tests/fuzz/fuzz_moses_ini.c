/* fuzz_moses_ini — a moses.ini through dec_model_load and one translation. The ini is written into
 * a directory that holds the tiny model of tests/data/decoder/tiny (phrase-table,
 * reordering-table, lm.arpa) and its binaries built once (pt.ppt with the reordering scores,
 * lm.glm), so paths in the ini can name any of them. */
#include <stdlib.h>
#include <string.h>

#include "fuzz_dec_common.h"
#include "fuzz_util.h"
#include "glm.h"
#include "probingpt.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    char *pt = fz_copy_data("decoder/tiny/phrase-table", "phrase-table");
    char *rt = fz_copy_data("decoder/tiny/reordering-table", "reordering-table");
    char *lm = fz_copy_data("decoder/tiny/lm.arpa", "lm.arpa");
    char *ppt = fz_path("pt.ppt"), *glm = fz_path("lm.glm");
    ppt_build_options po = {.phrase_table = pt, .reordering = rt, .out = ppt, .progress = -1};
    glm_build_options go = {.progress = -1};
    smt_err err;
    if (ppt_build(&po, NULL, &err) != 0 || glm_build(lm, glm, &go, NULL, &err) != 0)
        fz_fail("cannot binarize the tiny model: %s", err.msg);
    free(pt);
    free(rt);
    free(lm);
    free(ppt);
    free(glm);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *ini = fz_write("moses.ini", data, size);
    dec_model *m = fz_dec_load(ini);
    if (m) {
        fz_dec_translate_once(m);
        dec_model_free(m);
    }
    free(ini);
    return 0;
}
