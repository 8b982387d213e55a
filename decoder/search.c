/* search.c — stack decoding with cube pruning, as Moses's SearchCubePruning does it.
 *
 * Stacks hold hypotheses by number of covered source words. Within a stack, hypotheses that share a
 * coverage form a "cov" (Moses's BitmapContainer); expanding a cov by one source range with that
 * range's candidates is an "edge", a cube whose rows are the cov's hypotheses (best first, those
 * within the distortion limit) and whose columns are the candidates (best first). All edges that
 * lead into stack k start with their corner; then pop_limit times the best candidate hypothesis
 * (by score + future cost) enters the stack — recombining with an equivalent one (same coverage,
 * last source range, LM states and reordering state), or dropped when worse than the stack's
 * worst — and its two neighbours in its cube are scored and queued. A single priority queue over
 * all cubes of the stack pops exactly what Moses's queue of containers pops. Ties on score are
 * broken by creation order, so the result is deterministic whatever the thread count. */
#define _GNU_SOURCE
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dec_ff.h"
#include "dec_queue.h"
#include "smt_hash.h"

/* ---------------------------------------------------------------- hypotheses */

static inline int better(const hyp *a, const hyp *b)
{
    if (a->total != b->total)
        return a->total > b->total;
    return a->id < b->id;
}

/* Recombination (Moses's RecombineCompare): the same coverage and last end (the search's state:
 * the distortion limit depends on it) and equal states of every stateful feature (dec_ff.h). */
static uint64_t hyp_hash(const dec_search *s, const hyp *h)
{
    const dec_model *m = s->m;
    uint64_t k = (uint64_t)(uintptr_t)h->cov * 0x9E3779B97F4A7C15ull;
    k ^= (uint64_t)(uint16_t)h->end << 16;
    return smt_hash_u64(dec_ff_state_hash(m, h, k));
}

static int hyp_equal(const dec_search *s, const hyp *a, const hyp *b)
{
    const dec_model *m = s->m;
    if (a->hash != b->hash || a->cov != b->cov || a->end != b->end)
        return 0;
    return dec_ff_state_equal(m, a, b);
}

/* Scores h, an expansion made by expand (its LM scores already in h when s->lm_deferred). */
static void finish(dec_search *s, hyp *h, int complete)
{
    double score = h->prev->score + h->cand->static_score;
    dec_ff_expand(s, h, h->prev, complete, &score);
    h->score = score;
    h->total = score + h->cov->future;
}

/* The expansion of p by candidate c over [start, end] into coverage to, scored (with s->lm_batch:
 * scored once its LM scores are known, by dec_search_finish_pending). */
static hyp *expand(dec_search *s, hyp *p, const dec_cand *c, int start, int end, cov *to,
                   int complete)
{
    hyp *h = arena_alloc(&s->ar, s->hyp_size);
    if (!h)
        return NULL;
    h->prev = p;
    h->cand = c;
    h->cov = to;
    h->start = (int16_t)start;
    h->end = (int16_t)end;
    h->arcs = h->next_arc = h->hnext = NULL;
    h->alive = 0;
    h->id = s->next_id++;
    if (!s->lm_batch) {
        finish(s, h, complete);
        if (s->lm_nomem)
            return NULL;
    }
    return h; /* hash: computed by stack_add, as many hypotheses never leave the queue */
}

/* ---------------------------------------------------------------- stacks */

/* Doubles a stack's recombination table, relinking its live hypotheses (the buckets' order does
 * not matter: an alive hypothesis has at most one equivalent in the table). */
static int table_grow(dec_search *s, stack *st)
{
    size_t size = (st->table_mask + 1) * 2;
    hyp **t = arena_zalloc(&s->ar, size * sizeof *t);
    if (!t)
        return SMT_ERR_NOMEM;
    for (uint32_t i = 0; i < st->n; i++) {
        hyp *h = st->hyps[i];
        if (!h->alive)
            continue;
        h->hnext = t[h->hash & (size - 1)];
        t[h->hash & (size - 1)] = h;
    }
    st->table = t;
    st->table_mask = size - 1;
    return 0;
}

