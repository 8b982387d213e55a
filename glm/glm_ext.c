/* glm_ext.c — a trie build's n-grams sorted on disk (glm_internal.h): each order's records in
 * sorted runs of a bounded buffer, merged into the order's level file in lexicographic order of
 * the reversed ids, each record's parent (its first n - 1 ids, one order down) and every
 * context's "extends" mark found by merge joins. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "glm_internal.h"
#include "smt_buf.h"

/* Words (uint32) of a record: a run's (ids, prob, bo, index; at the highest order, whose backoff
 * is always -0.0, ids, prob, index: rec_w), a context's (ids[1..n)), a level's (ids, prob, bo,
 * parent's rank), a blank's (ids, inserter's order and index, x, the context's backoff). */
#define REC_W(n) ((n) + 3)
#define CTX_W(n) ((n) - 1)
#define LEV_W(n) ((n) + 3)
#define BL_W(n) ((n) + 4)

static inline unsigned rec_w(const glm_ext *x, unsigned n) { return n + 2 + (n < x->top); }

/* The word of a run's record holding its index. */
static inline unsigned idx_at(const glm_ext *x, unsigned n) { return n + 1 + (n < x->top); }

static int nomem(smt_err *err)
{
    return smt_err_set(err, SMT_ERR_NOMEM, "out of memory sorting the n-grams");
}

static inline int cmp_ids(const uint32_t *a, const uint32_t *b, unsigned m)
{
    for (unsigned j = 0; j < m; j++)
        if (a[j] != b[j])
            return a[j] < b[j] ? -1 : 1;
    return 0;
}

/* Sorts n records of w words by their first m words (lexicographic, unsigned; each below
 * 2^bits): least significant digit first, stable, through tmp. Returns the array holding the
 * sorted records (a or tmp). */
static uint32_t *radix_sort(uint32_t *a, uint32_t *tmp, size_t n, unsigned w, unsigned m,
                            unsigned bits, smt_err *err)
{
    unsigned nd = (bits + 10) / 11, db = (bits + nd - 1) / nd;
    size_t nb = (size_t)1 << db, mask = nb - 1;
    size_t *cnt = calloc((size_t)m * nd * nb, sizeof *cnt);
    if (!cnt) {
        nomem(err);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) /* every digit's histogram in one pass */
        for (unsigned j = 0; j < m; j++)
            for (unsigned d = 0; d < nd; d++)
                cnt[((size_t)j * nd + d) * nb + ((a[i * w + j] >> (d * db)) & mask)]++;
    uint32_t *src = a, *dst = tmp;
    for (unsigned j = m; j-- > 0;)
        for (unsigned d = 0; d < nd; d++) {
            size_t *h = cnt + ((size_t)j * nd + d) * nb, sum = 0;
            if (n && h[(src[j] >> (d * db)) & mask] == n)
                continue; /* one digit value throughout: the pass would change nothing */
            for (size_t b = 0; b < nb; b++) {
                size_t c = h[b];
                h[b] = sum;
                sum += c;
            }
            for (size_t i = 0; i < n; i++) {
                const uint32_t *r = src + i * w;
                uint32_t *o = dst + h[(r[j] >> (d * db)) & mask]++ * w;
                for (unsigned k = 0; k < w; k++)
                    o[k] = r[k];
            }
            uint32_t *t = src;
            src = dst;
            dst = t;
        }
    free(cnt);
    return src;
}

/* Appends a run's bounds (two marks around its bytes) to *marks (2 per run). */
static int put_run(glm_spill *sp, glm_spill_pos **marks, size_t *nruns, const uint32_t *recs,
                   size_t bytes, smt_err *err)
{
    size_t cap = *nruns * 2;
    if (smt_grow(marks, &cap, *nruns * 2 + 2, sizeof **marks, 16))
        return nomem(err);
    glm_spill_pos *m = *marks + *nruns * 2;
    int rc = glm_spill_mark(sp, &m[0], err);
    if (!rc)
        rc = glm_spill_put(sp, recs, bytes, err);
    if (!rc)
        rc = glm_spill_mark(sp, &m[1], err);
    if (!rc)
        ++*nruns;
    return rc;
}

