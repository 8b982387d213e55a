/* nbest.c — the 1-best and n-best output in Moses's formats.
 *
 * n-best extraction follows Moses's TrellisPath: every hypothesis of the last stack starts a path;
 * the best path is taken out, and each hypothesis recombined into one of its nodes (at or before
 * the node it last deviated at) yields a deviant path whose score differs by exactly the score
 * difference of the two hypotheses, since recombined hypotheses share their future. With
 * `distinct`, paths whose words repeat an earlier one are skipped, and at most n * f paths are
 * examined (Moses's -n-best-factor f, 20 by default). Feature values are summed over each path's hypotheses from what
 * the search computed (the features' path hooks, dec_ff.h), so the printed total is exactly
 * weights · features. */
#define _GNU_SOURCE
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "dec_ff.h"
#include "smt_hash.h"

/* Accumulates in float, as Moses's ScoreComponentCollection does, so printed values match. */
void dec_path_features(const dec_search *s, hyp *const *path, size_t len, double *out)
{
    const dec_model *m = s->m;
    float sc[m->n_scores + 1];
    memset(sc, 0, sizeof sc);
    for (size_t i = 0; i < len; i++) {
        const hyp *prev = i ? path[i - 1] : path[0]->prev; /* the first: the empty hypothesis */
        dec_ff_path(m, path[i], prev, sc);
    }
    for (unsigned k = 0; k < m->n_scores; k++)
        out[k] = sc[k];
}

/* ---------------------------------------------------------------- a path as data */

void dec_translation_free(dec_translation *t)
{
    smt_buf_free(&t->words);
    free(t->word_off);
    free(t->phrases);
    free(t->align);
    memset(t, 0, sizeof *t);
}

static void translation_clear(dec_translation *t)
{
    smt_buf_clear(&t->words);
    t->n_words = t->n_phrases = t->n_align = 0;
    t->score = 0;
}

static int cmp_u16(const void *a, const void *b)
{
    uint16_t x = *(const uint16_t *)a, y = *(const uint16_t *)b;
    return (x > y) - (x < y);
}

/* The word alignment of one phrase appended to t: its points as sentence positions, sorted by
 * (source, target) without repeats (Moses keeps a phrase's points in an ordered set). */
static int phrase_alignment(const hyp *h, uint32_t toff, dec_translation *t)
{
    const dec_cand *c = h->cand;
    uint16_t stack_pts[256], *pts = stack_pts;
    if (c->n_align > 256 && !(pts = malloc(c->n_align * sizeof *pts)))
        return SMT_ERR_NOMEM;
    for (unsigned k = 0; k < c->n_align; k++)
        pts[k] = (uint16_t)(c->align[2 * k] << 8 | c->align[2 * k + 1]);
    qsort(pts, c->n_align, sizeof *pts, cmp_u16);
    int rc = 0;
    for (unsigned k = 0; k < c->n_align && !rc; k++) {
        if (k > 0 && pts[k] == pts[k - 1])
            continue;
        rc = smt_grow(&t->align, &t->cap_align_, 2 * (t->n_align + 1), sizeof *t->align, 64);
        if (!rc) {
            t->align[2 * t->n_align] = (uint32_t)h->start + (pts[k] >> 8);
            t->align[2 * t->n_align + 1] = toff + (pts[k] & 255u);
            t->n_align++;
        }
    }
    if (pts != stack_pts)
        free(pts);
    return rc;
}

/* The translation a path (first hypothesis first) spells: its words, phrases and, with
 * want_align, word alignment. Every text output is formatted from this. */
