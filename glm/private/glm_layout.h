/* glm_layout.h — the in-memory view of a gLM trie, the B-tree search and KenLM's state logic,
 * shared by the CPU paths and the CUDA kernel (`GLM_HD` functions compile as __host__ __device__
 * under nvcc, plain C otherwise). The bottom layer of glm: it calls nothing of glm's .c files, and
 * glm_batch.c and glm_model.c call it (never each other in a circle: ctest layering_fastsmt_glm).
 *
 * Arrays (all offsets relative, so the same bytes work mapped on the host and copied to a device):
 *   keys  uint32 (sum of counts 2..N): level k's keys at key_off[k]; entry i of level k is the
 *         n-gram whose reversed word sequence is (w, h1, .., h_{k-1}) and its key is h_{k-1}.
 *   mid   glm_mid (levels 1..N-1, each followed by one sentinel): level k at mid_off[k]; entry i's
 *         children are level k+1 entries [mid[i].child, mid[i+1].child). Level 1 is indexed by id.
 *   top   float (count N): probabilities of the highest order, parallel to its keys.
 * The children of one node are contiguous and form one B-tree (below); groups follow the order
 * of their parents, so a level is the breadth-first concatenation of its B-trees.
 *
 * B-tree of n keys with node size K (B = K-1 keys per node): depth d is the least with
 * K^d - 1 >= n. Levels 0..d-2 are full internal nodes (I = K^(d-1) - 1 keys), stored first in
 * breadth-first order: node j of level l holds keys [(F(l) + j) * B, +B) with F(l) = (K^l-1)/(K-1),
 * and its children are nodes j*K + c of level l+1. The L = K^(d-1) leaves share the remaining
 * m = n - I keys evenly: leaf i holds q + (i < r) keys from I + i*q + min(i, r), q = m / L,
 * r = m % L. No pointers inside a B-tree: its shape follows from n and K. */
#ifndef GLM_LAYOUT_H
#define GLM_LAYOUT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "glm.h"

#ifdef __CUDACC__
#define GLM_HD __host__ __device__
#else
#define GLM_HD
#endif
#define GLM_FI __attribute__((always_inline)) /* steps whose format q must fold to a constant */

/* A prefetch of the cache line holding p: the read an access pattern issues a step before it needs
 * it (nothing on the device, whose walks do not interleave). */
static inline GLM_HD void glm_prefetch(const void *p)
{
#ifdef __CUDA_ARCH__
    (void)p;
#else
    __builtin_prefetch(p);
#endif
}

#define GLM_BT_MAXD 24 /* 3^21 > 2^32: deep enough for any group with K >= 3 */

typedef struct glm_mid {
    float prob;
    float backoff; /* KenLM's encoding: -0.0 means "never a context" (state can drop it) */
    uint32_t child;
} glm_mid;

