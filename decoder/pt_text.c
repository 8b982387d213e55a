/* pt_text.c — a Moses phrase table (and its lexicalized reordering table) read from text into
 * memory: the path for moses.ini files that name text tables, and for the tests' tiny models.
 * Targets of one source phrase end up contiguous in file order whether or not the file is sorted;
 * scores are kept as written (probabilities), like probingpt, and transformed by the caller. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "dec_internal.h"
#include "ppt_text.h"
#include "smt_hash.h"
#include "smt_lines.h"

typedef struct group {
    uint64_t src_off; /* into src_ids */
    uint32_t src_len;
    uint32_t first, count;
} group;

typedef struct slot {
    uint64_t key;
    uint32_t idx; /* UINT32_MAX: empty */
} slot;

typedef struct text_pt {
    dec_pt base;
    smt_vocab_builder *src_vb, *tgt_vb;
    smt_vocab src_v, tgt_v;
    uint32_t *src_ids;
    uint64_t n_src_ids, cap_src_ids;
    uint32_t *tgt_ids;
    uint64_t n_tgt_ids, cap_tgt_ids;
    group *groups;
    uint32_t n_groups, cap_groups;
    /* per entry, in file order until finish() sorts them by group */
    uint32_t *e_group, *e_nwords;
    uint64_t *e_off;
    float *e_scores, *e_reo;
    uint8_t *e_has_reo;
    uint64_t *e_aoff; /* the entry's alignment: e_an[e] pairs at align + e_aoff[e] * 2 */
    uint32_t *e_an;
    uint8_t *align;
    uint64_t n_align, cap_align;
    uint32_t n_entries, cap_entries;
    slot *gslots; /* source key -> group */
    uint64_t gmask;
    uint64_t orphan_reo, lines;
} text_pt;

static int grow(void **p, size_t elem, uint64_t need, uint64_t *cap)
{
    if (need <= *cap)
        return 0;
    uint64_t c = *cap ? *cap : 1024;
    while (c < need)
        c *= 2;
    void *q = realloc(*p, c * elem);
    if (!q)
        return SMT_ERR_NOMEM;
    *p = q;
    *cap = c;
    return 0;
}

static uint64_t ids_key(const uint32_t *ids, size_t n)
{
    return smt_hash_bytes(ids, n * sizeof(uint32_t));
}

static int rehash_groups(text_pt *t, uint64_t size)
{
    slot *s = malloc(size * sizeof(slot));
    if (!s)
        return SMT_ERR_NOMEM;
    for (uint64_t i = 0; i < size; i++)
        s[i].idx = UINT32_MAX;
    for (uint32_t g = 0; g < t->n_groups; g++) {
        uint64_t key = ids_key(t->src_ids + t->groups[g].src_off, t->groups[g].src_len);
        uint64_t i = key & (size - 1);
        while (s[i].idx != UINT32_MAX)
            i = (i + 1) & (size - 1);
        s[i].key = key;
        s[i].idx = g;
    }
    free(t->gslots);
    t->gslots = s;
    t->gmask = size - 1;
    return 0;
}

static uint32_t find_group(const text_pt *t, const uint32_t *ids, size_t n)
{
    if (!t->gslots)
        return UINT32_MAX;
    uint64_t key = ids_key(ids, n);
    for (uint64_t i = key & t->gmask;; i = (i + 1) & t->gmask) {
        const slot *s = &t->gslots[i];
        if (s->idx == UINT32_MAX)
            return UINT32_MAX;
        const group *g = &t->groups[s->idx];
        if (s->key == key && g->src_len == n &&
            memcmp(t->src_ids + g->src_off, ids, n * sizeof(uint32_t)) == 0)
            return s->idx;
    }
}

