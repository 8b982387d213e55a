/* glm_build.c — from the parsed ARPA n-grams to a model file: the gLM trie (.glm, optionally
 * quantized) or KenLM's probing binary (glm build probing).
 *
 * The trie is made level by level (k = 2..N): each n-gram's parent is its suffix of order k-1
 * (already placed, its final position known), so sorting level k by (parent position, key) groups
 * every node's children in their parent's order, sorted by key; each group is then permuted into
 * its B-tree's breadth-first order. Inputs of level k-1 are freed once level k no longer needs
 * them, keeping the peak near the parsed input plus the output. */
#define _POSIX_C_SOURCE 200809L /* stat */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "glm_internal.h"
#include "glm_kenlm.h"
#include "smt_file.h"
#include "smt_io.h"
#include "smt_progress.h"

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

/* ------------------------------------------------------------------ sorting a level */

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* How far a pass over records looks ahead (a suffix lookup, a table fill): its random reads
 * start this many records early. */
#define BUILD_AHEAD 16

/* Sorts the records of level k by (parent final position, key): order[i] = record index;
 * ppos[rec] = the final position of the record's parent. A counting sort by parent (no copy of
 * the records: the build's peak memory is the parsed n-grams plus the output), then each group by
 * key: insertion sort when small, else through a buffer of (key, record) pairs. */
static int sort_level(const glm_arpa *a, unsigned k, const uint32_t *parent_pos, uint64_t np,
                      uint32_t *order, uint32_t *ppos, smt_err *err)
{
    const glm_ostore *s = &a->o[k];
    const glm_ostore *ps = k > 2 ? &a->o[k - 1] : NULL;
    uint64_t n = s->count;
    uint32_t *cnt = calloc(np + 1, sizeof *cnt);
    if (!cnt)
        return smt_err_set(err, SMT_ERR_NOMEM, "out of memory sorting %u-grams", k);
    for (uint64_t i = 0; i < n; i++) {
        const uint32_t *ids = s->ids + i * k;
        if (k > 2 && i + BUILD_AHEAD < n)
            glm_ostore_prefetch(ps, ids + BUILD_AHEAD * k);
        int64_t p = k > 2 ? glm_ostore_find(ps, ids) : (int64_t)ids[0];
        if (p < 0) { /* cannot happen: every suffix was stored (insert_suffixes) */
            free(cnt);
            return smt_err_set(err, SMT_ERR_PARSE, "internal: %u-gram without its suffix", k);
        }
        ppos[i] = parent_pos[p];
        cnt[ppos[i] + 1]++;
    }
    for (uint64_t p = 0; p < np; p++)
        cnt[p + 1] += cnt[p];
    for (uint64_t i = 0; i < n; i++)
        order[cnt[ppos[i]]++] = (uint32_t)i; /* now cnt[p] is the end of group p */
    uint64_t *buf = NULL, bufcap = 0, start = 0;
    const uint32_t *ids = s->ids;
#define KEY(rec) ids[(uint64_t)(rec) * k + k - 1]
    for (uint64_t p = 0; p < np; start = cnt[p++]) {
        uint64_t g = cnt[p] - start;
        uint32_t *o = order + start;
        if (g <= 24) {
            for (uint64_t i = 1; i < g; i++) {
                uint32_t r = o[i], key = KEY(r);
                uint64_t j = i;
                for (; j > 0 && KEY(o[j - 1]) > key; j--)
                    o[j] = o[j - 1];
                o[j] = r;
            }
            continue;
        }
        if (g > bufcap) {
            free(buf);
            bufcap = g;
            if (!(buf = malloc(g * sizeof *buf))) {
                free(cnt);
                return smt_err_set(err, SMT_ERR_NOMEM, "out of memory sorting %u-grams", k);
            }
        }
        for (uint64_t i = 0; i < g; i++)
            buf[i] = (uint64_t)KEY(o[i]) << 32 | o[i];
        qsort(buf, g, sizeof *buf, cmp_u64);
        for (uint64_t i = 0; i < g; i++)
            o[i] = (uint32_t)buf[i];
    }
#undef KEY
    free(buf);
    free(cnt);
    return 0;
}

/* ------------------------------------------------------------------ the build */

typedef struct out_arrays {
    uint32_t *keys;
    glm_mid *mid;
    float *top;
    uint8_t *qrec; /* quantized files (quantize) */
    float *qbins;
    uint8_t *pkeys;
    uint32_t *qbase;
    uint32_t qshape[GLM_QSHAPE_N];
} out_arrays;