static int stack_insert(dec_search *s, stack *st, hyp *h)
{
    if ((size_t)st->n_alive + 1 > (st->table_mask + 1) / 2 && table_grow(s, st))
        return SMT_ERR_NOMEM;
    if (st->n == st->cap) {
        hyp **p = arena_grow(&s->ar, st->hyps, st->n, &st->cap, 256, sizeof *p);
        if (!p)
            return SMT_ERR_NOMEM;
        st->hyps = p;
    }
    st->hyps[st->n++] = h;
    hyp **b = &st->table[h->hash & st->table_mask];
    h->hnext = *b;
    *b = h;
    h->alive = 1;
    st->n_alive++;
    if (h->total > st->best) {
        st->best = h->total;
        if (st->best + s->m->beam_width > st->worst)
            st->worst = st->best + s->m->beam_width;
    }
    return 0;
}

static void table_unlink(stack *st, hyp *h)
{
    hyp **pp = &st->table[h->hash & st->table_mask];
    while (*pp != h)
        pp = &(*pp)->hnext;
    *pp = h->hnext;
}

/* Sorts hypotheses best first (score + future, then creation order: a total order, so the result
 * is unique): a bottom-up merge sort with the comparison inlined, as stacks are sorted often. */
static int sort_hyps(dec_search *s, hyp **a, uint32_t n)
{
    if (n < 2)
        return 0;
    uint32_t run = 1;
    while (run < n && better(a[run - 1], a[run]))
        run++;
    if (run == n)
        return 0; /* already sorted (e.g. by prune_to_size just before gather_covs) */
    hyp **tmp = arena_alloc(&s->ar, n * sizeof *tmp);
    if (!tmp)
        return SMT_ERR_NOMEM;
    hyp **src = a, **dst = tmp;
    for (uint32_t width = 1; width < n; width *= 2) {
        for (uint32_t lo = 0; lo < n; lo += 2 * width) {
            uint32_t mid = lo + width < n ? lo + width : n;
            uint32_t hi = lo + 2 * width < n ? lo + 2 * width : n;
            uint32_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi)
                dst[k++] = better(src[j], src[i]) ? src[j++] : src[i++];
            while (i < mid)
                dst[k++] = src[i++];
            while (j < hi)
                dst[k++] = src[j++];
        }
        hyp **t = src;
        src = dst;
        dst = t;
    }
    if (src != a)
        memcpy(a, src, n * sizeof *a);
    return 0;
}

/* The k-th largest of v[0..n) (1 <= k <= n); reorders v. Quickselect with a three-way partition
 * (larger | equal | smaller) around a median-of-three pivot, which always shrinks the range. */
static double kth_largest(double *v, uint32_t n, uint32_t k)
{
    int64_t lo = 0, hi = (int64_t)n - 1, want = (int64_t)k - 1;
    while (lo < hi) {
        double a = v[lo], b = v[lo + (hi - lo) / 2], c = v[hi];
        double pivot = a > b ? (b > c ? b : (a > c ? c : a)) : (a > c ? a : (b > c ? c : b));
        int64_t lt = lo, i = lo, gt = hi;
        while (i <= gt) {
            double x = v[i];
            if (x > pivot) {
                v[i++] = v[lt];
                v[lt++] = x;
            } else if (x < pivot) {
                v[i] = v[gt];
                v[gt--] = x;
            } else {
                i++;
            }
        }
        if (want < lt)
            hi = lt - 1;
        else if (want > gt)
            lo = gt + 1;
        else
            return pivot;
    }
    return v[want];
}

/* Moses's PruneToSize: keeps hypotheses at least as good as the size-th best (among those within
 * the beam); raises the stack's worst score to that threshold. The threshold is found by selection,
 * not by sorting: the survivors' order does not matter (gather_covs sorts them). */
static int prune_to_size(dec_search *s, stack *st, uint32_t size)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < st->n; i++)
        if (st->hyps[i]->alive)
            st->hyps[n++] = st->hyps[i];
    st->n = n;
    if (n <= size)
        return 0;
    double best = st->hyps[0]->total;
    for (uint32_t i = 1; i < n; i++)
        if (st->hyps[i]->total > best)
            best = st->hyps[i]->total;
    double floor_score = st->best + s->m->beam_width;
    uint32_t within = 0;
    for (uint32_t i = 0; i < n; i++)
        within += st->hyps[i]->total > floor_score;
    uint32_t k = within < size ? within : size;
    double threshold = best;
    if (k > 1) {
        double *v = arena_alloc(&s->ar, n * sizeof *v);
        if (!v)
            return SMT_ERR_NOMEM;
        for (uint32_t i = 0; i < n; i++)
            v[i] = st->hyps[i]->total;
        threshold = kth_largest(v, n, k);
    }
    uint32_t keep = 0;
    for (uint32_t i = 0; i < n; i++) {
        hyp *h = st->hyps[i];
        if (h->total >= threshold) {
            st->hyps[keep++] = h;
        } else {
            h->alive = 0;
            table_unlink(st, h);
        }
    }
    st->n = keep;
    st->n_alive = keep;
    st->worst = threshold;
    return 0;
}

