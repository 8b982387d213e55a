/* ff_reordering.h — Moses's LexicalReordering: the orientation of a phrase after the previous
 * one scored by this phrase's backward scores and by the previous phrase's forward scores (a pair
 * without a reordering entry scores 0).
 *
 * Phrase-based models (msd, mslr, monotonicity, leftright; Moses's PhraseBasedReorderingState):
 * one orientation of the two phrases' ranges (dec_orientation), for both directions.
 *
 * Hierarchical models (hier-..., Galley & Manning as Moses implements them):
 *   backward (HReorderingBackwardState): the orientation of the phrase against the top block of
 *     a shift-reduce stack of the source blocks translated so far (Moses's ReorderingStack): the
 *     distance d = start - top.end when the phrase lies right of the top, end - top.start when
 *     left (the empty stack: start + 1); d = 1 is monotone and d = -1 swap, and either merges
 *     the phrase into the top and then merges the top with the blocks below as long as they
 *     touch; any other d pushes the phrase as a block of its own. The stack is the state.
 *   forward (HReorderingForwardState): the orientation of the next phrase after the previous one
 *     given the coverage once the next is added: monotone when it starts right after the previous
 *     phrase or further right with the word after the previous phrase still uncovered, swap
 *     likewise to the left; scored with the previous phrase's forward scores (none for the first
 *     phrase, nothing at the end of the sentence). The state: the last range and its forward
 *     scores, as the phrase-based forward model's. */
#ifndef DEC_FF_REORDERING_H
#define DEC_FF_REORDERING_H

/* included by dec_ff.h only */

static inline int ff_reordering_present(const dec_model *m) { return m->has_reo; }

/* Moses's LRModel::GetOrientation(int) of a hierarchical backward distance. */
static inline int dec_orientation_hier_backward(int type, int d)
{
    if (type == DEC_LR_LEFTRIGHT)
        return d >= 1 ? 0 : 1; /* R : L */
    if (d == 1)
        return 0; /* M */
    if (type == DEC_LR_MONO)
        return 1; /* NM */
    if (d == -1)
        return 1; /* S */
    if (type == DEC_LR_MSD)
        return 2; /* D */
    return d > 1 ? 3 : 2; /* DR : DL */
}

/* The distance of [start, end] to the top of the stack (Moses's ReorderingStack::ShiftReduce). */
static inline int dec_reo_distance(const reo_block *top, int start, int end)
{
    if (!top)
        return start + 1;
    return start > top->start ? start - top->end : end - top->start;
}

/* Moses's LRModel::GetOrientation(prev, cur, coverage) of the hierarchical forward model; bits:
 * the coverage with cur added. */
static inline int dec_orientation_hier_forward(int type, int prev_start, int prev_end,
                                               int cur_start, int cur_end, const uint64_t *bits)
{
    if (type == DEC_LR_LEFTRIGHT)
        return cur_start > prev_end ? 0 : 1; /* R : L */
    int e = prev_end + 1;
    if (cur_start == e || (cur_start > e && !covered(bits, (size_t)e)))
        return 0; /* M */
    if (type == DEC_LR_MONO)
        return 1; /* NM */
    if (cur_end + 1 == prev_start ||
        (cur_end < prev_start && !covered(bits, (size_t)prev_start - 1)))
        return 1; /* S */
    if (type == DEC_LR_MSD)
        return 2; /* D */
    return cur_start > prev_end ? 3 : 2; /* DR : DL */
}

/* The score indices (within the feature) and values of h after prev under a hierarchical model
 * (out of line and cold, as every hierarchical hook: the phrase-based models' inlined code stays
 * as it was). */
__attribute__((noinline, cold)) static unsigned
ff_reordering_values_hier(const dec_model *m, const hyp *h, const hyp *prev, unsigned *idx,
                          float *val)
{
    unsigned n = 0;
    if ((m->lr_dir & DEC_LR_BACKWARD) && h->cand->reo) {
        int o = dec_orientation_hier_backward(
            m->lr_type, dec_reo_distance(dec_hyp_reo_top(m, prev), h->start, h->end));
        idx[n] = (unsigned)o;
        val[n++] = h->cand->reo[o];
    }
    unsigned off = m->lr_dir == DEC_LR_BIDI ? (unsigned)m->lr_types : 0;
    if ((m->lr_dir & DEC_LR_FORWARD) && prev->cand && prev->cand->reo) {
        int o = dec_orientation_hier_forward(m->lr_type, prev->start, prev->end, h->start, h->end,
                                             h->cov->bits);
        idx[n] = off + (unsigned)o;
        val[n++] = prev->cand->reo[off + o];
    }
    return n;
}

