/* glm_batch.c — the fast CPU paths: many independent walks advanced in lock-step (rows: 16 lanes;
 * states: 16 lanes, or level-synchronous chunks from 64 queries on;
 * sentences: level-synchronous chunks, see sentences_levelsync), each lane
 * prefetching the next node it needs before the driver moves on to the other lanes, so that the
 * memory latency of one lane's B-tree step overlaps with the work of the others (AMAC-style).
 * Each lane does exactly what glm_walk does, in the same order, so the floats are identical; only
 * the way a node is searched differs (SSE2 counts of keys < x, 4 at a time, instead of a binary
 * search: same count, fewer dependent loads). */
#include <stdlib.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#define GLM_SIMD 1
#endif

#include "glm_internal.h"
#include "glm_kenlm.h"
#include "smt_threads.h"

#define LANES 16 /* walks in flight per lock-step driver (rows, small batches of states) */

/* ---------------------------------------------------------------- the fast view of a layout */

/* Absolute level pointers and 32-bit shape tables (every count of a valid model is < 2^32 - 1). */
typedef struct glm_fast fast_layout;
struct glm_fast {
    const uint32_t *keys[GLM_MAX_ORDER + 1]; /* [k], k = 2..N */
    const glm_mid *mid[GLM_MAX_ORDER + 1];   /* [k], k = 1..N-1 */
    const float *top;
    const glm_layout *L; /* the model's layout: a quantized file's values are read through it */
    const uint8_t *qrec; /* quantized: the records (NULL otherwise) */
    const uint8_t *pk;   /* quantized: the bit-packed keys, kbits each (glm_layout.h) */
    uint64_t koff[GLM_MAX_ORDER + 1]; /* [k]: level k's first key (L->key_off) */
    uint32_t kbits;                   /* 0: uint32 keys (keys[]) */
    const glm_hslot *hs[GLM_MAX_ORDER + 1]; /* the big-group index (GLM_OPEN_INDEX) */
    uint32_t hn[GLM_MAX_ORDER + 1];
    uint32_t hmin; /* groups of at least hmin keys are indexed (UINT32_MAX: none) */
    /* nodes of more keys than this are binary-searched, smaller ones counted with SSE2: with the
     * index the B-trees left are small and the binary search's fewer instructions win; without it
     * the deep trees' dependent loads make SSE2 counts faster (docs/glm.md, "Speed") */
    uint32_t bs_over;
    uint64_t kpow[GLM_BT_MAXD + 1];
    uint64_t first[GLM_BT_MAXD + 1];
    uint32_t order, K, B;
};

static void fast_setup(const glm_model *m, fast_layout *F)
{
    const glm_layout *L = &m->lay;
    memset(F, 0, sizeof *F);
    F->hmin = m->bix.min_n ? m->bix.min_n : UINT32_MAX;
    F->bs_over = m->bix.min_n ? 12 : UINT32_MAX;
    for (unsigned k = 2; k <= L->order; k++) {
        F->hs[k] = m->bix.slots[k];
        F->hn[k] = m->bix.nslots[k];
    }
    for (unsigned k = 2; k <= L->order; k++) {
        F->keys[k] = L->keys ? L->keys + L->key_off[k] : NULL;
        F->koff[k] = L->key_off[k];
    }
    F->kbits = L->kbits;
    F->pk = L->pkeys;
    for (unsigned k = 1; k < L->order; k++)
        F->mid[k] = L->mid + L->mid_off[k];
    F->top = L->top;
    F->L = L;
    F->qrec = L->qp ? L->qrec : NULL;
    memcpy(F->kpow, L->kpow, sizeof F->kpow);
    memcpy(F->first, L->first, sizeof F->first);
    F->order = L->order;
    F->K = L->K;
    F->B = L->B;
}

/* Number of keys < x among k[0..cnt), the keys being word ids < 2^31 (the caller checks the
 * vocabulary size), so signed compares are exact. Reads only k[0..cnt): a short tail is counted
 * from the last four keys, masked. */
