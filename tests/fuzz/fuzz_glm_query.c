/* fuzz_glm_query — text through glm_query_lines (KenLM's query) on a small model built once from
 * tests/data/glm/chain.arpa. The fast path and the reference path must print the same bytes, and
 * each input line gives one "Total:" line. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"
#include "glm.h"
#include "smt_lines.h"
#include "smt_sniff.h"

static glm_model *g_model;

static void close_model(void) { glm_close(g_model); }

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    char *arpa = fz_copy_data("glm/chain.arpa", "chain.arpa");
    char *out = fz_path("chain.glm");
    glm_build_options opt = {.K = GLM_MIN_K, .progress = -1};
    smt_err err;
    if (glm_build(arpa, out, &opt, NULL, &err) != 0 ||
        glm_open(&g_model, out, GLM_OPEN_VERIFY, &err) != 0)
        fz_fail("cannot build the model: %s", err.msg);
    atexit(close_model);
    free(arpa);
    free(out);
    return 0;
}

static char *query(const char *path, int path_kind, int null_context, size_t *len, int *rc)
{
    char *text = NULL;
    FILE *out = open_memstream(&text, len);
    if (!out)
        fz_fail("open_memstream");
    glm_query_options opt = {.verbosity = GLM_VERBOSE_WORD, .null_context = null_context,
                             .threads = 1, .path = path_kind};
    glm_query_stats stats;
    smt_err err;
    smt_lines *in = NULL;
    *rc = smt_lines_open(&in, path, 0, &err);
    if (!*rc)
        *rc = glm_query_lines(g_model, in, out, &opt, NULL, &stats, &err);
    smt_lines_close(in);
    if (fclose(out) != 0)
        fz_fail("fclose of a memory stream");
    return text;
}

static size_t count(const char *s, size_t n, const char *what)
{
    size_t c = 0, wl = strlen(what);
    for (const char *p = s; (p = memmem(p, n - (size_t)(p - s), what, wl)); p += wl)
        c++;
    return c;
}

/* Compressed input, as the line reader tells it (its lines are not the bytes' lines). */
static int compressed(const uint8_t *data, size_t size)
{
    smt_kind k = smt_sniff(data, size, 1, NULL);
    return k == SMT_KIND_GZIP || k == SMT_KIND_XZ || k == SMT_KIND_BZIP2 || k == SMT_KIND_ZSTD;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *path = fz_write("in.txt", data, size);
    for (int nc = 0; nc <= 1; nc++) {
        size_t len_fast = 0, len_ref = 0;
        int rc_fast, rc_ref;
        char *fast = query(path, GLM_PATH_FAST, nc, &len_fast, &rc_fast);
        char *ref = query(path, GLM_PATH_REF, nc, &len_ref, &rc_ref);
        if (rc_fast != rc_ref || len_fast != len_ref || memcmp(fast, ref, len_fast) != 0)
            fz_fail("glm query: the fast path (rc %d, %zu bytes) and the reference (rc %d, %zu "
                    "bytes) differ", rc_fast, len_fast, rc_ref, len_ref);
        /* One "Total:" per line of plain text (compressed input aside: its lines are not these). */
        if (rc_ref == 0 && !compressed(data, size)) {
            const uint8_t *t = data; /* a leading byte-order mark is not text (the reader drops it) */
            size_t n = size;
            while (n >= 3 && memcmp(t, "\xef\xbb\xbf", 3) == 0)
                t += 3, n -= 3;
            size_t lines = count((const char *)t, n, "\n");
            if (n && t[n - 1] != '\n')
                lines++;
            size_t totals = count(ref, len_ref, "Total: ");
            if (totals != lines)
                fz_fail("glm query: %zu input lines gave %zu Total: lines", lines, totals);
        }
        free(fast);
        free(ref);
    }
    free(path);
    return 0;
}
