/* Tests of glm on the shared bible LMs (skipped when $FASTSMT_SHARED is absent):
 * - lm.5 on dev.en and test-a.en: the output of every path is byte-identical to KenLM's query;
 * - lm.3 read back: every n-gram of the ARPA file is found with its exact probability and
 *   backoff, for several node sizes K. */
#define _GNU_SOURCE /* open_memstream */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "glm.h"
#include "glm_internal.h"
#include "smt_lines.h"
#include "testutil.h"

static char *dir;
static void setup(void) { dir = tu_tmpdir(); cr_assert_not_null(dir); }
static void teardown(void) { tu_rmtree(dir); free(dir); }

TestSuite(glm_shared, .init = setup, .fini = teardown);

static glm_model *build(const char *rel, uint32_t K)
{
    char *arpa = tu_shared_path(rel);
    if (!arpa)
        cr_skip_test("shared data absent");
    char *out = tu_join(dir, "m.glm");
    glm_build_options opt = {.K = K, .progress = -1, .warn = NULL};
    smt_err e;
    cr_assert_eq(glm_build(arpa, out, &opt, NULL, &e), 0, "%s", e.msg);
    glm_model *m;
    cr_assert_eq(glm_open(&m, out, GLM_OPEN_VERIFY | GLM_OPEN_HUGE | GLM_OPEN_INDEX, &e), 0, "%s",
                 e.msg);
    free(arpa);
    free(out);
    return m;
}

Test(glm_shared, kenlm_reference_lm5, .timeout = 600)
{
    glm_model *m = build("models/bible-es-en/lm.5.arpa.gz", GLM_DEFAULT_K);
    const char *sets[2] = {"dev", "test-a"};
    for (int s = 0; s < 2; s++) {
        char rel[128];
        snprintf(rel, sizeof rel, "data/bible/%s.en", sets[s]);
        char *text = tu_shared_path(rel);
        snprintf(rel, sizeof rel, "reference/kenlm/%s.en.lm5.query.txt", sets[s]);
        char *refp = tu_shared_path(rel);
        size_t rlen;
        char *ref = tu_read_file(refp, &rlen);
        cr_assert_not_null(ref);
        const int paths[3][2] = {{GLM_PATH_FAST, 1}, {GLM_PATH_REF, 1}, {GLM_PATH_FAST, 2}};
        for (int p = 0; p < 3; p++) {
            char *buf = NULL;
            size_t len = 0;
            FILE *f = open_memstream(&buf, &len);
            glm_query_options opt = {GLM_VERBOSE_WORD, 0, (unsigned)paths[p][1], paths[p][0], 0};
            smt_err e;
            glm_query_stats st;
            smt_lines *in = NULL;
            cr_assert_eq(smt_lines_open(&in, text, 0, &e), 0, "%s", e.msg);
            cr_assert_eq(glm_query_lines(m, in, f, &opt, NULL, &st, &e), 0, "%s", e.msg);
            smt_lines_close(in);
            fclose(f);
            cr_assert_eq(len, rlen, "%s path %d: %zu bytes, KenLM %zu", sets[s], p, len, rlen);
            cr_assert(memcmp(buf, ref, len) == 0, "%s path %d differs from KenLM", sets[s], p);
            free(buf);
        }
        free(text), free(refp), free(ref);
    }
    glm_close(m);
}

/* Parses the ARPA file and checks every n-gram against the model's trie. */
static void read_back(glm_model *m, const char *rel)
{
    char *path = tu_shared_path(rel);
    gzFile g = gzopen(path, "rb");
    cr_assert_not_null(g);
    static char line[4096];
    unsigned n = 0, N = glm_order(m);
    uint64_t checked = 0;
    while (gzgets(g, line, sizeof line)) {
        size_t l = strlen(line);
        while (l && (line[l - 1] == '\n' || line[l - 1] == '\r'))
            line[--l] = '\0';
        if (sscanf(line, "\\%u-grams:", &n) == 1 || l == 0 || line[0] == '\\')
            continue;
        if (n == 0)
            continue;
        char *f[8], *save;
        unsigned nf = 0;
        for (char *t = strtok_r(line, " \t", &save); t && nf < 8; t = strtok_r(NULL, " \t", &save))
            f[nf++] = t;
        cr_assert(nf == n + 1 || nf == n + 2);
        glm_word ids[GLM_MAX_ORDER], hist[GLM_MAX_ORDER];
        for (unsigned k = 0; k < n; k++)
            ids[k] = glm_index(m, f[1 + k], strlen(f[1 + k]));
        for (unsigned k = 0; k + 1 < n; k++)
            hist[k] = ids[n - 2 - k];
        float prob, bo[GLM_MAX_ORDER];
        unsigned len = glm_walk(&m->lay, ids[n - 1], hist, n - 1, &prob, bo);
        cr_assert_eq(len, n, "%s: not found", line);
        float want = -fabsf(strtof(f[0], NULL));
        cr_assert(memcmp(&prob, &want, 4) == 0, "n-gram with prob %s", f[0]);
        if (n < N) {
            float wb = nf == n + 2 ? strtof(f[n + 1], NULL) : 0.0f;
            cr_assert(bo[n - 1] == wb, "n-gram with backoff %g, stored %g", wb, bo[n - 1]);
        }
        checked++;
    }
    gzclose(g);
    uint64_t total = 0;
    for (unsigned k = 1; k <= N; k++)
        total += glm_count(m, k);
    cr_assert_eq(checked, total, "every stored n-gram came from the file");
    free(path);
}

Test(glm_shared, read_back_lm3_every_K, .timeout = 600)
{
    const uint32_t Ks[] = {3, 8, 31};
    for (size_t i = 0; i < 3; i++) {
        glm_model *m = build("models/bible-es-en/lm.3.arpa.gz", Ks[i]);
        read_back(m, "models/bible-es-en/lm.3.arpa.gz");
        glm_close(m);
    }
}

/* glm build --progress on a build of a few seconds: the reading meter redraws while it reads (it
 * drew only its final line: the ARPA reader passed 1 line in 65536 to a meter that itself looks at
 * 1 call in 65536), with the file's real size. */
Test(glm_shared, build_progress_moves, .timeout = 600)
{
    char *arpa = tu_shared_path("models/bible-es-en/lm.5.arpa.gz");
    if (!arpa)
        cr_skip_test("shared data absent");
    char *bin = tu_bin_path("glm"), *model = tu_join(dir, "p.glm"), cmd[4096], *err = NULL;
    snprintf(cmd, sizeof cmd, "%s build --progress %s %s", bin, arpa, model);
    cr_assert_eq(tu_run(cmd, NULL, &err), 0, "%s", err);
    double mb = (double)tu_file_size(arpa) / 1e6;
    char total[64];
    snprintf(total, sizeof total, " / %.1f MB (", mb);
    unsigned draws = 0, partial = 0;
    for (const char *p = strstr(err, "reading ARPA: "); p; p = strstr(p + 1, "reading ARPA: ")) {
        draws++;
        cr_assert(strncmp(strchr(p, '/') - 1, total, strlen(total)) == 0, "%.60s", p);
        if (strncmp(strchr(p, '('), "(100.0%)", 8) != 0) /* a draw before the end */
            partial++;
    }
    cr_assert_geq(partial, 1, "no intermediate draw in %u: %s", draws, err);
    cr_assert_null(strstr(err, "0.0 / 0.0 MB"), "%s", err);
    free(err), free(bin), free(model), free(arpa);
}
