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

/* Recombination: the LM's states and the reordering's last start and forward scores (the tiny
 * model's reordering is msd-bidirectional: backward scores 0..2, forward 3..5). */
Test(dec_ff, recombination_compares_each_features_state)
{
    dec_model *m = tiny();
    cr_assert_eq(m->lr_types, 3);
    size_t size = sizeof(hyp) + m->n_lms * sizeof(glm_state);
    hyp *a = calloc(1, size), *b = calloc(1, size);
    cr_assert(a && b);
    const float r1[6] = {-1, -2, -3, -4, -5, -6}, r2[6] = {-9, -9, -9, -4, -5, -6},
                r3[6] = {-1, -2, -3, -4, -5, -7};
    dec_cand c1 = {.reo = r1}, c2 = {.reo = r2}, c3 = {.reo = r3}, c4 = {.reo = NULL};
    a->cand = &c1, b->cand = &c2; /* the same forward scores */
    a->start = b->start = 1;
    a->end = b->end = 2;
    glm_state_begin(m->lms[0], &a->lm[0]);
    b->lm[0] = a->lm[0];
    cr_assert(dec_ff_state_equal(m, a, b));
    cr_assert_eq(dec_ff_state_hash(m, a, 7), dec_ff_state_hash(m, b, 7));
    b->cand = &c3; /* another forward score */
    cr_assert_not(dec_ff_state_equal(m, a, b));
    b->cand = &c4; /* no reordering entry */
    cr_assert_not(dec_ff_state_equal(m, a, b));
    b->cand = &c2;
    b->start = 0; /* another last start */
    cr_assert_not(dec_ff_state_equal(m, a, b));
    b->start = 1;
    b->lm[0].length = 0; /* another LM state */
    cr_assert_not(dec_ff_state_equal(m, a, b));
    b->lm[0] = a->lm[0];
    cr_assert(dec_ff_state_equal(m, a, b));
    free(a), free(b);
    dec_model_free(m);
}
