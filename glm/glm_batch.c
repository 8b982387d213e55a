/* glm_batch.c — the fast CPU paths: many independent walks advanced in lock-step, each lane
 * prefetching the next node it needs before the driver moves on to the other lanes, so that the
 * memory latency of one lane's B-tree step overlaps with the work of the others (AMAC-style).
 * Each lane does exactly what glm_walk does, in the same order, so the floats are identical. */
#include <stdlib.h>
#include <string.h>

#include "glm_internal.h"
#include "smt_threads.h"

#define LANES 16

enum { PH_UNI, PH_SEARCH, PH_VALUE, PH_DONE };

typedef struct walk {
    const glm_word *hist;
    unsigned nh, len, phase;
    glm_word w;
    uint64_t e, first, start;
    uint32_t cnt;
    float prob;
    float bo[GLM_MAX_ORDER];
    glm_bt_cursor cur;
} walk;

static inline void prefetch_range(const void *p, size_t bytes)
{
    const char *c = (const char *)p;
    __builtin_prefetch(c);
    if (bytes > 64)
        __builtin_prefetch(c + bytes - 1);
    if (bytes > 128)
        __builtin_prefetch(c + 64);
}

static inline void walk_start(const glm_layout *L, walk *k, glm_word w, const glm_word *hist,
                              unsigned nh)
{
    k->w = w;
    k->hist = hist;
    k->nh = nh;
    k->phase = PH_UNI;
    prefetch_range(L->mid + L->mid_off[1] + w, 2 * sizeof(glm_mid));
}

/* From entry e of level len: start the search among its children, or finish. */
static inline void walk_descend(const glm_layout *L, walk *k)
{
    if (k->len > k->nh || k->len >= L->order) {
        k->phase = PH_DONE;
        return;
    }
    uint64_t n;
    glm_children(L, k->len, k->e, &k->first, &n);
    if (n == 0) {
        k->phase = PH_DONE;
        return;
    }
    glm_bt_init(L, &k->cur, L->keys + L->key_off[k->len + 1] + k->first, n);
    glm_bt_node(L, &k->cur, &k->start, &k->cnt);
    prefetch_range(k->cur.keys + k->start, k->cnt * sizeof(uint32_t));
    k->phase = PH_SEARCH;
}

/* One memory step of a walk (its data was prefetched by the previous step). */
static inline void walk_step(const glm_layout *L, walk *k)
{
    switch (k->phase) {
    case PH_UNI: {
        const glm_mid *u = L->mid + L->mid_off[1] + k->w;
        k->prob = u->prob;
        k->bo[0] = u->backoff;
        k->len = 1;
        k->e = k->w;
        walk_descend(L, k);
        return;
    }
    case PH_SEARCH: {
        const uint32_t *keys = k->cur.keys + k->start;
        glm_word x = k->hist[k->len - 1];
        uint32_t less = glm_count_less(keys, k->cnt, x);
        int hit = less < k->cnt && keys[less] == x;
        int64_t got = glm_bt_advance(L, &k->cur, k->start, k->cnt, less, hit);
        if (got == -1) {
            k->phase = PH_DONE;
        } else if (got == -2) {
            glm_bt_node(L, &k->cur, &k->start, &k->cnt);
            prefetch_range(k->cur.keys + k->start, k->cnt * sizeof(uint32_t));
        } else {
            k->e = k->first + (uint64_t)got;
            k->len++;
            if (k->len == L->order)
                __builtin_prefetch(L->top + k->e);
            else
                prefetch_range(L->mid + L->mid_off[k->len] + k->e, 2 * sizeof(glm_mid));
            k->phase = PH_VALUE;
        }
        return;
    }
    case PH_VALUE:
        if (k->len == L->order) {
            k->prob = L->top[k->e];
            k->phase = PH_DONE;
        } else {
            const glm_mid *m = L->mid + L->mid_off[k->len] + k->e;
            k->prob = m->prob;
            k->bo[k->len - 1] = m->backoff;
            walk_descend(L, k);
        }
        return;
    }
}

/* ---------------------------------------------------------------- rows */

typedef struct row_lane {
    size_t row;
    int second; /* 0: walk A (the n-gram), 1: walk B (its context) */
    glm_word hist[GLM_MAX_ORDER];
    unsigned nh, lenA;
    float probA;
    walk k;
} row_lane;

