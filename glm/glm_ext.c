/* glm_ext.c — a trie build's n-grams sorted on disk (glm_internal.h): each order's records in
 * sorted runs of a bounded buffer, merged into the order's level file in lexicographic order of
 * the reversed ids, each record's parent (its first n - 1 ids, one order down) and every
 * context's "extends" mark found by merge joins. */
#include <stdlib.h>
#include <string.h>

#include "glm_internal.h"
#include "smt_buf.h"

/* Words (uint32) of a record: a run's (ids, prob, bo), a context's (ids[1..n)), a level's (ids,
 * prob, bo, parent's rank). */
#define REC_W(n) ((n) + 2)
#define CTX_W(n) ((n) - 1)
#define LEV_W(n) ((n) + 3)

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
    uint32_t *s = radix_sort(x->buf, x->tmp, cnt, REC_W(n), n, x->idbits, err);
    if (!s)
        return SMT_ERR_NOMEM;
    int rc = put_run(&l->runs, &l->rmark, &l->nr, s, cnt * REC_W(n) * 4, err);
    if (rc || n < 3)
        return rc;
    uint32_t *c = s == x->buf ? x->tmp : x->buf;
    for (size_t i = 0; i < cnt; i++)
        memcpy(c + i * CTX_W(n), s + i * REC_W(n) + 1, CTX_W(n) * 4);
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
    x->order = order;
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
    if ((x->nbuf + 1) * REC_W(n) * 4 > x->buf_bytes) {
        int rc = flush_run(x, n, err);
        if (rc)
            return rc;
    }
    uint32_t *r = x->buf + x->nbuf++ * REC_W(n);
    memcpy(r, ids, n * 4);
    memcpy(r + n, &prob, 4);
    memcpy(r + n + 1, &bo, 4);
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

/* Order n merged into its level file; each record's parent found in level n - 1 and each
 * context marked there. 1 when a record is a duplicate or lacks its suffix or its context. */
static int check_order(glm_ext *x, unsigned n, smt_err *err)
{
    glm_ext_level *l = &x->l[n];
    glm_merge g;
    lev_reader p = {0};
    uint32_t prev[GLM_MAX_ORDER], out[LEV_W(GLM_MAX_ORDER)];
    int rc = merge_open(&g, &l->runs, l->rmark, l->nr, REC_W(n), n, err);
    if (rc)
        return rc;
    if (n > 2 && (rc = lev_open(x, n - 1, &p, err))) {
        glm_merge_close(&g);
        return rc;
    }
    uint64_t i = 0;
    const uint32_t *r;
    if (!(rc = glm_spill_mark(&l->lev, &l->lev_start, err)))
        while ((rc = glm_merge_next(&g, &r, err)) == 1) {
            if (i++ && cmp_ids(prev, r, n) == 0) {
                rc = 1; /* a duplicate */
                break;
            }
            memcpy(prev, r, n * 4);
            uint32_t parent = r[0];
            if (n > 2) {
                if ((rc = lev_seek(&p, r, n - 1, err)) != 1) {
                    rc = rc ? rc : 1; /* a missing suffix */
                    break;
                }
                parent = (uint32_t)p.rank;
            }
            memcpy(out, r, REC_W(n) * 4);
            out[REC_W(n)] = parent;
            if ((rc = glm_spill_put(&l->lev, out, LEV_W(n) * 4, err)))
                break;
        }
    if (!rc)
        rc = glm_spill_mark(&l->lev, &l->lev_end, err);
    glm_merge_close(&g);
    if (n > 2)
        glm_spill_cur_close(&p.cur);
    if (rc || n < 3)
        return rc;
    /* the contexts, each marked as extended in level n - 1 */
    glm_ext_level *pl = &x->l[n - 1];
    if (!(pl->ext = calloc(pl->count / 64 + 1, sizeof *pl->ext)))
        return nomem(err);
    if ((rc = merge_open(&g, &l->runs, l->cmark, l->nc, CTX_W(n), CTX_W(n), err)))
        return rc;
    if ((rc = lev_open(x, n - 1, &p, err))) {
        glm_merge_close(&g);
        return rc;
    }
    while ((rc = glm_merge_next(&g, &r, err)) == 1) {
        if ((rc = lev_seek(&p, r, n - 1, err)) != 1) {
            rc = rc ? rc : 1; /* a missing context */
            break;
        }
        pl->ext[p.rank >> 6] |= 1ull << (p.rank & 63);
    }
    glm_merge_close(&g);
    glm_spill_cur_close(&p.cur);
    return rc;
}

int glm_ext_check(glm_ext *x, smt_err *err)
{
    for (unsigned n = 2; n <= x->order; n++) {
        int rc = check_order(x, n, err);
        if (rc)
            return rc;
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
    }
    free(x->buf);
    free(x->tmp);
    free(x->dir);
    memset(x, 0, sizeof *x);
}