/* The buffered records of order n: sorted into a run, and their contexts (n >= 3) sorted, each
 * once, into a run of contexts. */
static int flush_run(glm_ext *x, unsigned n, smt_err *err)
{
    glm_ext_level *l = &x->l[n];
    size_t cnt = x->nbuf;
    if (!cnt)
        return 0;
    x->nbuf = 0;
    unsigned w = rec_w(x, n);
    uint32_t *s = radix_sort(x->buf, x->tmp, cnt, w, n, x->idbits, err);
    if (!s)
        return SMT_ERR_NOMEM;
    int rc = put_run(&l->runs, &l->rmark, &l->nr, s, cnt * w * 4, err);
    if (rc || n < 3)
        return rc;
    uint32_t *c = s == x->buf ? x->tmp : x->buf;
    for (size_t i = 0; i < cnt; i++)
        memcpy(c + i * CTX_W(n), s + i * w + 1, CTX_W(n) * 4);
    uint32_t *cs = radix_sort(c, s, cnt, CTX_W(n), CTX_W(n), x->idbits, err);
    if (!cs)
        return SMT_ERR_NOMEM;
    size_t u = 0;
    for (size_t i = 0; i < cnt; i++) /* each context once */
        if (!u || cmp_ids(cs + (u - 1) * CTX_W(n), cs + i * CTX_W(n), CTX_W(n)) != 0)
            memmove(cs + u++ * CTX_W(n), cs + i * CTX_W(n), CTX_W(n) * 4);
    return put_run(&l->runs, &l->cmark, &l->nc, cs, u * CTX_W(n) * 4, err);
}

int glm_ext_open(glm_ext *x, uint64_t mem, const char *dir, smt_err *err)
{
    memset(x, 0, sizeof *x);
    x->idbits = 32;
    /* two halves (the records, the sort's other array), each at least 64 of the largest records */
    uint64_t half = mem / 2, least = 64 * REC_W(GLM_MAX_ORDER) * 4;
    x->buf_bytes = (size_t)(half < least ? least : half) & ~(size_t)3;
    size_t dl = strlen(dir);
    if (!(x->dir = malloc(dl + 1)))
        return nomem(err);
    memcpy(x->dir, dir, dl + 1);
    return 0;
}

int glm_ext_levels(glm_ext *x, unsigned order, smt_err *err)
{
    x->order = x->top = order;
    int rc = 0;
    if (!(x->buf = malloc(x->buf_bytes)) || !(x->tmp = malloc(x->buf_bytes)))
        rc = nomem(err);
    /* a run's blocks: small enough that the merge's one block per run stays within the buffer */
    size_t bsize = x->buf_bytes / 16;
    for (unsigned n = 2; n <= order && !rc; n++) {
        glm_ext_level *l = &x->l[n];
        if (!(rc = glm_spill_open_blocks(&l->runs, 0, bsize, x->dir, err)))
            rc = glm_spill_open_blocks(&l->lev, 0, bsize, x->dir, err);
    }
    return rc;
}

void glm_ext_vocab(glm_ext *x, uint32_t nvocab)
{
    unsigned b = 1;
    while (b < 32 && ((uint64_t)(nvocab ? nvocab - 1 : 0) >> b) != 0)
        b++;
    x->idbits = b;
}

int glm_ext_add(glm_ext *x, unsigned n, const uint32_t *ids, float prob, float bo, smt_err *err)
{
    unsigned w = rec_w(x, n);
    if ((x->nbuf + 1) * w * 4 > x->buf_bytes) {
        int rc = flush_run(x, n, err);
        if (rc)
            return rc;
    }
    uint32_t *r = x->buf + x->nbuf++ * w;
    memcpy(r, ids, n * 4);
    memcpy(r + n, &prob, 4);
    memcpy(r + n + 1, &bo, 4);
    r[idx_at(x, n)] = (uint32_t)x->l[n].nread++;
    x->l[n].count++;
    return 0;
}

