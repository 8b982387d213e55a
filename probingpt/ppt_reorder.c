/* Merging the lexicalized reordering table into the phrase pairs. Moses writes both tables in the
 * same order, so a lockstep merge matches almost every line with one comparison. Whatever the
 * lockstep cannot place (an entry that seems to have no phrase pair, a pair whose entry seems
 * missing) is settled after the phrase table by exact (source ids, target ids) lookups, so any
 * order of either table gives the same, correct result; only the memory and time differ. */
#include <stdlib.h>
#include <string.h>

#include "ppt_reorder.h"
#include "ppt_text.h"

#define RERR(b, ...) smt_err_set((b)->err, SMT_ERR_PARSE, "%s:%llu: " __VA_ARGS__)

/* Reads the next reordering line into b->key / b->scores; b->valid = 0 at the end. */
static int rt_read(ppt_reorder *b)
{
    char *line;
    size_t len;
    int rc = smt_lines_next(b->lines, &line, &len, b->err);
    if (rc <= 0) {
        b->valid = 0;
        return rc;
    }
    b->rep->reordering_lines++;
    b->rep->input_bytes += len + 1;
    unsigned long long ln = (unsigned long long)smt_lines_lineno(b->lines);
    ppt_span f[PPT_FIELDS_MAX], rest, bad;
    int nf = ppt_split_fields(line, len, f, &rest);
    if (nf != 3)
        return RERR(b, "expected source ||| target ||| scores, found %d field%s", b->path, ln, nf,
                    nf == 1 ? "" : "s");
    if (f[0].b == f[0].e)
        return RERR(b, "empty source phrase", b->path, ln);
    int n = ppt_parse_probs(f[2], b->scores, PPT_MAX_SCORES, &bad);
    if (n == PPT_NUM_BAD || n == PPT_NUM_NEGATIVE)
        return RERR(b, "%s reordering score '%.*s'", b->path, ln, ppt_num_what(n),
                    (int)(bad.e - bad.b), bad.b);
    if (n == PPT_NUM_TOO_MANY)
        return RERR(b, "more than %u reordering scores", b->path, ln, PPT_MAX_SCORES);
    if (n == 0)
        return RERR(b, "no reordering scores", b->path, ln);
    if (!b->nr)
        b->nr = (uint32_t)n;
    else if ((uint32_t)n != b->nr)
        return RERR(b, "%d reordering scores, expected %u as on the first line", b->path, ln, n, b->nr);
    b->key = line;
    b->key_len = (size_t)(f[1].e - line);
    b->valid = 1;
    return 0;
}

int ppt_reorder_open(ppt_reorder *b, const char *path, unsigned lines_flags, ppt_build_report *rep,
                     smt_err *err)
{
    memset(b, 0, sizeof *b);
    b->rep = rep;
    b->err = err;
    int rc = smt_lines_open(&b->lines, path, lines_flags, err);
    if (rc)
        return rc;
    b->path = smt_lines_path(b->lines);
    if ((rc = rt_read(b)))
        return rc;
    if (!b->valid)
        return smt_err_set(err, SMT_ERR_PARSE, "%s: empty reordering table", b->path);
    return 0;
}

void ppt_reorder_close(ppt_reorder *b)
{
    smt_lines_close(b->lines);
    smt_buf_free(&b->left_text);
    free(b->left_off);
    free(b->left_scores);
    memset(b, 0, sizeof *b);
}

static int oom(ppt_reorder *b)
{
    return smt_err_set(b->err, SMT_ERR_NOMEM, "probingpt build: out of memory");
}

/* Orders keys as the lines "key ||| ..." sort bytewise (LC_ALL=C), which is how Moses sorts. */
static int cmp_key(const char *a, size_t al, const char *b, size_t bl)
{
    static const char tail[] = " |||";
    size_t n = al < bl ? al : bl;
    int c = memcmp(a, b, n);
    if (c || al == bl)
        return c;
    const char *rest = al > bl ? a + n : b + n;
    size_t rl = (al > bl ? al : bl) - n;
    int r = memcmp(rest, tail, rl < 4 ? rl : 4);
    if (r == 0)
        r = rl > 4 ? 1 : (rl < 4 ? -1 : 0); /* equal over the tail: the longer sorts later */
    return al > bl ? (r ? r : 1) : (r ? -r : -1);
}

static int push_leftover(ppt_reorder *b)
{
    if (smt_buf_reserve(&b->left_text, b->key_len + 1) ||
        smt_grow(&b->left_off, &b->cap_left_off, b->n_left + 2, sizeof *b->left_off, 1024) ||
        smt_grow(&b->left_scores, &b->cap_left, b->n_left + 1, b->nr * sizeof(float), 1024))
        return oom(b);
    b->left_off[b->n_left] = b->left_text.len; /* the key and its NUL */
    smt_buf_append(&b->left_text, b->key, b->key_len); /* reserved: cannot fail */
    smt_buf_putc(&b->left_text, '\0');
    memcpy(b->left_scores + b->n_left * b->nr, b->scores, b->nr * sizeof(float));
    b->n_left++;
    return 0;
}

int ppt_reorder_match(ppt_reorder *b, const char *key, size_t key_len, float *dst, int *matched)
{
    *matched = 0;
    while (b->valid) {
        int c = cmp_key(key, key_len, b->key, b->key_len);
        if (c < 0)
            return 0; /* the reordering table is ahead: this pair may have no entry */
        int rc;
        if (c == 0) {
            memcpy(dst, b->scores, b->nr * sizeof *dst);
            *matched = 1;
            return rt_read(b);
        }
        /* behind: an entry without a pair so far, or the tables are in different orders */
        if ((rc = push_leftover(b)) || (rc = rt_read(b)))
            return rc;
    }
    return 0;
}

