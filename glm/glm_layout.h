/* glm_layout.h — the in-memory view of a gLM trie and the B-tree search, shared by the CPU paths and
 * the CUDA kernel (`GLM_HD` functions compile as __host__ __device__ under nvcc, plain C otherwise).
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

#include <stdint.h>

#include "glm.h"

#ifdef __CUDACC__
#define GLM_HD __host__ __device__
#else
#define GLM_HD
#endif

#define GLM_BT_MAXD 24 /* 3^21 > 2^32: deep enough for any group with K >= 3 */

typedef struct glm_mid {
    float prob;
    float backoff; /* KenLM's encoding: -0.0 means "never a context" (state can drop it) */
    uint32_t child;
} glm_mid;

typedef struct glm_layout {
    const uint32_t *keys;
    const glm_mid *mid;
    const float *top;
    uint64_t key_off[GLM_MAX_ORDER + 1]; /* [k], k = 2..N */
    uint64_t mid_off[GLM_MAX_ORDER + 1]; /* [k], k = 1..N-1 */
    uint64_t count[GLM_MAX_ORDER + 1];   /* [k], k = 1..N */
    uint64_t kpow[GLM_BT_MAXD + 1];      /* K^d, saturated */
    uint64_t first[GLM_BT_MAXD + 1];     /* F(l) = (K^l - 1) / (K - 1) */
    uint32_t order, K, B;
} glm_layout;

/* KenLM's HasExtension: every backoff except -0.0 marks an n-gram that can be extended. */
static inline GLM_HD int glm_has_extension(float backoff)
{
    union { float f; uint32_t u; } v;
    v.f = backoff;
    return v.u != 0x80000000u;
}

/* ---- B-tree shape and one step of a search (the cursor form lets callers interleave)
 * A group holds fewer than 2^32 keys (every count of a valid model is < 2^32 - 1), so the shape
 * arithmetic is 32-bit: K^(d-1) <= n, and every node index and key offset is below n (a 32-bit
 * division is several times cheaper than a 64-bit one, on a GPU much more). */

typedef struct glm_bt_cursor {
    const uint32_t *keys; /* the group's first key */
    uint32_t n, I, q, r, j;
    uint32_t d, l;
} glm_bt_cursor;

static inline GLM_HD void glm_bt_init(const glm_layout *L, glm_bt_cursor *c, const uint32_t *keys,
                                      uint64_t n)
{
    c->keys = keys;
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
                                            uint32_t cnt, uint32_t less, int hit)
{
    if (hit)
        return (int64_t)(start + less);
    if (c->l + 1 >= c->d)
        return -1;
    (void)cnt;
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
    glm_bt_init(L, &c, keys, n);
    for (;;) {
        uint64_t start;
        uint32_t cnt;
        glm_bt_node(L, &c, &start, &cnt);
        uint32_t less = glm_count_less(keys + start, cnt, x);
        int hit = less < cnt && keys[start + less] == x;
        int64_t got = glm_bt_advance(L, &c, start, cnt, less, hit);
        if (got != -2)
            return got;
    }
}

/* ---- trie navigation */

/* Children of entry e of level k (1 <= k < order): first index at level k+1 and count. */
static inline GLM_HD void glm_children(const glm_layout *L, unsigned k, uint64_t e,
                                       uint64_t *first, uint64_t *n)
{
    const glm_mid *m = L->mid + L->mid_off[k] + e;
    *first = m[0].child;
    *n = (uint64_t)m[1].child - m[0].child;
}

/* The walk every score is made of: from word w (level 1) through hist[0..nh) (the previous words,
 * most recent first) as deep as the trie goes. Returns the matched length len (>= 1); prob gets
 * the probability of the longest match and bo[i] (i < min(len, order-1)) the backoff of the
 * matched n-gram of length i+1. */
static inline GLM_HD unsigned glm_walk(const glm_layout *L, glm_word w, const glm_word *hist,
                                       unsigned nh, float *prob, float *bo)
{
    const glm_mid *u = L->mid + L->mid_off[1] + w;
    *prob = u->prob;
    bo[0] = u->backoff;
    unsigned len = 1;
    uint64_t e = w;
    while (len <= nh && len < L->order) {
        uint64_t first, n;
        glm_children(L, len, e, &first, &n);
        const uint32_t *keys = L->keys + L->key_off[len + 1] + first;
        int64_t slot = glm_bt_find(L, keys, n, hist[len - 1]);
        if (slot < 0)
            break;
        e = first + (uint64_t)slot;
        len++;
        if (len == L->order) {
            *prob = L->top[e];
        } else {
            const glm_mid *m = L->mid + L->mid_off[len] + e;
            *prob = m->prob;
            bo[len - 1] = m->backoff;
        }
    }
    return len;
}

#endif