static int path_data(const dec_search *s, hyp *const *path, size_t len, int want_align,
                     dec_translation *t)
{
    translation_clear(t);
    for (size_t i = 0; i < len; i++) {
        const dec_cand *c = path[i]->cand;
        if (smt_grow(&t->phrases, &t->cap_phrases_, t->n_phrases + 1, sizeof *t->phrases, 64) ||
            smt_grow(&t->word_off, &t->cap_word_off_, t->n_words + c->n_words + 1,
                     sizeof *t->word_off, 256))
            return SMT_ERR_NOMEM;
        t->phrases[t->n_phrases++] = (dec_phrase){(uint32_t)path[i]->start, (uint32_t)path[i]->end,
                                                  (uint32_t)t->n_words, c->n_words};
        if (want_align && phrase_alignment(path[i], (uint32_t)t->n_words, t))
            return SMT_ERR_NOMEM;
        for (unsigned k = 0; k < c->n_words; k++) {
            size_t wl;
            const char *w =
                dec_word(s->m, c->words[k], (const char *const *)s->tokens, s->lens, &wl);
            /* a passed-through source word (not an XML option's word, past the source) */
            int mark = s->out.mark_unknown && (c->words[k] & DEC_PASS_BIT) &&
                       (c->words[k] & ~DEC_PASS_BIT) < s->n;
            if ((t->n_words && smt_buf_putc(&t->words, ' ')))
                return SMT_ERR_NOMEM;
            t->word_off[t->n_words++] = (uint32_t)t->words.len;
            if ((mark && smt_buf_puts(&t->words, s->out.unk_prefix)) ||
                smt_buf_append(&t->words, w, wl) ||
                (mark && smt_buf_puts(&t->words, s->out.unk_suffix)))
                return SMT_ERR_NOMEM;
        }
    }
    if (!t->word_off &&
        smt_grow(&t->word_off, &t->cap_word_off_, 1, sizeof *t->word_off, 256))
        return SMT_ERR_NOMEM;
    t->word_off[t->n_words] = (uint32_t)t->words.len + 1; /* as if a space followed the last */
    return 0;
}

/* ---------------------------------------------------------------- the one formatter */

/* Moses's words: every word followed by a space; with seg (-t), after each phrase that has words
 * the source range it translates, "|start-end| " (Moses's OutputSurface: in the 1-best and, with
 * -t, in the n-best words too). */
int dec_translation_format(const dec_translation *t, int seg, smt_buf *b)
{
    for (size_t i = 0; i < t->n_phrases; i++) {
        const dec_phrase *p = &t->phrases[i];
        if (!p->n_tgt)
            continue;
        uint32_t from = t->word_off[p->tgt_start], to = t->word_off[p->tgt_start + p->n_tgt];
        if (smt_buf_append(b, t->words.data + from, to - 1 - from) || smt_buf_putc(b, ' '))
            return SMT_ERR_NOMEM;
        if (seg && smt_buf_printf(b, "|%u-%u| ", p->src_start, p->src_end))
            return SMT_ERR_NOMEM;
    }
    return 0;
}

/* The word alignment as Moses prints it everywhere (Hypothesis/Manager::OutputAlignment): each
 * point "s-t" followed by a space. */
static int format_alignment(const dec_translation *t, smt_buf *b)
{
    for (size_t k = 0; k < t->n_align; k++)
        if (smt_buf_printf(b, "%u-%u ", t->align[2 * k], t->align[2 * k + 1]))
            return SMT_ERR_NOMEM;
    return 0;
}

/* -include-segmentation-in-n-best: Moses's field after the total, " ||| s=t s-e=t-u ..." (each
 * phrase's source and target word range, an end only where it differs from the start). */
static int format_segmentation_field(const dec_translation *t, smt_buf *b)
{
    if (smt_buf_append(b, " |||", 4))
        return SMT_ERR_NOMEM;
    for (size_t i = 0; i < t->n_phrases; i++) {
        const dec_phrase *p = &t->phrases[i];
        int rc = smt_buf_printf(b, " %u", p->src_start);
        if (!rc && p->src_start < p->src_end)
            rc = smt_buf_printf(b, "-%u", p->src_end);
        if (!rc)
            rc = smt_buf_printf(b, "=%u", p->tgt_start);
        if (!rc && p->n_tgt > 1)
            rc = smt_buf_printf(b, "-%u", p->tgt_start + p->n_tgt - 1);
        if (rc)
            return rc;
    }
    return 0;
}

