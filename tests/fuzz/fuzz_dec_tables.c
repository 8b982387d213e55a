/* fuzz_dec_tables — the decoder's text models (phrase table and reordering table, binarized at load
 * by probingpt; ARPA LM, by glm) through dec_model_load of tests/data/decoder/tiny/moses.ini and one
 * translation. Input: phrase table "#==#" reordering table "#==#" ARPA (the outside campaign's
 * layout); a missing part is the tiny model's own file.
 * It also checks "one parser, one verdict" (issue 9): phrase and reordering tables the decoder loads
 * must build with ppt_build too (FASTSMT_FUZZ_VERDICT=0 in the environment turns that off). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_dec_common.h"
#include "fuzz_util.h"
#include "probingpt.h"

static char *g_default[3];
static size_t g_default_len[3];
static const char *const g_name[3] = {"phrase-table", "reordering-table", "lm.arpa"};

static int g_verdict;

/* The decoder loaded these tables: probingpt must accept them too. */
static void same_verdict(void)
{
    char *pt = fz_path(g_name[0]), *rt = fz_path(g_name[1]), *out = fz_path("verdict.ppt");
    ppt_build_options opt = {.phrase_table = pt, .reordering = rt, .out = out, .progress = -1};
    smt_err err;
    int rc = ppt_build(&opt, NULL, &err);
    if (rc == SMT_ERR_PARSE)
        fz_fail("the decoder loads a phrase/reordering table that ppt_build refuses: %s", err.msg);
    unlink(out);
    free(pt);
    free(rt);
    free(out);
}

static void free_defaults(void)
{
    for (int i = 0; i < 3; i++)
        free(g_default[i]);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    free(fz_copy_data("decoder/tiny/moses.ini", "moses.ini"));
    for (int i = 0; i < 3; i++) {
        char rel[64];
        snprintf(rel, sizeof rel, "decoder/tiny/%s", g_name[i]);
        g_default[i] = fz_read_data(rel, &g_default_len[i]);
    }
    atexit(free_defaults);
    const char *v = getenv("FASTSMT_FUZZ_VERDICT");
    g_verdict = !(v && strcmp(v, "0") == 0);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *part[3];
    size_t len[3];
    size_t n = fz_split(data, size, part, len, 3);
    if (n > 3)
        return 0;
    for (size_t i = 0; i < 3; i++)
        free(i < n ? fz_write(g_name[i], part[i], len[i])
                   : fz_write(g_name[i], g_default[i], g_default_len[i]));
    char *ini = fz_path("moses.ini");
    dec_model *m = fz_dec_load(ini);
    if (m) {
        fz_dec_translate_once(m);
        dec_model_free(m);
        if (g_verdict)
            same_verdict();
    }
    free(ini);
    return 0;
}