/* Moses's AddPrune: a hypothesis enters, recombines, or is dropped. */
static int stack_add(dec_search *s, stack *st, hyp *h)
{
    if (h->total < st->worst || isinf(h->total))
        return 0;
    h->hash = hyp_hash(s, h);
    hyp *e = st->table[h->hash & st->table_mask];
    while (e && !hyp_equal(s, e, h))
        e = e->hnext;
    if (!e) {
        int rc = stack_insert(s, st, h);
        if (!rc && st->n_alive > 2 * (uint32_t)s->m->stack_size - 1)
            rc = prune_to_size(s, st, (uint32_t)s->m->stack_size);
        return rc;
    }
    if (h->total > e->total) {
        table_unlink(st, e);
        e->alive = 0;
        st->n_alive--;
        if (s->nbest) {
            hyp *tail = e;
            tail->next_arc = e->arcs;
            e->arcs = NULL;
            while (tail->next_arc)
                tail = tail->next_arc;
            tail->next_arc = h->arcs;
            h->arcs = e;
        }
        int rc = stack_insert(s, st, h);
        if (!rc && st->n_alive > 2 * (uint32_t)s->m->stack_size - 1)
            rc = prune_to_size(s, st, (uint32_t)s->m->stack_size);
        return rc;
    }
    if (s->nbest) {
        h->next_arc = e->arcs;
        e->arcs = h;
    }
    return 0;
}

/* The recombination table starts at 4 buckets per hypothesis a stack keeps (at most 4096) and
 * grows with the stack (stack_insert): a large -s costs memory only when the search fills it. */
static int stack_init(dec_search *s, stack *st)
{
    size_t size = 64, want = 4 * (size_t)s->m->stack_size;
    while (size < want && size < 4096)
        size <<= 1;
    st->table = arena_zalloc(&s->ar, size * sizeof *st->table);
    st->table_mask = size - 1;
    st->best = st->worst = -INFINITY;
    return st->table ? 0 : SMT_ERR_NOMEM;
}

/* Sorts each coverage's survivors best first, for the cubes of the next stacks. */
static int gather_covs(dec_search *s, stack *st)
{
    if (sort_hyps(s, st->hyps, st->n))
        return SMT_ERR_NOMEM;
    for (uint32_t i = 0; i < st->n; i++)
        st->hyps[i]->cov->n_hyps++;
    for (uint32_t i = 0; i < st->n_covs; i++) {
        cov *c = st->covs[i];
        if (c->n_hyps && !(c->hyps = arena_alloc(&s->ar, c->n_hyps * sizeof *c->hyps)))
            return SMT_ERR_NOMEM;
        c->n_hyps = 0;
    }
    for (uint32_t i = 0; i < st->n; i++) {
        cov *c = st->hyps[i]->cov;
        c->hyps[c->n_hyps++] = st->hyps[i];
    }
    return 0;
}

static int add_edge(dec_search *s, stack *st, edge *e)
{
    if (st->n_edges == st->cap_edges) {
        edge **p = arena_grow(&s->ar, st->edges, st->n_edges, &st->cap_edges, 64, sizeof *p);
        if (!p)
            return SMT_ERR_NOMEM;
        st->edges = p;
    }
    st->edges[st->n_edges++] = e;
    return 0;
}

/* Moses's CheckDistortion (SearchCubePruning): with a distortion limit, the reordering
 * constraints hold, and a phrase that does not start at the first gap must leave the first gap
 * reachable from its end. As in Moses's cube pruning, an unlimited distortion (dl < 0) skips
 * both: walls and zones have no effect then. */
static int distortion_ok(const dec_search *s, const cov *c, int start, int end)
{
    int dl = s->m->distortion_limit;
    if (dl < 0)
        return 1;
    if (s->rc_on && !dec_reordering_ok(s, c, (size_t)start, (size_t)end, dl))
        return 0;
    if ((int)c->first_gap == start)
        return 1;
    return dec_distortion(end, (int)c->first_gap) <= dl;
}

/* Moses orders a cube's rows by score plus the weighted distortion cost of the jump to the
 * cube's range (HypothesisScoreOrdererWithDistortion), not by score alone: the corner of the cube
 * is then the most promising pair. Ties: creation order. */
