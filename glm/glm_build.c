/* glm_build.c — from the parsed ARPA n-grams to a model file: the gLM trie (.glm, optionally
 * quantized) or KenLM's probing binary (glm build probing).
 *
 * The trie is made level by level (k = 2..N): each n-gram's parent is its suffix of order k-1
 * (already placed, its final position known), so sorting level k by (parent position, key) groups
 * every node's children in their parent's order, sorted by key; each group is then permuted into
 * its B-tree's breadth-first order. The n-grams come sorted on disk, each with its parent
 * (glm_ext, build_trie_ext). Each level's output leaves memory as it is finished (trie_out: the
 * keys to the file, the rest through a glm_spill). */
#define _POSIX_C_SOURCE 200809L /* stat, sysconf */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "glm_internal.h"
#include "glm_kenlm.h"
#include "smt_buf.h"
#include "smt_file.h"
#include "smt_io.h"
#include "smt_progress.h"
#include "smt_threads.h"

void glm_layout_setup(glm_layout *L, uint32_t order, uint32_t K, const uint64_t *count)
{
    memset(L, 0, sizeof *L);
    L->order = order;
    L->K = K;
    L->B = K - 1;
    uint64_t p = 1, f = 0;
    for (unsigned d = 0; d <= GLM_BT_MAXD; d++) {
        L->kpow[d] = p;
        L->first[d] = f;
        f = (f > UINT64_MAX / 2) ? UINT64_MAX / 2 : f + p;
        p = (p > UINT64_MAX / K) ? UINT64_MAX / 2 : p * K;
    }
    uint64_t ko = 0, mo = 0;
    for (unsigned k = 1; k <= order; k++) {
        L->count[k] = count[k];
        if (k >= 2) {
            L->key_off[k] = ko;
            ko += count[k];
        }
        if (k < order) {
            L->mid_off[k] = mo;
            mo += count[k] + 1;
        }
    }
}

static uint32_t bits_for(uint64_t max)
{
    uint32_t b = 1;
    while (b < 64 && (max >> b) != 0)
        b++;
    return b;
}

int glm_layout_quant(glm_layout *L, uint32_t qp, uint32_t qb, const uint32_t *shape)
{
    L->qp = qp;
    L->qb = qb;
    L->kbits = bits_for(L->count[1] > 1 ? L->count[1] - 1 : 1);
    uint64_t bit = 0, bins = 0, nbase = 0, total_keys = 0;
    for (unsigned k = 0; k < GLM_QSHAPE_N; k++) {
        uint32_t sh = shape ? shape[k] : 0;
        if (sh && (k < 2 || k >= L->order || (sh & 0xff) > 32 || (sh >> 8) > 31))
            return -1;
    }
    for (unsigned k = 2; k <= L->order; k++) {
        total_keys += L->count[k];
        L->qrec_off[k] = bit;
        L->qbin_off[k] = bins;
        L->qbase_off[k] = nbase;
        if (k < L->order) {
            uint32_t sh = shape ? shape[k] : 0;
            L->qchild_bits[k] = sh & 0xff;
            L->qshift[k] = sh >> 8;
            L->qrec_bits[k] = L->qchild_bits[k] + qp + qb;
            bit += (L->count[k] + 1) * L->qrec_bits[k];
            bins += (1ull << qp) + (1ull << qb);
            nbase += ((L->count[k] + 1) + (1ull << L->qshift[k]) - 1) >> L->qshift[k];
        } else {
            L->qchild_bits[k] = 0;
            L->qshift[k] = 0;
            L->qrec_bits[k] = qp;
            bit += L->count[k] * qp;
            bins += 1ull << qp;
        }
    }
    L->pkey_bytes = (total_keys * L->kbits + 7) / 8 + 8;
    L->qrec_bytes = (bit + 7) / 8 + 8;
    L->nqbins = bins;
    L->nqbase = nbase;
    return 0;
}

uint64_t glm_layout_nmid(const glm_layout *L)
{
    if (L->qp)
        return L->count[1] + 1;
    uint64_t n = 0;
    for (unsigned k = 1; k < L->order; k++)
        n += L->count[k] + 1;
    return n;
}

/* ------------------------------------------------------------------ B-tree order */

typedef struct bt_ctx {
    const glm_layout *L;
    uint32_t d;
    uint64_t I, q, r;
    uint32_t *out;
    uint32_t rank;
} bt_ctx;

static void inorder(bt_ctx *c, uint32_t l, uint64_t j)
{
    if (l + 1 == c->d) {
        uint64_t s = c->I + j * c->q + (j < c->r ? j : c->r), n = c->q + (j < c->r);
        for (uint64_t i = 0; i < n; i++)
            c->out[s + i] = c->rank++;
        return;
    }
    uint64_t base = (c->L->first[l] + j) * c->L->B;
    for (uint32_t ch = 0; ch < c->L->K; ch++) {
        inorder(c, l + 1, j * c->L->K + ch);
        if (ch < c->L->B)
            c->out[base + ch] = c->rank++;
    }
}

void glm_bt_order(const glm_layout *L, uint64_t n, uint32_t *slot_to_rank)
{
    if (n == 0)
        return;
    glm_bt_cursor cur;
    glm_bt_init(L, &cur, n);
    bt_ctx c = {L, cur.d, cur.I, cur.q, cur.r, slot_to_rank, 0};
    if (cur.d == 1) { /* the common case: one leaf, already sorted */
        for (uint64_t i = 0; i < n; i++)
            slot_to_rank[i] = (uint32_t)i;
        return;
    }
    inorder(&c, 0, 0);
}

/* ------------------------------------------------------------------ the build */