static inline __attribute__((always_inline)) uint32_t
fast_count_less(const uint32_t *k, uint32_t cnt, uint32_t x, uint32_t bs_over)
{
#ifdef GLM_SIMD
    if (cnt > bs_over) /* see fast_layout.bs_over */
        return glm_count_less(k, cnt, x);
    if (cnt >= 4) {
        __m128i vx = _mm_set1_epi32((int)x);
        __m128i acc = _mm_setzero_si128();
        uint32_t i = 0;
#pragma GCC unroll 8
        for (; i + 4 <= cnt; i += 4)
            acc = _mm_sub_epi32(acc,
                                _mm_cmplt_epi32(_mm_loadu_si128((const __m128i *)(k + i)), vx));
        acc = _mm_add_epi32(acc, _mm_shuffle_epi32(acc, _MM_SHUFFLE(1, 0, 3, 2)));
        acc = _mm_add_epi32(acc, _mm_shuffle_epi32(acc, _MM_SHUFFLE(2, 3, 0, 1)));
        uint32_t less = (uint32_t)_mm_cvtsi128_si32(acc);
        if (i < cnt) {
            __m128i t = _mm_cmplt_epi32(_mm_loadu_si128((const __m128i *)(k + cnt - 4)), vx);
            unsigned mask = (unsigned)_mm_movemask_ps(_mm_castsi128_ps(t));
            less += (uint32_t)(0x4332322132212110ull >> ((mask >> (4 - (cnt - i))) * 4)) & 15u;
        }
        return less;
    }
    uint32_t less = 0;
    for (uint32_t i = 0; i < cnt; i++)
        less += k[i] < x;
    return less;
#else
    (void)bs_over;
    return glm_count_less(k, cnt, x);
#endif
}

/* Keys < x among cnt packed keys: short nodes (most leaves) by a branch-free count of
 * independent reads, longer ones by glm_layout.h's binary search (dependent reads). */
static inline __attribute__((always_inline)) uint32_t packed_count_less(glm_keys r, uint32_t cnt,
                                                                       uint32_t x)
{
    if (cnt > 16)
        return glm_count_less_packed(r, cnt, x);
    uint64_t mask = (1ull << r.bits) - 1, bit = r.bit0;
    uint32_t less = 0;
    for (uint32_t i = 0; i < cnt; i++, bit += r.bits)
        less += glm_rd_bits(r.p, bit, mask) < x;
    return less;
}

static inline void prefetch2(const void *p, size_t bytes)
{
    const char *c = (const char *)p;
    __builtin_prefetch(c);
    __builtin_prefetch(c + bytes - 1);
}

/* A node of cnt packed keys from bit bit on. */
static inline void prefetch_packed(const uint8_t *pk, uint64_t bit, uint32_t cnt, uint32_t kbits)
{
    const char *c = (const char *)pk + (bit >> 3);
    uint64_t bytes = ((bit & 7) + (uint64_t)cnt * kbits + 7) / 8;
    __builtin_prefetch(c);
    if (bytes > 64)
        __builtin_prefetch(c + 64);
    __builtin_prefetch(c + bytes - 1);
}

static inline void prefetch_keys(const uint32_t *k, uint32_t cnt)
{
    const char *c = (const char *)k;
    __builtin_prefetch(c);
    if (cnt > 16)
        __builtin_prefetch(c + 64);
    __builtin_prefetch(c + (size_t)cnt * 4 - 1);
}

/* ---------------------------------------------------------------- one walk */

enum { PH_UNI, PH_SEARCH, PH_HASH, PH_VALUE, PH_DONE };

typedef struct walk {
    const glm_word *hist;
    const uint32_t *gk;   /* the group's first key (uint32 keys) */
    const uint32_t *node; /* the current node's first key (uint32 keys) */
    uint64_t gbit;        /* packed keys: the group's first key's bit */
    uint32_t noff;        /* the current node's first key, from the group's */
    uint32_t cnt;         /* keys in the current node */
    uint32_t l, d;        /* B-tree level of the node, depth */
    uint32_t j;           /* node index within its level */
    uint32_t I, q, r;     /* leaves: first leaf key, keys per leaf, leaves with one more */
    uint32_t first;       /* the group's first index in level len + 1 */
    uint32_t e;           /* the matched entry of level len */
    unsigned nh, len, phase;
    glm_word w;
    float prob;
    float bo[GLM_MAX_ORDER];
} walk;

static inline __attribute__((always_inline)) void walk_node(const fast_layout *F, walk *k,
                                                           const int pk)
{
    if (k->l + 1 < k->d) {
        k->noff = (uint32_t)(F->first[k->l] + k->j) * F->B;
        k->cnt = F->B;
    } else {
        uint32_t j = k->j;
        k->noff = k->I + j * k->q + (j < k->r ? j : k->r);
        k->cnt = k->q + (j < k->r);
    }
    if (!pk)
        k->node = k->gk + k->noff;
}

static inline __attribute__((always_inline)) void walk_prefetch_node(const fast_layout *F,
                                                                    const walk *k, const int pk)
{
    if (pk)
        prefetch_packed(F->pk, k->gbit + (uint64_t)k->noff * F->kbits, k->cnt, F->kbits);
    else
        prefetch_keys(k->node, k->cnt);
}