typedef struct row_key {
    double key;
    hyp *h;
} row_key;

static inline int row_before(const row_key *a, const row_key *b)
{
    if (a->key != b->key)
        return a->key > b->key;
    return a->h->id < b->h->id;
}

/* keys has room for 2 * n: the second half is the merge sort's buffer. With
 * [early-distortion-cost] the orderer's distortion is the early cost of [start, end] after the row
 * (Moses's CalculateDistortionScore in both cases). */
static void sort_rows(const dec_search *s, hyp **h, row_key *keys, uint32_t n, int start, int end)
{
    double w = s->m->has_dist ? s->m->w_dist : 0;
    int sorted = 1, early = s->m->early_distortion;
    for (uint32_t i = 0; i < n; i++) {
        if (__builtin_expect(early, 0))
            keys[i].key = h[i]->score + w * dec_distortion_early(h[i]->end,
                                                                 (int)h[i]->cov->first_gap,
                                                                 start, end);
        else
            keys[i].key = h[i]->score - w * dec_distortion(h[i]->end, start);
        keys[i].h = h[i];
        if (i && row_before(&keys[i], &keys[i - 1]))
            sorted = 0;
    }
    if (sorted)
        return;
    row_key *src = keys, *dst = keys + n;
    for (uint32_t width = 1; width < n; width *= 2) {
        for (uint32_t lo = 0; lo < n; lo += 2 * width) {
            uint32_t mid = lo + width < n ? lo + width : n;
            uint32_t hi = lo + 2 * width < n ? lo + 2 * width : n;
            uint32_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi)
                dst[k++] = row_before(&src[j], &src[i]) ? src[j++] : src[i++];
            while (i < mid)
                dst[k++] = src[i++];
            while (j < hi)
                dst[k++] = src[j++];
        }
        row_key *t = src;
        src = dst;
        dst = t;
    }
    for (uint32_t i = 0; i < n; i++)
        h[i] = src[i].h;
}

/* Creates the cubes that expand every coverage of stack k (Moses's CreateForwardTodos). */
static int forward_todos(dec_search *s, uint32_t k)
{
    stack *st = &s->stacks[k];
    size_t n = s->n;
    int dl = s->m->distortion_limit;
    uint64_t *bits = arena_alloc(&s->ar, s->nw * 8);
    hyp **tmp = arena_alloc(&s->ar, (st->n + 1) * sizeof *tmp);
    row_key *keys = arena_alloc(&s->ar, 2 * (st->n + 1) * sizeof *keys);
    if (!bits || !tmp || !keys)
        return SMT_ERR_NOMEM;
    for (uint32_t ci = 0; ci < st->n_covs; ci++) {
        cov *c = st->covs[ci];
        if (!c->n_hyps)
            continue;
        /* past the first gap, a phrase must end within the distortion limit of it
         * (distortion_ok): the starts and ends beyond are not tried */
        size_t gap = c->first_gap, reach = dl < 0 ? n : gap + (size_t)dl;
        for (size_t start = gap; start < n; start++) {
            if (start != gap && start >= reach)
                break;
            if (covered(c->bits, start))
                continue;
            /* the rows depend on the start only: selected and sorted once for every length (with
             * [early-distortion-cost] their order depends on the length too: once per length) */
            hyp **rows = NULL;
            uint32_t nh = 0;
            int rows_done = 0;
            for (int len = 1; len <= s->max_len && start + len <= n; len++) {
                size_t end = start + len - 1;
                if (covered(c->bits, end) || (start != gap && end >= reach))
                    break;
                const cand_list *o = &s->opts[start * s->max_len + len - 1];
                if (!o->n || !distortion_ok(s, c, (int)start, (int)end))
                    continue;
                if (!rows_done || s->m->early_distortion) {
                    rows_done = 1;
                    nh = 0;
                    for (uint32_t i = 0; i < c->n_hyps; i++)
                        if (dl < 0 || dec_distortion(c->hyps[i]->end, (int)start) <= dl)
                            tmp[nh++] = c->hyps[i];
                    if (nh > 1)
                        sort_rows(s, tmp, keys, nh, (int)start, (int)end);
                    if (nh) {
                        if (!(rows = arena_alloc(&s->ar, nh * sizeof *rows)))
                            return SMT_ERR_NOMEM;
                        memcpy(rows, tmp, nh * sizeof *rows);
                    }
                }
                if (!nh)
                    break;
                memcpy(bits, c->bits, s->nw * 8);
                for (size_t i = start; i <= end; i++)
                    bits[i >> 6] |= 1ull << (i & 63);
                stack *to_st = &s->stacks[k + len];
                cov *to = dec_cov_get(s, to_st, bits);
                edge *e = arena_alloc(&s->ar, sizeof *e);
                size_t seen_bytes = ((size_t)nh * o->n + 7) / 8;
                if (!to || !e || !(e->seen = arena_zalloc(&s->ar, seen_bytes)))
                    return SMT_ERR_NOMEM;
                e->hyps = rows;
                e->n_hyps = nh;
                e->to = to;
                e->cands = o->c;
                e->n_cands = o->n;
                e->start = (int16_t)start;
                e->end = (int16_t)end;
                int rc = add_edge(s, to_st, e);
                if (rc)
                    return rc;
            }
        }
    }
    return 0;
}

