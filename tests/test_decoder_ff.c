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
#include "dec_queue.h"
#include "dec_testutil.h"
#include "testutil.h"

/* The tiny model; reo_type: another LexicalReordering type (NULL: the ini's). */
static dec_model *tiny_type(const char *reo_type)
{
    char *ini = tu_data_path("decoder/tiny/moses.ini"), *fo = NULL;
    dec_options opt;
    dec_options_default(&opt);
    opt.beam_threshold = 0; /* keep every hypothesis */
    if (reo_type) {
        cr_assert(asprintf(&fo, "LexicalReordering0 type=%s", reo_type) > 0);
        opt.feature_overwrite = fo;
    }
    dec_model *m = dtu_load(ini, &opt);
    free(ini), free(fo);
    return m;
}

static dec_model *tiny(void) { return tiny_type(NULL); }

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

/* backward_only: the model's reordering made backward-only after the load (the tiny table has the
 * six scores of msd-bidirectional; a backward model reads the first three). */
static void paths_reuse_the_search_scores(const char *reo_type, int backward_only)
{
    dec_model *m = tiny_type(reo_type);
    if (backward_only)
        m->lr_dir = DEC_LR_BACKWARD;
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

Test(dec_ff, nbest_paths_reuse_the_search_scores) { paths_reuse_the_search_scores(NULL, 0); }

/* Hierarchical reordering: each recombined arc's path, scored from its own nodes' stacks, has the
 * score the search gave it: recombination kept apart what the stack tells apart. */
Test(dec_ff, nbest_paths_reuse_the_search_scores_hier)
{
    paths_reuse_the_search_scores("hier-msd-bidirectional-fe", 0);
    paths_reuse_the_search_scores("hier-msd-bidirectional-fe", 1);
}

/* Recombination: the LM's states and the reordering's last start and forward scores (the tiny
 * model's reordering is msd-bidirectional: backward scores 0..2, forward 3..5). */
Test(dec_ff, recombination_compares_each_features_state)
{
    dec_model *m = tiny();
    cr_assert_eq(m->lr_types, 3);
    size_t size = dec_hyp_size(m);
    hyp *a = calloc(1, size), *b = calloc(1, size);
    cr_assert(a && b);
    const float r1[6] = {-1, -2, -3, -4, -5, -6}, r2[6] = {-9, -9, -9, -4, -5, -6},
                r3[6] = {-1, -2, -3, -4, -5, -7};
    dec_cand c1 = {.reo = r1}, c2 = {.reo = r2}, c3 = {.reo = r3}, c4 = {.reo = NULL};
    a->cand = &c1, b->cand = &c2; /* the same forward scores */
    a->start = b->start = 1;
    a->end = b->end = 2;
    a->lm[0] = 3; /* the LM state's id in the sentence */
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
    b->lm[0] = 4; /* another LM state */
    cr_assert_not(dec_ff_state_equal(m, a, b));
    b->lm[0] = a->lm[0];
    cr_assert(dec_ff_state_equal(m, a, b));
    free(a), free(b);
    dec_model_free(m);
}

/* A hypothesis with the given top block over below (NULL: one block). */
static hyp *hier_hyp(const dec_model *m, const dec_cand *c, int start, int end, const reo_block *below,
                     int top_start, int top_end)
{
    hyp *h = calloc(1, dec_hyp_size(m));
    cr_assert_not_null(h);
    h->cand = c;
    h->start = (int16_t)start;
    h->end = (int16_t)end;
    h->lm[0] = 0;
    reo_block *b = dec_hyp_reo(m, h);
    b->below = below;
    b->start = (int16_t)top_start;
    b->end = (int16_t)top_end;
    b->depth = below ? below->depth + 1 : 1;
    return h;
}

/* Recombination under the hierarchical model (Moses's HReorderingBackwardState compares its
 * ReorderingStack): four words, coverage {0, 1, 3}, last phrase [1, 1] for both; a: 0, 3, 1 (stack
 * [0][3][1]: 3 is a jump, 1 a jump back), b: 3, 0, 1 (stack [3][0, 1]: 1 follows 0). The
 * phrase-based state (last range, forward scores) is the same, the stacks differ: they must not
 * recombine. A backward-only hierarchical model compares the stack only: two hypotheses with the
 * same stack but another last start (0, 1 as two phrases or one) recombine, which the phrase-based
 * model does not allow. */
Test(dec_ff, hier_state_in_recombination)
{
    const float r[6] = {-1, -2, -3, -4, -5, -6};
    dec_cand c = {.reo = r};
    dec_model *pb = tiny();
    cr_assert_not(pb->lr_hier);
    size_t plain = sizeof(hyp);
    cr_assert_eq(dec_hyp_size(pb), plain, "phrase-based hypotheses do not grow");
    dec_model *m = tiny_type("hier-msd-bidirectional-fe");
    cr_assert(m->lr_hier);
    cr_assert_gt(dec_hyp_size(m), plain);
    reo_block b0 = {NULL, 0, 0, 1}, b3 = {&b0, 3, 3, 2}, c3 = {NULL, 3, 3, 1};
    hyp *a = hier_hyp(m, &c, 1, 1, &b3, 1, 1), *b = hier_hyp(m, &c, 1, 1, &c3, 0, 1);
    cr_assert_not(dec_ff_state_equal(m, a, b), "different stacks recombined");
    /* the same hypotheses under the phrase-based model's state recombine */
    hyp *pa = calloc(1, plain), *pb_h = calloc(1, plain);
    pa->cand = pb_h->cand = &c;
    pa->start = pb_h->start = 1;
    pa->end = pb_h->end = 1;
    pa->lm[0] = 0;
    pb_h->lm[0] = pa->lm[0];
    cr_assert(dec_ff_state_equal(pb, pa, pb_h));
    /* equal stacks (made of other blocks) are equal states, with equal hashes */
    reo_block d0 = {NULL, 0, 0, 1}, d3 = {&d0, 3, 3, 2};
    hyp *a2 = hier_hyp(m, &c, 1, 1, &d3, 1, 1);
    cr_assert(dec_ff_state_equal(m, a, a2));
    cr_assert_eq(dec_ff_state_hash(m, a, 7), dec_ff_state_hash(m, a2, 7));
    /* bidirectional: the forward model's last range still counts */
    hyp *x = hier_hyp(m, &c, 1, 1, NULL, 0, 1), *y = hier_hyp(m, &c, 0, 1, NULL, 0, 1);
    cr_assert_not(dec_ff_state_equal(m, x, y));
    dec_model *bw = tiny_type("hier-msd-bidirectional-fe");
    bw->lr_dir = DEC_LR_BACKWARD; /* hier-msd-backward (the tiny table has bidirectional scores) */
    hyp *xb = hier_hyp(bw, &c, 1, 1, NULL, 0, 1), *yb = hier_hyp(bw, &c, 0, 1, NULL, 0, 1);
    cr_assert(dec_ff_state_equal(bw, xb, yb), "backward-only: the stack is the whole state");
    cr_assert_eq(dec_ff_state_hash(bw, xb, 7), dec_ff_state_hash(bw, yb, 7));
    hyp *zb = hier_hyp(bw, &c, 1, 1, &c3, 0, 1);
    cr_assert_not(dec_ff_state_equal(bw, xb, zb));
    free(a), free(b), free(a2), free(x), free(y), free(xb), free(yb), free(zb), free(pa), free(pb_h);
    dec_model_free(m), dec_model_free(pb), dec_model_free(bw);
}

/* Each feature owns its configuration: every definition names the ini types it implements (no type
 * claimed twice), lists its keys once, and reads its line; the tiny model lays each out where its
 * configure put it (its presence and its place in the score vector). */
Test(dec_ff, each_feature_defines_its_types_and_keys)
{
    const dec_ff_def *defs[] = {
#define X(name, op, es, ex, pa, st) ff_##name##_def(),
        DEC_FEATURES(X)
#undef X
    };
    size_t nd = sizeof defs / sizeof *defs;
    for (size_t i = 0; i < nd; i++) {
        cr_assert(defs[i]->types[0] && defs[i]->configure, "definition %zu", i);
        for (const char *const *t = defs[i]->types; *t; t++)
            for (size_t j = 0; j < nd; j++)
                for (const char *const *u = defs[j]->types; j != i && *u; u++)
                    cr_assert_str_neq(*t, *u, "%s claimed twice", *t);
        for (const dec_ff_key *k = defs[i]->keys; k->name; k++)
            for (const dec_ff_key *q = k + 1; q->name; q++)
                cr_assert_str_neq(k->name, q->name, "%s twice in %s", k->name,
                                  defs[i]->types[0]);
    }
    /* the stateful ones (laid out first): the LM, distortion and reordering */
    cr_assert(ff_lm_def()->stateful && ff_distortion_def()->stateful &&
              ff_reordering_def()->stateful);
    cr_assert(!ff_tm_def()->stateful && !ff_word_penalty_def()->stateful);
    dec_model *m = tiny();
    cr_assert(m->has_reo && m->has_dist && m->has_wp && m->has_pp && m->has_uwp && m->n_lms == 1);
    /* every feature's place is where its configure laid it: the stateful ones first */
    cr_assert(m->off_reo < m->off_wp && m->off_dist < m->off_wp && m->off_lm[0] < m->off_wp);
    cr_assert_eq(m->n_scores, 6u + 1 + 1 + 1 + 1 + 1 + m->tables[0].n_scores);
    dec_model_free(m);
}

/* The sentence's LM state ids (hypotheses compare LM states as ids): a state met again gets its
 * id back, through the table's growth; states of other words or another length get their own
 * ids; the state kept is the first one given. */
Test(dec_ff, lm_state_ids_name_equal_states_once)
{
    arena ar = {0};
    lm_ids t;
    dec_lm_ids_reset(&t);
    enum { N = 3000 };
    uint32_t ids[N];
    for (uint32_t i = 0; i < N; i++) {
        glm_state st = {0};
        st.length = (uint8_t)(1 + i % 4);
        for (unsigned k = 0; k < st.length; k++)
            st.words[k] = i / 4 + k;
        st.backoff[0] = (float)i;
        cr_assert_eq(dec_lm_id(&t, &ar, &st, &ids[i]), 0);
        cr_assert_eq(ids[i], i, "state %u is new", i);
    }
    cr_assert_eq(t.n, N);
    for (uint32_t i = 0; i < N; i++) {
        glm_state st = {0};
        st.length = (uint8_t)(1 + i % 4);
        for (unsigned k = 0; k < st.length; k++)
            st.words[k] = i / 4 + k;
        uint32_t id;
        cr_assert_eq(dec_lm_id(&t, &ar, &st, &id), 0);
        cr_assert_eq(id, ids[i], "state %u met again", i);
        cr_assert_eq(t.st[id].backoff[0], (float)i, "the first state's backoffs are kept");
    }
    cr_assert_eq(t.n, N, "no state was added twice");
    arena_free(&ar);
}

/* The cube pruning's queue pops by (total, then creation order), whatever mix of pushes, pops and
 * top replacements (q_take_top, then a push or q_close_hole) leads there: a replaced top and a
 * popped top followed by the same pushes leave the same items. Checked against a plain list. */
Test(dec_ff, queue_pops_in_order_through_top_replacement)
{
    queue q = {0};
    qitem ref[4096];
    size_t n_ref = 0;
    uint32_t id = 0, rnd = 12345;
    for (int step = 0; step < 3000; step++) {
        rnd = rnd * 1103515245u + 12345u;
        unsigned op = (rnd >> 16) % 4;
        if (op < 2 || n_ref == 0) { /* push (totals repeat: the id decides) */
            qitem it = {(double)((rnd >> 8) % 50), id++, 0};
            cr_assert_eq(q_push(&q, it), 0);
            ref[n_ref++] = it;
            continue;
        }
        size_t best = 0; /* the reference's top */
        for (size_t i = 1; i < n_ref; i++)
            if (q_better(&ref[i], &ref[best]))
                best = i;
        qitem top = op == 2 ? q_pop(&q) : q_take_top(&q);
        cr_assert_eq(top.id, ref[best].id, "step %d", step);
        ref[best] = ref[--n_ref];
        if (op == 3) { /* its place goes to 0, 1 or 2 new items */
            unsigned k = (rnd >> 4) % 3;
            for (unsigned j = 0; j < k; j++) {
                qitem it = {(double)((rnd >> (8 + j)) % 50), id++, 0};
                cr_assert_eq(q_push(&q, it), 0);
                ref[n_ref++] = it;
            }
            q_close_hole(&q);
        }
        cr_assert_eq(q.n, n_ref);
    }
    while (n_ref) {
        size_t best = 0;
        for (size_t i = 1; i < n_ref; i++)
            if (q_better(&ref[i], &ref[best]))
                best = i;
        cr_assert_eq(q_pop(&q).id, ref[best].id);
        ref[best] = ref[--n_ref];
    }
    free(q.items);
}
