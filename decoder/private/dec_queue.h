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
} queue;

static inline int q_push(queue *q, qitem it)
{
    if (q->n == q->cap && smt_grow(&q->items, &q->cap, q->n + 1, sizeof *q->items, 1024))
        return SMT_ERR_NOMEM;
    size_t i = q->n++;
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!q_better(&it, &q->items[parent]))
            break;
        q->items[i] = q->items[parent];
        i = parent;
    }
    q->items[i] = it;
    return 0;
}

static inline qitem q_pop(queue *q)
{
    qitem top = q->items[0], last = q->items[--q->n];
    size_t i = 0;
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, b = i;
        const qitem *bh = &last;
        if (l < q->n && q_better(&q->items[l], bh))
            b = l, bh = &q->items[l];
        if (r < q->n && q_better(&q->items[r], bh))
            b = r;
        if (b == i)
            break;
        q->items[i] = q->items[b];
        i = b;
    }
    if (q->n)
        q->items[i] = last;
    return top;
}

#endif