static inline int seen_test_set(edge *e, uint32_t x, uint32_t y)
{
    size_t bit = (size_t)x * e->n_cands + y;
    int was = (e->seen[bit >> 3] >> (bit & 7)) & 1;
    e->seen[bit >> 3] |= (uint8_t)(1u << (bit & 7));
    return was;
}

static queue *search_queue(dec_search *s);

static int push_cell(dec_search *s, edge *e, uint32_t x, uint32_t y, int complete)
{
    if (x >= e->n_hyps || y >= e->n_cands || seen_test_set(e, x, y))
        return 0;
    hyp *h = expand(s, e->hyps[x], &e->cands[y], e->start, e->end, e->to, complete);
    if (!h)
        return SMT_ERR_NOMEM;
    queue *q = search_queue(s);
    if (q->n_cells == q->cap_cells &&
        smt_grow(&q->cells, &q->cap_cells, q->n_cells + 1, sizeof *q->cells, 1024))
        return SMT_ERR_NOMEM;
    uint32_t slot = (uint32_t)q->n_cells++;
    q->cells[slot] = (qcell){h, e, x, y};
    if (s->lm_batch) { /* queued once scored (dec_search_finish_pending) */
        if (s->n_pend == s->cap_pend &&
            smt_grow(&s->pend, &s->cap_pend, s->n_pend + 1, sizeof *s->pend, 64))
            return SMT_ERR_NOMEM;
        s->pend[s->n_pend++] = (lm_pend){h, slot, (uint8_t)complete};
        return 0;
    }
    return q_push(q, (qitem){h->total, h->id, slot});
}

int dec_search_finish_pending(dec_search *s, smt_err *err)
{
    queue *q = search_queue(s);
    s->lm_deferred = 1;
    int rc = 0;
    for (size_t i = 0; i < s->n_pend && !rc; i++) {
        lm_pend *p = &s->pend[i];
        finish(s, p->h, p->complete);
        rc = s->lm_nomem ? SMT_ERR_NOMEM : q_push(q, (qitem){p->h->total, p->h->id, p->slot});
    }
    s->lm_deferred = 0;
    s->n_pend = 0;
    return rc ? smt_err_set(err, rc, "out of memory") : 0;
}

/* ---------------------------------------------------------------- the sentence */

typedef struct search_priv {
    dec_search pub;
    queue q;
} search_priv;

static queue *search_queue(dec_search *s) { return &((search_priv *)s)->q; }

int dec_search_create(dec_search **out, dec_model *m, smt_err *err)
{
    search_priv *p = calloc(1, sizeof *p);
    if (!p)
        return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
    p->pub.m = m;
    p->pub.hyp_size = dec_hyp_size(m);
    *out = &p->pub;
    return 0;
}

void dec_search_free(dec_search *s)
{
    if (!s)
        return;
    arena_free(&s->ar);
    dec_lm_cache_free(s->lmk, s->lmv, DEC_MAX_LMS);
    dec_lm_phrase_free(s->lmp, DEC_MAX_LMS);
    free(search_queue(s)->items);
    free(search_queue(s)->cells);
    free(s->pend);
    dec_translation_free(&s->tr);
    free(s);
}

enum { PH_CORNERS, PH_POPS, PH_DONE };

