/* cands.c — the translation candidates of a source phrase, ranked and cut the way Moses does it,
 * cached in the model.
 *
 * Moses scores every target phrase "in isolation" when it loads a phrase table: ln of the table's
 * scores floored at -100, word and phrase penalty, and the LM's estimate of the phrase from an empty
 * context (the features' option and estimate hooks, dec_ff.h); the weighted sum ranks the targets,
 * and the best table-limit (20) are kept. We do the same lazily, the first time a sentence needs a source phrase, and publish the result in a lock-free
 * open-addressing table: entries are immutable once published, a race between two threads that
 * compute the same phrase is settled by compare-and-swap (the loser frees its copy), and both
 * copies are identical, so results never depend on which thread won. */
#define _GNU_SOURCE
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dec_ff.h"
#include "smt_hash.h"

typedef struct tmp_cand {
    dec_pt_entry e;
    float future, static_score;
    uint32_t order;
} tmp_cand;

/* Best first; ties keep the table's order, so the ranking is deterministic. */
static int cmp_tmp(const void *pa, const void *pb)
{
    const tmp_cand *a = pa, *b = pb;
    if (a->future != b->future)
        return a->future > b->future ? -1 : 1;
    return a->order < b->order ? -1 : a->order > b->order;
}

static uint64_t src_key(const uint32_t *src, size_t n)
{
    uint64_t k = smt_hash_bytes(src, n * sizeof(uint32_t));
    return k ? k : 1;
}

/* Adds the source phrase to the message the table left in err: "...: source phrase 'a b'". */
static int src_error(const dec_table *tb, const uint32_t *src, size_t n, int rc, smt_err *err)
{
    char words[256];
    size_t used = 0;
    for (size_t i = 0; i < n && used + 1 < sizeof words; i++) {
        size_t len;
        const char *w = smt_vocab_word(tb->pt->src_vocab, src[i], &len);
        int k = snprintf(words + used, sizeof words - used, "%s%.*s", i ? " " : "", (int)len, w);
        if (k < 0)
            break;
        used += (size_t)k;
        if (used >= sizeof words)
            used = sizeof words - 1;
    }
    words[used] = '\0';
    char what[SMT_ERR_MSG_MAX];
    snprintf(what, sizeof what, "%s", err && err->msg[0] ? err->msg : "damaged phrase table");
    return smt_err_set(err, rc, "%s (source phrase '%s'; fastsmt --verify checks the whole file)",
                       what, words);
}