typedef struct glm_layout {
    const uint32_t *keys; /* float files: the keys as uint32 (NULL in a quantized file) */
    const glm_mid *mid; /* quantized files: the unigrams only */
    const float *top;   /* NULL in a quantized file */
    /* quantized files (qp != 0; build_binary's -q qp -b qb, KenLM's binning; the parameter
     * block's quant has GLM_QUANT_PACKED):
     * pkeys: the keys bit-packed, kbits bits each (enough for the largest word id): key i of
     *   level k at bit (key_off[k] + i) * kbits; 8 readable bytes follow.
     * qrec: levels 2..N are bit-packed records, level k's record i at bit qrec_off[k] + i *
     *   qrec_bits[k]:
     *   k < N: child delta (qchild_bits[k] bits), prob code (qp), backoff code (qb)
     *   k = N: prob code (qp)
     *   level k < N has count[k] + 1 records (the last is the sentinel holding only its child).
     *   Entry e's first child is qbase[qbase_off[k] + (e >> qshift[k])] + its delta: one uint32
     *   base per block of 2^qshift[k] records (the child of the block's first record), the
     *   delta the offset from it (the builder picks the block size that makes the level
     *   smallest; KenLM's -a chop, addressed without a search).
     * A code's value: qbins[qbin_off[k] + code] (prob), qbins[qbin_off[k] + 2^qp + code]
     * (backoff). qrec is followed by 8 readable bytes (glm_rd_bits reads 8 at a time). */
    const uint8_t *pkeys;
    const uint8_t *qrec;
    const float *qbins;
    const uint32_t *qbase;
    uint64_t qrec_off[GLM_MAX_ORDER + 1];
    uint64_t qbin_off[GLM_MAX_ORDER + 1];
    uint64_t qbase_off[GLM_MAX_ORDER + 1];
    uint32_t qrec_bits[GLM_MAX_ORDER + 1];
    uint32_t qchild_bits[GLM_MAX_ORDER + 1];
    uint32_t qshift[GLM_MAX_ORDER + 1];
    uint32_t qp, qb, kbits;
    /* section sizes of a quantized file (glm_layout_quant): bytes of pkeys and qrec (with their
     * 8 bytes of padding), floats of qbins, uint32 of qbase */
    uint64_t pkey_bytes, qrec_bytes, nqbins, nqbase;
    uint64_t key_off[GLM_MAX_ORDER + 1]; /* [k], k = 2..N */
    uint64_t mid_off[GLM_MAX_ORDER + 1]; /* [k], k = 1..N-1 */
    uint64_t count[GLM_MAX_ORDER + 1];   /* [k], k = 1..N */
    uint64_t kpow[GLM_BT_MAXD + 1];      /* K^d, saturated */
    uint64_t first[GLM_BT_MAXD + 1];     /* F(l) = (K^l - 1) / (K - 1) */
    uint32_t order, K, B;
    /* the levels' first entries, mid + mid_off[k] and keys + key_off[k] (float files; NULL where
     * a level has none), set by glm_layout_levels whenever mid or keys is set (on the host and
     * for the device) */
    const glm_mid *lmid[GLM_MAX_ORDER + 1];
    const uint32_t *lkeys[GLM_MAX_ORDER + 1];
} glm_layout;

/* Sets L's level pointers from its arrays (mid, keys) and shape (glm_layout_setup,
 * glm_layout_quant). */
static inline void glm_layout_levels(glm_layout *L)
{
    for (unsigned k = 1; k <= L->order && k <= GLM_MAX_ORDER; k++) {
        int mid = L->mid && (k == 1 || (k < L->order && !L->qp)); /* quantized: unigrams only */
        L->lmid[k] = mid ? L->mid + L->mid_off[k] : (const glm_mid *)0;
        L->lkeys[k] = k >= 2 && L->keys ? L->keys + L->key_off[k] : (const uint32_t *)0;
    }
}

/* KenLM's HasExtension: every backoff except -0.0 marks an n-gram that can be extended. */
static inline GLM_HD int glm_has_extension(float backoff)
{
    union { float f; uint32_t u; } v;
    v.f = backoff;
    return v.u != 0x80000000u;
}

/* ---- bit-packed fields: the one reader of glm's quantized records and of KenLM's bit-packed
 * tries (glm_kenlm.c). The bits [bit, bit + nbits) of base, little-endian, nbits + (bit & 7) <= 64;
 * reads the 8 bytes from base + bit / 8 (a writer leaves 8 bytes of padding after the last field).
 * On the device the 8 bytes are read one at a time (no unaligned loads there). */
static inline GLM_HD uint64_t glm_rd_bits(const uint8_t *base, uint64_t bit, uint64_t mask)
{
    const uint8_t *p = base + (bit >> 3);
    uint64_t v;
#ifdef __CUDA_ARCH__
    v = 0;
    for (int i = 0; i < 8; i++)
        v |= (uint64_t)p[i] << (8 * i);
#else
    memcpy(&v, p, 8);
#endif
    return (v >> (bit & 7)) & mask;
}

/* ---- B-tree shape and one step of a search (the cursor form lets callers interleave)
 * A group holds fewer than 2^32 keys (every count of a valid model is < 2^32 - 1), so the shape
 * arithmetic is 32-bit: K^(d-1) <= n, and every node index and key offset is below n (a 32-bit
 * division is several times cheaper than a 64-bit one, on a GPU much more). */