int glm_ext_end_order(glm_ext *x, unsigned n, smt_err *err)
{
    return flush_run(x, n, err);
}

/* ------------------------------------------------------------------ merging runs */


static inline int run_less(const glm_merge *g, size_t a, size_t b)
{
    int c = cmp_ids(g->rec + a * g->w, g->rec + b * g->w, g->m);
    return c < 0 || (c == 0 && a < b); /* equal records: the earlier run first (stable) */
}

static void sift_down(glm_merge *g, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, s = i;
        if (l < g->nh && run_less(g, g->heap[l], g->heap[s]))
            s = l;
        if (l + 1 < g->nh && run_less(g, g->heap[l + 1], g->heap[s]))
            s = l + 1;
        if (s == i)
            return;
        size_t t = g->heap[i];
        g->heap[i] = g->heap[s];
        g->heap[s] = t;
        i = s;
    }
}

void glm_merge_close(glm_merge *g)
{
    for (size_t i = 0; g->cur && i < g->nr; i++)
        glm_spill_cur_close(&g->cur[i]);
    free(g->cur);
    free(g->rec);
    free(g->heap);
    memset(g, 0, sizeof *g);
}

static int merge_open(glm_merge *g, const glm_spill *sp, const glm_spill_pos *marks, size_t nr,
                       unsigned w, unsigned m, smt_err *err)
{
    memset(g, 0, sizeof *g);
    g->w = w;
    g->m = m;
    g->nr = nr;
    g->cur = calloc(nr + 1, sizeof *g->cur);
    g->rec = malloc((nr + 1) * w * sizeof *g->rec);
    g->heap = malloc((nr + 1) * sizeof *g->heap);
    if (!g->cur || !g->rec || !g->heap) {
        glm_merge_close(g);
        return nomem(err);
    }
    for (size_t i = 0; i < nr; i++) {
        int rc = glm_spill_cur_open(&g->cur[i], sp, marks[2 * i], marks[2 * i + 1], err);
        if (!rc)
            rc = glm_spill_cur_get(&g->cur[i], g->rec + i * w, w * 4, err);
        if (rc < 0) {
            glm_merge_close(g);
            return rc;
        }
        if (rc == 0)
            g->heap[g->nh++] = i;
    }
    for (size_t i = g->nh / 2; i-- > 0;)
        sift_down(g, i);
    return 0;
}

/* The next record in order (*out, valid until the next call): 1, 0 at the end, or an error. */
int glm_merge_next(glm_merge *g, const uint32_t **out, smt_err *err)
{
    if (g->advance && g->nh) {
        size_t r = g->heap[0];
        int rc = glm_spill_cur_get(&g->cur[r], g->rec + r * g->w, g->w * 4, err);
        if (rc < 0)
            return rc;
        if (rc == 1)
            g->heap[0] = g->heap[--g->nh];
        sift_down(g, 0);
    }
    g->advance = 1;
    if (!g->nh)
        return 0;
    *out = g->rec + g->heap[0] * g->w;
    return 1;
}

/* ------------------------------------------------------------------ a sorter of any records */

int glm_sorter_open(glm_sorter *t, unsigned w, unsigned bits, uint64_t mem, const char *dir,
                    smt_err *err)
{
    memset(t, 0, sizeof *t);
    t->w = w;
    t->bits = bits;
    uint64_t half = mem / 2, least = 64 * (uint64_t)w * 4;
    size_t bytes = (size_t)(half < least ? least : half);
    t->cap = bytes / (w * 4);
    if (!(t->buf = malloc(t->cap * w * 4)) || !(t->tmp = malloc(t->cap * w * 4))) {
        glm_sorter_close(t);
        return nomem(err);
    }
    int rc = glm_spill_open_blocks(&t->sp, 0, bytes / 16, dir, err);
    if (rc)
        glm_sorter_close(t);
    return rc;
}