int dec_search_step(dec_search *s, smt_err *err)
{
    queue *q = search_queue(s);
    int rc = 0;
    while (!rc && !s->n_pend) {
        if (s->phase == PH_DONE)
            return 0;
        stack *st = &s->stacks[s->k];
        int complete = s->k == s->n;
        if (s->phase == PH_CORNERS) { /* every cube of the stack starts with its corner */
            q->n = 0;
            q->n_cells = 0;
            for (uint32_t i = 0; i < st->n_edges && !rc; i++)
                rc = push_cell(s, st->edges[i], 0, 0, complete);
            s->phase = PH_POPS;
            s->pops = 0;
        } else if (s->pops < s->m->pop_limit && q->n) {
            /* the top's neighbours are queued in its place (with -lm-batch they wait: popped) */
            qcell it = q->cells[(s->lm_batch ? q_pop(q) : q_take_top(q)).slot];
            s->pops++;
            if (!(rc = stack_add(s, st, it.h)) && !(rc = push_cell(s, it.e, it.x + 1, it.y, complete)))
                rc = push_cell(s, it.e, it.x, it.y + 1, complete);
            q_close_hole(q);
        } else { /* the stack is full: prune it and make the cubes of the next ones */
            if ((rc = prune_to_size(s, st, (uint32_t)s->m->stack_size)) || (rc = gather_covs(s, st)))
                break;
            if (s->k < s->n) {
                if ((rc = forward_todos(s, s->k)))
                    break;
                s->k++;
                s->phase = PH_CORNERS;
            } else {
                if (st->n)
                    s->best = st->hyps[0]; /* gather_covs sorted them */
                s->phase = PH_DONE;
            }
        }
    }
    return rc ? smt_err_set(err, rc, "out of memory") : 1;
}

int dec_search_begin(dec_search *s, char **tokens, const uint32_t *lens, size_t n, int want_nbest,
                     smt_err *err)
{
    arena_reset(&s->ar);
    s->best = NULL;
    s->n_unk = 0;
    s->n_pend = 0;
    s->tokens = tokens;
    s->lens = lens;
    s->n = n;
    s->nbest = want_nbest;
    s->next_id = 0;
    s->phase = PH_DONE;
    s->lm_nomem = 0;
    for (unsigned l = 0; l < s->m->n_lms; l++)
        dec_lm_ids_reset(&s->lm_ids[l]);
    if (++s->lm_epoch == 0) { /* wrapped: the entries of sentence 2^32 ago would look valid */
        for (unsigned l = 0; l < s->m->n_lms && s->lmp[l]; l++)
            memset(s->lmp[l], 0, ((size_t)1 << DEC_LM_PHRASE_BITS) * sizeof *s->lmp[l]);
        s->lm_epoch = 1;
    }
    if (n == 0)
        return 0;
    if (n > DEC_MAX_SENTENCE)
        return smt_err_set(err, SMT_ERR_LIMIT, "sentence of %zu tokens (the limit is %d)", n,
                           DEC_MAX_SENTENCE);
    s->nw = (uint32_t)((n + 63) / 64);
    int rc = dec_collect_options(s, err);
    if (rc)
        return rc;
    if (dec_reordering_constraint(s))
        return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
    s->stacks = arena_zalloc(&s->ar, (n + 1) * sizeof *s->stacks);
    if (!s->stacks)
        return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
    for (size_t k = 0; k <= n; k++)
        if ((rc = stack_init(s, &s->stacks[k])))
            return smt_err_set(err, rc, "out of memory");
    uint64_t *zero = arena_zalloc(&s->ar, s->nw * 8);
    cov *c0 = zero ? dec_cov_get(s, &s->stacks[0], zero) : NULL;
    hyp *h0 = arena_zalloc(&s->ar, s->hyp_size);
    if (!c0 || !h0)
        return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
    h0->cov = c0;
    h0->start = h0->end = -1;
    if (dec_lm_phrase_alloc(s->lmp, s->m->n_lms))
        return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
    for (unsigned l = 0; l < s->m->n_lms; l++) {
        glm_state st;
        glm_state_begin(s->m->lms[l], &st);
        if (dec_lm_id(&s->lm_ids[l], &s->ar, &st, &h0->lm[l]))
            return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
    }
    h0->total = c0->future;
    h0->id = s->next_id++;
    h0->hash = hyp_hash(s, h0);
    if ((rc = stack_insert(s, &s->stacks[0], h0)) || (rc = gather_covs(s, &s->stacks[0])) ||
        (rc = forward_todos(s, 0)))
        return smt_err_set(err, rc, "out of memory");
    s->k = 1;
    s->phase = PH_CORNERS;
    return 0;
}

int dec_search_run(dec_search *s, char **tokens, const uint32_t *lens, size_t n, int want_nbest,
                   smt_err *err)
{
    s->lm_batch = 0;
    int rc = dec_search_begin(s, tokens, lens, n, want_nbest, err);
    return rc ? rc : dec_search_step(s, err);
}