typedef struct glm_bt_cursor {
    uint32_t n, I, q, r, j;
    uint32_t d, l;
} glm_bt_cursor;

static inline GLM_HD void glm_bt_init(const glm_layout *L, glm_bt_cursor *c, uint64_t n)
{
    c->n = (uint32_t)n;
    c->l = 0;
    c->j = 0;
    if (n <= L->B) { /* one leaf: most groups; no division */
        c->d = 1;
        c->I = 0;
        c->q = (uint32_t)n;
        c->r = 0;
        return;
    }
    uint32_t d = 2;
    while (L->kpow[d] - 1 < n)
        d++;
    uint32_t leaves = (uint32_t)L->kpow[d - 1], m = (uint32_t)n - (leaves - 1);
    c->d = d;
    c->I = leaves - 1;
    c->q = m / leaves;
    c->r = m - c->q * leaves;
}

/* The current node's key range [*start, *start + *cnt) within the group. */
static inline GLM_HD void glm_bt_node(const glm_layout *L, const glm_bt_cursor *c, uint64_t *start,
                                      uint32_t *cnt)
{
    if (c->l + 1 < c->d) {
        *start = ((uint32_t)L->first[c->l] + c->j) * L->B;
        *cnt = L->B;
    } else {
        uint32_t j = c->j;
        *start = c->I + j * c->q + (j < c->r ? j : c->r);
        *cnt = c->q + (j < c->r);
    }
}

/* Given how many of the current node's keys are < x (less) and whether key[less] == x (hit):
 * returns the slot found (>= 0), -1 for a miss, or -2 when the cursor moved to a child node. */
static inline GLM_HD int64_t glm_bt_advance(const glm_layout *L, glm_bt_cursor *c, uint64_t start,
                                            uint32_t less, int hit)
{
    if (hit)
        return (int64_t)(start + less);
    if (c->l + 1 >= c->d)
        return -1;
    c->j = c->j * L->K + less;
    c->l++;
    return -2;
}

/* Number of keys < x among k[0..cnt) (sorted). Short runs: a branch-free linear count; full
 * nodes: a branch-free binary search (conditional moves; the node is already in cache, and this
 * compares log2(cnt) keys instead of cnt). */
static inline GLM_HD uint32_t glm_count_less(const uint32_t *k, uint32_t cnt, uint32_t x)
{
    if (cnt <= 8) {
        uint32_t less = 0;
        for (uint32_t i = 0; i < cnt; i++)
            less += k[i] < x;
        return less;
    }
    const uint32_t *base = k;
    uint32_t n = cnt;
    while (n > 1) {
        uint32_t half = n / 2;
        base = base[half] < x ? base + half : base;
        n -= half;
    }
    return (uint32_t)(base - k) + (*base < x);
}

/* Finds x among the n keys of a group: its slot, or -1. The plain, scalar search. */
static inline GLM_HD int64_t glm_bt_find(const glm_layout *L, const uint32_t *keys, uint64_t n,
                                         uint32_t x)
{
    if (n == 0)
        return -1;
    glm_bt_cursor c;
    glm_bt_init(L, &c, n);
    for (;;) {
        uint64_t start;
        uint32_t cnt;
        glm_bt_node(L, &c, &start, &cnt);
        uint32_t less = glm_count_less(keys + start, cnt, x);
        int hit = less < cnt && keys[start + less] == x;
        int64_t got = glm_bt_advance(L, &c, start, less, hit);
        if (got != -2)
            return got;
    }
}

/* ---- a level's keys: uint32 (float files) or bit-packed (quantized files), read through one
 * handle by every path (glm_keys_get) */

typedef struct glm_keys {
    const uint32_t *w; /* uint32 keys (bits == 0) */
    const uint8_t *p;  /* packed keys: key i at bit bit0 + i * bits */
    uint64_t bit0;
    uint32_t bits;
} glm_keys;