static int build_trie(glm_arpa *a, const glm_layout *L, out_arrays *o, int progress, smt_err *err)
{
    unsigned N = a->order;
    uint64_t total_keys = 0, total_mid = 0;
    for (unsigned k = 2; k <= N; k++)
        total_keys += L->count[k];
    for (unsigned k = 1; k < N; k++)
        total_mid += L->count[k] + 1;
    o->keys = malloc(total_keys * sizeof *o->keys + 4);
    o->mid = malloc(total_mid * sizeof *o->mid);
    o->top = malloc(L->count[N] * sizeof *o->top + 4);
    uint32_t *pos = malloc(a->nvocab * sizeof *pos); /* final position of each record, level k-1 */
    if (!o->keys || !o->mid || !o->top || !pos)
        goto nomem;
    glm_mid *uni = o->mid + L->mid_off[1];
    for (uint32_t w = 0; w < a->nvocab; w++) {
        uni[w] = (glm_mid){a->uprob[w], a->ubo[w], 0};
        pos[w] = w;
    }
    uni[a->nvocab] = (glm_mid){0.0f, 0.0f, 0};
    /* the meter counts the bytes of the trie filled in (unigrams first, then level by level) */
    uint64_t out_bytes = total_keys * sizeof *o->keys + total_mid * sizeof *o->mid +
                         L->count[N] * sizeof *o->top,
             done_bytes = (L->count[1] + 1) * sizeof *o->mid;
    smt_progress prog;
    smt_progress_init(&prog, "building trie", out_bytes, progress);
    for (unsigned k = 2; k <= N; k++) {
        glm_ostore *s = &a->o[k];
        uint64_t n = s->count, np = L->count[k - 1];
        uint32_t *order = malloc(n * sizeof *order + 4);
        uint32_t *ppos = malloc(n * sizeof *ppos + 4);
        uint32_t *newpos = malloc(n * sizeof *newpos + 4);
        uint32_t *perm = NULL;
        int rc = 0;
        glm_mid *pmid = o->mid + L->mid_off[k - 1];
        uint32_t *keys = o->keys + L->key_off[k];
        glm_mid *kmid = k < N ? o->mid + L->mid_off[k] : NULL;
        uint64_t entry_bytes = sizeof *keys + (k < N ? sizeof *kmid : sizeof *o->top);
        if (!order || !ppos || !newpos) {
            rc = smt_err_set(err, SMT_ERR_NOMEM, "out of memory building the trie");
            goto level_out;
        }
        if ((rc = sort_level(a, k, pos, np, order, ppos, err)))
            goto level_out;
        if (k > 2) /* the parent level's lookups are done: free its inputs */
            glm_ostore_free(&a->o[k - 1]);
        uint64_t permcap = 0, i = 0, cursor = 0;
        for (uint64_t p = 0; p < np; p++) {
            pmid[p].child = (uint32_t)cursor;
            uint64_t g0 = i;
            while (i < n && ppos[order[i]] == p) {
                if (i > g0 && s->ids[(uint64_t)order[i] * k + k - 1] ==
                                  s->ids[(uint64_t)order[i - 1] * k + k - 1]) {
                    rc = smt_err_set(err, SMT_ERR_PARSE, "duplicate %u-gram in the ARPA file", k);
                    goto level_out;
                }
                i++;
            }
            uint64_t g = i - g0;
            if (g == 0)
                continue;
            if (g > permcap) {
                free(perm);
                permcap = g;
                if (!(perm = malloc(g * sizeof *perm))) {
                    rc = smt_err_set(err, SMT_ERR_NOMEM, "out of memory building the trie");
                    goto level_out;
                }
            }
            glm_bt_order(L, g, perm);
            for (uint64_t slot = 0; slot < g; slot++) {
                uint32_t rec = order[g0 + perm[slot]];
                uint64_t at = cursor + slot;
                keys[at] = s->ids[(uint64_t)rec * k + k - 1];
                if (k < N)
                    kmid[at] = (glm_mid){s->prob[rec], s->bo[rec], 0};
                else
                    o->top[at] = s->prob[rec];
                newpos[rec] = (uint32_t)at;
            }
            cursor += g;
            smt_progress_update(&prog, done_bytes + cursor * entry_bytes);
        }
        if (cursor != n)
            rc = smt_err_set(err, SMT_ERR_PARSE, "internal: %u-gram groups cover %llu of %llu", k,
                             (unsigned long long)cursor, (unsigned long long)n);
    level_out:
        free(perm);
        free(order);
        free(ppos);
        free(pos);
        pos = newpos;
        if (rc) {
            free(pos);
            return rc;
        }
        pmid[np].child = (uint32_t)n;
        if (k < N)
            kmid[n] = (glm_mid){0.0f, 0.0f, 0};
        done_bytes += n * entry_bytes + (k < N ? sizeof *kmid : 0);
        smt_progress_update(&prog, done_bytes);
    }
    smt_progress_finish(&prog, done_bytes);
    free(pos);
    return 0;
nomem:
    free(pos);
    return smt_err_set(err, SMT_ERR_NOMEM, "out of memory building the trie");
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

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

static void make_bins(float *v, uint64_t n, float *centers, uint64_t bins)
{
    qsort(v, n, sizeof *v, cmp_float);
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

static void wr_bits(uint8_t *base, uint64_t bit, uint64_t v, uint32_t nbits)
{
    for (uint32_t i = 0; i < nbits; i++, bit++)
        if ((v >> i) & 1)
            base[bit >> 3] |= (uint8_t)(1u << (bit & 7));
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

/* The quantized sections from the arrays build_trie made: o->pkeys (the keys bit-packed),
 * o->qrec, o->qbins, o->qbase and o->qshape. */
static int quantize(glm_layout *L, out_arrays *o, uint32_t qp, uint32_t qb, smt_err *err)
{
    unsigned N = L->order;
    uint64_t most = 0;
    memset(o->qshape, 0, sizeof o->qshape);
    for (unsigned k = 2; k < N; k++)
        o->qshape[k] = child_shape(o->mid + L->mid_off[k], L->count[k]);
    if (glm_layout_quant(L, qp, qb, o->qshape))
        return smt_err_set(err, SMT_ERR_ARG, "internal: a child shape out of range");
    for (unsigned k = 2; k <= N; k++)
        most = L->count[k] > most ? L->count[k] : most;
    o->qrec = calloc(L->qrec_bytes, 1);
    o->qbins = malloc(L->nqbins * sizeof *o->qbins);
    o->pkeys = calloc(L->pkey_bytes, 1);
    o->qbase = malloc(L->nqbase * sizeof *o->qbase + 4);
    float *v = malloc(most * sizeof *v + 4);
    if (!o->qrec || !o->qbins || !o->pkeys || !o->qbase || !v) {
        free(v);
        return smt_err_set(err, SMT_ERR_NOMEM, "out of memory quantizing the model");
    }
    uint64_t np = 1ull << qp, nb = 1ull << qb;
    for (unsigned k = 2; k <= N; k++) {
        uint64_t n = L->count[k];
        float *pbins = o->qbins + L->qbin_off[k], *bbins = pbins + np;
        const glm_mid *mid = k < N ? o->mid + L->mid_off[k] : NULL;
        for (uint64_t i = 0; i < n; i++)
            v[i] = k < N ? mid[i].prob : o->top[i];
        make_bins(v, n, pbins, np);
        if (k < N) {
            uint64_t nz = 0;
            for (uint64_t i = 0; i < n; i++)
                if (mid[i].backoff != 0.0f)
                    v[nz++] = mid[i].backoff;
            if (nz && nb <= 2) {
                free(v);
                return smt_err_set(err, SMT_ERR_ARG,
                                   "-b %u leaves no bin for the %llu non-zero backoffs of order %u "
                                   "(2 codes stand for 0 and -0): give -b 2 or more",
                                   qb, (unsigned long long)nz, k);
            }
            bbins[0] = -0.0f; /* KenLM's kNoExtensionBackoff, then kExtensionBackoff */
            bbins[1] = 0.0f;
            make_bins(v, nz, bbins + 2, nb - 2);
        }
        for (uint64_t i = 0; i < n; i++)
            wr_bits(o->pkeys, (L->key_off[k] + i) * L->kbits, o->keys[L->key_off[k] + i],
                    L->kbits);
        uint64_t bit = L->qrec_off[k];
        uint32_t cb = k < N ? L->qchild_bits[k] : 0, sh = L->qshift[k];
        uint32_t *base = o->qbase + L->qbase_off[k];
        if (k < N)
            for (uint64_t i = 0; i <= n; i += 1ull << sh)
                base[i >> sh] = mid[i].child;
        for (uint64_t i = 0; i < n; i++, bit += L->qrec_bits[k]) {
            if (k < N) {
                wr_bits(o->qrec, bit, mid[i].child - base[i >> sh], cb);
                wr_bits(o->qrec, bit + cb, encode(pbins, np, 0, mid[i].prob), qp);
                wr_bits(o->qrec, bit + cb + qp, encode_backoff(bbins, nb, mid[i].backoff), qb);
            } else {
                wr_bits(o->qrec, bit, encode(pbins, np, 0, o->top[i]), qp);
            }
        }
        if (k < N) /* the sentinel: its child only */
            wr_bits(o->qrec, bit, mid[n].child - base[n >> sh], cb);
    }
    free(v);
    return 0;
}

static int write_model(const char *out_path, const glm_arpa *a, const glm_layout *L,
                       const out_arrays *o, glm_params *par, smt_err *err)
{
    smt_writer *w;
    int rc = smt_writer_open(&w, out_path, GLM_KIND, GLM_KIND_VERSION, err);
    if (rc)
        return rc;
    uint64_t total_keys = 0, total_mid = glm_layout_nmid(L);
    for (unsigned k = 2; k <= L->order; k++)
        total_keys += L->count[k];
    if ((rc = smt_writer_set_params(w, par, sizeof *par, err)) ||
        (rc = (L->qp ? smt_vocab_builder_write_dense : smt_vocab_builder_write)(a->vocab, w,
                                                                                "vocab", err)) ||
        (L->qp ? (rc = smt_writer_section(w, "keys", o->pkeys, L->pkey_bytes, err))
               : (rc = smt_writer_section(w, "keys", o->keys, total_keys * sizeof *o->keys,
                                          err))) ||
        (rc = smt_writer_section(w, "mid", o->mid, total_mid * sizeof *o->mid, err)) ||
        (L->qp ? (rc = smt_writer_section(w, "qrec", o->qrec, L->qrec_bytes, err)) ||
                     (rc = smt_writer_section(w, "qbins", o->qbins, L->nqbins * sizeof *o->qbins,
                                              err)) ||
                     (rc = smt_writer_section(w, "qbase", o->qbase,
                                              L->nqbase * sizeof *o->qbase, err)) ||
                     (rc = smt_writer_section(w, "qshape", o->qshape, sizeof o->qshape, err))
               : (rc = smt_writer_section(w, "top", o->top,
                                          L->count[L->order] * sizeof *o->top, err)))) {
        smt_writer_abort(w);
        return rc;
    }
    return smt_writer_finish(w, err);
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
    for (unsigned n = 1; n <= N && !rc; n++) {
        rc = smt_writer_write(w, a->pt[n].tab, a->pt[n].t.buckets * a->pt[n].esz, err);
        float uni[2 * 1024];
        for (uint64_t i = 0; n == 1 && i <= nuni && !rc; i += 1024) {
            uint64_t b = nuni + 1 - i < 1024 ? nuni + 1 - i : 1024;
            for (uint64_t j = 0; j < b; j++) {
                /* the sign is already clear where the unigram extends; KenLM leaves the others
                 * as read, so the "0" of <s> stays +0.0 (glm's reader gives -0.0) */
                float p = i + j < a->nvocab ? a->uprob[i + j] : 0.0f;
                uni[2 * j] = p == 0.0f ? 0.0f : p;
                uni[2 * j + 1] = i + j < a->nvocab ? a->ubo[i + j] : 0.0f;
            }
            rc = smt_writer_write(w, uni, 8 * b, err);
        }
    }
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
    glm_arpa a;
    int rc = glm_arpa_read(&a, arpa_path, opt->progress, opt->warn,
                           opt->unk_given ? opt->unk_log10 : -100.0f, opt->positive_to_zero,
                           opt->probing ? mult : 0.0f, err);
    if (rc)
        return rc;
    glm_params par; /* the stored counts, of either layout (the trie's build frees a's n-grams) */
    memset(&par, 0, sizeof par);
    par.order = a.order;
    par.K = K;
    par.count[1] = a.nvocab;
    for (unsigned k = 1; k <= a.order; k++) {
        par.declared[k] = a.declared[k];
        if (k >= 2)
            par.count[k] = opt->probing ? a.pt[k].count : a.o[k].count;
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
    glm_layout L;
    glm_layout_setup(&L, a.order, K, par.count);
    out_arrays o = {0};
    rc = build_trie(&a, &L, &o, opt->progress, err);
    if (!rc && qp) {
        par.quant = qp | qb << 8 | GLM_QUANT_PACKED;
        rc = quantize(&L, &o, qp, qb, err);
    }
    if (!rc)
        rc = write_model(out_path, &a, &L, &o, &par, err);
    if (!rc && stats)
        fill_stats(stats, &par, a.unk_added, out_path);
    free(o.keys);
    free(o.mid);
    free(o.top);
    free(o.qrec);
    free(o.qbins);
    free(o.pkeys);
    free(o.qbase);
    glm_arpa_free(&a);
    return rc;
}