static inline void walk_start(const fast_layout *F, walk *k, glm_word w, const glm_word *hist,
                              unsigned nh)
{
    k->w = w;
    k->hist = hist;
    k->nh = nh;
    k->phase = PH_UNI;
    prefetch2(F->mid[1] + w, 2 * sizeof(glm_mid));
}

/* From entry e of level len (its value already read): start the search among its children, or
 * finish. */
static inline __attribute__((always_inline)) void walk_descend(const fast_layout *F, walk *k,
                                                              uint32_t first, uint32_t n,
                                                              const int pk)
{
    if (k->len > k->nh) { /* every caller has nh <= N - 1, so this also stops at level N */
        k->phase = PH_DONE;
        return;
    }
    if (n == 0) {
        k->phase = PH_DONE;
        return;
    }
    k->first = first;
    if (n >= F->hmin && F->hs[k->len + 1]) { /* a big group: one probe of the index */
        uint32_t i = glm_bigidx_slot(k->e, k->hist[k->len - 1], F->hn[k->len + 1]);
        k->j = i;
        k->cnt = n;
        const char *slot = (const char *)(F->hs[k->len + 1] + i);
        __builtin_prefetch(slot);
        __builtin_prefetch(slot + 64); /* and the next line: a miss scans ~6 slots at 70% */
        k->phase = PH_HASH;
        return;
    }
    if (pk) {
        k->gbit = (F->koff[k->len + 1] + first) * F->kbits;
    } else {
        k->gk = F->keys[k->len + 1] + first;
        k->node = k->gk;
    }
    k->noff = 0;
    k->l = 0;
    k->j = 0;
    if (n <= F->B) { /* one leaf: most groups */
        k->d = 1;
        k->cnt = n;
    } else {
        uint32_t d = 2;
        while (F->kpow[d] - 1 < n)
            d++;
        uint32_t leaves = (uint32_t)F->kpow[d - 1];
        k->d = d;
        k->I = leaves - 1;
        k->q = (n - k->I) / leaves;
        k->r = (n - k->I) % leaves;
        k->cnt = F->B;
    }
    walk_prefetch_node(F, k, pk);
    k->phase = PH_SEARCH;
}

/* The walk matched entry e of the next level: it is one word longer, and its value is fetched next
 * (the highest order holds probabilities only, the others prob/backoff/child). */
static inline __attribute__((always_inline)) void walk_found(const fast_layout *F, walk *k, uint32_t e,
                                                            const int pk)
{
    k->e = e;
    k->len++;
    if (pk) { /* the record and the next one (its end of the child range) */
        const glm_layout *L = F->L;
        uint64_t bit = L->qrec_off[k->len] + (uint64_t)e * L->qrec_bits[k->len];
        prefetch2(F->qrec + (bit >> 3), (2 * L->qrec_bits[k->len] + 7) / 8 + 1);
        if (k->len < F->order) /* the base of its block of child offsets */
            __builtin_prefetch(L->qbase + L->qbase_off[k->len] + (e >> L->qshift[k->len]));
    } else if (k->len == F->order) {
        __builtin_prefetch(F->top + e);
    } else {
        prefetch2(F->mid[k->len] + e, 2 * sizeof(glm_mid));
    }
    k->phase = PH_VALUE;
}

/* One memory step of a walk (its data was prefetched by the previous step). pk is a constant: 1
 * for a quantized file (bit-packed keys and records), 0 for a float file; each driver is
 * instantiated once per value, so a float walk carries none of the quantized branches. */