/* The keys of level k (2..N) from its entry i on. q is the file's format (L->qp != 0: a
 * quantized file, its keys packed), a constant where the caller is compiled once per format. */
static inline GLM_HD GLM_FI glm_keys glm_keys_at(const glm_layout *L, unsigned k, uint64_t i,
                                                 const int q)
{
    glm_keys r;
    r.bits = q ? L->kbits : 0;
    r.p = L->pkeys;
    r.w = q ? (const uint32_t *)0 : L->lkeys[k] + i;
    r.bit0 = q ? (L->key_off[k] + i) * L->kbits : 0;
    return r;
}

static inline GLM_HD glm_keys glm_keys_add(glm_keys r, uint64_t off)
{
    if (r.bits)
        r.bit0 += off * r.bits;
    else
        r.w += off;
    return r;
}

static inline GLM_HD uint32_t glm_keys_get(glm_keys r, uint64_t i)
{
    if (r.bits)
        return (uint32_t)glm_rd_bits(r.p, r.bit0 + i * r.bits, (1ull << r.bits) - 1);
    return r.w[i];
}

/* glm_count_less over packed keys: the branch-free binary search (log2(cnt) reads). */
static inline GLM_HD uint32_t glm_count_less_packed(glm_keys r, uint32_t cnt, uint32_t x)
{
    if (cnt == 0)
        return 0;
    uint64_t mask = (1ull << r.bits) - 1;
    uint32_t lo = 0, n = cnt;
    while (n > 1) {
        uint32_t half = n / 2;
        lo = glm_rd_bits(r.p, r.bit0 + (uint64_t)(lo + half) * r.bits, mask) < x ? lo + half : lo;
        n -= half;
    }
    return lo + (glm_rd_bits(r.p, r.bit0 + (uint64_t)lo * r.bits, mask) < x);
}

/* Finds x among the n keys of a group (its first key r): its slot, or -1. */
static inline GLM_HD int64_t glm_keys_find(const glm_layout *L, glm_keys r, uint64_t n,
                                           uint32_t x)
{
    if (!r.bits)
        return glm_bt_find(L, r.w, n, x);
    if (n == 0)
        return -1;
    glm_bt_cursor c;
    glm_bt_init(L, &c, n);
    for (;;) {
        uint64_t start;
        uint32_t cnt;
        glm_bt_node(L, &c, &start, &cnt);
        glm_keys nk = glm_keys_add(r, start);
        uint32_t less = glm_count_less_packed(nk, cnt, x);
        int hit = less < cnt && glm_keys_get(nk, less) == x;
        int64_t got = glm_bt_advance(L, &c, start, less, hit);
        if (got != -2)
            return got;
    }
}

/* The value of a quantization code: the center of its bin (KenLM's Bins::Decode). */
static inline GLM_HD float glm_qdecode(const float *bins, uint64_t code) { return bins[code]; }

/* ---- trie navigation */

/* Children of entry e of level k (1 <= k < order): first index at level k+1 and count. q: the
 * format, as glm_keys_at's. */
static inline GLM_HD GLM_FI void glm_children(const glm_layout *L, unsigned k, uint64_t e,
                                              uint64_t *first, uint64_t *n, const int q)
{
    if (k >= 2 && q) {
        uint64_t bit = L->qrec_off[k] + e * L->qrec_bits[k],
                 mask = (1ull << L->qchild_bits[k]) - 1;
        const uint32_t *base = L->qbase + L->qbase_off[k];
        uint32_t s = L->qshift[k];
        *first = base[e >> s] + glm_rd_bits(L->qrec, bit, mask);
        *n = base[(e + 1) >> s] + glm_rd_bits(L->qrec, bit + L->qrec_bits[k], mask) - *first;
        return;
    }
    const glm_mid *m = L->lmid[k] + e;
    *first = m[0].child;
    *n = (uint64_t)m[1].child - m[0].child;
}

/* The value of entry e of level k >= 2: its probability, and for k < order its backoff in *bo.
 * Every path (the reference walk, the fast CPU lanes, the CUDA kernels) reads values here. q: the
 * format, as glm_keys_at's. */
