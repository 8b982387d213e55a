#define _GNU_SOURCE
/* The shared tuned model on the first sentences of test-a, against Moses's 1-best. The sample
 * tables of examples/sample hold every phrase-table and reordering line of the shared model whose
 * source phrase occurs in those sentences, so with the shared 5-gram LM and weights the search
 * sees exactly what Moses saw. Skips when ../shared is absent. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decoder.h"
#include "testutil.h"

#define N_SENT 10

/* Moses's model score of its 1-best for sentence i: the first line of each id in the n-best
 * file (xz-compressed; read through xz -dc). */
static int moses_scores(const char *nbest_xz, double *score, int n)
{
    char *cmd = NULL, *out = NULL;
    if (asprintf(&cmd, "xz -dc '%s' | awk -F' [|][|][|] ' '$1 < %d && !seen[$1]++ {print $4}'",
                 nbest_xz, n) < 0)
        return -1;
    int rc = tu_run(cmd, &out, NULL);
    free(cmd);
    if (rc != 0 || !out) {
        free(out);
        return -1;
    }
    int k = 0;
    for (char *p = strtok(out, "\n"); p && k < n; p = strtok(NULL, "\n"))
        score[k++] = atof(p);
    free(out);
    return k;
}

/* dir/name: the shared ini with absolute paths to the sample tables (which hold every line of the
 * shared tables the sample sentences need) and the LM at lm_path (malloc'ed path). */
static char *write_ini(const char *lm_path, const char *dir, const char *name)
{
    char *ini_src = tu_shared_path("models/bible-es-en/moses.ini");
    char *sample = tu_data_path("../../examples/sample");
    size_t len;
    char *text = tu_read_file(ini_src, &len), *ini_text = NULL;
    cr_assert_not_null(text);
    char *pt = strstr(text, "path=phrase-table.gz"), *reo = strstr(text, "path=reordering-table");
    char *lmp = strstr(text, "path=lm.5.arpa.gz");
    cr_assert(pt && reo && lmp);
    *pt = *reo = *lmp = '\0';
    cr_assert(asprintf(&ini_text, "%spath=%s/phrase-table.gz%spath=%s/reordering-table%spath=%s%s",
                       text, sample, pt + strlen("path=phrase-table.gz"), sample,
                       reo + strlen("path=reordering-table"), lm_path,
                       lmp + strlen("path=lm.5.arpa.gz")) > 0);
    char *ini = tu_join(dir, name);
    cr_assert_eq(tu_write_file(ini, ini_text, strlen(ini_text)), 0);
    free(ini_src), free(sample), free(text), free(ini_text);
    return ini;
}

Test(shared, first_sentences_match_moses, .timeout = 120)
{
    char *lm = tu_shared_path("models/bible-es-en/lm.5.arpa.gz");
    char *ref = tu_shared_path("reference/moses/test-a.moses.1best");
    char *nbest = tu_shared_path("reference/moses/test-a.moses.nbest100.xz");
    char *ini_src = tu_shared_path("models/bible-es-en/moses.ini");
    if (!lm || !ref || !nbest || !ini_src)
        cr_skip_test("shared data absent");
    char *sample = tu_data_path("../../examples/sample");
    char *dir = tu_tmpdir();
    char *ini = write_ini(lm, dir, "moses.ini");
    size_t len;
    dec_model *m;
    smt_err e;
    cr_assert_eq(dec_model_load(&m, ini, NULL, &e), 0, "%s", e.msg);
    dec_worker *w;
    cr_assert_eq(dec_worker_create(&w, m, &e), 0);
    char *src_path = tu_join(sample, "sample.es");
    char *src = tu_read_file(src_path, &len), *refs = tu_read_file(ref, &len);
    double moses[N_SENT];
    cr_assert_eq(moses_scores(nbest, moses, N_SENT), N_SENT);
    char *ss = NULL, *rs = NULL, *line = strtok_r(src, "\n", &ss), *r = strtok_r(refs, "\n", &rs);
    int same = 0;
    for (int i = 0; i < N_SENT && line && r; i++) {
        smt_buf b = {0};
        double score;
        cr_assert_eq(dec_translate(w, line, strlen(line), (uint64_t)i, &b, NULL, 0, 0, &score, &e),
                     0, "%s", e.msg);
        b.data[--b.len] = '\0'; /* the newline */
        same += strcmp(b.data, r) == 0;
        /* never a worse model score than Moses's 1-best (float printing: 1e-3) */
        cr_assert_geq(score, moses[i] - 2e-3, "sentence %d: %f < Moses %f", i, score, moses[i]);
        smt_buf_free(&b);
        line = strtok_r(NULL, "\n", &ss);
        r = strtok_r(NULL, "\n", &rs);
    }
    cr_assert_geq(same, N_SENT - 1, "only %d of %d 1-best lines equal Moses's", same, N_SENT);
    dec_worker_free(w);
    dec_model_free(m);
    tu_rmtree(dir);
    free(dir), free(ini), free(src), free(refs), free(src_path);
    free(sample), free(lm), free(ref), free(nbest), free(ini_src);
}

/* The shared ini with the sample tables and the LM at lm_path; the 1-best and 10-best distinct of
 * the sample sentences (malloc'ed). */
static char *translate_with_lm(const char *lm_path, const char *dir, const char *name)
{
    char *sample = tu_data_path("../../examples/sample");
    char *ini = write_ini(lm_path, dir, name);
    size_t len;
    dec_model *m;
    smt_err e;
    cr_assert_eq(dec_model_load(&m, ini, NULL, &e), 0, "%s", e.msg);
    dec_worker *w;
    cr_assert_eq(dec_worker_create(&w, m, &e), 0);
    char *src_path = tu_join(sample, "sample.es");
    char *src = tu_read_file(src_path, &len), *ss = NULL;
    smt_buf out = {0};
    int i = 0;
    for (char *line = strtok_r(src, "\n", &ss); line && i < N_SENT; line = strtok_r(NULL, "\n", &ss), i++)
        cr_assert_eq(dec_translate(w, line, strlen(line), (uint64_t)i, &out, &out, 10, 1, NULL, &e),
                     0, "%s", e.msg);
    dec_worker_free(w);
    dec_model_free(m);
    free(sample), free(ini), free(src_path), free(src);
    return out.data;
}

/* KENLM path= naming a KenLM binary (build_binary's probing layout, made by KenLM from the same
 * ARPA: ../shared/reference/kenlm-binaries): glm queries it in place, and the decoder's 1-best and
 * 10-best lists are byte-identical to those with the ARPA file. */
Test(shared, kenlm_binary_lm_same_output, .timeout = 300)
{
    char *lm = tu_shared_path("models/bible-es-en/lm.5.arpa.gz");
    char *kb_xz = tu_shared_path("reference/kenlm-binaries/bible.lm5.probing.bin.xz");
    if (!lm || !kb_xz)
        cr_skip_test("shared data absent");
    char *dir = tu_tmpdir(), *kb = tu_join(dir, "lm.5.probing.bin"), *cmd = NULL;
    cr_assert(asprintf(&cmd, "xz -dc '%s' > '%s'", kb_xz, kb) > 0);
    cr_assert_eq(tu_run(cmd, NULL, NULL), 0);
    char *with_arpa = translate_with_lm(lm, dir, "arpa.ini");
    char *with_kenlm = translate_with_lm(kb, dir, "kenlm.ini");
    cr_assert_str_eq(with_kenlm, with_arpa);
    tu_rmtree(dir);
    free(with_arpa), free(with_kenlm), free(cmd), free(kb), free(kb_xz), free(dir), free(lm);
}
