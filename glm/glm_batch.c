/* glm_batch.c — the fast CPU paths: many independent walks advanced in lock-step (rows: 16 lanes;
 * states: 16 lanes, or level-synchronous chunks from 64 queries on; sentences: level-synchronous
 * chunks, walks_levelsync), each walk prefetching what it needs next before the driver moves on
 * to the others, so that the memory latency of one walk's step overlaps with the work of the
 * others (AMAC-style). A walk is glm_walk's level cursor (glm_layout.h's glm_walk_cur) split into
 * steps, so the floats are glm_walk's; only the way a node is searched differs (SSE2 counts of
 * keys < x, 4 at a time, and the index of big groups) and when a walk yields. */
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

/* The layout and the big-group index, copied together so that a driver's local copy cannot be
 * aliased by its stores. */
typedef struct glm_fast fast_layout;
struct glm_fast {
    glm_layout L;
    const glm_hslot *hs[GLM_MAX_ORDER + 1]; /* the big-group index (GLM_OPEN_INDEX) */
    uint32_t hn[GLM_MAX_ORDER + 1];
    uint32_t hmin; /* groups of at least hmin keys are indexed (UINT32_MAX: none) */
    /* nodes of more keys than this are binary-searched, smaller ones counted with SSE2: with the
     * index the B-trees left are small and the binary search's fewer instructions win; without it
     * the deep trees' dependent loads make SSE2 counts faster (docs/glm.md, "Speed") */
    uint32_t bs_over;
};

