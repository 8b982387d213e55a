#define _GNU_SOURCE
/* The decoder's features, each defined once (issue 10, item 2): the table of dec_ff.h picks the
 * hooks of the features a model has, and an n-best path's feature values come from what the
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

static int has(const dec_ff *const *list, unsigned n, const dec_ff *f)
{
    for (unsigned i = 0; i < n; i++)
        if (list[i] == f)
            return 1;
    return 0;
}

Test(dec_ff, the_table_picks_every_feature_of_the_model)
{
    dec_model *m = tiny();
    const dec_ff *all[] = {&dec_ff_tm,      &dec_ff_word_penalty, &dec_ff_phrase_penalty,
                           &dec_ff_unknown, &dec_ff_lm,           &dec_ff_distortion,
                           &dec_ff_reordering};
    cr_assert_eq(m->n_ff_path, 7u);
    for (unsigned i = 0; i < 7; i++)
        cr_assert(has(m->ff_path, m->n_ff_path, all[i]), "%s has no path hook", all[i]->name);
    /* the options' scores: TM, penalties, unknown words; the estimate: the LM; expansion: the LM,
     * distortion and reordering, in the table's order (it fixes the float arithmetic) */
    cr_assert_eq(m->n_ff_option, 4u);
    cr_assert_eq(m->n_ff_estimate, 1u);
    cr_assert_eq(m->ff_estimate[0], &dec_ff_lm);
    cr_assert_eq(m->n_ff_expand, 3u);
    cr_assert_eq(m->ff_expand[0], &dec_ff_lm);
    cr_assert_eq(m->ff_expand[1], &dec_ff_distortion);
    cr_assert_eq(m->ff_expand[2], &dec_ff_reordering);
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