/* The model file as its levels are finished: the keys go to the writer's "keys" section as each
 * level is laid out (bit-packed in a quantized file), each middle level's mid entries (once its
 * children set their first-child offsets) and the highest level's probabilities to the spill,
 * from which the later sections are written. Level 1's mid stays in memory. */
typedef struct trie_out {
    smt_writer *w;
    glm_spill sp;
    glm_ext ext;     /* the n-grams sorted on disk */
    uint64_t level_mem; /* a quarter of -S: a level laid out in memory when its arrays fit */
    glm_mid *uni;
    uint32_t kbits;    /* a quantized file's key bits; 0: uint32 keys */
    uint64_t acc;      /* bits not yet written (acc's low nacc bits), then whole bytes in buf */
    unsigned nacc;
    size_t nbuf;
    uint64_t written;  /* bytes of the current bit-packed section written */
    uint8_t buf[1u << 16];
} trie_out;

static int bits_flush(trie_out *o, smt_err *err)
{
    int rc = smt_writer_write(o->w, o->buf, o->nbuf, err);
    o->written += o->nbuf;
    o->nbuf = 0;
    return rc;
}

/* Appends v's low nbits (at most 32) to the bit-packed section being written, least significant
 * bit first (glm_layout.h's reads). */
static inline int bits_put(trie_out *o, uint64_t v, uint32_t nbits, smt_err *err)
{
    o->acc |= (v & ((1ull << nbits) - 1)) << o->nacc;
    o->nacc += nbits;
    while (o->nacc >= 8) {
        o->buf[o->nbuf++] = (uint8_t)o->acc;
        o->acc >>= 8;
        o->nacc -= 8;
        if (o->nbuf == sizeof o->buf) {
            int rc = bits_flush(o, err);
            if (rc)
                return rc;
        }
    }
    return 0;
}

/* Ends a bit-packed section: its last partial byte and the 8 zero bytes the readers may load. */
static int bits_end(trie_out *o, smt_err *err)
{
    int rc = 0;
    if (o->nacc)
        rc = bits_put(o, 0, 8 - o->nacc, err);
    for (int i = 0; i < 8 && !rc; i++)
        rc = bits_put(o, 0, 8, err);
    if (!rc)
        rc = bits_flush(o, err);
    o->acc = 0;
    o->nacc = 0;
    return rc;
}

static int put_keys(trie_out *o, const uint32_t *keys, uint64_t n, smt_err *err)
{
    if (!o->kbits)
        return smt_writer_write(o->w, keys, n * sizeof *keys, err);
    int rc = 0;
    for (uint64_t i = 0; i < n && !rc; i++)
        rc = bits_put(o, keys[i], o->kbits, err);
    return rc;
}

/* Level 1's entries (o->uni, their child offsets set later) and the meter, which counts the
 * bytes of the trie filled in (unigrams first, then level by level; *done_bytes). */
static int trie_start(const glm_arpa *a, const glm_layout *L, trie_out *o, int progress,
                      smt_progress *prog, uint64_t *done_bytes, smt_err *err)
{
    unsigned N = a->order;
    uint64_t total_keys = 0, total_mid = 0;
    for (unsigned k = 2; k <= N; k++)
        total_keys += L->count[k];
    for (unsigned k = 1; k < N; k++)
        total_mid += L->count[k] + 1;
    if (!(o->uni = malloc((L->count[1] + 1) * sizeof *o->uni)))
        return smt_err_set(err, SMT_ERR_NOMEM, "out of memory building the trie");
    for (uint32_t w = 0; w < a->nvocab; w++)
        o->uni[w] = (glm_mid){a->uprob[w], a->ubo[w], 0};
    o->uni[a->nvocab] = (glm_mid){0.0f, 0.0f, 0};
    uint64_t out_bytes = total_keys * sizeof(uint32_t) + total_mid * sizeof(glm_mid) +
                         L->count[N] * sizeof(float);
    *done_bytes = (L->count[1] + 1) * sizeof(glm_mid);
    smt_progress_init(prog, "building trie", out_bytes, progress);
    return 0;
}

/* A level's entries in final order, from its sorter (records: position, key, prob, backoff,
 * rank): each one's first child from the level above's counts by rank (start, made the first
 * positions), to the spill, then the sentinel's (nchild). */
static int put_level_mids(trie_out *o, const glm_sorter *t, uint64_t np, uint32_t *start,
                          uint64_t nchild, smt_err *err)
{
    glm_merge g;
    glm_mid mb[4096];
    int rc = glm_sorter_merge(t, &g, err);
    if (rc)
        return rc;
    uint64_t cs = 0, i = 0;
    size_t nb = 0;
    const uint32_t *r;
    while ((rc = glm_merge_next(&g, &r, err)) == 1 && r[0] == i && i < np && r[4] < np) {
        uint32_t c = start[r[4]];
        start[r[4]] = (uint32_t)cs;
        float prob, bo;
        memcpy(&prob, &r[2], 4);
        memcpy(&bo, &r[3], 4);
        mb[nb++] = (glm_mid){prob, bo, (uint32_t)cs};
        cs += c;
        i++;
        if (nb == 4096 && (rc = glm_spill_put(&o->sp, mb, sizeof mb, err)))
            break;
        nb = nb == 4096 ? 0 : nb;
    }
    glm_merge_close(&g);
    if (rc < 0)
        return rc;
    if (rc == 1 || i != np || cs != nchild)
        return glm_temp_damaged(err, t->sp.dir, "a level's positions");
    mb[nb++] = (glm_mid){0.0f, 0.0f, (uint32_t)nchild};
    return glm_spill_put(&o->sp, mb, nb * sizeof *mb, err);
}