/* Maps the words of s to ids (adding them when add), into *ids; returns the count or < 0. */
static int words_to_ids(smt_vocab_builder *vb, const smt_vocab *view, ppt_span s, uint32_t *ids,
                        int max, int add, smt_err *err)
{
    int n = 0;
    ppt_span w;
    while (ppt_next_word(&s, &w)) {
        size_t len = (size_t)(w.e - w.b);
        if (n == max)
            return smt_err_set(err, SMT_ERR_LIMIT, "phrase longer than %d words", max);
        if (add) {
            int rc = smt_vocab_builder_add(vb, w.b, len, &ids[n], err);
            if (rc)
                return rc;
        } else {
            ids[n] = smt_vocab_find(view, w.b, len);
            if (ids[n] == SMT_VOCAB_NONE)
                return -2; /* an unknown word (not an error: error codes are below -30000) */
        }
        n++;
    }
    return n;
}

#define MAXW 256

/* The scores of a phrase or reordering table line: probingpt's parser (ppt_parse_probs), so that
 * `probingpt build` and the decoder give one verdict, with the same message, for one file. */
static int parse_scores(ppt_span s, float *out, unsigned want, const char *what, const char *path,
                        unsigned long ln, smt_err *err)
{
    ppt_span bad;
    int n = ppt_parse_probs(s, out, (int)want, &bad);
    if (n == PPT_NUM_BAD || n == PPT_NUM_NEGATIVE)
        return smt_err_set(err, SMT_ERR_PARSE, "%s:%lu: %s %s '%.*s'", path, ln, ppt_num_what(n),
                           what, (int)(bad.e - bad.b), bad.b);
    if (n == PPT_NUM_TOO_MANY)
        return smt_err_set(err, SMT_ERR_PARSE, "%s:%lu: more than %u %ss", path, ln, want, what);
    if ((unsigned)n != want)
        return smt_err_set(err, SMT_ERR_PARSE, "%s:%lu: %d %ss where the moses.ini says %u", path,
                           ln, n, what, want);
    return 0;
}

/* The alignment field "s-t s-t ..." of a pair of ns source and nt target words, appended to
 * t->align (pairs of bytes); returns the number of points or an error naming file:line. */
static int parse_align(text_pt *t, ppt_span s, int ns, int nt, const char *path, unsigned long ln,
                       smt_err *err)
{
    uint8_t pairs[2 * 1024];
    ppt_span bad;
    int n = ppt_parse_alignment(s, pairs, 1024, &bad);
    if (n < 0)
        return smt_err_set(err, SMT_ERR_PARSE,
                           "%s:%lu: bad alignment point '%.*s' (expected i-j, positions below 255)",
                           path, ln, (int)(bad.e - bad.b), bad.b);
    for (int i = 0; i < n; i++)
        if (pairs[2 * i] >= ns || pairs[2 * i + 1] >= nt)
            return smt_err_set(err, SMT_ERR_PARSE,
                               "%s:%lu: alignment point %u-%u outside the %d x %d phrase pair", path,
                               ln, pairs[2 * i], pairs[2 * i + 1], ns, nt);
    if (grow((void **)&t->align, 2, t->n_align + (uint64_t)n, &t->cap_align))
        return SMT_ERR_NOMEM;
    memcpy(t->align + 2 * t->n_align, pairs, 2 * (size_t)n);
    t->n_align += (uint64_t)n;
    return n;
}