static inline __attribute__((always_inline)) void walk_step(const fast_layout *F, walk *k,
                                                           const int pk)
{
    switch (k->phase) {
    case PH_UNI: {
        const glm_mid *u = F->mid[1] + k->w;
        k->prob = u->prob;
        k->bo[0] = u->backoff;
        k->len = 1;
        k->e = k->w;
        walk_descend(F, k, u[0].child, u[1].child - u[0].child, pk);
        return;
    }
    case PH_SEARCH: {
        glm_word x = k->hist[k->len - 1];
        if (pk) { /* packed keys: glm_layout.h's binary search, the same walk */
            for (;;) {
                glm_keys r = {NULL, F->pk, k->gbit + (uint64_t)k->noff * F->kbits, F->kbits};
                uint32_t less = packed_count_less(r, k->cnt, x);
                if (less < k->cnt && glm_keys_get(r, less) == x) {
                    walk_found(F, k, k->first + k->noff + less, pk);
                    return;
                }
                if (k->l + 1 >= k->d) {
                    k->phase = PH_DONE;
                    return;
                }
                k->j = k->j * F->K + less;
                k->l++;
                walk_node(F, k, pk);
                if (k->l + 1 >= k->d) { /* a leaf: yield after its prefetch */
                    walk_prefetch_node(F, k, pk);
                    return;
                }
            }
        }
        const uint32_t *node = k->node;
        uint32_t less = fast_count_less(node, k->cnt, x, F->bs_over);
        /* internal nodes above the last internal level belong to big groups, whose upper
         * levels stay in cache: descend through them without yielding */
        while (k->l + 2 < k->d && !(less < k->cnt && node[less] == x)) {
            k->j = k->j * F->K + less;
            k->l++;
            walk_node(F, k, pk);
            node = k->node;
            less = fast_count_less(node, k->cnt, x, F->bs_over);
        }
        if (less < k->cnt && node[less] == x) {
            walk_found(F, k, k->first + k->noff + less, pk);
        } else if (k->l + 1 >= k->d) {
            k->phase = PH_DONE;
        } else {
            k->j = k->j * F->K + less;
            k->l++;
            walk_node(F, k, pk);
            prefetch_keys(k->node, k->cnt);
        }
        return;
    }
    case PH_HASH: {
        const glm_hslot *t = F->hs[k->len + 1];
        uint32_t ns = F->hn[k->len + 1], i = k->j, x = k->hist[k->len - 1];
        for (;;) {
            glm_hslot h = t[i];
            if (h.idx == UINT32_MAX) {
                k->phase = PH_DONE;
                return;
            }
            if (h.key == x && h.idx - k->first < k->cnt)
                break;
            i = i + 1 == ns ? 0 : i + 1;
        }
        walk_found(F, k, t[i].idx, pk);
        return;
    }
    case PH_VALUE:
        if (pk) { /* glm_layout.h's decode, as every path reads a quantized value */
            k->prob = glm_value(F->L, k->len, k->e, &k->bo[k->len - 1]);
            if (k->len == F->order) {
                k->phase = PH_DONE;
            } else {
                uint64_t first, n;
                glm_children(F->L, k->len, k->e, &first, &n);
                walk_descend(F, k, (uint32_t)first, (uint32_t)n, pk);
            }
        } else if (k->len == F->order) {
            k->prob = F->top[k->e];
            k->phase = PH_DONE;
        } else {
            const glm_mid *m = F->mid[k->len] + k->e;
            k->prob = m->prob;
            k->bo[k->len - 1] = m->backoff;
            walk_descend(F, k, m[0].child, m[1].child - m[0].child, pk);
        }
        return;
    }
}

/* The fast paths compare keys as signed 32-bit integers: exact while every word id is < 2^31. */
static int fast_ok(const glm_model *m) { return m->vocab.n <= (uint32_t)INT32_MAX; }

int glm_fast_refresh(glm_model *m)
{
    if (!fast_ok(m))
        return 0; /* glm_score stays on the reference walk */
    if (!m->fast && !(m->fast = malloc(sizeof *m->fast)))
        return SMT_ERR_NOMEM;
    fast_setup(m, m->fast);
    return 0;
}

void glm_fast_free(glm_model *m)
{
    free(m->fast);
    m->fast = NULL;
}

/* One walk on its own (no other lanes to overlap with): the lane code run to the end, then
 * KenLM's state logic. */
float glm_score_fast(const glm_model *m, const glm_state *in, glm_word w, glm_state *out,
                     unsigned *ngram_length)
{
    const fast_layout *F = m->fast;
    walk k;
    k.prob = 0.0f; /* set by the first step; GCC cannot tell once glm_finish is inlined */
    walk_start(F, &k, w, in->words, in->length);
    if (F->kbits) /* one copy per key format: see walk_step */
        while (k.phase != PH_DONE)
            walk_step(F, &k, 1);
    else
        while (k.phase != PH_DONE)
            walk_step(F, &k, 0);
    if (ngram_length)
        *ngram_length = k.len;
    return glm_finish(&m->lay, in, w, k.len, k.prob, k.bo, out);
}

/* ---------------------------------------------------------------- rows */

/* One row at a time, the readable reference (and the path of models too big for the fast one). */
int glm_score_rows_ref(const glm_model *m, const glm_word *rows, size_t n_rows, float *prob,
                       uint8_t *len, smt_err *err)
{
    unsigned N = m->par.order;
    for (size_t r = 0; r < n_rows; r++) {
        const glm_word *row = rows + r * N;
        glm_word hist[GLM_MAX_ORDER];
        int nh = glm_row_context(N, m->vocab.n, row, hist);
        if (nh < 0)
            return smt_err_set(err, SMT_ERR_ARG, "row %zu: word id out of range", r);
        if (m->ken) { /* a KenLM binary (glm_kenlm.c) */
            glm_kenlm_score_rows(m, row, 1, prob + r, len ? len + r : NULL);
            continue;
        }
        unsigned la;
        prob[r] = glm_row_walk(&m->lay, row, hist, (unsigned)nh, &la);
        if (len)
            len[r] = (uint8_t)la;
    }
    return 0;
}