/* A level's keys in final order to the file, from its sorter; the highest level's
 * probabilities (top) to the spill. */
static int put_level_keys(trie_out *o, const glm_sorter *t, uint64_t n, int top, smt_err *err)
{
    glm_merge g;
    uint32_t kb[4096];
    float pb[4096];
    int rc = glm_sorter_merge(t, &g, err);
    if (rc)
        return rc;
    uint64_t i = 0;
    size_t nb = 0;
    const uint32_t *r;
    while ((rc = glm_merge_next(&g, &r, err)) == 1 && r[0] == i && i < n) {
        kb[nb] = r[1];
        memcpy(&pb[nb], &r[2], 4);
        i++;
        if (++nb == 4096 || i == n) {
            if ((rc = put_keys(o, kb, nb, err)) ||
                (top && (rc = glm_spill_put(&o->sp, pb, nb * sizeof *pb, err))))
                break;
            nb = 0;
        }
    }
    glm_merge_close(&g);
    if (rc < 0)
        return rc;
    if (rc == 1 || i != n)
        return glm_temp_damaged(err, t->sp.dir, "a level's positions");
    return 0;
}

/* The levels from the level files of glm_ext: level k's records come in order of the reversed
 * ids (so grouped by parent, each group by key), read twice: first each parent's child count,
 * from which, with the parents in their final order (the level below's sorter), each group's
 * first position, the level below's entries then going to the spill; then each group placed in
 * its B-tree order, each record's final position, key, values and rank going to the level's
 * sorter, whose merge gives the keys in final order (and again, at the next level, the
 * entries). */