static int read_pt(text_pt *t, const char *path, unsigned n_scores, smt_err *err)
{
    smt_lines *r;
    int rc = smt_lines_open(&r, path, SMT_LINES_THREADED, err);
    if (rc)
        return rc;
    char *line;
    ppt_span f[PPT_FIELDS_MAX], rest;
    size_t len;
    uint32_t ids[MAXW];
    while ((rc = smt_lines_next(r, &line, &len, err)) == 1) {
        unsigned long ln = (unsigned long)smt_lines_lineno(r);
        if (len == 0)
            continue;
        int nf = ppt_split_fields(line, len, f, &rest);
        if (nf < 3) {
            rc = smt_err_set(err, SMT_ERR_PARSE,
                             "%s:%lu: expected source ||| target ||| scores, found %d field%s", path,
                             ln, nf, nf == 1 ? "" : "s");
            break;
        }
        if (t->base.n_scores == 0) {
            ppt_span sc = f[2], w;
            while (ppt_next_word(&sc, &w))
                t->base.n_scores++;
            if (n_scores && t->base.n_scores != n_scores) {
                rc = smt_err_set(err, SMT_ERR_PARSE,
                                 "%s:%lu: %u scores where the moses.ini says num-features=%u",
                                 path, ln, t->base.n_scores, n_scores);
                break;
            }
            if (t->base.n_scores > DEC_MAX_TM_SCORES) {
                rc = smt_err_set(err, SMT_ERR_LIMIT, "%s: more than %d scores", path,
                                 DEC_MAX_TM_SCORES);
                break;
            }
        }
        int ns = words_to_ids(t->src_vb, NULL, f[0], ids, MAXW, 1, err);
        if (ns <= 0) {
            rc = ns < 0 ? ns : smt_err_set(err, SMT_ERR_PARSE, "%s:%lu: empty source phrase", path, ln);
            break;
        }
        if ((uint32_t)ns > t->base.max_src_len)
            t->base.max_src_len = (uint32_t)ns;
        uint32_t g = find_group(t, ids, (size_t)ns);
        if (g == UINT32_MAX) {
            uint64_t c = t->cap_groups;
            if ((rc = grow((void **)&t->groups, sizeof(group), t->n_groups + 1, &c)) ||
                (rc = grow((void **)&t->src_ids, 4, t->n_src_ids + ns, &t->cap_src_ids)))
                break;
            t->cap_groups = (uint32_t)c;
            g = t->n_groups++;
            t->groups[g] = (group){t->n_src_ids, (uint32_t)ns, 0, 0};
            memcpy(t->src_ids + t->n_src_ids, ids, ns * sizeof(uint32_t));
            t->n_src_ids += ns;
            if ((uint64_t)t->n_groups * 2 > t->gmask + 1 || !t->gslots) {
                if ((rc = rehash_groups(t, t->gslots ? (t->gmask + 1) * 2 : 4096)))
                    break;
            } else {
                uint64_t key = ids_key(ids, ns), i = key & t->gmask;
                while (t->gslots[i].idx != UINT32_MAX)
                    i = (i + 1) & t->gmask;
                t->gslots[i] = (slot){key, g};
            }
        }
        int nt = words_to_ids(t->tgt_vb, NULL, f[1], ids, MAXW, 1, err);
        if (nt < 0) {
            rc = nt;
            break;
        }
        uint64_t e = t->n_entries, c = t->cap_entries, c2;
        if ((rc = grow((void **)&t->tgt_ids, 4, t->n_tgt_ids + nt, &t->cap_tgt_ids)))
            break;
        c2 = c;
        if ((rc = grow((void **)&t->e_group, 4, e + 1, &c2)))
            break;
        c2 = c;
        if ((rc = grow((void **)&t->e_nwords, 4, e + 1, &c2)))
            break;
        c2 = c;
        if ((rc = grow((void **)&t->e_off, 8, e + 1, &c2)))
            break;
        c2 = c;
        if ((rc = grow((void **)&t->e_scores, 4 * t->base.n_scores, e + 1, &c2)))
            break;
        c2 = c;
        if ((rc = grow((void **)&t->e_aoff, 8, e + 1, &c2)))
            break;
        c2 = c;
        if ((rc = grow((void **)&t->e_an, 4, e + 1, &c2)))
            break;
        t->cap_entries = (uint32_t)c2;
        t->e_aoff[e] = t->n_align;
        t->e_an[e] = 0;
        if (nf >= 4) {
            int na = parse_align(t, f[3], ns, nt, path, ln, err);
            if (na < 0) {
                rc = na == SMT_ERR_NOMEM ? smt_err_set(err, na, "%s: out of memory", path) : na;
                break;
            }
            t->e_an[e] = (uint32_t)na;
        }
        t->e_group[e] = g;
        t->e_nwords[e] = (uint32_t)nt;
        t->e_off[e] = t->n_tgt_ids;
        memcpy(t->tgt_ids + t->n_tgt_ids, ids, nt * sizeof(uint32_t));
        t->n_tgt_ids += nt;
        if ((rc = parse_scores(f[2], t->e_scores + e * t->base.n_scores, t->base.n_scores,
                               "score", path, ln, err)))
            break;
        t->n_entries++;
        t->lines++;
    }
    smt_lines_close(r);
    if (rc == SMT_ERR_NOMEM)
        smt_err_set(err, rc, "%s: out of memory", path);
    return rc < 0 ? rc : 0;
}


