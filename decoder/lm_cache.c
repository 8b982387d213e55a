/* lm_cache.c — the workers' LM query caches (dec_lm_cache.h): made at first use, freed with the
 * worker. */
#include <stdlib.h>
#include <string.h>

#include "dec_lm_cache.h"
#include "smt_error.h"

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