static int build_trie_ext(glm_arpa *a, const glm_layout *L, trie_out *o, smt_progress *prog,
                          uint64_t done_bytes, smt_err *err)
{
    glm_ext *x = a->ext;
    unsigned N = a->order;
    int rc = 0;
    uint32_t *start = NULL, *perm = NULL, *keys = NULL, *new_at = NULL, rec[GLM_MAX_ORDER + 3];
    glm_mid *grp = NULL, *pmid = NULL, *kmid = NULL; /* pmid: the level below's, in memory */
    float *top = NULL;
    size_t gcap = 0, grpcap = 0; /* perm's and grp's capacities */
    glm_spill_cur c = {0};
    glm_sorter prev = {0}, cur = {0}; /* the level below's records, this level's */
    for (unsigned k = 2; k <= N && !rc; k++) {
        uint64_t n = L->count[k], np = L->count[k - 1];
        unsigned w = k + 3;
        if (!(start = calloc(np + 1, sizeof *start))) {
            rc = smt_err_set(err, SMT_ERR_NOMEM, "out of memory building the trie");
            break;
        }
        if ((rc = glm_ext_lev_open(x, k, &c, err)))
            break;
        uint64_t seen = 0;
        while ((rc = glm_spill_cur_get(&c, rec, w * 4, err)) == 0 && rec[w - 1] < np) {
            start[rec[w - 1]]++;
            seen++;
        }
        glm_spill_cur_close(&c);
        if (rc < 0)
            break;
        if (rc == 0 || seen != n) {
            rc = glm_temp_damaged(err, x->dir, "level %u", k);
            break;
        }
        rc = 0;
        if (k == 2) { /* the unigrams, in memory, in final order already */
            uint64_t cs = 0;
            for (uint64_t p = 0; p < np; p++) {
                uint32_t g = start[p];
                start[p] = (uint32_t)cs;
                o->uni[p].child = (uint32_t)cs;
                cs += g;
            }
            o->uni[np].child = (uint32_t)n;
        } else if (pmid) { /* each entry's child offset holds its rank */
            uint64_t cs = 0;
            for (uint64_t p = 0; p < np; p++) {
                uint32_t r = pmid[p].child, g = start[r];
                start[r] = (uint32_t)cs;
                pmid[p].child = (uint32_t)cs;
                cs += g;
            }
            pmid[np].child = (uint32_t)n;
            rc = glm_spill_put(&o->sp, pmid, (np + 1) * sizeof *pmid, err);
            free(pmid);
            pmid = NULL;
            if (rc)
                break;
        } else {
            if ((rc = put_level_mids(o, &prev, np, start, n, err)))
                break;
            glm_sorter_close(&prev);
        }
        /* in memory when its arrays fit in a quarter of -S, else through a sorter */
        int mem = (k < N ? (n + 1) * sizeof(glm_mid) + n * 4 : n * 8) <= o->level_mem;
        unsigned pbits = 1;
        while (pbits < 32 && (n >> pbits) != 0)
            pbits++;
        if (mem) {
            kmid = k < N ? malloc((n + 1) * sizeof *kmid) : NULL;
            new_at = k < N ? malloc(n * sizeof *new_at + 4) : NULL;
            keys = k < N ? NULL : malloc(n * sizeof *keys + 4);
            top = k < N ? NULL : malloc(n * sizeof *top + 4);
            if (k < N ? !kmid || !new_at : !keys || !top) {
                rc = smt_err_set(err, SMT_ERR_NOMEM, "out of memory building the trie");
                break;
            }
        } else if ((rc = glm_sorter_open(&cur, 5, pbits, 2 * (uint64_t)x->buf_bytes, x->dir,
                                         err))) {
            break;
        }
        if ((rc = glm_ext_lev_open(x, k, &c, err)))
            break;
        const uint64_t *ext = k < N ? x->l[k].ext : NULL;
        uint64_t rank = 0, g0 = 0, g = 0, placed = 0;
        uint32_t parent = 0;
        for (;;) {
            int more = (rc = glm_spill_cur_get(&c, rec, w * 4, err)) == 0;
            if (rc < 0)
                break;
            rc = 0;
            if (g && (!more || rec[w - 1] != parent)) { /* a group ends: its B-tree order */
                if (g > gcap) {
                    free(perm);
                    perm = malloc(g * sizeof *perm);
                    gcap = g;
                    if (!perm) {
                        gcap = 0;
                        rc = smt_err_set(err, SMT_ERR_NOMEM, "out of memory building the trie");
                        break;
                    }
                }
                glm_bt_order(L, g, perm);
                uint64_t base = start[parent];
                for (uint64_t slot = 0; slot < g && !rc; slot++) {
                    const glm_mid *e = &grp[perm[slot]];
                    uint64_t at = base + slot;
                    if (mem && k < N) { /* the key waits in the child offset */
                        kmid[at] = *e;
                        new_at[at] = (uint32_t)(g0 + perm[slot]);
                    } else if (mem) {
                        keys[at] = e->child;
                        top[at] = e->prob;
                    } else {
                        uint32_t out[5] = {(uint32_t)at, e->child, 0, 0,
                                           (uint32_t)(g0 + perm[slot])};
                        memcpy(&out[2], &e->prob, 4);
                        memcpy(&out[3], &e->backoff, 4);
                        rc = glm_sorter_add(&cur, out, err);
                    }
                }
                if (rc)
                    break;
                placed += g;
                g = 0;
                smt_progress_update(prog, done_bytes + placed * (k < N ? 16 : 8));
            }
            if (!more)
                break;
            if (!g) {
                g0 = rank;
                parent = rec[w - 1];
            }
            if (smt_grow(&grp, &grpcap, (size_t)g + 1, sizeof *grp, 64)) {
                rc = smt_err_set(err, SMT_ERR_NOMEM, "out of memory building the trie");
                break;
            }
            float prob, bo;
            memcpy(&prob, &rec[k], 4);
            memcpy(&bo, &rec[k + 1], 4);
            if (ext && (ext[rank >> 6] >> (rank & 63) & 1) && bo == 0.0f)
                bo = 0.0f; /* used as a context: KenLM's "extends" mark */
            grp[g++] = (glm_mid){prob, bo, rec[k - 1]};
            rank++;
        }
        glm_spill_cur_close(&c);
        if (rc)
            break;
        if (placed != n) {
            rc = glm_temp_damaged(err, x->dir, "level %u", k);
            break;
        }
        free(start);
        start = NULL;
        if (mem && k == N) {
            if ((rc = put_keys(o, keys, n, err)) ||
                (rc = glm_spill_put(&o->sp, top, n * sizeof *top, err)))
                break;
        } else if (mem) { /* the keys out; each child offset then holds the entry's rank */
            uint32_t kb[4096];
            for (uint64_t i = 0; i < n && !rc; i += 4096) {
                uint64_t b = n - i < 4096 ? n - i : 4096;
                for (uint64_t j = 0; j < b; j++) {
                    kb[j] = kmid[i + j].child;
                    kmid[i + j].child = new_at[i + j];
                }
                rc = put_keys(o, kb, b, err);
            }
            if (rc)
                break;
            kmid[n] = (glm_mid){0.0f, 0.0f, 0};
            free(new_at);
            new_at = NULL;
            pmid = kmid;
            kmid = NULL;
        } else if ((rc = glm_sorter_end(&cur, err)) ||
                   (rc = put_level_keys(o, &cur, n, k == N, err))) {
            break;
        }
        done_bytes += n * (sizeof(uint32_t) + (k < N ? sizeof(glm_mid) : sizeof(float))) +
                      (k < N ? sizeof(glm_mid) : 0);
        smt_progress_update(prog, done_bytes);
        glm_spill_close(&x->l[k].lev); /* laid out: the level's file and marks go */
        free(x->l[k].ext);
        x->l[k].ext = NULL;
        prev = cur; /* its entries go out with the next level's counts */
        memset(&cur, 0, sizeof cur);
    }
    glm_spill_cur_close(&c);
    glm_sorter_close(&prev);
    glm_sorter_close(&cur);
    free(start);
    free(perm);
    free(grp);
    free(pmid);
    free(kmid);
    free(new_at);
    free(keys);
    free(top);
    if (!rc)
        smt_progress_finish(prog, done_bytes);
    return rc;
}

static int build_levels(glm_arpa *a, const glm_layout *L, trie_out *o, int progress,
                        smt_err *err)
{
    uint64_t done_bytes = 0;
    smt_progress prog;
    int rc = trie_start(a, L, o, progress, &prog, &done_bytes, err);
    if (!rc)
        rc = build_trie_ext(a, L, o, &prog, done_bytes, err);
    return rc;
}

/* ------------------------------------------------------------------ quantization */

/* KenLM's binning (lm/quantize.cc, build_binary -q/-b; Federico & Bertoldi 2006): per order, the
 * probabilities and the backoffs separately, the values sorted and cut into bins of equal counts
 * (bin i ends at n * (i + 1) / bins), each bin's center the mean of its values (a double sum of the
 * floats in sorted order divided by the count as a float), an empty bin the previous bin's center
 * (-inf for the first). Backoffs: codes 0 and 1 are KenLM's -0.0 (never a context) and +0.0, the
 * other 2^qb - 2 bins are made of the non-zero backoffs. The highest order has no backoff, and the
 * unigrams are not quantized. A value is coded by its nearest center (Bins::Encode: the first
 * center >= value or the one below it, the lower one on a tie). */

static void sift_float(float *v, uint64_t i, uint64_t n)
{
    for (uint64_t c; (c = 2 * i + 1) < n; i = c) {
        if (c + 1 < n && v[c + 1] > v[c])
            c++;
        if (!(v[c] > v[i]))
            return;
        float t = v[c];
        v[c] = v[i];
        v[i] = t;
    }
}