/* Orders the entries by group, keeping file order within a group (a counting sort). */
static int finish(text_pt *t)
{
    uint32_t n = t->n_entries, ns = t->base.n_scores;
    uint32_t *pos = calloc(t->n_groups + 1, sizeof(uint32_t));
    uint32_t *perm = malloc((n + 1) * sizeof(uint32_t));
    uint32_t *ng = malloc((n + 1) * 4), *nw = malloc((n + 1) * 4);
    uint64_t *no = malloc((n + 1) * 8), *nao = malloc((n + 1) * 8);
    uint32_t *nan = malloc((n + 1) * 4);
    float *nsc = malloc(((size_t)n * ns + 1) * 4);
    if (!pos || !perm || !ng || !nw || !no || !nsc || !nao || !nan) {
        free(pos), free(perm), free(ng), free(nw), free(no), free(nsc), free(nao), free(nan);
        return SMT_ERR_NOMEM;
    }
    for (uint32_t e = 0; e < n; e++)
        t->groups[t->e_group[e]].count++;
    uint32_t acc = 0;
    for (uint32_t g = 0; g < t->n_groups; g++) {
        t->groups[g].first = acc;
        pos[g] = acc;
        acc += t->groups[g].count;
    }
    for (uint32_t e = 0; e < n; e++) {
        uint32_t d = pos[t->e_group[e]]++;
        ng[d] = t->e_group[e];
        nw[d] = t->e_nwords[e];
        no[d] = t->e_off[e];
        nao[d] = t->e_aoff[e];
        nan[d] = t->e_an[e];
        memcpy(nsc + (size_t)d * ns, t->e_scores + (size_t)e * ns, ns * 4);
    }
    free(t->e_group), free(t->e_nwords), free(t->e_off), free(t->e_scores);
    free(t->e_aoff), free(t->e_an);
    t->e_group = ng, t->e_nwords = nw, t->e_off = no, t->e_scores = nsc;
    t->e_aoff = nao, t->e_an = nan;
    free(pos);
    free(perm);
    return 0;
}

static int read_reo(text_pt *t, const char *path, unsigned n_reo, smt_err *err)
{
    t->e_reo = calloc((size_t)t->n_entries * n_reo + 1, sizeof(float));
    t->e_has_reo = calloc(t->n_entries + 1, 1);
    if (!t->e_reo || !t->e_has_reo)
        return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
    smt_lines *r;
    int rc = smt_lines_open(&r, path, SMT_LINES_THREADED, err);
    if (rc)
        return rc;
    char *line;
    ppt_span f[PPT_FIELDS_MAX], rest;
    size_t len;
    uint32_t ids[MAXW];
    float sc[DEC_MAX_REO_SCORES];
    uint32_t guess = 0;
    while ((rc = smt_lines_next(r, &line, &len, err)) == 1) {
        unsigned long ln = (unsigned long)smt_lines_lineno(r);
        if (len == 0)
            continue;
        int nf = ppt_split_fields(line, len, f, &rest);
        if (nf != 3) { /* as probingpt build reads it */
            rc = smt_err_set(err, SMT_ERR_PARSE,
                             "%s:%lu: expected source ||| target ||| scores, found %d field%s", path,
                             ln, nf, nf == 1 ? "" : "s");
            break;
        }
        if ((rc = parse_scores(f[2], sc, n_reo, "reordering score", path, ln, err)))
            break;
        int ns = words_to_ids(NULL, &t->src_v, f[0], ids, MAXW, 0, err);
        uint32_t g = ns > 0 ? find_group(t, ids, (size_t)ns) : UINT32_MAX;
        int nt = g == UINT32_MAX ? -1 : words_to_ids(NULL, &t->tgt_v, f[1], ids, MAXW, 0, err);
        uint32_t hit = UINT32_MAX;
        if (nt > 0) {
            const group *gr = &t->groups[g];
            /* the tables are usually in the same order: try the entry after the last hit first */
            uint32_t e = guess;
            if (e >= gr->first && e < gr->first + gr->count && t->e_nwords[e] == (uint32_t)nt &&
                !t->e_has_reo[e] && memcmp(t->tgt_ids + t->e_off[e], ids, nt * 4) == 0)
                hit = e;
            for (e = gr->first; hit == UINT32_MAX && e < gr->first + gr->count; e++)
                if (t->e_nwords[e] == (uint32_t)nt && !t->e_has_reo[e] &&
                    memcmp(t->tgt_ids + t->e_off[e], ids, nt * 4) == 0) {
                    hit = e;
                    break;
                }
        }
        if (hit == UINT32_MAX) {
            t->orphan_reo++;
            continue;
        }
        guess = hit + 1;
        memcpy(t->e_reo + (size_t)hit * n_reo, sc, n_reo * sizeof(float));
        t->e_has_reo[hit] = 1;
    }
    smt_lines_close(r);
    return rc < 0 ? rc : 0;
}