typedef struct row_lane {
    size_t row;
    int second; /* 0: walk A (the n-gram), 1: walk B (its context) */
    glm_word hist[GLM_MAX_ORDER];
    unsigned nh, lenA;
    float probA;
    walk k;
} row_lane;

static inline __attribute__((always_inline)) void
rows_range_pk(const glm_model *m, const glm_word *rows, size_t r0, size_t r1, float *prob,
              uint8_t *len, const int pk)
{
    if (m->ken) { /* a KenLM binary (glm_kenlm.c) */
        glm_kenlm_score_rows(m, rows + r0 * m->par.order, r1 - r0, prob + r0, len ? len + r0 : NULL);
        return;
    }
    fast_layout F;
    fast_setup(m, &F);
    unsigned N = F.order;
    row_lane lanes[LANES];
    size_t next = r0;
    unsigned active = 0;
    for (unsigned i = 0; i < LANES && next < r1; i++, next++, active++) {
        row_lane *l = &lanes[i];
        l->row = next;
        l->second = 0;
        l->nh = (unsigned)glm_row_context(N, m->vocab.n, rows + next * N, l->hist);
        walk_start(&F, &l->k, rows[next * N + N - 1], l->hist, l->nh);
    }
    while (active) {
        for (unsigned i = 0; i < active; i++) {
            row_lane *l = &lanes[i];
            walk_step(&F, &l->k, pk);
            if (l->k.phase != PH_DONE)
                continue;
            if (!l->second) {
                l->lenA = l->k.len;
                l->probA = l->k.prob;
                if (len)
                    len[l->row] = (uint8_t)l->k.len;
                if (l->nh > 0) {
                    l->second = 1;
                    walk_start(&F, &l->k, l->hist[0], l->hist + 1, l->nh - 1);
                    continue;
                }
                prob[l->row] = l->probA;
            } else {
                prob[l->row] = glm_row_combine(l->lenA, l->probA, l->k.len, l->k.bo);
            }
            if (next < r1) { /* refill the lane */
                l->row = next;
                l->second = 0;
                l->nh = (unsigned)glm_row_context(N, m->vocab.n, rows + next * N, l->hist);
                walk_start(&F, &l->k, rows[next * N + N - 1], l->hist, l->nh);
                next++;
            } else { /* retire: move the last active lane here (re-pointing its history) */
                lanes[i] = lanes[--active];
                lanes[i].k.hist = lanes[i].hist + lanes[i].second;
                i--;
            }
        }
    }
}

static void rows_range(const glm_model *m, const glm_word *rows, size_t r0, size_t r1,
                       float *prob, uint8_t *len)
{
    if (m->fast && m->fast->kbits) /* one copy per key format: see walk_step */
        rows_range_pk(m, rows, r0, r1, prob, len, 1);
    else
        rows_range_pk(m, rows, r0, r1, prob, len, 0);
}

typedef struct rows_job {
    const glm_model *m;
    const glm_word *rows;
    size_t n_rows, chunk;
    float *prob;
    uint8_t *len;
} rows_job;

static void rows_task(void *ctx, size_t task, unsigned worker)
{
    (void)worker;
    rows_job *j = ctx;
    size_t r0 = task * j->chunk, r1 = r0 + j->chunk < j->n_rows ? r0 + j->chunk : j->n_rows;
    rows_range(j->m, j->rows, r0, r1, j->prob, j->len);
}

int glm_score_rows(const glm_model *m, const glm_word *rows, size_t n_rows, float *prob,
                   uint8_t *len, unsigned threads, smt_err *err)
{
    unsigned N = m->par.order;
    for (size_t r = 0; r < n_rows; r++) { /* validate first: the lanes trust the ids */
        glm_word hist[GLM_MAX_ORDER];
        if (glm_row_context(N, m->vocab.n, rows + r * N, hist) < 0)
            return smt_err_set(err, SMT_ERR_ARG, "row %zu: word id out of range", r);
    }
    if (!fast_ok(m))
        return glm_score_rows_ref(m, rows, n_rows, prob, len, err);
    if (threads == 1 || n_rows < 4096) {
        rows_range(m, rows, 0, n_rows, prob, len);
        return 0;
    }
    smt_pool *pool;
    int rc = smt_pool_create(&pool, threads, err);
    if (rc)
        return rc;
    rows_job j = {m, rows, n_rows, 0, prob, len};
    size_t tasks = (size_t)smt_pool_size(pool) * 8;
    j.chunk = (n_rows + tasks - 1) / tasks;
    smt_pool_run(pool, (n_rows + j.chunk - 1) / j.chunk, rows_task, &j);
    smt_pool_destroy(pool);
    return 0;
}