/* The buffered records sorted by their first word into a run. */
static int sorter_flush(glm_sorter *t, smt_err *err)
{
    if (!t->n)
        return 0;
    uint32_t *s = radix_sort(t->buf, t->tmp, t->n, t->w, 1, t->bits, err);
    if (!s)
        return SMT_ERR_NOMEM;
    int rc = put_run(&t->sp, &t->marks, &t->nr, s, t->n * t->w * 4, err);
    t->n = 0;
    return rc;
}

int glm_sorter_add(glm_sorter *t, const uint32_t *rec, smt_err *err)
{
    if (t->n == t->cap) {
        int rc = sorter_flush(t, err);
        if (rc)
            return rc;
    }
    memcpy(t->buf + t->n++ * t->w, rec, t->w * 4);
    return 0;
}

int glm_sorter_end(glm_sorter *t, smt_err *err)
{
    int rc = sorter_flush(t, err);
    free(t->buf);
    free(t->tmp);
    t->buf = t->tmp = NULL;
    return rc;
}

int glm_sorter_merge(const glm_sorter *t, glm_merge *g, smt_err *err)
{
    return merge_open(g, &t->sp, t->marks, t->nr, t->w, 1, err);
}

void glm_sorter_close(glm_sorter *t)
{
    if (t->sp.dir)
        glm_spill_close(&t->sp);
    free(t->marks);
    free(t->buf);
    free(t->tmp);
    memset(t, 0, sizeof *t);
}

/* ------------------------------------------------------------------ the checks */

/* A cursor over level n's records in order: rec (LEV_W(n) words), its rank; 1 while one is
 * there, 0 past the end. */
typedef struct lev_reader {
    glm_spill_cur cur;
    uint32_t rec[LEV_W(GLM_MAX_ORDER)];
    uint64_t rank;
    unsigned n;
    int have;
} lev_reader;

static int lev_next(lev_reader *r, smt_err *err)
{
    int rc = glm_spill_cur_get(&r->cur, r->rec, LEV_W(r->n) * 4, err);
    if (rc < 0)
        return rc;
    if (r->have)
        r->rank++;
    r->have = rc == 0;
    return 0;
}

int glm_ext_lev_open(glm_ext *x, unsigned n, glm_spill_cur *c, smt_err *err)
{
    return glm_spill_cur_open(c, &x->l[n].lev, x->l[n].lev_start, x->l[n].lev_end, err);
}

static int lev_open(glm_ext *x, unsigned n, lev_reader *r, smt_err *err)
{
    memset(r, 0, sizeof *r);
    r->n = n;
    int rc = glm_ext_lev_open(x, n, &r->cur, err);
    if (!rc && (rc = lev_next(r, err)))
        glm_spill_cur_close(&r->cur);
    r->rank = 0;
    return rc;
}

/* Moves r to the first record not below ids (m words): 1 when it equals them, else 0; or an
 * error. */
static int lev_seek(lev_reader *r, const uint32_t *ids, unsigned m, smt_err *err)
{
    int c = 1;
    while (r->have && (c = cmp_ids(r->rec, ids, m)) < 0) {
        int rc = lev_next(r, err);
        if (rc)
            return rc;
    }
    return r->have && c == 0;
}

float glm_fixsri_next(float from, float ctx_bo) { return from - ctx_bo; }

/* Blank i of level n (BL_W(n) words). */
static inline uint32_t *blank_at(const glm_ext *x, unsigned n, size_t i)
{
    return x->l[n].blank + i * BL_W(n);
}

static inline uint64_t blank_ins(const uint32_t *b, unsigned n)
{
    return (uint64_t)b[n] << 32 | b[n + 1];
}

/* The blank of level n equal to ids (n words), or NULL; *bp, a cursor over the blanks in order,
 * moved to the first not below ids. */
static inline const uint32_t *blank_seek(const glm_ext *x, unsigned n, size_t *bp,
                                         const uint32_t *ids)
{
    const glm_ext_level *l = &x->l[n];
    while (*bp < l->nblank && cmp_ids(blank_at(x, n, *bp), ids, n) < 0)
        ++*bp;
    const uint32_t *b = *bp < l->nblank ? blank_at(x, n, *bp) : NULL;
    return b && cmp_ids(b, ids, n) == 0 ? b : NULL;
}