/* Sorts the floats (no NaN) ascending in place, with no memory besides the stack (qsort's merge
 * sort would take as much again): quicksort on the median of three, the smaller part first,
 * a heapsort past 2 log2 n levels, insertion sort for the small parts. Values that compare
 * equal (-0.0 and 0.0) sum alike, so the bins do not depend on their order. */
static void sort_floats(float *v, uint64_t n, unsigned depth)
{
    while (n > 16) {
        if (depth-- == 0) {
            for (uint64_t i = n / 2; i-- > 0;)
                sift_float(v, i, n);
            for (uint64_t e = n - 1; e > 0; e--) {
                float t = v[0];
                v[0] = v[e];
                v[e] = t;
                sift_float(v, 0, e);
            }
            return;
        }
        float a = v[0], b = v[n / 2], c = v[n - 1], t;
        uint64_t m = (a < b) == (b < c) ? n / 2 : (b < a) == (a < c) ? 0 : n - 1;
        t = v[0], v[0] = v[m], v[m] = t;
        float p = v[0];
        int64_t i = -1, j = (int64_t)n; /* Hoare's partition: [0, j] <= p <= (j, n), j < n - 1 */
        for (;;) {
            do
                i++;
            while (v[i] < p);
            do
                j--;
            while (v[j] > p);
            if (i >= j)
                break;
            t = v[i], v[i] = v[j], v[j] = t;
        }
        uint64_t left = (uint64_t)j + 1;
        if (left < n - left) {
            sort_floats(v, left, depth);
            v += left;
            n -= left;
        } else {
            sort_floats(v + left, n - left, depth);
            n = left;
        }
    }
    for (uint64_t i = 1; i < n; i++) {
        float x = v[i];
        uint64_t j = i;
        for (; j > 0 && v[j - 1] > x; j--)
            v[j] = v[j - 1];
        v[j] = x;
    }
}

static void make_bins(float *v, uint64_t n, float *centers, uint64_t bins)
{
    unsigned depth = 0;
    for (uint64_t m = n; m > 1; m >>= 1)
        depth += 2;
    sort_floats(v, n, depth);
    uint64_t start = 0;
    for (uint64_t i = 0; i < bins; i++) {
        uint64_t finish = n * (i + 1) / bins;
        if (finish == start) {
            centers[i] = i ? centers[i - 1] : -INFINITY;
        } else {
            double sum = 0.0;
            for (uint64_t j = start; j < finish; j++)
                sum += v[j];
            centers[i] = (float)(sum / (double)(float)(finish - start));
        }
        start = finish;
    }
}

static uint64_t encode(const float *bins, uint64_t nbins, uint64_t reserved, float value)
{
    uint64_t lo = reserved, hi = nbins; /* lower_bound: the first center >= value */
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (bins[mid] < value)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == reserved)
        return reserved;
    if (lo == nbins)
        return nbins - 1;
    float below = value - bins[lo - 1], above = bins[lo] - value;
    return lo - (below < above);
}

static uint64_t encode_backoff(const float *bins, uint64_t nbins, float value)
{
    if (value == 0.0f)
        return glm_has_extension(value) ? 1 : 0;
    return encode(bins, nbins, 2, value);
}

/* The child shape of a level whose entries' first children are child[0..n] (child[n]: the
 * sentinel's): the block size 2^s whose bases (32 bits per block) and deltas (bits for the
 * largest offset from a block's base) take the fewest bits. delta bits | s << 8. */
static uint32_t child_shape(const glm_mid *mid, uint64_t n)
{
    uint64_t best = UINT64_MAX;
    uint32_t shape = 0;
    for (uint32_t s = 0; s <= 24; s++) {
        uint64_t maxd = 0;
        for (uint64_t e = 0; e <= n; e++) {
            uint64_t d = (uint64_t)mid[e].child - mid[(e >> s) << s].child;
            maxd = d > maxd ? d : maxd;
        }
        uint32_t bits = maxd ? bits_for(maxd) : 0;
        uint64_t cost = (n + 1) * bits + 32 * (((n + 1) + (1ull << s) - 1) >> s);
        if (cost < best) {
            best = cost;
            shape = bits | s << 8;
        }
        if ((1ull << s) > n)
            break;
    }
    return shape;
}

/* Copies the next bytes of the spill into the current section. */
static int copy_spilled(trie_out *o, uint64_t bytes, smt_err *err)
{
    while (bytes) {
        size_t k = bytes < sizeof o->buf ? (size_t)bytes : sizeof o->buf;
        int rc = glm_spill_get(&o->sp, o->buf, k, err);
        if (!rc)
            rc = smt_writer_write(o->w, o->buf, k, err);
        if (rc)
            return rc;
        bytes -= k;
    }
    return 0;
}

/* The quantized sections after "keys" and "mid" (qrec, qbins, qbase, qshape), each level read back
 * from the spill in turn: its child shape, its bins, its records bit-packed. */
