#define _GNU_SOURCE
/* The decoder's features, each defined once (issue 10, item 2): the table of dec_ff.h, and an
 * n-best path's feature values come from what the
 * search computed (the LM is not queried a second time). Uses the tiny hand-built model
 * (tests/data/decoder/tiny: every feature type). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dec_ff.h"
#include "dec_testutil.h"
#include "testutil.h"

static dec_model *tiny(void)
{
    char *ini = tu_data_path("decoder/tiny/moses.ini");
    dec_options opt;
    dec_options_default(&opt);
    opt.beam_threshold = 0; /* keep every hypothesis */
    dec_model *m = dtu_load(ini, &opt);
    free(ini);
    return m;
}

Test(dec_ff, the_tiny_model_has_every_feature)
{
    dec_model *m = tiny();
    int n = 0;
#define X(name, op, es, ex, pa, st) cr_assert(ff_##name##_present(m), #name); n++;
    DEC_FEATURES(X)
#undef X
    cr_assert_eq(n, 7);
    dec_model_free(m);
}

/* weights · features of the path ending in h. */
static double path_total(const dec_search *s, hyp *h, hyp **path, double *sc)
{
    size_t n = 0;
    for (hyp *p = h; p->cand; p = p->prev)
        n++;
    size_t i = n;
    for (hyp *p = h; p->cand; p = p->prev)
        path[--i] = p;
    dec_path_features(s, path, n, sc);
    double total = 0;
    for (unsigned k = 0; k < s->m->n_scores; k++)
        total += s->m->weights[k] * sc[k];
    return total;
}

Test(dec_ff, nbest_paths_reuse_the_search_scores)
{
    dec_model *m = tiny();
    dec_search *s;
    smt_err e;
    cr_assert_eq(dec_search_create(&s, m, &e), 0, "%s", e.msg);
    char w0[] = "x", w1[] = "c", w2[] = "a", w3[] = "zz", w4[] = "b";
    char *tokens[] = {w0, w1, w2, w3, w4};
    uint32_t lens[] = {1, 1, 1, 2, 1};
    cr_assert_eq(dec_search_run(s, tokens, lens, 5, 1, &e), 0, "%s", e.msg);
    cr_assert_not_null(s->best);
    /* without its LMs the model can still give every path's features: they are the search's */
    glm_model *lms[DEC_MAX_LMS];
    memcpy(lms, m->lms, sizeof lms);
    memset(m->lms, 0, sizeof m->lms);
    stack *last = &s->stacks[5];
    hyp *path[6];
    double sc[64];
    cr_assert_lt(m->n_scores, 64u);
    unsigned checked = 0;
    for (uint32_t i = 0; i < last->n; i++) {
        for (hyp *h = last->hyps[i]; h; h = h == last->hyps[i] ? h->arcs : h->next_arc) {
            double total = path_total(s, h, path, sc);
            cr_assert_float_eq(total, h->score, 1e-3, "path %u: weights · features %g, score %g",
                               checked, total, h->score);
            checked++;
        }
    }
    cr_assert_gt(checked, 3u);
    memcpy(m->lms, lms, sizeof lms);
    dec_search_free(s);
    dec_model_free(m);
}
