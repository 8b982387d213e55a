/* fuzz_nbest — a Moses n-best list through nmt rescore's parser: every line through
 * nmt_nbest_parse / nmt_nbest_plain / nmt_nbest_feature, and the whole list through
 * nmt_rescore_files with the tiny model (tests/data/nmt/tiny, opened once: an nmt_model is
 * immutable) against tests/data/nmt/fixture.src. A list it accepts gives one 1-best line per
 * source sentence. */
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"
#include "nmt.h"
#include "nmt.h"
#include "testutil.h"

static nmt_model *g_model;
static char *g_src;
static size_t g_src_lines;

static void cleanup(void)
{
    nmt_model_free(g_model);
    free(g_src);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    static const char *const files[] = {"config.json", "model.safetensors", "src.vocab",
                                        "tgt.vocab"};
    for (int i = 0; i < 4; i++) {
        char rel[64];
        snprintf(rel, sizeof rel, "nmt/tiny/%s", files[i]);
        free(fz_copy_data(rel, files[i]));
    }
    smt_err err;
    if (nmt_model_open(&g_model, fz_dir(), &err) != 0)
        fz_fail("cannot open the tiny model: %s", err.msg);
    size_t len = 0;
    char *src = fz_read_data("nmt/fixture.src", &len);
    for (size_t i = 0; i < len; i++)
        g_src_lines += src[i] == '\n';
    free(src);
    g_src = fz_copy_data("nmt/fixture.src", "source.txt");
    atexit(cleanup);
    return 0;
}

static void parse_lines(const uint8_t *data, size_t size)
{
    char *text = fz_strndup(data, size);
    char *p = text, *end = text + size;
    while (p < end) {
        char *nl = memchr(p, '\n', (size_t)(end - p));
        if (nl)
            *nl = 0;
        nmt_nbest_line line;
        memset(&line, 0, sizeof line);
        if (nmt_nbest_parse(p, &line) == 0) {
            double v = 0;
            (void)nmt_nbest_feature(line.feats, "LM0", &v);
            (void)nmt_nbest_feature(line.feats, "TranslationModel0", &v);
            char *plain = malloc(strlen(line.words) + 1);
            if (!plain)
                fz_fail("out of memory");
            size_t n = nmt_nbest_plain(line.words, plain);
            if (n != strlen(plain) || n > strlen(line.words))
                fz_fail("nmt_nbest_plain: returned %zu for a text of %zu bytes", n, strlen(plain));
            free(plain);
        }
        if (!nl)
            break;
        p = nl + 1;
    }
    free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    parse_lines(data, size);

    char *nbest = fz_write("in.nbest", data, size);
    char *nbest_out = fz_path("out.nbest"), *best_out = fz_path("out.best");
    nmt_ctx_options co = {.backend = NMT_BACKEND_CPU, .threads = 1};
    nmt_ctx *c = NULL;
    smt_err err;
    if (nmt_ctx_create(&c, g_model, &co, &err) != 0)
        fz_fail("nmt_ctx_create: %s", err.msg);
    nmt_rescore_options ro = {.weight = 1.0f, .length_bonus = 0.5f};
    if (nmt_rescore_files(c, g_src, nbest, &ro, nbest_out, best_out, &err) == 0) {
        size_t len = 0;
        char *best = tu_read_file(best_out, &len);
        if (!best)
            fz_fail("nmt_rescore_files succeeded without writing %s", best_out);
        size_t lines = 0;
        for (size_t i = 0; i < len; i++)
            lines += best[i] == '\n';
        if (lines != g_src_lines)
            fz_fail("nmt rescore: %zu 1-best lines for %zu source sentences", lines, g_src_lines);
        free(best);
    }
    nmt_ctx_free(c);
    free(nbest);
    free(nbest_out);
    free(best_out);
    return 0;
}
