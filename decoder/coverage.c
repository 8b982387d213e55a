/* coverage.c — coverages (Moses's BitmapContainer): a stack's hypotheses that share the set of
 * covered source words, found or made through the stack's hash table, with the future cost of
 * their gaps. Called by the cube pruning (search.c); calls only the arena and the hash. */
#include <string.h>

#include "dec_search.h"
#include "smt_hash.h"

/* The future cost of the uncovered words: the best estimate of each gap, summed. */
static double gaps_future(const dec_search *s, const uint64_t *bits)
{
    double f = 0;
    size_t n = s->n;
    for (size_t i = 0; i < n;) {
        if (covered(bits, i)) {
            i++;
            continue;
        }
        size_t j = i;
        while (j + 1 < n && !covered(bits, j + 1))
            j++;
        f += s->fc[i * n + j];
        i = j + 1;
    }
    return f;
}

cov *dec_cov_get(dec_search *s, stack *st, const uint64_t *bits)
{
    uint64_t h = smt_hash_bytes(bits, s->nw * 8);
    if (!st->cov_table || st->n_covs + 1 > (st->cov_mask + 1) / 2) {
        uint32_t size = st->cov_table ? (st->cov_mask + 1) * 2 : 64;
        cov **t = arena_zalloc(&s->ar, size * sizeof *t);
        if (!t)
            return NULL;
        for (uint32_t i = 0; i < st->n_covs; i++) {
            cov *c = st->covs[i];
            c->hnext = t[c->hash & (size - 1)];
            t[c->hash & (size - 1)] = c;
        }
        st->cov_table = t;
        st->cov_mask = size - 1;
    }
    for (cov *c = st->cov_table[h & st->cov_mask]; c; c = c->hnext)
        if (c->hash == h && memcmp(c->bits, bits, s->nw * 8) == 0)
            return c;
    cov *c = arena_zalloc(&s->ar, sizeof *c);
    if (!c || !(c->bits = arena_alloc(&s->ar, s->nw * 8)))
        return NULL;
    memcpy(c->bits, bits, s->nw * 8);
    c->hash = h;
    c->future = gaps_future(s, bits);
    uint32_t g = 0;
    while (g < s->n && covered(bits, g))
        g++;
    c->first_gap = g;
    if (st->n_covs == st->cap_covs) {
        cov **p = arena_grow(&s->ar, st->covs, st->n_covs, &st->cap_covs, 16, sizeof *p);
        if (!p)
            return NULL;
        st->covs = p;
    }
    st->covs[st->n_covs++] = c;
    c->hnext = st->cov_table[h & st->cov_mask];
    st->cov_table[h & st->cov_mask] = c;
    return c;
}