static void fast_setup(const glm_model *m, fast_layout *F)
{
    memset(F, 0, sizeof *F);
    F->L = m->lay;
    F->hmin = m->bix.min_n ? m->bix.min_n : UINT32_MAX;
    F->bs_over = m->bix.min_n ? 12 : UINT32_MAX;
    for (unsigned k = 2; k <= m->lay.order; k++) {
        F->hs[k] = m->bix.slots[k];
        F->hn[k] = m->bix.nslots[k];
    }
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

/* ---------------------------------------------------------------- one walk */

/* A walk is glm_layout.h's level cursor (glm_walk_cur) driven as a state machine: each step makes
 * the reads the previous step prefetched, then prefetches what it needs next and yields, so that
 * the memory latency of one walk's step overlaps with the steps of the others. The phases: the
 * unigram (PH_UNI), a B-tree node among the children (PH_SEARCH), a probe of the big-group index
 * (PH_HASH), the value of the child found (PH_VALUE). */
enum { PH_UNI, PH_SEARCH, PH_HASH, PH_VALUE, PH_DONE };

typedef struct walk {
    glm_walk_cur c;   /* the match so far and its children */
    glm_bt_cursor bt; /* PH_SEARCH: the B-tree of c's children */
    union {           /* PH_SEARCH: their keys (glm_walk_keys) */
        const uint32_t *w; /* uint32 keys: the first */
        uint64_t bit;      /* packed keys: the first one's bit */
    } keys;
    uint32_t start; /* PH_SEARCH: the node's first key (from the group's); PH_HASH: the slot */
    uint32_t cnt;   /* PH_SEARCH: keys in the node */
    const glm_word *hist;
    unsigned nh, phase;
    glm_word w;
    float prob;
    float bo[GLM_MAX_ORDER];
} walk;

/* Prefetches the node the walk searches next. */
static inline __attribute__((always_inline)) void walk_issue_node(const fast_layout *F,
                                                                 const walk *k, const int pk)
{
    const char *c;
    uint64_t bytes;
    if (pk) {
        uint64_t bit = k->keys.bit + (uint64_t)k->start * F->L.kbits;
        c = (const char *)F->L.pkeys + (bit >> 3);
        bytes = ((bit & 7) + (uint64_t)k->cnt * F->L.kbits + 7) / 8;
    } else {
        c = (const char *)(k->keys.w + k->start);
        bytes = (uint64_t)k->cnt * 4;
    }
    glm_prefetch(c);
    if (bytes > 64)
        glm_prefetch(c + 64);
    glm_prefetch(c + bytes - 1);
}

static inline void walk_start(const fast_layout *F, walk *k, glm_word w, const glm_word *hist,
                              unsigned nh)
{
    k->w = w;
    k->hist = hist;
    k->nh = nh;
    k->phase = PH_UNI;
    glm_walk_issue_start(&F->L, w);
}

/* From the match (its value read): start the search among its children, or finish. */
static inline __attribute__((always_inline)) void walk_descend(const fast_layout *F, walk *k,
                                                              const int pk)
{
    /* every caller has nh <= N - 1, so len > nh also stops at level N */
    if (k->c.len > k->nh || !glm_walk_children(&F->L, &k->c, pk)) {
        k->phase = PH_DONE;
        return;
    }
    unsigned k1 = k->c.len + 1;
    if (k->c.n >= F->hmin && F->hs[k1]) { /* a big group: one probe of the index */
        uint32_t i = glm_bigidx_slot(k->c.e, k->hist[k->c.len - 1], F->hn[k1]);
        k->start = i;
        const char *slot = (const char *)(F->hs[k1] + i);
        glm_prefetch(slot);
        glm_prefetch(slot + 64); /* and the next line: a miss scans ~6 slots at 70% */
        k->phase = PH_HASH;
        return;
    }
    uint64_t start;
    glm_keys r = glm_walk_keys(&F->L, &k->c, pk);
    if (pk)
        k->keys.bit = r.bit0;
    else
        k->keys.w = r.w;
    glm_bt_init(&F->L, &k->bt, k->c.n);
    glm_bt_node(&F->L, &k->bt, &start, &k->cnt);
    k->start = (uint32_t)start;
    walk_issue_node(F, k, pk);
    k->phase = PH_SEARCH;
}

/* The walk found the child at slot: its value is read next. */
static inline __attribute__((always_inline)) void walk_found(const fast_layout *F, walk *k,
                                                            uint32_t slot, const int pk)
{
    glm_walk_take(&k->c, slot);
    glm_walk_issue(&F->L, &k->c, pk);
    k->phase = PH_VALUE;
}

/* One memory step of a walk (its data was prefetched by the previous step). pk is the format
 * (glm_keys_at's q), a constant: each driver is instantiated once per value, so a float walk
 * carries none of the quantized branches. */
static inline __attribute__((always_inline)) void walk_step(const fast_layout *F, walk *k,
                                                           const int pk)
{
    switch (k->phase) {
    case PH_UNI:
        k->prob = glm_walk_start(&F->L, &k->c, k->w, k->bo);
        walk_descend(F, k, pk);
        return;
    case PH_SEARCH: {
        /* the internal nodes below the root belong to big groups, whose upper levels stay in
         * cache: descend through them without yielding, and yield before the leaf */
        glm_word x = k->hist[k->c.len - 1];
        uint64_t start = k->start;
        uint32_t cnt = k->cnt;
        for (;;) {
            uint32_t less;
            int hit;
            if (pk) {
                glm_keys r = {NULL, F->L.pkeys, k->keys.bit + start * F->L.kbits, F->L.kbits};
                less = packed_count_less(r, cnt, x);
                hit = less < cnt &&
                      glm_rd_bits(r.p, r.bit0 + (uint64_t)less * r.bits, (1ull << r.bits) - 1) == x;
            } else {
                const uint32_t *node = k->keys.w + start;
                less = fast_count_less(node, cnt, x, F->bs_over);
                hit = less < cnt && node[less] == x;
            }
            int64_t got = glm_bt_advance(&F->L, &k->bt, start, less, hit);
            if (got >= 0) {
                walk_found(F, k, (uint32_t)got, pk);
                return;
            }
            if (got == -1) {
                k->phase = PH_DONE;
                return;
            }
            glm_bt_node(&F->L, &k->bt, &start, &cnt);
            if (k->bt.l + 1 >= k->bt.d) { /* a leaf: yield after its prefetch */
                k->start = (uint32_t)start;
                k->cnt = cnt;
                walk_issue_node(F, k, pk);
                return;
            }
        }
    }
    case PH_HASH: {
        const glm_hslot *t = F->hs[k->c.len + 1];
        uint32_t ns = F->hn[k->c.len + 1], i = k->start, x = k->hist[k->c.len - 1];
        for (;;) {
            glm_hslot h = t[i];
            if (h.idx == UINT32_MAX) {
                k->phase = PH_DONE;
                return;
            }
            if (h.key == x && h.idx - k->c.first < k->c.n)
                break;
            i = i + 1 == ns ? 0 : i + 1;
        }
        walk_found(F, k, t[i].idx - k->c.first, pk);
        return;
    }
    case PH_VALUE:
        if (k->c.len == F->L.order) { /* the highest order: the walk is done */
            k->prob = glm_walk_read(&F->L, &k->c, k->bo, pk);
            k->phase = PH_DONE;
        } else {
            k->prob = glm_walk_read(&F->L, &k->c, k->bo, pk);
            walk_descend(F, k, pk);
        }
        return;
    }
}

int glm_fast_refresh(glm_model *m)
{
    /* the fast paths compare keys as signed 32-bit integers: exact while every word id is < 2^31;
     * without the fast view every path takes the reference walk */
    if (m->vocab.n > (uint32_t)INT32_MAX)
        return 0;
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
    if (F->L.qp) /* one copy per format: see walk_step */
        while (k.phase != PH_DONE)
            walk_step(F, &k, 1);
    else
        while (k.phase != PH_DONE)
            walk_step(F, &k, 0);
    if (ngram_length)
        *ngram_length = k.c.len;
    return glm_finish(&m->lay, in, w, k.c.len, k.prob, k.bo, out);
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
rows_range_pk(const glm_model *m, const fast_layout *F, const glm_word *rows, size_t r0, size_t r1,
              float *prob, uint8_t *len, const int pk)
{
    unsigned N = F->L.order;
    row_lane lanes[LANES];
    size_t next = r0;
    unsigned active = 0;
    for (unsigned i = 0; i < LANES && next < r1; i++, next++, active++) {
        row_lane *l = &lanes[i];
        l->row = next;
        l->second = 0;
        l->nh = (unsigned)glm_row_context(N, m->vocab.n, rows + next * N, l->hist);
        walk_start(F, &l->k, rows[next * N + N - 1], l->hist, l->nh);
    }
    while (active) {
        for (unsigned i = 0; i < active; i++) {
            row_lane *l = &lanes[i];
            walk_step(F, &l->k, pk);
            if (l->k.phase != PH_DONE)
                continue;
            if (!l->second) {
                l->lenA = l->k.c.len;
                l->probA = l->k.prob;
                if (len)
                    len[l->row] = (uint8_t)l->k.c.len;
                if (l->nh > 0) {
                    l->second = 1;
                    walk_start(F, &l->k, l->hist[0], l->hist + 1, l->nh - 1);
                    continue;
                }
                prob[l->row] = l->probA;
            } else {
                prob[l->row] = glm_row_combine(l->lenA, l->probA, l->k.c.len, l->k.bo);
            }
            if (next < r1) { /* refill the lane */
                l->row = next;
                l->second = 0;
                l->nh = (unsigned)glm_row_context(N, m->vocab.n, rows + next * N, l->hist);
                walk_start(F, &l->k, rows[next * N + N - 1], l->hist, l->nh);
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
    if (m->ken) { /* a KenLM binary (glm_kenlm.c) */
        glm_kenlm_score_rows(m, rows + r0 * m->par.order, r1 - r0, prob + r0,
                             len ? len + r0 : NULL);
        return;
    }
    if (m->fast->L.qp) /* one copy per format: see walk_step */
        rows_range_pk(m, m->fast, rows, r0, r1, prob, len, 1);
    else
        rows_range_pk(m, m->fast, rows, r0, r1, prob, len, 0);
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
    if (!m->ken && !m->fast) /* no fast view (a vocabulary of 2^31 or more words) */
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
    const fast_layout *F = m->fast;
    walk lanes[LANES];
    size_t q[LANES];
    size_t next = 0;
    unsigned active = 0;
    for (; active < LANES && next < n; active++, next++) {
        q[active] = next;
        walk_start(F, &lanes[active], w[next], in[next].words, in[next].length);
    }
    while (active) {
        for (unsigned i = 0; i < active; i++) {
            walk *k = &lanes[i];
            walk_step(F, k, pk);
            if (k->phase != PH_DONE)
                continue;
            size_t j = q[i];
            if (len)
                len[j] = (uint8_t)k->c.len;
            prob[j] = glm_finish(&m->lay, &in[j], w[j], k->c.len, k->prob, k->bo, &out[j]);
            if (next < n) { /* refill the lane */
                q[i] = next;
                walk_start(F, k, w[next], in[next].words, in[next].length);
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
    if (m->fast && m->fast->L.qp) /* one copy per format: see walk_step */
        states_lanes_pk(m, in, w, n, prob, out, len, 1);
    else
        states_lanes_pk(m, in, w, n, prob, out, len, 0);
}

/* ---------------------------------------------------------------- level-synchronous walks */

/* Runs the walks wk[0..n) (n <= GLM_CHUNK, each begun by walk_start) to their end
 * level-synchronously: every live walk makes one memory step per round, the steps grouped by phase
 * (one loop each, no per-step dispatch); a step prefetches what its walk needs next, which arrives
 * while the rest of the round runs. The states and the sentences share it. */
_Static_assert(GLM_CHUNK >= 1 && GLM_CHUNK <= 65536, "walk indexes are 16-bit");

static inline __attribute__((always_inline)) void
walks_levelsync_pk(const fast_layout *F, walk *wk, unsigned n, const int pk)
{
    uint16_t ia[4][GLM_CHUNK], ib[4][GLM_CHUNK];
    uint16_t(*cur)[GLM_CHUNK] = ia, (*nxt)[GLM_CHUNK] = ib;
    unsigned nc[4] = {0, 0, 0, 0};
    for (unsigned i = 0; i < n; i++) { /* the first round: every walk reads its unigram */
        walk *k = &wk[i];
        k->phase = PH_UNI;
        walk_step(F, k, pk);
        if (k->phase != PH_DONE)
            cur[k->phase][nc[k->phase]++] = (uint16_t)i;
    }
    while (nc[PH_VALUE] | nc[PH_HASH] | nc[PH_SEARCH]) {
        unsigned nn[4] = {0, 0, 0, 0};
#define LS_PASS(P)                                                                                \
    for (unsigned x = 0; x < nc[P]; x++) {                                                       \
        walk *k = &wk[cur[P][x]];                                                                 \
        k->phase = P;                                                                             \
        walk_step(F, k, pk);                                                                      \
        if (k->phase != PH_DONE)                                                                  \
            nxt[k->phase][nn[k->phase]++] = cur[P][x];                                            \
    }
        LS_PASS(PH_VALUE)
        LS_PASS(PH_HASH)
        LS_PASS(PH_SEARCH)
#undef LS_PASS
        uint16_t(*tmp)[GLM_CHUNK] = cur;
        cur = nxt;
        nxt = tmp;
        memcpy(nc, nn, sizeof nc);
    }
}

/* One copy per format (see walk_step). */
static __attribute__((noinline)) void walks_levelsync(const fast_layout *F, walk *wk, unsigned n)
{
    fast_layout Fl = *F; /* a local copy: the walks' stores cannot alias it */
    if (Fl.L.qp)
        walks_levelsync_pk(&Fl, wk, n, 1);
    else
        walks_levelsync_pk(&Fl, wk, n, 0);
}

/* Queries in chunks of ST_CHUNK walked level-synchronously (walks_levelsync), each chunk then
 * finished in order. The chunk's walks read in[] only before any of its out[] is written: out may
 * equal in. */
#define ST_CHUNK 128
_Static_assert(ST_CHUNK <= GLM_CHUNK, "a chunk of walks_levelsync");

static void states_levelsync(const glm_model *m, const glm_state *in, const glm_word *w, size_t n,
                             float *prob, glm_state *out, uint8_t *len)
{
    const fast_layout *F = m->fast;
    walk wk[ST_CHUNK];
    for (size_t t0 = 0; t0 < n; t0 += ST_CHUNK) {
        unsigned c = n - t0 < ST_CHUNK ? (unsigned)(n - t0) : ST_CHUNK;
        for (unsigned i = 0; i < c; i++)
            walk_start(F, &wk[i], w[t0 + i], in[t0 + i].words, in[t0 + i].length);
        walks_levelsync(F, wk, c);
        for (unsigned i = 0; i < c; i++) {
            size_t j = t0 + i;
            const walk *k = &wk[i];
            if (len)
                len[j] = (uint8_t)k->c.len;
            prob[j] = glm_finish(&m->lay, &in[j], w[j], k->c.len, k->prob, k->bo, &out[j]);
        }
    }
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
 * walked from its full history (glm_chunk_histories) by walks_levelsync, so that no walk waits
 * for the previous token. Then one pass in text order applies KenLM's state logic
 * (glm_finish_backoffs). Exact: the state after a word holds the most recent words up to the
 * deepest n-gram that can be extended, so the walk from the state is a prefix of the full-history
 * walk, and the two are equal unless the full walk matched deeper than the state allows (len >
 * state length + 1, impossible for a model whose -0.0 backoffs are KenLM's); such a token is
 * rescored from its state by the reference walk. */
static void sentences_levelsync(const glm_model *m, const fast_layout *F, const glm_word *ids,
                                const uint64_t *sstart, size_t s0, size_t s1, int null_context,
                                float *prob, uint8_t *len)
{
    unsigned N = F->L.order, H = N - 1;
    glm_state begin, st;
    glm_state_start(&m->lay, m->par.bos, null_context, &begin);
    st = begin;
    walk *wk = malloc(GLM_CHUNK * sizeof *wk);
    glm_word *rb = malloc(GLM_CHUNK_RB * sizeof *rb);
    const glm_word *hist[GLM_CHUNK];
    uint8_t nh[GLM_CHUNK];
    if (!wk || !rb) { /* out of memory: the reference path needs none */
        free(wk), free(rb);
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
        glm_chunk_histories(ids, sstart, &s, t0, t1, H, null_context, m->par.bos, rb, hist, nh);
        for (unsigned i = 0; i < (unsigned)(t1 - t0); i++)
            walk_start(F, &wk[i], ids[t0 + i], hist[i], nh[i]);
        walks_levelsync(F, wk, (unsigned)(t1 - t0));
        /* KenLM's state logic in text order */
        for (uint64_t t = t0; t < t1; t++) {
            while (t >= sstart[fs + 1])
                fs++;
            if (t == sstart[fs])
                st = begin;
            const walk *k = &wk[t - t0];
            unsigned kl = k->c.len;
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
    free(wk), free(rb);
}

void glm_score_sentences(const glm_model *m, const glm_word *ids, const uint64_t *sstart,
                         size_t s0, size_t s1, int null_context, int fast, float *prob,
                         uint8_t *len)
{
    if (m->ken) { /* a KenLM binary (glm_kenlm.c) */
        glm_kenlm_score_sentences(m, ids, sstart, s0, s1, null_context, fast, prob, len);
        return;
    }
    if (!fast || !m->fast) {
        sentences_ref(m, ids, sstart, s0, s1, null_context, prob, len);
        return;
    }
    sentences_levelsync(m, m->fast, ids, sstart, s0, s1, null_context, prob, len);
}