static void rows_range(const glm_model *m, const glm_word *rows, size_t r0, size_t r1,
                       float *prob, uint8_t *len)
{
    const glm_layout *L = &m->lay;
    unsigned N = L->order;
    row_lane lanes[LANES];
    size_t next = r0;
    unsigned active = 0;
    for (unsigned i = 0; i < LANES && next < r1; i++, next++, active++) {
        row_lane *l = &lanes[i];
        l->row = next;
        l->second = 0;
        l->nh = (unsigned)glm_row_context(m, rows + next * N, l->hist);
        walk_start(L, &l->k, rows[next * N + N - 1], l->hist, l->nh);
    }
    while (active) {
        for (unsigned i = 0; i < active; i++) {
            row_lane *l = &lanes[i];
            walk_step(L, &l->k);
            if (l->k.phase != PH_DONE)
                continue;
            if (!l->second) {
                l->lenA = l->k.len;
                l->probA = l->k.prob;
                if (len)
                    len[l->row] = (uint8_t)l->k.len;
                if (l->nh > 0) {
                    l->second = 1;
                    walk_start(L, &l->k, l->hist[0], l->hist + 1, l->nh - 1);
                    continue;
                }
                prob[l->row] = l->probA;
            } else {
                prob[l->row] = glm_row_combine(l->lenA, l->probA, l->k.len, l->k.bo);
            }
            if (next < r1) { /* refill the lane */
                l->row = next;
                l->second = 0;
                l->nh = (unsigned)glm_row_context(m, rows + next * N, l->hist);
                walk_start(L, &l->k, rows[next * N + N - 1], l->hist, l->nh);
                next++;
            } else { /* retire: move the last active lane here (re-pointing its history) */
                lanes[i] = lanes[--active];
                lanes[i].k.hist = lanes[i].hist + lanes[i].second;
                i--;
            }
        }
    }
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
        if (glm_row_context(m, rows + r * N, hist) < 0)
            return smt_err_set(err, SMT_ERR_ARG, "row %zu: word id out of range", r);
    }
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

/* ---------------------------------------------------------------- sentences */

typedef struct sent_lane {
    uint64_t t, tend;
    size_t s;
    glm_state st;
    walk k;
} sent_lane;

static void sentences_ref(const glm_model *m, const glm_word *ids, const uint64_t *sstart,
                          size_t s0, size_t s1, int null_context, float *prob, uint8_t *len)
{
    for (size_t s = s0; s < s1; s++) {
        glm_state st;
        if (null_context)
            glm_state_null(&st);
        else
            glm_state_begin(m, &st);
        for (uint64_t t = sstart[s]; t < sstart[s + 1]; t++) {
            unsigned l;
            prob[t] = glm_score_ref(m, &st, ids[t], &st, &l);
            len[t] = (uint8_t)l;
        }
    }
}

void glm_score_sentences(const glm_model *m, const glm_word *ids, const uint64_t *sstart,
                         size_t s0, size_t s1, int null_context, int fast, float *prob,
                         uint8_t *len)
{
    if (!fast) {
        sentences_ref(m, ids, sstart, s0, s1, null_context, prob, len);
        return;
    }
    const glm_layout *L = &m->lay;
    sent_lane lanes[LANES];
    unsigned active = 0;
    size_t next = s0;
    for (;;) {
        /* fill idle lanes with the next non-empty sentences */
        while (active < LANES && next < s1) {
            size_t s = next++;
            if (sstart[s] == sstart[s + 1])
                continue;
            sent_lane *l = &lanes[active++];
            l->s = s;
            l->t = sstart[s];
            l->tend = sstart[s + 1];
            if (null_context)
                glm_state_null(&l->st);
            else
                glm_state_begin(m, &l->st);
            walk_start(L, &l->k, ids[l->t], l->st.words, l->st.length);
        }
        if (!active)
            return;
        for (unsigned i = 0; i < active; i++) {
            sent_lane *l = &lanes[i];
            walk_step(L, &l->k);
            if (l->k.phase != PH_DONE)
                continue;
            glm_state in = l->st; /* the walk read hist from l->st.words */
            prob[l->t] = glm_finish(L, &in, ids[l->t], l->k.len, l->k.prob, l->k.bo, &l->st);
            len[l->t] = (uint8_t)l->k.len;
            if (++l->t < l->tend) {
                walk_start(L, &l->k, ids[l->t], l->st.words, l->st.length);
            } else {
                lanes[i] = lanes[--active];
                lanes[i].k.hist = lanes[i].st.words;
                i--;
                if (active < LANES / 2 && next < s1)
                    break; /* refill before the pipeline drains */
            }
        }
    }
}