/* The score indices (within the feature) and values of h after prev: up to two. */
static inline unsigned ff_reordering_values(const dec_model *m, const hyp *h, const hyp *prev,
                                            unsigned *idx, float *val)
{
    if (__builtin_expect(m->lr_hier, 0))
        return ff_reordering_values_hier(m, h, prev, idx, val);
    int o = dec_orientation(m->lr_type, prev->start, prev->end, h->start, h->end);
    unsigned n = 0;
    if ((m->lr_dir & DEC_LR_BACKWARD) && h->cand->reo) {
        idx[n] = (unsigned)o;
        val[n++] = h->cand->reo[o];
    }
    unsigned off = m->lr_dir == DEC_LR_BIDI ? (unsigned)m->lr_types : 0;
    if ((m->lr_dir & DEC_LR_FORWARD) && prev->cand && prev->cand->reo) {
        idx[n] = off + (unsigned)o;
        val[n++] = prev->cand->reo[off + o];
    }
    return n;
}

/* h's stack: prev's with h's range shifted and reduced (Moses's ReorderingStack::ShiftReduce): h's
 * top block is h's own, the blocks below are prev's (or its ancestors'). */
__attribute__((noinline, cold)) static void ff_reordering_shift_reduce(const dec_model *m, hyp *h,
                                                                       const hyp *prev)
{
    const reo_block *top = dec_hyp_reo_top(m, prev);
    int d = dec_reo_distance(top, h->start, h->end);
    int start = h->start, end = h->end;
    if (top && (d == 1 || d == -1)) { /* merge with the top, then with the blocks it touches */
        start = d == 1 ? top->start : h->start;
        end = d == 1 ? h->end : top->end;
        top = top->below;
        while (top) {
            if (start == top->end + 1)
                start = top->start;
            else if (top->start == end + 1)
                end = top->end;
            else
                break;
            top = top->below;
        }
    }
    reo_block *b = dec_hyp_reo(m, h);
    b->below = top;
    b->start = (int16_t)start;
    b->end = (int16_t)end;
    b->depth = top ? top->depth + 1 : 1;
}

/* The hierarchical model's expansion: its scores, and h's stack. */
__attribute__((noinline, cold)) static void ff_reordering_expand_hier(const dec_model *m, hyp *h,
                                                                      const hyp *prev,
                                                                      double *score)
{
    unsigned idx[2];
    float val[2];
    unsigned n = ff_reordering_values_hier(m, h, prev, idx, val);
    for (unsigned i = 0; i < n; i++)
        *score += (double)m->w_reo[idx[i]] * val[i];
    if (m->lr_dir & DEC_LR_BACKWARD)
        ff_reordering_shift_reduce(m, h, prev);
}

static inline void ff_reordering_expand(dec_search *s, hyp *h, const hyp *prev, int complete,
                                        double *score)
{
    (void)complete;
    if (__builtin_expect(s->m->lr_hier, 0)) {
        ff_reordering_expand_hier(s->m, h, prev, score);
        return;
    }
    unsigned idx[2];
    float val[2];
    unsigned n = ff_reordering_values(s->m, h, prev, idx, val);
    for (unsigned i = 0; i < n; i++)
        *score += (double)s->m->w_reo[idx[i]] * val[i];
}

static inline void ff_reordering_path(const dec_model *m, const hyp *h, const hyp *prev, float *sc)
{
    unsigned idx[2];
    float val[2];
    unsigned n = ff_reordering_values(m, h, prev, idx, val);
    for (unsigned i = 0; i < n; i++)
        sc[m->off_reo + idx[i]] += val[i];
}

/* The state. Phrase-based: the last range (its end is the search's) and, with forward scores,
 * the last phrase's forward scores (a phrase without a reordering entry: none); Moses compares
 * the last range in either direction. Hierarchical: the backward model's stack, and the forward
 * model's last range and forward scores; a backward-only hierarchical model does not compare the
 * last range (Moses's HReorderingBackwardState compares its stack only). */