static inline GLM_HD GLM_FI float glm_value(const glm_layout *L, unsigned k, uint64_t e, float *bo,
                                            const int q)
{
    if (q) {
        uint64_t bit = L->qrec_off[k] + e * L->qrec_bits[k];
        const float *bins = L->qbins + L->qbin_off[k];
        if (k == L->order)
            return glm_qdecode(bins, glm_rd_bits(L->qrec, bit, (1ull << L->qp) - 1));
        bit += L->qchild_bits[k];
        *bo = glm_qdecode(bins + (1ull << L->qp),
                          glm_rd_bits(L->qrec, bit + L->qp, (1ull << L->qb) - 1));
        return glm_qdecode(bins, glm_rd_bits(L->qrec, bit, (1ull << L->qp) - 1));
    }
    if (k == L->order)
        return L->top[e];
    const glm_mid *m = L->lmid[k] + e;
    *bo = m->backoff;
    return m->prob;
}

/* glm_walk's cursor, the one level step of glm's trie: the match so far (entry e of level len) and
 * where its next level is searched (the n children of e from first; counts are < 2^32 - 1). Every
 * walk over the trie is made of it: glm_walk (the reference), the GPU kernels' dev_walk and
 * glm_batch.c's interleaved walks, which differ only in how a node of keys is searched and in
 * when they yield. A level is: glm_walk_children, a search among glm_walk_keys for the next word,
 * then glm_walk_enter at the slot found; an interleaved walk splits the entering into
 * glm_walk_take (the match moves on), glm_walk_issue (the reads of its value are started) and,
 * once those arrived, glm_walk_read. The format q (glm_keys_at) is a parameter of every step. */
typedef struct glm_walk_cur {
    uint32_t first, e, n; /* first and n apart: stored one by one, not packed into a vector */
    unsigned len;
} glm_walk_cur;

/* Starts c at the unigram w: returns its probability, its backoff to bo[0]. */
static inline GLM_HD GLM_FI float glm_walk_start(const glm_layout *L, glm_walk_cur *c, glm_word w,
                                                 float *bo)
{
    const glm_mid *u = L->lmid[1] + w;
    bo[0] = u->backoff;
    c->e = w;
    c->len = 1;
    return u->prob;
}

/* The children of c's match (below the highest order), among which the next word is searched; 0
 * when it has none. */
static inline GLM_HD GLM_FI int glm_walk_children(const glm_layout *L, glm_walk_cur *c,
                                                  const int q)
{
    uint64_t first, n;
    glm_children(L, c->len, c->e, &first, &n, q);
    c->first = (uint32_t)first;
    c->n = (uint32_t)n;
    return n != 0;
}

/* The keys of c's children. */
static inline GLM_HD GLM_FI glm_keys glm_walk_keys(const glm_layout *L, const glm_walk_cur *c,
                                                   const int q)
{
    return glm_keys_at(L, c->len + 1, c->first, q);
}

/* The match moves to the child found at slot (its value not read yet). */
static inline GLM_HD GLM_FI void glm_walk_take(glm_walk_cur *c, uint32_t slot)
{
    c->e = c->first + slot;
    c->len++;
}

/* Starts the reads glm_walk_start(L, c, w, bo) makes (prefetches). */
static inline GLM_HD GLM_FI void glm_walk_issue_start(const glm_layout *L, glm_word w)
{
    const glm_mid *m = L->lmid[1] + w;
    glm_prefetch(m);
    glm_prefetch((const char *)(m + 2) - 1); /* the next entry: the end of its child range */
}

/* Starts the reads of c's match that glm_walk_read and glm_walk_children make (prefetches), c
 * moved by glm_walk_take. */
