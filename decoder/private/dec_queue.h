/* dec_queue.h — the cube pruning's priority queue of candidate hypotheses (a binary max-heap by
 * score + future cost, ties broken by creation order). Inline: it is the search's inner loop. */
#ifndef DEC_QUEUE_H
#define DEC_QUEUE_H

#include <stdlib.h>

#include "dec_search.h"
#include "smt_buf.h"

/* A heap entry is small (16 bytes: the heap moves entries around); the rest of a queued cube cell
 * lies in a side array, by slot. */
typedef struct qitem {
    double total; /* h->total and h->id, copied so that the heap stays within its array */
    uint32_t id, slot;
} qitem;

typedef struct qcell {
    hyp *h;
    edge *e;
    uint32_t x, y;
} qcell;

static inline int q_better(const qitem *a, const qitem *b)
{
    if (a->total != b->total)
        return a->total > b->total;
    return a->id < b->id;
}

typedef struct queue {
    qitem *items;
    size_t n, cap;
    qcell *cells;
    size_t n_cells, cap_cells;
    int hole;     /* the top has been taken but still fills items[0]: the next push replaces it */
} queue;

/* Places it in the heap from position i down (the place i is free; items below i are a heap). */
static inline void q_sift_down(queue *q, size_t i, qitem it)
{
    size_t n = q->n;
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, b = i;
        const qitem *bh = &it;
        if (l < n && q_better(&q->items[l], bh))
            b = l, bh = &q->items[l];
        if (r < n && q_better(&q->items[r], bh))
            b = r;
        if (b == i)
            break;
        q->items[i] = q->items[b];
        i = b;
    }
    q->items[i] = it;
}

/* Places it in the heap at position i or above (the place i is free). */
static inline void q_sift_up(queue *q, size_t i, qitem it)
{
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!q_better(&it, &q->items[parent]))
            break;
        q->items[i] = q->items[parent];
        i = parent;
    }
    q->items[i] = it;
}

/* Queues it; after q_take_top, it takes the top's place instead (one sift down, which a good item
 * ends early, instead of a pop and a push). */
static inline int q_push(queue *q, qitem it)
{
    if (q->hole) {
        q->hole = 0;
        q_sift_down(q, 0, it);
        return 0;
    }
    if (q->n == q->cap && smt_grow(&q->items, &q->cap, q->n + 1, sizeof *q->items, 1024))
        return SMT_ERR_NOMEM;
    q_sift_up(q, q->n++, it);
    return 0;
}

/* Removes the top: its hole goes down to a leaf along the better children, where the last item
 * enters and rises (Floyd's bottom-up deletion: one comparison a level on the way down). */
static inline qitem q_pop(queue *q)
{
    qitem top = q->items[0], last = q->items[--q->n];
    size_t n = q->n, i = 0;
    if (!n)
        return top;
    for (size_t l = 1; l < n; l = 2 * i + 1) {
        size_t b = l + 1 < n && q_better(&q->items[l + 1], &q->items[l]) ? l + 1 : l;
        q->items[i] = q->items[b];
        i = b;
    }
    q_sift_up(q, i, last);
    return top;
}

/* Takes the top (q->n > 0) leaving its place to the next q_push; q_close_hole removes it when no
 * push came. The heap then holds what q_pop and the pushes would leave: the same pops follow. */
static inline qitem q_take_top(queue *q)
{
    q->hole = 1;
    return q->items[0];
}

static inline void q_close_hole(queue *q)
{
    if (q->hole) {
        q->hole = 0;
        q_pop(q);
    }
}

#endif