/* The path ending in h, first hypothesis first (the empty hypothesis left out). */
static size_t chain(hyp *h, hyp **out, size_t cap)
{
    size_t n = 0;
    for (hyp *p = h; p && p->cand; p = p->prev)
        n++;
    if (n > cap)
        return 0;
    size_t i = n;
    for (hyp *p = h; p && p->cand; p = p->prev)
        out[--i] = p;
    return n;
}

/* The 1-best as data (an empty translation when there is none). */
static int best_data(dec_search *s, int want_align, dec_translation *t)
{
    translation_clear(t);
    if (!s->best)
        return path_data(s, NULL, 0, 0, t);
    hyp **path = arena_alloc(&s->ar, (s->n + 1) * sizeof *path);
    if (!path)
        return SMT_ERR_NOMEM;
    size_t len = chain(s->best, path, s->n + 1);
    int rc = path_data(s, path, len, want_align, t);
    t->score = s->best->score;
    return rc;
}

int dec_search_best_data(dec_search *s, dec_translation *out) { return best_data(s, 1, out); }

int dec_search_best(dec_search *s, smt_buf *buf, smt_buf *align, double *score)
{
    dec_translation *t = &s->tr;
    int rc = best_data(s, align || s->out.align_inline, t);
    if (score)
        *score = t->score;
    if (!rc && s->out.hypo_score && (s->best || s->n == 0)) /* Moses: the score, then the words */
        rc = smt_buf_printf(buf, "%g ", (double)(float)t->score);
    if (!rc)
        rc = dec_translation_format(t, s->out.seg_best, buf);
    if (!rc && s->best && s->out.align_inline &&
        (smt_buf_append(buf, "||| ", 4) || format_alignment(t, buf)))
        rc = SMT_ERR_NOMEM;
    if (!rc && align && s->best && format_alignment(t, align))
        rc = SMT_ERR_NOMEM;
    if (!rc && align && smt_buf_putc(align, '\n'))
        rc = SMT_ERR_NOMEM;
    return rc ? rc : smt_buf_putc(buf, '\n');
}

/* A path: nodes[0] is the last hypothesis, as in Moses's TrellisPath. */
typedef struct tpath {
    hyp **nodes;
    uint32_t len, seq;
    int32_t dev;        /* index of the node last replaced; -1 for a pure path */
    double score;
} tpath;

static tpath *path_new(dec_search *s, uint32_t len)
{
    tpath *p = arena_alloc(&s->ar, sizeof *p);
    if (p && !(p->nodes = arena_alloc(&s->ar, (len + 1) * sizeof *p->nodes)))
        return NULL;
    return p;
}

static int path_better(const tpath *a, const tpath *b)
{
    return a->score != b->score ? a->score > b->score : a->seq < b->seq;
}

static int cmp_path(const void *pa, const void *pb)
{
    const tpath *a = *(tpath *const *)pa, *b = *(tpath *const *)pb;
    return path_better(a, b) ? -1 : path_better(b, a) ? 1 : 0;
}

/* A max-heap of paths (best on top). */
typedef struct plist {
    tpath **p;
    size_t n, cap;
} plist;

/* Room for one more path. Returns 0 or SMT_ERR_NOMEM. */
static int plist_reserve(plist *l)
{
    return l->n < l->cap ? 0 : smt_grow(&l->p, &l->cap, l->n + 1, sizeof *l->p, 256);
}