static int write_quantized(glm_layout *L, trie_out *o, uint32_t qp, uint32_t qb, smt_err *err)
{
    unsigned N = L->order;
    uint64_t most = 0, np = 1ull << qp, nb = 1ull << qb, nbins = 0, nbase = 0;
    uint32_t qshape[GLM_QSHAPE_N] = {0};
    size_t mid_bytes = 4; /* a middle level's entries, or the highest level's floats */
    for (unsigned k = 2; k <= N; k++) {
        most = L->count[k] > most ? L->count[k] : most;
        nbins += np + (k < N ? nb : 0);
        size_t b = k < N ? (L->count[k] + 1) * sizeof(glm_mid) : L->count[k] * sizeof(float);
        mid_bytes = b > mid_bytes ? b : mid_bytes;
    }
    float *qbins = malloc(nbins * sizeof *qbins), *v = malloc(most * sizeof *v + 4);
    glm_mid *mid = malloc(mid_bytes);
    uint32_t *qbase = NULL;
    size_t basecap = 0;
    int rc = 0;
    if (!qbins || !v || !mid) {
        rc = smt_err_set(err, SMT_ERR_NOMEM, "out of memory quantizing the model");
        goto out;
    }
    float *top = (float *)(void *)mid;
    o->written = 0;
    if ((rc = smt_writer_begin(o->w, "qrec", err)))
        goto out;
    uint64_t bin_at = 0;
    for (unsigned k = 2; k <= N && !rc; k++) {
        uint64_t n = L->count[k];
        float *pbins = qbins + bin_at, *bbins = pbins + np;
        if ((rc = glm_spill_get(&o->sp, k < N ? (void *)mid : (void *)top,
                                k < N ? (n + 1) * sizeof *mid : n * sizeof *top, err)))
            break;
        for (uint64_t i = 0; i < n; i++)
            v[i] = k < N ? mid[i].prob : top[i];
        make_bins(v, n, pbins, np);
        bin_at += np;
        if (k == N) {
            for (uint64_t i = 0; i < n && !rc; i++)
                rc = bits_put(o, encode(pbins, np, 0, top[i]), qp, err);
            break;
        }
        uint64_t nz = 0;
        for (uint64_t i = 0; i < n; i++)
            if (mid[i].backoff != 0.0f)
                v[nz++] = mid[i].backoff;
        if (nz && nb <= 2) {
            rc = smt_err_set(err, SMT_ERR_ARG,
                             "-b %u leaves no bin for the %llu non-zero backoffs of order %u "
                             "(2 codes stand for 0 and -0): give -b 2 or more",
                             qb, (unsigned long long)nz, k);
            break;
        }
        bbins[0] = -0.0f; /* KenLM's kNoExtensionBackoff, then kExtensionBackoff */
        bbins[1] = 0.0f;
        make_bins(v, nz, bbins + 2, nb - 2);
        bin_at += nb;
        qshape[k] = child_shape(mid, n);
        uint32_t cb = qshape[k] & 0xff, sh = qshape[k] >> 8;
        uint64_t b0 = nbase;
        nbase += (n >> sh) + 1;
        if (smt_grow(&qbase, &basecap, nbase, sizeof *qbase, 1024)) {
            rc = smt_err_set(err, SMT_ERR_NOMEM, "out of memory quantizing the model");
            break;
        }
        uint32_t *base = qbase + b0;
        for (uint64_t i = 0; i <= n; i += 1ull << sh)
            base[i >> sh] = mid[i].child;
        for (uint64_t i = 0; i < n && !rc; i++)
            if (!(rc = bits_put(o, mid[i].child - base[i >> sh], cb, err)) &&
                !(rc = bits_put(o, encode(pbins, np, 0, mid[i].prob), qp, err)))
                rc = bits_put(o, encode_backoff(bbins, nb, mid[i].backoff), qb, err);
        if (!rc) /* the sentinel: its child, then a record's unused bits */
            rc = bits_put(o, mid[n].child - base[n >> sh], cb, err);
        if (!rc && !(rc = bits_put(o, 0, qp, err)))
            rc = bits_put(o, 0, qb, err);
    }
    if (rc || (rc = bits_end(o, err)) || (rc = smt_writer_end(o->w, err)))
        goto out;
    if (glm_layout_quant(L, qp, qb, qshape) || L->nqbins != nbins || L->nqbase != nbase ||
        L->qrec_bytes != o->written) {
        rc = smt_err_set(err, SMT_ERR_ARG, "internal: the quantized sections' sizes disagree");
        goto out;
    }
    if (!(rc = smt_writer_section(o->w, "qbins", qbins, nbins * sizeof *qbins, err)) &&
        !(rc = smt_writer_section(o->w, "qbase", qbase, nbase * sizeof *qbase, err)))
        rc = smt_writer_section(o->w, "qshape", qshape, sizeof qshape, err);
out:
    free(qbins);
    free(v);
    free(mid);
    free(qbase);
    return rc;
}

/* The .glm file: the header, the vocabulary, the keys as build_trie_ext lays the levels out, then
 * the sections read back from the spill. */
static int write_model(const char *out_path, glm_arpa *a, glm_layout *L, trie_out *o,
                       glm_params *par, int progress, smt_err *err)
{
    int rc = smt_writer_open(&o->w, out_path, GLM_KIND, GLM_KIND_VERSION, err);
    if (rc)
        return rc;
    uint32_t qp = par->quant & 0xff, qb = (par->quant >> 8) & 0xff;
    o->kbits = qp ? bits_for(L->count[1] > 1 ? L->count[1] - 1 : 1) : 0;
    o->written = 0;
    if ((rc = smt_writer_set_params(o->w, par, sizeof *par, err)) ||
        (rc = (qp ? smt_vocab_builder_write_dense : smt_vocab_builder_write)(a->vocab, o->w,
                                                                             "vocab", err)))
        goto fail;
    smt_vocab_builder_free(a->vocab); /* written: the levels need the ids only */
    a->vocab = NULL;
    if ((rc = smt_writer_begin(o->w, "keys", err)) ||
        (rc = build_levels(a, L, o, progress, err)) ||
        (qp && (rc = bits_end(o, err))) || (rc = smt_writer_end(o->w, err)) ||
        (rc = glm_spill_rewind(&o->sp, err)) ||
        (rc = smt_writer_begin(o->w, "mid", err)) ||
        (rc = smt_writer_write(o->w, o->uni, (L->count[1] + 1) * sizeof *o->uni, err)))
        goto fail;
    if (qp) {
        if ((rc = smt_writer_end(o->w, err)) || (rc = write_quantized(L, o, qp, qb, err)))
            goto fail;
    } else {
        uint64_t mid_bytes = 0;
        for (unsigned k = 2; k < L->order; k++)
            mid_bytes += (L->count[k] + 1) * sizeof(glm_mid);
        if ((rc = copy_spilled(o, mid_bytes, err)) || (rc = smt_writer_end(o->w, err)) ||
            (rc = smt_writer_begin(o->w, "top", err)) ||
            (rc = copy_spilled(o, L->count[L->order] * sizeof(float), err)) ||
            (rc = smt_writer_end(o->w, err)))
            goto fail;
    }
    rc = smt_writer_finish(o->w, err);
    o->w = NULL;
    return rc;
fail:
    smt_writer_abort(o->w);
    o->w = NULL;
    return rc;
}