static int text_lookup(const dec_pt *pt, const uint32_t *src, size_t n, dec_pt_iter *it,
                       smt_err *err)
{
    (void)err;
    const text_pt *t = pt->impl;
    uint32_t g = find_group(t, src, n);
    if (g == UINT32_MAX)
        return 0;
    it->table = t;
    it->aux = t->groups[g].first;
    it->left = t->groups[g].count;
    return 1;
}

static int text_next(dec_pt_iter *it, dec_pt_entry *e, smt_err *err)
{
    (void)err;
    if (!it->left)
        return 0;
    const text_pt *t = it->table;
    uint64_t i = it->aux++;
    it->left--;
    e->words = t->tgt_ids + t->e_off[i];
    e->n_words = t->e_nwords[i];
    e->scores = t->e_scores + i * t->base.n_scores;
    e->reo = t->e_has_reo && t->e_has_reo[i] ? t->e_reo + i * t->base.n_reo : NULL;
    e->align = t->align ? t->align + 2 * t->e_aoff[i] : NULL;
    e->n_align = t->e_an[i];
    return 1;
}

static void text_free(dec_pt *pt)
{
    if (!pt)
        return;
    text_pt *t = pt->impl;
    smt_vocab_builder_free(t->src_vb);
    smt_vocab_builder_free(t->tgt_vb);
    free(t->src_ids), free(t->tgt_ids), free(t->groups), free(t->e_group), free(t->e_nwords);
    free(t->e_off), free(t->e_scores), free(t->e_reo), free(t->e_has_reo), free(t->gslots);
    free(t->e_aoff), free(t->e_an), free(t->align);
    free(t);
}

int dec_pt_text_load(dec_pt **out, const char *pt_path, unsigned n_scores, const char *reo_path,
                     unsigned n_reo, smt_err *err)
{
    *out = NULL;
    text_pt *t = calloc(1, sizeof *t);
    if (!t)
        return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
    t->base.impl = t;
    t->base.lookup = text_lookup;
    t->base.next = text_next;
    t->base.free = text_free;
    t->base.kind = "text";
    int rc = smt_vocab_builder_create(&t->src_vb, err);
    if (!rc)
        rc = smt_vocab_builder_create(&t->tgt_vb, err);
    if (!rc)
        rc = read_pt(t, pt_path, n_scores, err);
    if (!rc && (rc = finish(t)) != 0)
        smt_err_set(err, rc, "out of memory");
    if (!rc) {
        t->src_v = smt_vocab_builder_view(t->src_vb);
        t->tgt_v = smt_vocab_builder_view(t->tgt_vb);
        t->base.src_vocab = &t->src_v;
        t->base.tgt_vocab = &t->tgt_v;
        t->base.n_sources = t->n_groups;
        if (reo_path) {
            if (n_reo == 0 || n_reo > DEC_MAX_REO_SCORES)
                rc = smt_err_set(err, SMT_ERR_ARG, "%s: bad number of reordering scores %u",
                                 reo_path, n_reo);
            else {
                t->base.n_reo = n_reo;
                rc = read_reo(t, reo_path, n_reo, err);
            }
        }
    }
    if (rc) {
        text_free(&t->base);
        return rc;
    }
    *out = &t->base;
    return 0;
}
