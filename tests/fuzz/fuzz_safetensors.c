/* fuzz_safetensors — an NMT model.safetensors through nmt_model_open, with the tiny model's config
 * and vocabularies (tests/data/nmt/tiny); a model that opens scores and translates a sentence. */
#include <stdlib.h>

#include "fuzz_nmt_common.h"
#include "fuzz_util.h"
#include "nmt.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fz_nmt_copy_tiny("model.safetensors");
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    free(fz_write("model.safetensors", data, size));
    nmt_model *m = NULL;
    smt_err err;
    if (nmt_model_open(&m, fz_dir(), &err) == 0) {
        fz_nmt_exercise(m);
        nmt_model_free(m);
    }
    return 0;
}