/* A record's place in the file: its order, then its index. */
static inline uint64_t rec_key(unsigned n, uint32_t index) { return (uint64_t)n << 32 | index; }

/* Appends a blank of order n (ids[0..n)) inserted by the record ins: 0 or out of memory. */
static int add_blank(glm_ext *x, unsigned n, const uint32_t *ids, uint64_t ins, smt_err *err)
{
    glm_ext_level *l = &x->l[n];
    if (smt_grow(&l->blank, &l->blank_cap, (l->nblank + 1) * BL_W(n), sizeof *l->blank, 64))
        return nomem(err);
    uint32_t *b = l->blank + l->nblank++ * BL_W(n);
    memcpy(b, ids, n * 4);
    b[n] = (uint32_t)(ins >> 32);
    b[n + 1] = (uint32_t)ins;
    b[n + 2] = b[n + 3] = 0;
    return 0;
}

/* The records of order n and its blanks, merged in order: the next one into *out (valid until
 * the next call; a blank: *blank set to its entry, else NULL), 1, 0 at the end, or an error. A
 * blank is never equal to a record read. */
typedef struct rec_stream {
    glm_merge g;
    const uint32_t *top; /* the merge's current record, NULL past its end */
    int advance;         /* top was given out: the merge moves on at the next call */
    size_t bi, nb;       /* the next blank, the blanks */
    unsigned n;
} rec_stream;

static int stream_open(rec_stream *s, glm_ext *x, unsigned n, smt_err *err)
{
    memset(s, 0, sizeof *s);
    s->n = n;
    s->nb = x->l[n].nblank;
    s->advance = 1;
    return merge_open(&s->g, &x->l[n].runs, x->l[n].rmark, x->l[n].nr, rec_w(x, n), n, err);
}

static inline int stream_next(rec_stream *s, glm_ext *x, const uint32_t **out,
                              uint32_t **blank, smt_err *err)
{
    *blank = NULL;
    if (!s->nb) /* the records only */
        return glm_merge_next(&s->g, out, err);
    if (s->advance) {
        int rc = glm_merge_next(&s->g, &s->top, err);
        if (rc < 0)
            return rc;
        if (rc == 0)
            s->top = NULL;
        s->advance = 0;
    }
    uint32_t *b = s->bi < s->nb ? blank_at(x, s->n, s->bi) : NULL;
    if (b && (!s->top || cmp_ids(b, s->top, s->n) < 0)) {
        s->bi++;
        *out = *blank = b;
        return 1;
    }
    if (!s->top)
        return 0;
    *out = s->top;
    s->advance = 1;
    return 1;
}

/* The FixSRI blanks, found from the highest order down: every record's or blank's suffix (its
 * first n - 1 ids) that is not a record of order n - 1 becomes a blank there, inserted by the
 * first record in file order needing it (KenLM's reader inserts it when that record is read). */
