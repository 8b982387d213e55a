/* lm_cache.c — the workers' LM query caches (dec_lm_cache.h): made at first use, freed with the
 * worker; the sentence's LM state ids. */
#include <stdlib.h>
#include <string.h>

#include "dec_lm_cache.h"
#include "smt_error.h"
#include "smt_hash.h"

int dec_lm_cache_alloc(lm_cache_key **keys, lm_cache_val **vals, unsigned n)
{
    size_t slots = (size_t)1 << DEC_LM_CACHE_BITS;
    for (unsigned l = 0; l < n; l++) {
        if (keys[l])
            continue;
        lm_cache_key *k = aligned_alloc(64, slots * sizeof *k);
        lm_cache_val *v = malloc(slots * sizeof *v);
        if (!k || !v) {
            free(k), free(v);
            return SMT_ERR_NOMEM;
        }
        memset(k, 0, slots * sizeof *k);
        keys[l] = k;
        vals[l] = v;
    }
    return 0;
}

void dec_lm_cache_free(lm_cache_key **keys, lm_cache_val **vals, unsigned n)
{
    for (unsigned l = 0; l < n; l++) {
        free(keys[l]);
        free(vals[l]);
        keys[l] = NULL;
        vals[l] = NULL;
    }
}

static uint64_t state_hash(const glm_state *st)
{
    uint64_t h = st->length;
    for (unsigned i = 0; i < st->length; i++)
        h = (h ^ st->words[i]) * 0xff51afd7ed558ccdull;
    return smt_hash_u64(h);
}

static int state_same(const glm_state *a, const glm_state *b)
{
    return a->length == b->length && memcmp(a->words, b->words, a->length * sizeof *a->words) == 0;
}

/* Doubles the slots (64 at first), placing every id again. */
static int ids_grow(lm_ids *t, arena *ar)
{
    uint32_t size = t->slots ? (t->mask + 1) * 2 : 64;
    uint32_t *slots = arena_zalloc(ar, (size_t)size * sizeof *slots);
    if (!slots)
        return SMT_ERR_NOMEM;
    for (uint32_t id = 0; id < t->n; id++) {
        size_t i = state_hash(&t->st[id]) & (size - 1);
        while (slots[i])
            i = (i + 1) & (size - 1);
        slots[i] = id + 1;
    }
    t->slots = slots;
    t->mask = size - 1;
    return 0;
}

int dec_lm_id(lm_ids *t, arena *ar, const glm_state *st, uint32_t *id)
{
    if ((!t->slots || t->n + 1 > (t->mask + 1) / 2) && ids_grow(t, ar))
        return SMT_ERR_NOMEM;
    size_t i = state_hash(st) & t->mask;
    for (; t->slots[i]; i = (i + 1) & t->mask)
        if (state_same(&t->st[t->slots[i] - 1], st)) {
            *id = t->slots[i] - 1;
            return 0;
        }
    if (t->n == t->cap) {
        glm_state *p = arena_grow(ar, t->st, t->n, &t->cap, 256, sizeof *p);
        if (!p)
            return SMT_ERR_NOMEM;
        t->st = p;
    }
    t->st[t->n] = *st;
    t->slots[i] = t->n + 1;
    *id = t->n++;
    return 0;
}

int dec_lm_phrase_alloc(lm_phrase **p, unsigned n)
{
    for (unsigned l = 0; l < n; l++)
        if (!p[l] && !(p[l] = calloc((size_t)1 << DEC_LM_PHRASE_BITS, sizeof *p[l])))
            return SMT_ERR_NOMEM;
    return 0;
}

void dec_lm_phrase_free(lm_phrase **p, unsigned n)
{
    for (unsigned l = 0; l < n; l++) {
        free(p[l]);
        p[l] = NULL;
    }
}