static inline GLM_HD GLM_FI void glm_walk_issue(const glm_layout *L, const glm_walk_cur *c,
                                                const int q)
{
    unsigned k = c->len;
    if (q) { /* the record and the next one (the end of its child range) */
        uint64_t bit = L->qrec_off[k] + (uint64_t)c->e * L->qrec_bits[k];
        const uint8_t *r = L->qrec + (bit >> 3);
        glm_prefetch(r);
        glm_prefetch(r + (2 * L->qrec_bits[k] + 7) / 8);
        if (k < L->order) /* the base of its block of child offsets */
            glm_prefetch(L->qbase + L->qbase_off[k] + (c->e >> L->qshift[k]));
    } else if (k == L->order) {
        glm_prefetch(L->top + c->e);
    } else { /* the entry and the next one (the end of its child range) */
        const glm_mid *m = L->lmid[k] + c->e;
        glm_prefetch(m);
        glm_prefetch((const char *)(m + 2) - 1);
    }
}

/* The value of the match glm_walk_take moved to: its probability, its backoff to bo[len - 1]
 * (below the highest order). */
static inline GLM_HD GLM_FI float glm_walk_read(const glm_layout *L, const glm_walk_cur *c,
                                                float *bo, const int q)
{
    return glm_value(L, c->len, c->e, &bo[c->len - 1], q); /* every path's decode */
}

/* glm_walk_take and glm_walk_read at once. */
static inline GLM_HD GLM_FI float glm_walk_enter(const glm_layout *L, glm_walk_cur *c,
                                                 uint32_t slot, float *bo, const int q)
{
    glm_walk_take(c, slot);
    return glm_walk_read(L, c, bo, q);
}

/* The walk every score is made of: from word w (level 1) through hist[0..nh) (the previous words,
 * most recent first) as deep as the trie goes. Returns the matched length len (>= 1); prob gets
 * the probability of the longest match and bo[i] (i < min(len, order-1)) the backoff of the
 * matched n-gram of length i+1. */
static inline GLM_HD unsigned glm_walk(const glm_layout *L, glm_word w, const glm_word *hist,
                                       unsigned nh, float *prob, float *bo)
{
    const int q = L->qp != 0;
    unsigned lim = nh < L->order - 1 ? nh : L->order - 1; /* the deepest match's length - 1 */
    glm_walk_cur c;
    *prob = glm_walk_start(L, &c, w, bo);
    while (c.len <= lim && glm_walk_children(L, &c, q)) {
        int64_t slot = glm_keys_find(L, glm_walk_keys(L, &c, q), c.n, hist[c.len - 1]);
        if (slot < 0)
            break;
        *prob = glm_walk_enter(L, &c, (uint32_t)slot, bo, q);
    }
    return c.len;
}

/* ---- KenLM's state logic: one copy, used by glm_model.c (the public score), glm_batch.c (the
 * reference and the lanes) and the CUDA kernels. */

/* The state a sentence starts from: after "<s>" (KenLM's BeginSentenceState: length 1, the
 * unigram's backoff), or the empty state (NullContextState) when null_context. */
static inline GLM_HD void glm_state_start(const glm_layout *L, glm_word bos, int null_context,
                                          glm_state *s)
{
    memset(s, 0, sizeof *s);
    if (null_context)
        return;
    s->length = 1;
    s->words[0] = bos;
    s->backoff[0] = L->lmid[1][bos].backoff;
}

/* The two halves of KenLM's FullScore after a walk of length len from state in, shared by
 * glm_finish and glm_finish_backoffs: the match's probability plus the in-state backoffs of every
 * context at least as long as the match, shortest first (float, in KenLM's order); and the new
 * state's length, the deepest context (of the walk's backoffs bo, at most order - 1) that can be
 * extended. */
static inline GLM_HD float glm_add_backoffs(const glm_state *in, unsigned len, float prob)
{
    for (unsigned j = len - 1; j < in->length; j++)
        prob += in->backoff[j];
    return prob;
}
static inline GLM_HD unsigned glm_extending_length(unsigned order, unsigned len, const float *bo)
{
    unsigned nl = len < order ? len : order - 1;
    while (nl > 0 && !glm_has_extension(bo[nl - 1]))
        nl--;
    return nl;
}