static inline const float *ff_reordering_fwd_scores(const dec_model *m, const hyp *h)
{
    if (!(m->lr_dir & DEC_LR_FORWARD) || !h->cand || !h->cand->reo)
        return NULL;
    return h->cand->reo + (m->lr_dir == DEC_LR_BIDI ? (unsigned)m->lr_types : 0);
}

/* The phrase-based state (and a hierarchical forward model's): the last start and the forward
 * scores, hashed into k. */
static inline uint64_t ff_reordering_fwd_hash(const dec_model *m, const hyp *h, uint64_t k)
{
    k = (k ^ (uint16_t)h->start) * 0x9E3779B97F4A7C15ull;
    const float *r = ff_reordering_fwd_scores(m, h);
    for (int i = 0; r && i < m->lr_types; i++) {
        uint32_t b;
        memcpy(&b, &r[i], 4);
        k = (k ^ b) * 0x9E3779B97F4A7C15ull;
    }
    return k;
}

/* A hierarchical model's state: the backward model's stack; the forward model's last start (its
 * end is the search's) and forward scores. */
__attribute__((noinline, cold)) static uint64_t
ff_reordering_state_hash_hier(const dec_model *m, const hyp *h, uint64_t k)
{
    if (m->lr_dir & DEC_LR_FORWARD)
        k = ff_reordering_fwd_hash(m, h, k);
    if (m->lr_dir & DEC_LR_BACKWARD)
        for (const reo_block *b = dec_hyp_reo_top(m, h); b; b = b->below)
            k = (k ^ ((uint32_t)(uint16_t)b->start << 16 | (uint16_t)b->end)) *
                0x9E3779B97F4A7C15ull;
    return k;
}

static inline uint64_t ff_reordering_state_hash(const dec_model *m, const hyp *h, uint64_t k)
{
    if (__builtin_expect(m->lr_hier, 0))
        return ff_reordering_state_hash_hier(m, h, k);
    return ff_reordering_fwd_hash(m, h, k);
}

/* 1 when the stacks hold the same blocks. */
static inline int dec_reo_stack_equal(const reo_block *a, const reo_block *b)
{
    if ((a ? a->depth : 0) != (b ? b->depth : 0))
        return 0;
    for (; a != b; a = a->below, b = b->below)
        if (a->start != b->start || a->end != b->end)
            return 0;
    return 1;
}

/* Equal forward scores (both none included). */
static inline int ff_reordering_fwd_equal(const dec_model *m, const hyp *a, const hyp *b)
{
    const float *ra = ff_reordering_fwd_scores(m, a), *rb = ff_reordering_fwd_scores(m, b);
    if (ra == rb)
        return 1;
    if (!ra || !rb)
        return 0;
    return memcmp(ra, rb, m->lr_types * sizeof(float)) == 0;
}

__attribute__((noinline, cold)) static int ff_reordering_state_equal_hier(const dec_model *m,
                                                                          const hyp *a,
                                                                          const hyp *b)
{
    if ((m->lr_dir & DEC_LR_BACKWARD) &&
        !dec_reo_stack_equal(dec_hyp_reo_top(m, a), dec_hyp_reo_top(m, b)))
        return 0;
    if (!(m->lr_dir & DEC_LR_FORWARD))
        return 1; /* the stack only: Moses's HReorderingBackwardState */
    return a->start == b->start && ff_reordering_fwd_equal(m, a, b);
}

static inline int ff_reordering_state_equal(const dec_model *m, const hyp *a, const hyp *b)
{
    if (__builtin_expect(m->lr_hier, 0))
        return ff_reordering_state_equal_hier(m, a, b);
    if (a->start != b->start)
        return 0;
    return ff_reordering_fwd_equal(m, a, b);
}

/* 1 when [p, p + n) is the word s. */
static inline int ff_reo_part(const char *p, size_t n, const char *s)
{
    return strlen(s) == n && !memcmp(p, s, n);
}