/* Builds the entry of one source phrase of table t; *out NULL when the table does not have it. */
static int compute(dec_model *m, unsigned t_idx, const uint32_t *src, size_t n, uint64_t key,
                   dec_centry **out, smt_err *err)
{
    *out = NULL;
    const dec_table *tb = &m->tables[t_idx];
    const uint32_t *to_model = tb->to_model;
    ppt_targets it;
    int rc = ppt_lookup_ids(tb->pt->t, src, n, &it);
    if (rc == SMT_ERR_NOTFOUND)
        return 0;
    if (rc == SMT_ERR_CORRUPT) {
        smt_err_set(err, rc, "%s: damaged group in the phrase table",
                    smt_mapped_path(ppt_mapped(tb->pt->t)));
        return src_error(tb, src, n, rc, err);
    }
    if (rc < 0)
        return smt_err_set(err, rc, "%s: phrase table lookup: %s",
                           smt_mapped_path(ppt_mapped(tb->pt->t)), smt_strerror(rc));
    size_t cap = 64, cnt = 0;
    tmp_cand *t = malloc(cap * sizeof *t);
    if (!t)
        return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
    unsigned ntm = tb->pt->n_scores, nreo = tb->pt->n_reo;
    uint32_t lm_ids[DEC_MAX_LMS * 256];
    ppt_target pe;
    while (ppt_targets_next(&it, &pe)) {
        dec_pt_entry e = {pe.words, pe.n_words, pe.scores, pe.reordering, pe.align, pe.n_align};
        if (cnt == cap && smt_grow(&t, &cap, cnt + 1, sizeof *t, 0)) {
            free(t);
            return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
        }
        tmp_cand *c = &t[cnt];
        c->e = e;
        c->order = (uint32_t)cnt++;
        /* the LM estimate only for phrases of at most 256 words */
        dec_option opt = {e.n_words, e.scores, e.n_words <= 256 ? lm_ids : NULL, NULL, t_idx};
        for (unsigned l = 0; l < m->n_lms && opt.lm_words; l++)
            for (uint32_t i = 0; i < e.n_words; i++)
                lm_ids[l * e.n_words + i] =
                    m->tgt2lm[l][to_model ? to_model[e.words[i]] : e.words[i]];
        dec_ff_option(m, &opt, &c->static_score, &c->future);
    }
    if (it.error) { /* a damaged group: never decode with what was read of it */
        free(t);
        smt_err_set(err, it.error, "%s: damaged group in the phrase table",
                    smt_mapped_path(ppt_mapped(tb->pt->t)));
        return src_error(tb, src, n, it.error, err);
    }
    qsort(t, cnt, sizeof *t, cmp_tmp);
    if (tb->table_limit > 0 && cnt > (size_t)tb->table_limit)
        cnt = (size_t)tb->table_limit;
    /* one block: entry, candidates, source ids, then per candidate lm ids, tm and reo scores and
     * (a table after the first) its words as model ids */
    size_t words = 0;
    for (size_t i = 0; i < cnt; i++)
        words += t[i].e.n_words;
    size_t bytes = sizeof(dec_centry) + cnt * sizeof(dec_cand) + n * 4 +
                   (words * (m->n_lms + (to_model != NULL)) + cnt * (ntm + nreo)) * 4;
    char *blk = malloc(bytes);
    if (!blk) {
        free(t);
        return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
    }
    dec_centry *ce = (dec_centry *)blk;
    ce->key = key;
    ce->n_src = (uint32_t)n;
    ce->n = (uint32_t)cnt;
    ce->cands = (dec_cand *)(ce + 1);
    uint32_t *u = (uint32_t *)(ce->cands + cnt);
    ce->src = u;
    memcpy(u, src, n * 4);
    u += n;
    for (size_t i = 0; i < cnt; i++) {
        dec_cand *c = &ce->cands[i];
        const dec_pt_entry *pe = &t[i].e;
        c->words = pe->words;
        c->table = (uint16_t)t_idx;
        c->n_words = (uint16_t)pe->n_words;
        c->align = pe->align;
        c->n_align = (uint16_t)pe->n_align;
        c->static_score = t[i].static_score;
        c->future = t[i].future;
        if (to_model) {
            for (uint32_t k = 0; k < pe->n_words; k++)
                u[k] = to_model[pe->words[k]];
            c->words = u;
            u += pe->n_words;
        }
        c->lm_words = u;
        for (unsigned l = 0; l < m->n_lms; l++)
            for (uint32_t k = 0; k < pe->n_words; k++)
                *u++ = m->tgt2lm[l][c->words[k]];
        float *f = (float *)u;
        c->tm = f;
        for (unsigned k = 0; k < ntm; k++)
            f[k] = dec_floor_ln(pe->scores[k]);
        f += ntm;
        c->reo = NULL;
        if (nreo && pe->reo) {
            c->reo = f;
            for (unsigned k = 0; k < nreo; k++)
                f[k] = dec_floor_ln(pe->reo[k]);
        }
        f += nreo;
        u = (uint32_t *)f;
    }
    free(t);
    *out = ce;
    return 0;
}

int dec_cands_get(dec_model *m, unsigned t, const uint32_t *src, size_t n, const dec_centry **out,
                  smt_err *err)
{
    *out = NULL;
    dec_table *tb = &m->tables[t];
    uint64_t key = src_key(src, n);
    dec_centry *mine = NULL;
    for (uint64_t i = smt_hash_u64(key) & tb->cache_mask, probes = 0;;
         i = (i + 1) & tb->cache_mask, probes++) {
        dec_centry *e = atomic_load_explicit(&tb->cache[i], memory_order_acquire);
        if (!e) {
            if (!mine) {
                int rc = compute(m, t, src, n, key, &mine, err);
                if (rc < 0)
                    return rc;
                if (!mine) {
                    /* not in the table: remembered too (every sentence asks for its spans), but
                     * at most half as many misses as the table has sources, so that the cache
                     * stays at most 3/4 full */
                    if (atomic_fetch_add_explicit(&tb->n_misses, 1, memory_order_relaxed) >=
                        tb->pt->n_sources / 2)
                        return 0;
                    if (!(mine = calloc(1, sizeof *mine + n * 4)))
                        return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
                    mine->key = key;
                    mine->n_src = (uint32_t)n;
                    mine->src = (uint32_t *)(mine + 1);
                    memcpy(mine->src, src, n * 4);
                }
            }
            if (probes > tb->cache_mask / 2) {
                *out = mine; /* never happens with the table sized at twice the sources */
                return 0;
            }
            dec_centry *expected = NULL;
            if (atomic_compare_exchange_strong_explicit(&tb->cache[i], &expected, mine,
                                                        memory_order_acq_rel,
                                                        memory_order_acquire)) {
                *out = mine;
                return 0;
            }
            e = expected; /* another thread published here first: examine its entry */
        }
        if (e->key == key && e->n_src == n && memcmp(e->src, src, n * 4) == 0) {
            free(mine);
            *out = e;
            return 0;
        }
    }
}

void dec_cache_free(dec_model *m)
{
    for (unsigned t = 0; t < m->n_tables; t++) {
        dec_table *tb = &m->tables[t];
        if (!tb->cache)
            continue;
        for (uint64_t i = 0; i <= tb->cache_mask; i++)
            free(atomic_load_explicit(&tb->cache[i], memory_order_relaxed));
        free(tb->cache);
        tb->cache = NULL;
    }
}