/* KenLM's FullScore from a completed walk (above). The new state keeps the words up to the
 * deepest n-gram that can be extended; its unused entries are zero (bytewise-comparable). */
static inline GLM_HD float glm_finish(const glm_layout *L, const glm_state *in, glm_word w,
                                      unsigned len, float prob, const float *bo, glm_state *out)
{
    prob = glm_add_backoffs(in, len, prob);
    unsigned n = glm_extending_length(L->order, len, bo);
    /* every entry written (zero past the length), from the last down: out may be in */
    for (unsigned i = GLM_MAX_ORDER - 2; i > 0; i--) {
        out->words[i] = i < n ? in->words[i - 1] : 0;
        out->backoff[i] = i < n ? bo[i] : 0.0f;
    }
    out->words[0] = w;
    out->backoff[0] = n ? bo[0] : 0.0f;
    memset(&out->length, 0, sizeof *out - offsetof(glm_state, length)); /* with the padding */
    out->length = (uint8_t)n;
    return prob;
}

/* glm_finish in place for the sentence paths, without the words: the match's probability plus
 * the state's backoffs of the contexts at least as long as the match (KenLM's order), then the new
 * state's backoffs and length. The words are the caller's (the sentence paths walk from the text,
 * so they need none, or shift them in themselves). Entries past the state's length are left
 * stale (bo's included, up to GLM_MAX_ORDER - 1 of them are copied): only glm_state values handed
 * out must be kept clean. */
static inline float glm_finish_backoffs(unsigned order, glm_state *st, unsigned len, float prob,
                                        const float *bo)
{
    prob = glm_add_backoffs(st, len, prob);
    st->length = (uint8_t)glm_extending_length(order, len, bo);
    memcpy(st->backoff, bo, sizeof st->backoff);
    return prob;
}

/* The reference score of w after state in: glm_walk, then glm_finish. */
static inline GLM_HD float glm_score_walk(const glm_layout *L, const glm_state *in, glm_word w,
                                          glm_state *out, unsigned *ngram_length)
{
    float prob, bo[GLM_MAX_ORDER];
    unsigned len = glm_walk(L, w, in->words, in->length, &prob, bo);
    if (ngram_length)
        *ngram_length = len;
    return glm_finish(L, in, w, len, prob, bo, out);
}

/* ---- rows: an n-gram (order words, oldest first, GLM_NONE-padded in front) scored without state */

/* The context of a row (most recent first) and its length; -1 when an id is not below nvocab. */
static inline GLM_HD int glm_row_context(unsigned order, uint32_t nvocab, const glm_word *row,
                                         glm_word *hist)
{
    unsigned nh = 0;
    for (int i = (int)order - 2; i >= 0 && row[i] != GLM_NONE; i--) {
        if (row[i] >= nvocab)
            return -1;
        hist[nh++] = row[i];
    }
    return row[order - 1] < nvocab ? (int)nh : -1;
}

/* prob of row given its walk A (w, hist) and context walk B (hist[0], hist+1): the state-free
 * form of KenLM's FullScore (a context's backoff is added when it is at least as long as the
 * match; absent contexts add nothing). */
static inline GLM_HD float glm_row_combine(unsigned lenA, float prob, unsigned lenB,
                                           const float *boB)
{
    for (unsigned j = lenA - 1; j < lenB; j++)
        prob += boB[j];
    return prob;
}

/* The reference score of a row whose context hist[0..nh) glm_row_context gave: the two walks
 * combined. The matched length in *len. */
static inline GLM_HD float glm_row_walk(const glm_layout *L, const glm_word *row,
                                        const glm_word *hist, unsigned nh, unsigned *len)
{
    float pa, pb, boA[GLM_MAX_ORDER], boB[GLM_MAX_ORDER];
    unsigned la = glm_walk(L, row[L->order - 1], hist, nh, &pa, boA), lb = 0;
    if (nh > 0)
        lb = glm_walk(L, hist[0], hist + 1, nh - 1, &pb, boB);
    *len = la;
    return glm_row_combine(la, pa, lb, boB);
}

#endif