/* ---------------------------------------------------------------- states */

/* Below this many queries glm_score_states loops glm_score_fast (no lanes to overlap). */
#define GLM_STATES_MIN_LANES 3

/* Queries [0, n) in LANES lanes advanced in lock-step (as rows_range): each query is the walk
 * glm_score_fast makes (w through its state's words), finished by glm_finish, so prob and out are
 * glm_score's bit for bit. A lane reads its history from in[q] until its walk is done, and only
 * then writes out[q]: out may equal in. */
static inline __attribute__((always_inline)) void
states_lanes_pk(const glm_model *m, const glm_state *in, const glm_word *w, size_t n, float *prob,
                glm_state *out, uint8_t *len, const int pk)
{
    fast_layout F = *m->fast; /* a local copy: the stores below cannot alias it */
    walk lanes[LANES];
    size_t q[LANES];
    size_t next = 0;
    unsigned active = 0;
    for (; active < LANES && next < n; active++, next++) {
        q[active] = next;
        walk_start(&F, &lanes[active], w[next], in[next].words, in[next].length);
    }
    while (active) {
        for (unsigned i = 0; i < active; i++) {
            walk *k = &lanes[i];
            walk_step(&F, k, pk);
            if (k->phase != PH_DONE)
                continue;
            size_t j = q[i];
            if (len)
                len[j] = (uint8_t)k->len;
            prob[j] = glm_finish(&m->lay, &in[j], w[j], k->len, k->prob, k->bo, &out[j]);
            if (next < n) { /* refill the lane */
                q[i] = next;
                walk_start(&F, k, w[next], in[next].words, in[next].length);
                next++;
            } else { /* retire: the last active lane moves here */
                lanes[i] = lanes[--active];
                q[i] = q[active];
                i--;
            }
        }
    }
}

static void states_lanes(const glm_model *m, const glm_state *in, const glm_word *w, size_t n,
                         float *prob, glm_state *out, uint8_t *len)
{
    if (m->fast && m->fast->kbits) /* one copy per key format: see walk_step */
        states_lanes_pk(m, in, w, n, prob, out, len, 1);
    else
        states_lanes_pk(m, in, w, n, prob, out, len, 0);
}

/* Queries in chunks of ST_CHUNK walked level-synchronously (as sentences_levelsync): every walk
 * of a chunk makes one memory step per round, the steps grouped by phase (one loop each, no
 * per-step dispatch), then the chunk is finished in order. The chunk's walks read in[] only
 * before any of its out[] is written: out may equal in. */
#define ST_CHUNK 128
_Static_assert(ST_CHUNK >= 1 && ST_CHUNK <= 256, "walk indexes are 8-bit");

static inline __attribute__((always_inline)) void
states_levelsync_pk(const glm_model *m, const glm_state *in, const glm_word *w, size_t n,
                    float *prob, glm_state *out, uint8_t *len, const int pk)
{
    fast_layout F = *m->fast;
    walk wk[ST_CHUNK];
    uint8_t ia[4][ST_CHUNK], ib[4][ST_CHUNK];
    for (size_t t0 = 0; t0 < n; t0 += ST_CHUNK) {
        unsigned c = n - t0 < ST_CHUNK ? (unsigned)(n - t0) : ST_CHUNK;
        uint8_t(*cur)[ST_CHUNK] = ia, (*nxt)[ST_CHUNK] = ib;
        unsigned nc[4] = {0, 0, 0, 0};
        for (unsigned i = 0; i < c; i++)
            walk_start(&F, &wk[i], w[t0 + i], in[t0 + i].words, in[t0 + i].length);
        for (unsigned i = 0; i < c; i++) { /* the first round: every walk reads its unigram */
            walk *k = &wk[i];
            k->phase = PH_UNI;
            walk_step(&F, k, pk);
            if (k->phase != PH_DONE)
                cur[k->phase][nc[k->phase]++] = (uint8_t)i;
        }
        while (nc[PH_VALUE] | nc[PH_HASH] | nc[PH_SEARCH]) {
            unsigned nn[4] = {0, 0, 0, 0};
#define ST_PASS(P)                                                                                \
    for (unsigned x = 0; x < nc[P]; x++) {                                                       \
        walk *k = &wk[cur[P][x]];                                                                 \
        k->phase = P;                                                                             \
        walk_step(&F, k, pk);                                                                         \
        if (k->phase != PH_DONE)                                                                  \
            nxt[k->phase][nn[k->phase]++] = cur[P][x];                                            \
    }
            ST_PASS(PH_VALUE)
            ST_PASS(PH_HASH)
            ST_PASS(PH_SEARCH)
#undef ST_PASS
            uint8_t(*tmp)[ST_CHUNK] = cur;
            cur = nxt;
            nxt = tmp;
            memcpy(nc, nn, sizeof nc);
        }
        for (unsigned i = 0; i < c; i++) {
            size_t j = t0 + i;
            const walk *k = &wk[i];
            if (len)
                len[j] = (uint8_t)k->len;
            prob[j] = glm_finish(&m->lay, &in[j], w[j], k->len, k->prob, k->bo, &out[j]);
        }
    }
}