static int plist_add(plist *l, tpath *p)
{
    if (plist_reserve(l))
        return SMT_ERR_NOMEM;
    size_t i = l->n++;
    while (i > 0 && path_better(p, l->p[(i - 1) / 2])) {
        l->p[i] = l->p[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    l->p[i] = p;
    return 0;
}

static tpath *plist_pop(plist *l)
{
    tpath *top = l->p[0], *last = l->p[--l->n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1, b = i;
        tpath *bp = last;
        if (c < l->n && path_better(l->p[c], bp))
            b = c, bp = l->p[c];
        if (c + 1 < l->n && path_better(l->p[c + 1], bp))
            b = c + 1;
        if (b == i)
            break;
        l->p[i] = l->p[b];
        i = b;
    }
    if (l->n)
        l->p[i] = last;
    return top;
}

/* Moses prunes the contenders to the best `limit` after every step. A pruned path is worse than
 * `limit` others, and fewer than `limit` steps remain, so it could never be popped: pruning only
 * saves memory, and doing it lazily (sorting, which leaves a valid heap) gives the same lists. */
static void plist_prune(plist *l, size_t limit)
{
    if (l->n <= 4 * limit)
        return;
    qsort(l->p, l->n, sizeof *l->p, cmp_path);
    l->n = limit;
}

static int done_add(plist *l, tpath *p)
{
    if (plist_reserve(l))
        return SMT_ERR_NOMEM;
    l->p[l->n++] = p;
    return 0;
}

static uint64_t surface_hash(const tpath *p)
{
    uint64_t h = 0; /* word by word: two segmentations of one output hash alike */
    for (uint32_t i = p->len; i-- > 0;) {
        const dec_cand *c = p->nodes[i]->cand;
        for (unsigned k = 0; k < c->n_words; k++)
            h = smt_hash_u64(h ^ c->words[k]);
    }
    return h;
}

static int surface_equal(const tpath *a, const tpath *b)
{
    uint32_t i = a->len, j = b->len, ki = 0, kj = 0;
    for (;;) {
        while (i > 0 && ki == a->nodes[i - 1]->cand->n_words)
            i--, ki = 0;
        while (j > 0 && kj == b->nodes[j - 1]->cand->n_words)
            j--, kj = 0;
        if (i == 0 || j == 0)
            return i == 0 && j == 0;
        if (a->nodes[i - 1]->cand->words[ki++] != b->nodes[j - 1]->cand->words[kj++])
            return 0;
    }
}

/* ---------------------------------------------------------------- n-best entries */

size_t dec_model_num_features(const dec_model *m) { return m->n_features; }

void dec_model_feature(const dec_model *m, size_t i, dec_feature_info *out)
{
    const dec_feature *f = &m->features[i];
    *out = (dec_feature_info){f->name, f->offset, f->n, f->tuneable};
}

/* weights · scores, summed in float feature by feature as Moses's ScoreComponentCollection
 * does, so that the printed total matches. */
int dec_format_scores(const dec_model *m, const double *scores, smt_buf *out)
{
    int rc = 0;
    for (unsigned f = 0; f < m->n_features && !rc; f++) {
        const dec_feature *ft = &m->features[f];
        if (!ft->tuneable)
            continue;
        rc = smt_buf_printf(out, " %s=", ft->name);
        for (unsigned k = 0; k < ft->n && !rc; k++)
            rc = smt_buf_printf(out, " %g", (double)(float)scores[ft->offset + k]);
    }
    return rc;
}

static double features_total(const dec_model *m, const double *sc)
{
    float total = 0;
    for (unsigned f = 0; f < m->n_features; f++) {
        const dec_feature *ft = &m->features[f];
        for (unsigned k = 0; k < ft->n; k++)
            total += (float)m->weights[ft->offset + k] * (float)sc[ft->offset + k];
    }
    return total;
}

/* A path (p->nodes, last hypothesis first) as an entry's parts: its translation (with want_align,
 * its word alignment), its feature values (m->n_scores of them) and their weighted total. */
static int path_entry(dec_search *s, const tpath *p, int want_align, dec_translation *t,
                      double *sc, double *total)
{
    hyp **fwd = arena_alloc(&s->ar, (p->len + 1) * sizeof *fwd);
    if (!fwd)
        return SMT_ERR_NOMEM;
    for (uint32_t i = 0; i < p->len; i++)
        fwd[i] = p->nodes[p->len - 1 - i];
    dec_path_features(s, fwd, p->len, sc);
    *total = features_total(s->m, sc);
    int rc = path_data(s, fwd, p->len, want_align, t);
    t->score = p->score;
    return rc;
}

/* The n-best line of an entry's parts: "id ||| words ||| Name= v ... ||| total", then the
 * segmentation and alignment fields when the worker's options ask for them and the translation
 * has phrases (an empty sentence's line has neither, as Moses's empty hypothesis). */
static int format_line(const dec_search *s, uint64_t id, const dec_translation *t,
                       const double *sc, double total, smt_buf *buf)
{
    const dec_model *m = s->m;
    int rc = smt_buf_printf(buf, "%llu ||| ", (unsigned long long)id);
    if (!rc)
        rc = dec_translation_format(t, s->out.seg_best, buf); /* Moses: -t marks the n-best words */
    if (!rc)
        rc = smt_buf_append(buf, " |||", 4);
    if (!rc)
        rc = dec_format_scores(m, sc, buf);
    if (!rc)
        rc = smt_buf_printf(buf, " ||| %g", (double)(float)total);
    if (!rc && s->out.seg_nbest && t->n_phrases)
        rc = format_segmentation_field(t, buf);
    if (!rc && s->out.align_nbest && t->n_phrases) {
        rc = smt_buf_append(buf, " ||| ", 5);
        if (!rc)
            rc = format_alignment(t, buf);
    }
    if (!rc)
        rc = smt_buf_append(buf, "\n", 1);
    return rc;
}

/* The n-best paths of the finished search, best first, into done (n > 0, s->best set). */
static int nbest_paths(dec_search *s, size_t n, int distinct, plist *done)
{
    stack *last = &s->stacks[s->n];
    plist cont = {0};
    hyp **tmp = arena_alloc(&s->ar, (s->n + 1) * sizeof *tmp);
    int rc = tmp ? 0 : SMT_ERR_NOMEM;
    uint32_t seq = 0;
    for (uint32_t i = 0; i < last->n && !rc; i++) {
        size_t len = chain(last->hyps[i], tmp, s->n + 1);
        tpath *p = path_new(s, (uint32_t)len);
        if (!p) {
            rc = SMT_ERR_NOMEM;
            break;
        }
        for (size_t k = 0; k < len; k++)
            p->nodes[k] = tmp[len - 1 - k];
        p->len = (uint32_t)len;
        p->dev = -1;
        p->score = last->hyps[i]->score;
        p->seq = seq++;
        rc = plist_add(&cont, p);
    }
    uint64_t *hashes = distinct ? arena_alloc(&s->ar, (n + 1) * sizeof *hashes) : NULL;
    if (distinct && !hashes)
        rc = SMT_ERR_NOMEM;
    /* Moses's -n-best-factor f: at most n * f steps (n * 1000 when f is 0), and a distinct list
     * keeps the best n * f contenders (all of them when f is 0) */
    size_t f = s->out.nbest_factor, steps = n * (f ? f : 1000);
    size_t limit = distinct ? (f ? n * f : 0) : n;
    for (size_t iter = 0; !rc && done->n < n && cont.n && iter < steps; iter++) {
        tpath *p = plist_pop(&cont);
        for (uint32_t e = p->dev < 0 ? 0 : (uint32_t)p->dev + 1; e < p->len && !rc; e++) {
            for (hyp *a = p->nodes[e]->arcs; a && !rc; a = a->next_arc) {
                size_t tail = chain(a, tmp, s->n + 1);
                tpath *d = path_new(s, e + (uint32_t)tail);
                if (!d) {
                    rc = SMT_ERR_NOMEM;
                    break;
                }
                memcpy(d->nodes, p->nodes, e * sizeof *d->nodes);
                for (size_t k = 0; k < tail; k++)
                    d->nodes[e + k] = tmp[tail - 1 - k];
                d->len = e + (uint32_t)tail;
                d->dev = (int32_t)e;
                d->score = p->score - p->nodes[e]->score + a->score;
                d->seq = seq++;
                rc = plist_add(&cont, d);
            }
        }
        if (rc)
            break;
        int keep = 1;
        if (distinct) {
            uint64_t h = surface_hash(p);
            for (size_t i = 0; i < done->n && keep; i++)
                if (hashes[i] == h && surface_equal(done->p[i], p))
                    keep = 0;
            if (keep)
                hashes[done->n] = h;
        }
        if (keep && (rc = done_add(done, p)))
            break;
        if (limit)
            plist_prune(&cont, limit);
    }
    free(cont.p);
    return rc;
}

int dec_search_nbest(dec_search *s, uint64_t id, size_t n, int distinct, smt_buf *buf)
{
    if (n == 0 || (s->n && !s->best))
        return 0;
    double *sc = arena_alloc(&s->ar, (s->m->n_scores + 1) * sizeof *sc);
    if (!sc)
        return SMT_ERR_NOMEM;
    if (s->n == 0) { /* an empty sentence: Moses's single empty hypothesis, every feature 0 (no
                      * </s> is scored), so that every sentence id appears in the list */
        memset(sc, 0, (s->m->n_scores + 1) * sizeof *sc);
        int rc = path_data(s, NULL, 0, 0, &s->tr);
        return rc ? rc : format_line(s, id, &s->tr, sc, 0, buf);
    }
    plist done = {0};
    int rc = nbest_paths(s, n, distinct, &done);
    for (size_t i = 0; i < done.n && !rc; i++) {
        double total;
        rc = path_entry(s, done.p[i], s->out.align_nbest, &s->tr, sc, &total);
        if (!rc)
            rc = format_line(s, id, &s->tr, sc, total, buf);
    }
    free(done.p);
    return rc;
}

/* Room for n entries in l, each with room for n_scores values (new entries zeroed). */
static int nbest_reserve(dec_nbest *l, size_t n, size_t n_scores)
{
    size_t old = l->cap_;
    if (smt_grow(&l->entries, &l->cap_, n, sizeof *l->entries, 16))
        return SMT_ERR_NOMEM;
    memset(l->entries + old, 0, (l->cap_ - old) * sizeof *l->entries);
    for (size_t i = 0; i < n; i++) {
        dec_nbest_entry *e = &l->entries[i];
        if (smt_grow(&e->scores, &e->cap_scores_, n_scores + 1, sizeof *e->scores, n_scores + 1))
            return SMT_ERR_NOMEM;
        e->n_scores = n_scores;
    }
    return 0;
}

int dec_search_nbest_data(dec_search *s, size_t n, int distinct, dec_nbest *out)
{
    out->n = 0;
    out->segmentation = s->out.seg_best;
    if (n == 0 || (s->n && !s->best))
        return 0;
    size_t n_scores = s->m->n_scores;
    if (s->n == 0) { /* the empty hypothesis, as dec_search_nbest */
        int rc = nbest_reserve(out, 1, n_scores);
        if (!rc)
            rc = path_data(s, NULL, 0, 0, &out->entries[0].t);
        if (rc)
            return rc;
        memset(out->entries[0].scores, 0, n_scores * sizeof *out->entries[0].scores);
        out->entries[0].total = 0;
        out->n = 1;
        return 0;
    }
    plist done = {0};
    int rc = nbest_paths(s, n, distinct, &done);
    if (!rc)
        rc = nbest_reserve(out, done.n, n_scores);
    for (size_t i = 0; i < done.n && !rc; i++) {
        dec_nbest_entry *e = &out->entries[i];
        rc = path_entry(s, done.p[i], 1, &e->t, e->scores, &e->total);
        if (!rc)
            out->n = i + 1;
    }
    free(done.p);
    return rc;
}

void dec_nbest_free(dec_nbest *l)
{
    for (size_t i = 0; i < l->cap_; i++) {
        dec_translation_free(&l->entries[i].t);
        free(l->entries[i].scores);
    }
    free(l->entries);
    memset(l, 0, sizeof *l);
}