/* ---------------------------------------------------------------- KenLM probing output */

/* Writes the model read into KenLM's probing tables (a->pt) as KenLM's probing binary
 * (build_binary probing; the layout is described in glm_kenlm.c): format 5, model type 0, the
 * tables sized by mult from the declared counts (which the header holds, as KenLM's), glm's word
 * ids (ARPA order, <unk> 0: the numbering of KenLM's probing files), "extends left" already in
 * each probability's sign bit (glm_arpa.c), the words at the end. The same bytes as KenLM's for
 * the fixtures and the shared models (tests). */
static int write_probing(const char *out_path, glm_arpa *a, float mult, smt_err *err)
{
    unsigned N = a->order;
    smt_writer *w = NULL;
    int rc = smt_writer_open_foreign(&w, out_path, err);
    if (rc)
        return rc;
    /* the sanity header and the fixed parameters, the counts, padded to 8 bytes */
    uint8_t hdr[GLM_KENLM_SANITY_BYTES + GLM_KENLM_FIXED_BYTES + 8 * GLM_MAX_ORDER + 8] = {0};
    glm_kenlm_sanity(hdr);
    uint8_t *fx = hdr + GLM_KENLM_SANITY_BYTES;
    fx[0] = (uint8_t)N;
    memcpy(fx + 4, &mult, 4);
    /* model type 0 (probing) at fx + 8, search version 0 at fx + 16: the zeros already there */
    fx[12] = 1; /* has_vocabulary: the words follow the tables */
    /* KenLM counts the ARPA's unigrams: <unk>, when substituted, is the bound's extra word and
     * takes the unigrams' spare slot */
    uint64_t nuni = a->declared[1];
    for (unsigned n = 1; n <= N; n++)
        memcpy(fx + GLM_KENLM_FIXED_BYTES + 8 * (n - 1), &a->declared[n], 8);
    rc = smt_writer_write(w, hdr, (size_t)glm_kenlm_header_bytes(N), err);
    /* the vocabulary: {uint32 version 0, uint32 bound}, then its table */
    uint32_t vh[2] = {0, a->nvocab};
    if (!rc)
        rc = smt_writer_write(w, vh, 8, err);
    /* the vocabulary's table, the unigrams {prob, backoff} x (nuni + 1) in blocks, orders 2..N
     * ({key, prob, backoff}, 16 bytes; the highest {key, prob}, 12 bytes), the words in id order,
     * each NUL-terminated, <unk> first */
    if (!rc)
        rc = smt_writer_write(w, a->pt[1].tab, a->pt[1].t.buckets * a->pt[1].esz, err);
    float uni[2 * 1024];
    for (uint64_t i = 0; i <= nuni && !rc; i += 1024) {
        uint64_t b = nuni + 1 - i < 1024 ? nuni + 1 - i : 1024;
        for (uint64_t j = 0; j < b; j++) {
            /* the sign is already clear where the unigram extends; KenLM leaves the others as
             * read, so the "0" of <s> stays +0.0 (glm's reader gives -0.0) */
            float p = i + j < a->nvocab ? a->uprob[i + j] : 0.0f;
            uni[2 * j] = p == 0.0f ? 0.0f : p;
            uni[2 * j + 1] = i + j < a->nvocab ? a->ubo[i + j] : 0.0f;
        }
        rc = smt_writer_write(w, uni, 8 * b, err);
    }
    for (unsigned n = 2; n <= N && !rc; n++)
        rc = smt_writer_write(w, a->pt[n].tab, a->pt[n].t.buckets * a->pt[n].esz, err);
    if (!rc)
        rc = smt_writer_write(w, a->words, a->words_len, err);
    if (!rc)
        rc = smt_writer_finish(w, err);
    else
        smt_writer_abort(w);
    return rc;
}

/* What glm_build reports of a model written to out_path (either layout): par's order and counts. */
static void fill_stats(glm_build_stats *stats, const glm_params *par, int unk_added,
                       const char *out_path)
{
    memset(stats, 0, sizeof *stats);
    stats->order = par->order;
    for (unsigned k = 1; k <= par->order; k++) {
        stats->declared[k] = par->declared[k];
        stats->stored[k] = par->count[k];
    }
    stats->unk_added = unk_added;
    struct stat so;
    if (stat(out_path, &so) == 0)
        stats->file_size = (uint64_t)so.st_size;
}

/* What of -S each of a trie build's two users holds in memory at most (the sort's buffer, the
 * finished levels), past which it goes to the temporary files. */