static void states_levelsync(const glm_model *m, const glm_state *in, const glm_word *w, size_t n,
                             float *prob, glm_state *out, uint8_t *len)
{
    if (m->fast && m->fast->kbits) /* one copy per key format: see walk_step */
        states_levelsync_pk(m, in, w, n, prob, out, len, 1);
    else
        states_levelsync_pk(m, in, w, n, prob, out, len, 0);
}

#define GLM_STATES_LEVELSYNC_MIN 64 /* from this many queries on, the level-synchronous driver */

int glm_score_states(const glm_model *m, const glm_state *in, const glm_word *w, size_t n,
                     float *prob, glm_state *out, uint8_t *len, smt_err *err)
{
    int rc = glm_states_check(m->par.order, m->vocab.n, in, w, n, err);
    if (rc) /* the walks trust the ids */
        return rc;
    if (m->ken) { /* a KenLM binary (glm_kenlm.c) */
        glm_kenlm_score_states(m, in, w, n, prob, out, len);
        return 0;
    }
    if (m->fast && n >= GLM_STATES_LEVELSYNC_MIN) {
        states_levelsync(m, in, w, n, prob, out, len);
        return 0;
    }
    if (m->fast && n >= GLM_STATES_MIN_LANES) {
        states_lanes(m, in, w, n, prob, out, len);
        return 0;
    }
    for (size_t i = 0; i < n; i++) { /* glm_score's own choice of path */
        unsigned l;
        prob[i] = m->fast ? glm_score_fast(m, &in[i], w[i], &out[i], &l)
                          : glm_score_walk(&m->lay, &in[i], w[i], &out[i], &l);
        if (len)
            len[i] = (uint8_t)l;
    }
    return 0;
}

/* ---------------------------------------------------------------- sentences */

static void sentences_ref(const glm_model *m, const glm_word *ids, const uint64_t *sstart,
                          size_t s0, size_t s1, int null_context, float *prob, uint8_t *len)
{
    for (size_t s = s0; s < s1; s++) {
        glm_state st;
        glm_state_start(&m->lay, m->par.bos, null_context, &st);
        for (uint64_t t = sstart[s]; t < sstart[s + 1]; t++) {
            unsigned l;
            prob[t] = glm_score_walk(&m->lay, &st, ids[t], &st, &l);
            len[t] = (uint8_t)l;
        }
    }
}

/* Level-synchronous scoring of the tokens of sentences [s0, s1) in chunks of GLM_CHUNK, each token
 * walked from its full history (glm_chunk_histories). The walks of a chunk advance one memory step
 * per round, grouped by phase (unigram, value, index probe, node search: one loop each, no
 * per-step dispatch); a step prefetches what the walk needs next, which arrives while the rest of
 * the round runs. Then one pass in text order applies KenLM's state logic (glm_finish_backoffs).
 * Exact: the state after a word holds the most recent words up to the deepest n-gram that can be
 * extended, so the walk from the state is a prefix of the full-history walk, and the two are equal
 * unless the full walk matched deeper than the state allows (len > state length + 1, impossible
 * for a model whose -0.0 backoffs are KenLM's); such a token is rescored from its state by the
 * reference walk. */
_Static_assert(GLM_CHUNK >= 1 && GLM_CHUNK <= 65536, "walk indexes are 16-bit");