/* ---- phase 2: exact lookups for what the lockstep merge left ---- */

/* Words of s to ids of an existing vocabulary; returns 0, or -1 when a word is absent or there are
 * too many (an unknown word means no such phrase pair). */
static int map_words(const smt_vocab_builder *v, ppt_span s, uint32_t *ids, uint32_t *n)
{
    smt_vocab view = smt_vocab_builder_view(v);
    ppt_span w;
    *n = 0;
    while (ppt_next_word(&s, &w)) {
        if (*n == PPT_MAX_PHRASE_LEN)
            return -1;
        uint32_t id = smt_vocab_find(&view, w.b, (size_t)(w.e - w.b));
        if (id == SMT_VOCAB_NONE)
            return -1;
        ids[(*n)++] = id;
    }
    return 0;
}

/* The pairs without an entry, by (source ids, target ids). */
typedef struct {
    uint64_t *slots; /* unmatched index + 1; 0 empty */
    uint64_t mask;
    uint64_t *hash;
    uint8_t *filled;
    uint32_t *payload;
    const uint64_t *unmatched;
    const smt_vocab_builder *src, *tgt;
    uint32_t ns, nr;
} pair_map;

static uint64_t pair_hash(const uint32_t *s, uint32_t sn, const uint32_t *t, uint32_t tn)
{
    return smt_hash_bytes_seed(t, tn * sizeof *t, smt_hash_bytes(s, sn * sizeof *s));
}

/* Places scores on the unmatched pair (src, tgt) not yet filled; returns 1 when placed. */
static int place(pair_map *pm, ppt_span key, const float *scores)
{
    ppt_span f[PPT_FIELDS_MAX], rest;
    uint32_t s[PPT_MAX_PHRASE_LEN], t[PPT_MAX_PHRASE_LEN], sn, tn;
    if (ppt_split_fields(key.b, (size_t)(key.e - key.b), f, &rest) != 2 ||
        map_words(pm->src, f[0], s, &sn) || map_words(pm->tgt, f[1], t, &tn))
        return 0;
    uint64_t h = pair_hash(s, sn, t, tn);
    for (uint64_t j = h & pm->mask; pm->slots[j]; j = (j + 1) & pm->mask) {
        uint64_t u = pm->slots[j] - 1;
        if (pm->hash[u] != h || pm->filled[u])
            continue;
        const uint32_t *g = pm->payload + pm->unmatched[2 * u];
        uint32_t *r = pm->payload + pm->unmatched[2 * u + 1];
        uint32_t tl = ppt_info_tgt_len(r[0]);
        if (g[0] != sn || tl != tn || memcmp(g + PPT_GROUP_HEADER, s, sn * 4) ||
            memcmp(r + ppt_record_head(r[0]), t, tn * 4))
            continue;
        memcpy(r + ppt_record_head(r[0]) + tl + pm->ns, scores, pm->nr * sizeof *scores);
        r[0] |= PPT_INFO_REORDERING;
        pm->filled[u] = 1;
        return 1;
    }
    return 0;
}

int ppt_reorder_finish(ppt_reorder *b, uint32_t *payload, const uint64_t *unmatched,
                       size_t n_unmatched, const smt_vocab_builder *src,
                       const smt_vocab_builder *tgt, uint32_t ns)
{
    int rc = 0;
    size_t n = n_unmatched;
    pair_map pm = {0};
    uint64_t size = 16;
    while (size < 2 * (uint64_t)n)
        size *= 2;
    pm.slots = calloc(size, sizeof *pm.slots);
    pm.hash = malloc((n ? n : 1) * sizeof *pm.hash);
    pm.filled = calloc(n ? n : 1, 1);
    pm.mask = size - 1;
    pm.payload = payload;
    pm.unmatched = unmatched;
    pm.src = src;
    pm.tgt = tgt;
    pm.ns = ns;
    pm.nr = b->nr;
    if (!pm.slots || !pm.hash || !pm.filled) {
        rc = oom(b);
        goto done;
    }
    for (size_t u = 0; u < n; u++) {
        const uint32_t *g = payload + unmatched[2 * u];
        const uint32_t *r = payload + unmatched[2 * u + 1];
        pm.hash[u] = pair_hash(g + PPT_GROUP_HEADER, g[0], r + ppt_record_head(r[0]), ppt_info_tgt_len(r[0]));
        uint64_t j = pm.hash[u] & pm.mask;
        while (pm.slots[j])
            j = (j + 1) & pm.mask;
        pm.slots[j] = u + 1;
    }
    uint64_t placed = 0, seen = 0;
    for (size_t i = 0; i < b->n_left; i++) {
        const char *k = b->left_text.data + b->left_off[i];
        ppt_span key = {k, k + strlen(k)};
        placed += n ? (uint64_t)place(&pm, key, b->left_scores + i * b->nr) : 0;
        seen++;
    }
    while (b->valid) {
        ppt_span key = {b->key, b->key + b->key_len};
        placed += n ? (uint64_t)place(&pm, key, b->scores) : 0;
        seen++;
        if ((rc = rt_read(b)))
            goto done;
    }
    b->rep->no_reordering = n - placed;
    b->rep->orphan_reordering = seen - placed;
done:
    free(pm.slots);
    free(pm.hash);
    free(pm.filled);
    return rc;
}