/* Moses's LRModel of the type= value: the kind, the directions, hierarchical or not. */
static inline int ff_reordering_type(dec_model *m, const char *type, const dec_ini *ini,
                                     unsigned line, smt_err *err)
{
    m->lr_type = -1;
    m->lr_dir = DEC_LR_BACKWARD;
    m->lr_hier = 0;
    const char *t = type ? type : "";
    for (const char *p = t;; p++) { /* the parts between dashes, empty ones skipped */
        size_t n = strcspn(p, "-");
        if (n == 0) {
        } else if (ff_reo_part(p, n, "msd")) {
            m->lr_type = DEC_LR_MSD;
        } else if (ff_reo_part(p, n, "mslr")) {
            m->lr_type = DEC_LR_MSLR;
        } else if (ff_reo_part(p, n, "monotonicity")) {
            m->lr_type = DEC_LR_MONO;
        } else if (ff_reo_part(p, n, "leftright")) {
            m->lr_type = DEC_LR_LEFTRIGHT;
        } else if (ff_reo_part(p, n, "backward") || ff_reo_part(p, n, "unidirectional")) {
            m->lr_dir = DEC_LR_BACKWARD;
        } else if (ff_reo_part(p, n, "forward")) {
            m->lr_dir = DEC_LR_FORWARD;
        } else if (ff_reo_part(p, n, "bidirectional")) {
            m->lr_dir = DEC_LR_BIDI;
        } else if (ff_reo_part(p, n, "hier")) { /* Galley & Manning's model (HReordering*State) */
            m->lr_hier = 1;
        } else if (ff_reo_part(p, n, "phrase") || ff_reo_part(p, n, "wbe")) { /* last one wins */
            m->lr_hier = 0;
        } else if (ff_reo_part(p, n, "collapseff")) {
            return smt_err_set(err, SMT_ERR_UNSUPPORTED, "%s:%u: collapseff is not supported",
                               ini->path, line);
        } else if (ff_reo_part(p, n, "f")) { /* a table keyed by the source only */
            return smt_err_set(err, SMT_ERR_UNSUPPORTED,
                               "%s:%u: reordering type '%s': a table conditioned on the source "
                               "phrase only (f) is not supported; give one conditioned on both "
                               "phrases (fe)", ini->path, line, t);
        } else if (!ff_reo_part(p, n, "fe") && !ff_reo_part(p, n, "allff")) {
            return smt_err_set(err, SMT_ERR_PARSE, "%s:%u: unknown reordering type part '%.*s'",
                               ini->path, line, (int)n, p);
        }
        p += n;
        if (!*p)
            break;
    }
    if (m->lr_type < 0)
        return smt_err_set(err, SMT_ERR_PARSE, "%s:%u: reordering type '%s' names no model",
                           ini->path, line, type ? type : "");
    m->lr_types = m->lr_type == DEC_LR_MSD ? 3 : m->lr_type == DEC_LR_MSLR ? 4 : 2;
    return 0;
}

/* Its ini line: type= (required), path= (the reordering table, integrated into each phrase
 * table by model.c), input-factor=, output-factor=, property-index=; one per model. */
static inline int ff_reordering_configure(dec_model *m, const dec_ff_line *l, smt_err *err)
{
    const dec_ini *ini = l->ini;
    const dec_ini_feature *f = l->f;
    if (*l->lr_f)
        return smt_err_set(err, SMT_ERR_UNSUPPORTED,
                           "%s:%u: only one LexicalReordering is supported", ini->path, f->line);
    *l->lr_f = f;
    int rc = ff_reordering_type(m, dec_ini_feature_arg(f, "type"), ini, f->line, err);
    if (rc)
        return rc;
    unsigned want = m->lr_types * (m->lr_dir == DEC_LR_BIDI ? 2 : 1), n;
    if ((rc = dec_ff_num_features(l, want, &n, err)))
        return rc;
    if (n != want)
        return smt_err_set(err, SMT_ERR_PARSE, "%s:%u: reordering type %s has %u scores, not %u",
                           ini->path, f->line, dec_ini_feature_arg(f, "type"), want, n);
    m->has_reo = 1;
    m->off_reo = m->n_scores;
    return dec_ff_add(m, l, n, 1, err);
}

static inline const dec_ff_def *ff_reordering_def(void)
{
    static const char *const types[] = {"LexicalReordering", NULL};
    static const dec_ff_key keys[] = {{"path", DEC_KEY_TEXT},
                                      {"type", DEC_KEY_TEXT},
                                      {"input-factor", DEC_KEY_FACTOR},
                                      {"output-factor", DEC_KEY_FACTOR},
                                      {"property-index", DEC_KEY_COUNT},
                                      {NULL, DEC_KEY_TEXT}};
    static const dec_ff_def def = {types, 1, keys, ff_reordering_configure};
    return &def;
}

#endif
