/* Threaded tests of glm (run under ThreadSanitizer in CI): many threads query one model at once
 * through every API, and the threaded batch and text paths equal the single-threaded ones. */
#define _GNU_SOURCE /* open_memstream */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "glm.h"
#include "glm_internal.h"
#include "smt_lines.h"
#include "tharness.h"
#include "testutil.h"

enum { NROWS = 30000 };

typedef struct job {
    const glm_model *m;
    const glm_word *rows;
    const float *want;
    int ok;
} job;

static void *worker(void *arg)
{
    job *j = arg;
    unsigned N = glm_order(j->m);
    float *p = malloc(NROWS * sizeof *p);
    smt_err e;
    j->ok = glm_score_rows(j->m, j->rows, NROWS, p, NULL, 1, &e) == 0 &&
            memcmp(p, j->want, NROWS * sizeof *p) == 0;
    glm_state *st = malloc((NROWS / 7 + 1) * sizeof *st);
    glm_word *sw = malloc((NROWS / 7 + 1) * sizeof *sw);
    float *sp = malloc((NROWS / 7 + 1) * sizeof *sp), *sq = malloc((NROWS / 7 + 1) * sizeof *sq);
    size_t ns = 0;
    for (size_t r = 0; r < NROWS; r += 7) { /* the state API: context from the null state */
        glm_state s;
        glm_state_null(&s);
        const glm_word *row = j->rows + r * N;
        for (unsigned i = 0; i + 1 < N; i++)
            if (row[i] != GLM_NONE)
                glm_score(j->m, &s, row[i], &s, NULL);
        st[ns] = s;
        sw[ns] = row[N - 1];
        sq[ns++] = j->want[r];
        float got = glm_score(j->m, &s, row[N - 1], &s, NULL);
        j->ok &= memcmp(&got, &j->want[r], sizeof got) == 0;
    }
    /* the same queries in one batch (in place), as the decoder's workers call it */
    j->ok &= glm_score_states(j->m, st, sw, ns, sp, st, NULL, &e) == 0 &&
             memcmp(sp, sq, ns * sizeof *sp) == 0;
    free(st), free(sw), free(sp), free(sq);
    free(p);
    return NULL;
}

int main(void)
{
    char *dir = tu_tmpdir(), *arpa = tu_data_path("glm/chain.arpa");
    char *model = tu_join(dir, "m.glm"), *text = tu_join(dir, "t.txt");
    smt_err e;
    glm_build_options opt = {.K = 4, .progress = -1, .warn = NULL};
    TH_CHECK(glm_build(arpa, model, &opt, NULL, &e) == 0, "%s", e.msg);
    glm_model *m;
    TH_CHECK(glm_open(&m, model, 0, &e) == 0, "%s", e.msg);
    if (th_failed)
        return th_summary("threaded_glm");
    unsigned N = glm_order(m), V = glm_vocab_size(m);
    glm_word *rows = malloc((size_t)NROWS * N * sizeof *rows);
    float *want = malloc(NROWS * sizeof *want), *got = malloc(NROWS * sizeof *got);
    uint64_t s = 12345;
    for (size_t i = 0; i < (size_t)NROWS * N; i++) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        rows[i] = (glm_word)(s % V);
    }
    TH_CHECK(glm_score_rows_ref(m, rows, NROWS, want, NULL, &e) == 0, "%s", e.msg);
    TH_CHECK(glm_score_rows(m, rows, NROWS, got, NULL, 2, &e) == 0, "%s", e.msg);
    TH_CHECK(memcmp(got, want, NROWS * sizeof *got) == 0, "2-thread rows differ");
    pthread_t t[4];
    job j[4];
    for (int i = 0; i < 4; i++) {
        j[i] = (job){m, rows, want, 0};
        pthread_create(&t[i], NULL, worker, &j[i]);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        TH_CHECK(j[i].ok, "thread %d", i);
    }
    /* the text path with threads equals one thread */
    FILE *f = fopen(text, "w");
    for (int i = 0; i < 20000; i++)
        fprintf(f, "%s\n", i % 3 ? "a b c a zzz b a" : "c c b a");
    fclose(f);
    char *outs[2];
    for (int p = 0; p < 2; p++) {
        size_t len;
        FILE *o = open_memstream(&outs[p], &len);
        glm_query_options q = {GLM_VERBOSE_WORD, 0, p ? 2u : 1u, GLM_PATH_FAST, 0};
        smt_lines *in = NULL;
        TH_CHECK(smt_lines_open(&in, text, 0, &e) == 0, "%s", e.msg);
        TH_CHECK(glm_query_lines(m, in, o, &q, NULL, NULL, &e) == 0, "%s", e.msg);
        smt_lines_close(in);
        fclose(o);
    }
    TH_CHECK(strcmp(outs[0], outs[1]) == 0, "threaded query output differs");
    free(outs[0]), free(outs[1]);
    /* glm_score_lines (the Python binding's score_batch) over 2 threads equals one thread */
    enum { NL = 20000 };
    const char **lines = malloc(NL * sizeof *lines);
    size_t *lens = malloc(NL * sizeof *lens);
    float *t1 = malloc(NL * sizeof *t1), *t2 = malloc(NL * sizeof *t2);
    for (size_t i = 0; i < NL; i++)
        lines[i] = i % 3 ? "a b c a zzz b a" : "c c b a", lens[i] = strlen(lines[i]);
    glm_lines_options o1 = {.bos = 1, .eos = 1, .threads = 1},
                      o2 = {.bos = 1, .eos = 1, .threads = 2};
    TH_CHECK(glm_score_lines(m, lines, lens, NL, &o1, t1, NULL, NULL, &e) == 0, "%s", e.msg);
    TH_CHECK(glm_score_lines(m, lines, lens, NL, &o2, t2, NULL, NULL, &e) == 0, "%s", e.msg);
    TH_CHECK(memcmp(t1, t2, NL * sizeof *t1) == 0, "2-thread glm_score_lines differs");
    free(lines), free(lens), free(t1), free(t2);
    free(rows), free(want), free(got);
    glm_close(m);
    tu_rmtree(dir);
    free(dir), free(arpa), free(model), free(text);
    return th_summary("threaded_glm");
}