#define TRIE_MEM_PART (16ull << 20)

/* A trie build's output state, its spill open in -T's folder (default: the output's), and for a
 * regular input file the sort on disk. -S (default: 80% of the physical memory, else 1 GiB, as
 * KenLM's build_binary) is shared: half of it, at most TRIE_MEM_PART, for each. */
static int open_out(trie_out **out, const glm_build_options *opt, const char *out_path,
                    smt_err *err)
{
    uint64_t limit = opt->sort_memory;
    if (!limit) {
        uint64_t phys = smt_phys_memory();
        limit = phys ? phys / 5 * 4 : 1ull << 30;
    }
    uint64_t level_mem = limit / 4;
    limit = limit / 2 < TRIE_MEM_PART ? limit / 2 : TRIE_MEM_PART;
    char *dir = NULL;
    if (!opt->temp_dir) {
        const char *slash = strrchr(out_path, '/');
        size_t n = slash ? (size_t)(slash - out_path) + (slash == out_path) : 1;
        if (!(dir = malloc(n + 1)))
            return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
        memcpy(dir, slash ? out_path : ".", n);
        dir[n] = '\0';
    }
    const char *tdir = opt->temp_dir ? opt->temp_dir : dir;
    trie_out *o = calloc(1, sizeof *o);
    int rc = o ? glm_spill_open(&o->sp, limit, tdir, err)
               : smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
    if (o)
        o->level_mem = level_mem;
    if (!rc && (rc = glm_ext_open(&o->ext, limit, tdir, err)))
        glm_spill_close(&o->sp);
    free(dir);
    if (rc) {
        free(o);
        return rc;
    }
    *out = o;
    return 0;
}

static void close_out(trie_out *o)
{
    if (!o)
        return;
    free(o->uni);
    glm_spill_close(&o->sp);
    glm_ext_close(&o->ext);
    free(o);
}

int glm_build(const char *arpa_path, const char *out_path, const glm_build_options *opt,
              glm_build_stats *stats, smt_err *err)
{
    glm_build_options def = {.K = GLM_DEFAULT_K, .progress = 0, .warn = NULL};
    if (!opt)
        opt = &def;
    uint32_t K = opt->K ? opt->K : GLM_DEFAULT_K;
    float mult = opt->probing_multiplier != 0.0f ? opt->probing_multiplier : 1.5f;
    if (opt->probing && (opt->prob_bits || opt->backoff_bits))
        return smt_err_set(err, SMT_ERR_ARG, "quantization is only implemented in the trie data "
                           "structure (KenLM's words), not in a probing binary");
    if (opt->probing && !(mult > 1.0f && mult <= 1000.0f))
        return smt_err_set(err, SMT_ERR_ARG, "probing multiplier %g: must be above 1 (KenLM's "
                           "tables need an empty bucket) and at most 1000", (double)mult);
    if (K < GLM_MIN_K || K > GLM_MAX_K)
        return smt_err_set(err, SMT_ERR_ARG, "B-tree node size K=%u outside %d..%d", K, GLM_MIN_K,
                           GLM_MAX_K);
    uint32_t qp = opt->prob_bits, qb = opt->backoff_bits;
    if ((qp || qb) && (qp < 1 || qp > GLM_MAX_QUANT_BITS || qb < 1 || qb > GLM_MAX_QUANT_BITS))
        return smt_err_set(err, SMT_ERR_ARG,
                           "quantization to %u probability and %u backoff bits: each must be "
                           "1..%d (KenLM's limits)",
                           qp, qb, GLM_MAX_QUANT_BITS);
    if (smt_same_file(arpa_path, out_path)) /* the model replaces out_path: never its ARPA file */
        return smt_err_set(err, SMT_ERR_ARG, "%s: the output is the input ARPA file; refusing to "
                           "overwrite it", out_path);
    trie_out *o = NULL; /* a trie's output: its spill's folder is tried before the input is read */
    int rc = opt->probing ? 0 : open_out(&o, opt, out_path, err);
    if (rc)
        return rc;
    glm_arpa a;
    float unk = opt->unk_given ? opt->unk_log10 : -100.0f;
    rc = glm_arpa_read(&a, arpa_path, opt->progress, opt->warn, unk, opt->positive_to_zero,
                       opt->probing ? mult : 0.0f, o ? &o->ext : NULL, err);
    if (rc) {
        close_out(o);
        return rc;
    }
    glm_params par; /* the stored counts, of either layout (the trie's build frees a's n-grams) */
    memset(&par, 0, sizeof par);
    par.order = a.order;
    par.K = K;
    par.count[1] = a.nvocab;
    for (unsigned k = 1; k <= a.order; k++) {
        par.declared[k] = a.declared[k];
        if (k >= 2)
            par.count[k] = opt->probing ? a.pt[k].count : a.ext->l[k].count;
    }
    if (opt->probing) {
        rc = write_probing(out_path, &a, mult, err);
        if (!rc && stats)
            fill_stats(stats, &par, a.unk_added, out_path);
        glm_arpa_free(&a);
        return rc;
    }
    par.bos = a.bos;
    par.eos = a.eos;
    par.unk_added = (uint32_t)a.unk_added;
    if (qp)
        par.quant = qp | qb << 8 | GLM_QUANT_PACKED;
    glm_layout L;
    glm_layout_setup(&L, a.order, K, par.count);
    rc = write_model(out_path, &a, &L, o, &par, opt->progress, err);
    if (!rc && stats) {
        fill_stats(stats, &par, a.unk_added, out_path);
        stats->temp_bytes = o->sp.spilled ? o->sp.total : 0;
    }
    close_out(o);
    glm_arpa_free(&a);
    return rc;
}