static inline __attribute__((always_inline)) void
sentences_levelsync_pk(const glm_model *m, const fast_layout *F, const glm_word *ids,
                       const uint64_t *sstart, size_t s0, size_t s1, int null_context, float *prob,
                       uint8_t *len, const int pk)
{
    unsigned N = F->order, H = N - 1;
    glm_state begin, st;
    glm_state_start(&m->lay, m->par.bos, null_context, &begin);
    st = begin;
    walk *wk = malloc(GLM_CHUNK * sizeof *wk);
    glm_word *rb = malloc(GLM_CHUNK_RB * sizeof *rb);
    uint16_t *cur = malloc(4 * GLM_CHUNK * sizeof *cur), *nxt = malloc(4 * GLM_CHUNK * sizeof *nxt);
    const glm_word *hist[GLM_CHUNK];
    uint8_t nh[GLM_CHUNK];
    if (!wk || !rb || !cur || !nxt) { /* out of memory: the reference path needs none */
        free(wk), free(rb), free(cur), free(nxt);
        sentences_ref(m, ids, sstart, s0, s1, null_context, prob, len);
        return;
    }
    size_t s = s0; /* sentence of the next token to set up */
    while (s < s1 && sstart[s] == sstart[s + 1])
        s++;
    size_t fs = s; /* sentence of the next token to finish */
    uint64_t T1 = sstart[s1];
    uint64_t t0 = s < s1 ? sstart[s] : T1;
    while (t0 < T1) {
        uint64_t t1 = t0 + GLM_CHUNK < T1 ? t0 + GLM_CHUNK : T1;
        unsigned nc[4] = {0, 0, 0, 0};
        glm_chunk_histories(ids, sstart, &s, t0, t1, H, null_context, m->par.bos, rb, hist, nh);
        for (unsigned i = 0; i < (unsigned)(t1 - t0); i++)
            walk_start(F, &wk[i], ids[t0 + i], hist[i], nh[i]);
        /* the first round: every walk reads its unigram */
        for (unsigned i = 0; i < (unsigned)(t1 - t0); i++) {
            walk *k = &wk[i];
            walk_step(F, k, pk);
            if (k->phase != PH_DONE)
                cur[k->phase * GLM_CHUNK + nc[k->phase]++] = (uint16_t)i;
        }
        /* then rounds: each live walk makes one step, phase by phase */
        while (nc[PH_VALUE] | nc[PH_HASH] | nc[PH_SEARCH]) {
            unsigned nn[4] = {0, 0, 0, 0};
#define LS_PASS(P)                                                                                \
    for (unsigned x = 0; x < nc[P]; x++) {                                                       \
        walk *k = &wk[cur[P * GLM_CHUNK + x]];                                                     \
        k->phase = P;                                                                             \
        walk_step(F, k, pk);                                                                          \
        if (k->phase != PH_DONE)                                                                  \
            nxt[k->phase * GLM_CHUNK + nn[k->phase]++] = cur[P * GLM_CHUNK + x];                    \
    }
            LS_PASS(PH_VALUE)
            LS_PASS(PH_HASH)
            LS_PASS(PH_SEARCH)
#undef LS_PASS
            uint16_t *tmp = cur;
            cur = nxt;
            nxt = tmp;
            memcpy(nc, nn, sizeof nc);
        }
        /* KenLM's state logic in text order */
        for (uint64_t t = t0; t < t1; t++) {
            while (t >= sstart[fs + 1])
                fs++;
            if (t == sstart[fs])
                st = begin;
            const walk *k = &wk[t - t0];
            unsigned kl = k->len;
            if (kl > (unsigned)st.length + 1u) { /* see above: rescore from the state */
                unsigned l;
                glm_state o;
                /* the state's words: the most recent ones, the start of this token's history */
                memcpy(st.words, k->hist, st.length * sizeof st.words[0]);
                prob[t] = glm_score_walk(&m->lay, &st, ids[t], &o, &l);
                st = o;
                len[t] = (uint8_t)l;
                continue;
            }
            /* the histories come from the text: the state's words are not needed */
            prob[t] = glm_finish_backoffs(N, &st, kl, k->prob, k->bo);
            len[t] = (uint8_t)kl;
        }
        t0 = t1;
    }
    free(wk), free(rb), free(cur), free(nxt);
}

/* One copy of the level-synchronous loops per key format (see walk_step). */
static void sentences_levelsync(const glm_model *m, const fast_layout *F, const glm_word *ids,
                                const uint64_t *sstart, size_t s0, size_t s1, int null_context,
                                float *prob, uint8_t *len)
{
    if (F->kbits)
        sentences_levelsync_pk(m, F, ids, sstart, s0, s1, null_context, prob, len, 1);
    else
        sentences_levelsync_pk(m, F, ids, sstart, s0, s1, null_context, prob, len, 0);
}

void glm_score_sentences(const glm_model *m, const glm_word *ids, const uint64_t *sstart,
                         size_t s0, size_t s1, int null_context, int fast, float *prob,
                         uint8_t *len)
{
    if (m->ken) { /* a KenLM binary (glm_kenlm.c) */
        glm_kenlm_score_sentences(m, ids, sstart, s0, s1, null_context, fast, prob, len);
        return;
    }
    if (!fast || !fast_ok(m)) {
        sentences_ref(m, ids, sstart, s0, s1, null_context, prob, len);
        return;
    }
    fast_layout F;
    fast_setup(m, &F);
    sentences_levelsync(m, &F, ids, sstart, s0, s1, null_context, prob, len);
}