static int find_blanks(glm_ext *x, smt_err *err)
{
    for (unsigned n = x->order; n >= 3; n--) {
        rec_stream s;
        glm_merge pg;
        const uint32_t *pr = NULL, *r;
        uint32_t *b;
        int rc = stream_open(&s, x, n, err);
        if (rc)
            return rc;
        if ((rc = merge_open(&pg, &x->l[n - 1].runs, x->l[n - 1].rmark, x->l[n - 1].nr,
                             rec_w(x, n - 1), n - 1, err))) {
            glm_merge_close(&s.g);
            return rc;
        }
        if ((rc = glm_merge_next(&pg, &pr, err)) == 0)
            pr = NULL;
        uint32_t last[GLM_MAX_ORDER];
        int have_last = 0, last_blank = 0;
        while (rc >= 0 && (rc = stream_next(&s, x, &r, &b, err)) == 1) {
            uint64_t ins = b ? blank_ins(b, n) : rec_key(n, r[idx_at(x, n)]);
            if (have_last && cmp_ids(last, r, n - 1) == 0) {
                uint32_t *lb = last_blank ? blank_at(x, n - 1, x->l[n - 1].nblank - 1) : NULL;
                if (lb && ins < blank_ins(lb, n - 1)) {
                    lb[n - 1] = (uint32_t)(ins >> 32);
                    lb[n] = (uint32_t)ins;
                }
                continue;
            }
            memcpy(last, r, (n - 1) * 4);
            have_last = 1;
            int c = 1;
            while (pr && (c = cmp_ids(pr, r, n - 1)) < 0)
                if ((rc = glm_merge_next(&pg, &pr, err)) <= 0) {
                    pr = NULL;
                    if (rc < 0)
                        break;
                }
            if (rc < 0)
                break;
            last_blank = !pr || c != 0;
            if (last_blank && (rc = add_blank(x, n - 1, r, ins, err)))
                break;
        }
        glm_merge_close(&s.g);
        glm_merge_close(&pg);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* The least error of order n so far kept in bad. */
static void note_bad(glm_ext_bad *bad, unsigned kind, unsigned n, uint32_t index,
                     const uint32_t *ids, unsigned first)
{
    if (bad->kind && bad->index <= index)
        return;
    bad->kind = kind;
    bad->n = n;
    bad->index = index;
    memset(bad->ids, 0, sizeof bad->ids);
    memcpy(bad->ids + first, ids, (n - first) * 4);
}

/* The records of order n whose context is one of the nc contexts in cand (each (ids[1..n),
 * since: the key of the first record it is stored for, UINT64_MAX when never; in order) and
 * that are read before it is: the least noted in bad. */
static int late_contexts(glm_ext *x, unsigned n, const uint32_t *cand, size_t nc,
                         glm_ext_bad *bad, smt_err *err)
{
    rec_stream s;
    const uint32_t *r;
    uint32_t *b;
    int rc = stream_open(&s, x, n, err);
    while (!rc && (rc = stream_next(&s, x, &r, &b, err)) == 1) {
        size_t lo = 0, hi = nc;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (cmp_ids(cand + mid * (n + 1), r + 1, n - 1) < 0)
                lo = mid + 1;
            else
                hi = mid;
        }
        const uint32_t *c = cand + lo * (n + 1);
        uint32_t index = r[idx_at(x, n)];
        if (!b && lo < nc && cmp_ids(c, r + 1, n - 1) == 0 &&
            ((uint64_t)c[n - 1] << 32 | c[n]) > rec_key(n, index))
            note_bad(bad, GLM_EXT_NOCTX, n, index, r + 1, 1);
        rc = 0;
    }
    glm_merge_close(&s.g);
    return rc;
}

/* The contexts of order n's records and blanks joined with level n - 1: each found one marked
 * as extended, a blank's context's backoff kept (x's last word), a record's missing context (not
 * a record of level n - 1 nor a blank inserted before the record is read) noted in bad. */
static int join_contexts(glm_ext *x, unsigned n, float *ubo, glm_ext_bad *bad, smt_err *err)
{
    glm_ext_level *l = &x->l[n], *pl = &x->l[n - 1];
    if (n == 2) { /* the unigrams: a record's context was marked as it was read */
        for (size_t i = 0; i < l->nblank; i++) {
            uint32_t *b = blank_at(x, 2, i);
            memcpy(&b[5], &ubo[b[1]], 4);
            glm_set_extension(&ubo[b[1]]);
        }
        return 0;
    }
    if (!(pl->ext = calloc(pl->count / 64 + 1, sizeof *pl->ext)))
        return nomem(err);
    glm_merge g;
    lev_reader p;
    const uint32_t *r;
    int rc = merge_open(&g, &l->runs, l->cmark, l->nc, CTX_W(n), n - 1, err);
    if (rc)
        return rc;
    if ((rc = lev_open(x, n - 1, &p, err))) {
        glm_merge_close(&g);
        return rc;
    }
    size_t bp = 0, nc = 0, ccap = 0;
    uint32_t *cand = NULL; /* the contexts a record may be read before: late_contexts */
    while ((rc = glm_merge_next(&g, &r, err)) == 1) {
        if ((rc = lev_seek(&p, r, n - 1, err)) < 0)
            break;
        int found = rc == 1;
        rc = 0;
        const uint32_t *b = blank_seek(x, n - 1, &bp, r);
        uint64_t since = !found ? UINT64_MAX : b ? blank_ins(b, n - 1) : 0;
        if (found)
            pl->ext[p.rank >> 6] |= 1ull << (p.rank & 63);
        if (!since || (nc && cmp_ids(cand + (nc - 1) * (n + 1), r, n - 1) == 0))
            continue;
        if (smt_grow(&cand, &ccap, (nc + 1) * (n + 1), sizeof *cand, 64)) {
            rc = nomem(err);
            break;
        }
        uint32_t *c = cand + nc++ * (n + 1);
        memcpy(c, r, (n - 1) * 4);
        c[n - 1] = (uint32_t)(since >> 32);
        c[n] = (uint32_t)since;
    }
    glm_merge_close(&g);
    glm_spill_cur_close(&p.cur);
    if (!rc && nc)
        rc = late_contexts(x, n, cand, nc, bad, err);
    free(cand);
    if (rc < 0 || !l->nblank)
        return rc;
    /* the blanks' contexts, in their order: (ids[1..n), the blank's index) sorted */
    uint32_t *c = malloc(l->nblank * n * 4), *t = malloc(l->nblank * n * 4), *cs = NULL;
    if (c && t) {
        for (size_t i = 0; i < l->nblank; i++) {
            memcpy(c + i * n, blank_at(x, n, i) + 1, (n - 1) * 4);
            c[i * n + n - 1] = (uint32_t)i;
        }
        cs = radix_sort(c, t, l->nblank, n, n - 1, x->idbits, err);
    }
    if (!cs || (rc = lev_open(x, n - 1, &p, err))) {
        free(c), free(t);
        return cs ? rc : nomem(err);
    }
    for (size_t i = 0; i < l->nblank; i++) {
        uint32_t *b = blank_at(x, n, cs[i * n + n - 1]);
        if ((rc = lev_seek(&p, b + 1, n - 1, err)) < 0)
            break;
        if (rc == 1) { /* else the record inserting it lacks its context */
            pl->ext[p.rank >> 6] |= 1ull << (p.rank & 63);
            b[n + 3] = p.rec[n]; /* the context's backoff */
        }
        rc = 0;
    }
    free(c), free(t);
    glm_spill_cur_close(&p.cur);
    return rc;
}

/* Order n (its records and blanks) merged into its level file; each one's parent found in level
 * n - 1 and each blank's values set; a duplicate noted in bad. *missing: a record's suffix is
 * neither a record nor a blank (its blanks are not found yet). */
static int check_order(glm_ext *x, unsigned n, const float *uprob, glm_ext_bad *bad,
                       int *missing, smt_err *err)
{
    glm_ext_level *l = &x->l[n];
    rec_stream s;
    lev_reader p = {0};
    uint32_t prev[GLM_MAX_ORDER], out[LEV_W(GLM_MAX_ORDER)], *b;
    int rc = stream_open(&s, x, n, err);
    if (rc)
        return rc;
    if (n > 2 && (rc = lev_open(x, n - 1, &p, err))) {
        glm_merge_close(&s.g);
        return rc;
    }
    uint64_t i = 0;
    size_t bp = 0;
    const uint32_t *r;
    if (!(rc = glm_spill_mark(&l->lev, &l->lev_start, err)))
        while ((rc = stream_next(&s, x, &r, &b, err)) == 1) {
            if (i++ && !b && cmp_ids(prev, r, n) == 0)
                note_bad(bad, GLM_EXT_DUP, n, r[idx_at(x, n)], r, 0);
            memcpy(prev, r, n * 4);
            uint32_t parent = r[0];
            float base = 0.0f; /* a blank's: the value its chain goes on from */
            if (n > 2) {
                if ((rc = lev_seek(&p, r, n - 1, err)) != 1) {
                    if (rc == 0 && b)
                        rc = glm_temp_damaged(err, x->dir, "level %u", n - 1);
                    else if (rc == 0)
                        *missing = 1;
                    break;
                }
                parent = (uint32_t)p.rank;
                if (b) {
                    const uint32_t *pb = blank_seek(x, n - 1, &bp, r);
                    float pprob;
                    memcpy(&pprob, &p.rec[n - 1], 4);
                    base = fabsf(pprob);
                    if (pb && blank_ins(pb, n - 1) == blank_ins(b, n))
                        memcpy(&base, &pb[n + 1], 4); /* the same insertion: no fabsf between */
                }
            } else if (b) {
                base = fabsf(uprob[r[0]]);
            }
            memcpy(out, r, (n + 2) * 4);
            if (n == x->top) {
                float none = -0.0f;
                memcpy(&out[n + 1], &none, 4);
            }
            if (b) {
                float cbo, bo = -0.0f;
                memcpy(&cbo, &b[n + 3], 4);
                float xv = glm_fixsri_next(base, cbo), prob = -fabsf(xv);
                memcpy(&b[n + 2], &xv, 4);
                memcpy(&out[n], &prob, 4);
                memcpy(&out[n + 1], &bo, 4);
            }
            out[n + 2] = parent;
            if ((rc = glm_spill_put(&l->lev, out, LEV_W(n) * 4, err)))
                break;
        }
    if (!rc)
        rc = glm_spill_mark(&l->lev, &l->lev_end, err);
    glm_merge_close(&s.g);
    if (n > 2)
        glm_spill_cur_close(&p.cur);
    return rc;
}

/* The level files of orders 2..order emptied (a second pass after the blanks are found). */
static int reset_levels(glm_ext *x, smt_err *err)
{
    for (unsigned n = 2; n <= x->order; n++) {
        glm_ext_level *l = &x->l[n];
        glm_spill_close(&l->lev);
        free(l->ext);
        l->ext = NULL;
        int rc = glm_spill_open_blocks(&l->lev, 0, x->buf_bytes / 16, x->dir, err);
        if (rc)
            return rc;
    }
    return 0;
}

int glm_ext_check(glm_ext *x, const float *uprob, float *ubo, glm_ext_bad *bad, smt_err *err)
{
    memset(bad, 0, sizeof *bad);
    int missing = 0, rc = 0;
    for (int pass = 0; pass < 2 && !rc; pass++) {
        missing = 0;
        for (unsigned n = 2; n <= x->order && !rc && !missing && !bad->kind; n++) {
            x->l[n].count = x->l[n].nread + x->l[n].nblank;
            if (!(rc = join_contexts(x, n, ubo, bad, err)))
                rc = check_order(x, n, uprob, bad, &missing, err);
            if (missing)
                memset(bad, 0, sizeof *bad); /* the blanks decide which contexts are there */
        }
        if (rc || !missing)
            break;
        if (pass == 1)
            return glm_temp_damaged(err, x->dir, "a suffix not found");
        if (!(rc = find_blanks(x, err)))
            rc = reset_levels(x, err);
    }
    if (rc || bad->kind)
        return rc;
    for (unsigned n = 2; n <= x->order; n++) {
        glm_spill_close(&x->l[n].runs); /* merged: the runs go */
        free(x->l[n].rmark);
        free(x->l[n].cmark);
        x->l[n].rmark = x->l[n].cmark = NULL;
    }
    free(x->buf);
    free(x->tmp);
    x->buf = x->tmp = NULL;
    return 0;
}

void glm_ext_close(glm_ext *x)
{
    for (unsigned n = 2; n <= GLM_MAX_ORDER; n++) {
        glm_ext_level *l = &x->l[n];
        if (l->runs.dir)
            glm_spill_close(&l->runs);
        if (l->lev.dir)
            glm_spill_close(&l->lev);
        free(l->rmark);
        free(l->cmark);
        free(l->ext);
        free(l->blank);
    }
    free(x->buf);
    free(x->tmp);
    free(x->dir);
    memset(x, 0, sizeof *x);
}
