/* threaded_nmt.c — one nmt_model shared by several threads, each with its own nmt_ctx (the
 * documented contract), must give every thread the single-threaded results; a context with its own
 * worker pool must give the same scores as one without. Plain program (tharness.h) so CI can run it
 * under ThreadSanitizer. */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "nmt.h"
#include "tharness.h"

enum { N_THREADS = 3, N_SENT = 4 };

static const char *src_text[N_SENT] = {"y dijo dios : sea la luz .", "la tierra de abram .",
                                       "y vivió noé después del arca .", "xyzzy dios"};
static const char *tgt_text[N_SENT] = {"and god said , let there be light .", "the land of abram .",
                                       "and noah lived after the ark .", "god"};

typedef struct work {
    const nmt_model *m;
    nmt_sentence src[N_SENT], tgt[N_SENT];
    float lp[N_SENT];
    int32_t best[N_SENT][64];
    int best_len[N_SENT];
    int rc;
    unsigned threads;
} work;

static void *run(void *arg)
{
    work *w = arg;
    nmt_ctx *c;
    smt_err err;
    nmt_ctx_options o = {NMT_BACKEND_CPU, 0, w->threads, 2, 0};
    if ((w->rc = nmt_ctx_create(&c, w->m, &o, &err)))
        return NULL;
    nmt_hyp h[N_SENT];
    nmt_search_options so = {3, 2.0f, 5, 0.6f, NULL};
    for (int rep = 0; rep < 3 && !w->rc; rep++) {
        w->rc = nmt_score(c, N_SENT, w->src, w->tgt, w->lp, &err);
        if (!w->rc)
            w->rc = nmt_translate(c, N_SENT, w->src, &so, h, &err);
        for (int i = 0; !w->rc && i < N_SENT; i++) {
            w->best_len[i] = h[i].len < 64 ? h[i].len : 64;
            memcpy(w->best[i], h[i].ids, (size_t)w->best_len[i] * sizeof(int32_t));
        }
        if (!w->rc)
            nmt_hyps_free(h, N_SENT);
    }
    nmt_ctx_free(c);
    return NULL;
}

/* Results no run can produce: NaN scores (equal to nothing), negative lengths and ids. */
static void poison(work *w)
{
    for (int i = 0; i < N_SENT; i++) {
        w->lp[i] = NAN;
        w->best_len[i] = -1;
        for (int j = 0; j < 64; j++)
            w->best[i][j] = -1;
    }
    w->rc = 0;
}

int main(void)
{
    const char *data = getenv("FASTSMT_TESTDATA");
    if (!data)
        return th_skip("threaded_nmt", "FASTSMT_TESTDATA is not set");
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/nmt/tiny", data);
    nmt_model *m;
    smt_err err;
    if (nmt_model_open(&m, dir, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    work ref, w[N_THREADS];
    memset(&ref, 0, sizeof ref);
    poison(&ref);
    int32_t ids[2][N_SENT][64];
    ref.m = m;
    ref.threads = 1;
    for (int i = 0; i < N_SENT; i++) {
        ref.src[i] = (nmt_sentence){ids[0][i], (int)nmt_model_tokenize(m, 0, src_text[i], ids[0][i], 64)};
        ref.tgt[i] = (nmt_sentence){ids[1][i], (int)nmt_model_tokenize(m, 1, tgt_text[i], ids[1][i], 64)};
    }
    run(&ref);
    TH_CHECK(ref.rc == 0, "reference run failed");
    for (int s = 0; s < N_SENT; s++) /* the reference itself was written */
        TH_CHECK(ref.lp[s] < 0 && ref.best_len[s] >= 0 && ref.best_len[s] <= 64 &&
                     (ref.best_len[s] == 0 || ref.best[s][0] >= 0),
                 "reference sentence %d: logprob %g, %d words", s, ref.lp[s], ref.best_len[s]);
    pthread_t t[N_THREADS];
    for (int i = 0; i < N_THREADS; i++) {
        w[i] = ref;
        w[i].threads = i == 0 ? 2 : 1; /* one context with its own worker pool */
        poison(&w[i]); /* a thread that writes nothing must fail, not inherit the reference */
        pthread_create(&t[i], NULL, run, &w[i]);
    }
    for (int i = 0; i < N_THREADS; i++) {
        pthread_join(t[i], NULL);
        TH_CHECK(w[i].rc == 0, "thread %d failed", i);
        for (int s = 0; s < N_SENT; s++) {
            TH_CHECK(w[i].lp[s] == ref.lp[s], "thread %d sentence %d: %g vs %g", i, s, w[i].lp[s],
                     ref.lp[s]);
            TH_CHECK(w[i].best_len[s] == ref.best_len[s] &&
                         !memcmp(w[i].best[s], ref.best[s], (size_t)ref.best_len[s] * 4),
                     "thread %d sentence %d: another translation", i, s);
        }
    }
    nmt_model_free(m);
    return th_summary("threaded_nmt");
}
