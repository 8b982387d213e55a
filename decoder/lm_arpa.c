/* lm_arpa.c — an in-memory backoff LM read from ARPA text, with KenLM's scoring and state rules.
 *
 * It serves the tests' hand-built models and moses.ini files that name an ARPA file directly; the
 * mapped glm binary is the fast path. Storage follows KenLM's probing model: unigrams in arrays
 * indexed by word id, higher orders in one linear-probing table per order keyed by a 64-bit hash of
 * the n-gram read backwards (predicted word first), so one walk from the word back through the
 * history finds the longest match. As in KenLM, a key is trusted without storing the words.
 * "Can extend" (the n-gram is the context of a longer one, or has a non-zero backoff) is encoded
 * KenLM's way: a backoff of -0.0 means "never a context". */
#define _GNU_SOURCE
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "dec_internal.h"
#include "smt_hash.h"
#include "smt_lines.h"
#include "smt_num.h"

typedef struct ngram_slot {
    uint64_t key; /* 0: empty */
    float prob, backoff;
} ngram_slot;

typedef struct ngram_table {
    ngram_slot *slots;
    uint64_t mask, used;
} ngram_table;

typedef struct arpa_lm {
    dec_lm base;
    smt_vocab_builder *vb;
    smt_vocab vocab;
    uint32_t n_words;
    size_t uni_cap;           /* room in uni_prob / uni_backoff (grown as unigrams are read) */
    uint64_t uni_declared;    /* the header's unigram count */
    float *uni_prob, *uni_backoff;
    ngram_table tables[DEC_LM_MAX_ORDER + 1]; /* [2..order] */
} arpa_lm;

static inline uint64_t key_start(uint32_t w) { return (uint64_t)w + 1; }

static inline uint64_t key_extend(uint64_t k, uint32_t h)
{
    uint64_t r = smt_hash_u64((k * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)h + 1));
    return r ? r : 1;
}

static inline int has_extension(float backoff)
{
    return !(backoff == 0.0f && signbit(backoff));
}

static ngram_slot *table_find(const ngram_table *t, uint64_t key)
{
    for (uint64_t i = smt_hash_u64(key) & t->mask;; i = (i + 1) & t->mask) {
        ngram_slot *s = &t->slots[i];
        if (s->key == key)
            return s;
        if (s->key == 0)
            return NULL;
    }
}

/* Doubles a table (the declared counts only size the first allocation: a table grows with what
 * is read, so a hostile header costs nothing). */
static int table_grow(ngram_table *t)
{
    uint64_t size = (t->mask + 1) * 2;
    ngram_slot *slots = calloc(size, sizeof *slots);
    if (!slots)
        return SMT_ERR_NOMEM;
    for (uint64_t i = 0; i <= t->mask; i++) {
        const ngram_slot *o = &t->slots[i];
        if (!o->key)
            continue;
        uint64_t j = smt_hash_u64(o->key) & (size - 1);
        while (slots[j].key)
            j = (j + 1) & (size - 1);
        slots[j] = *o;
    }
    free(t->slots);
    t->slots = slots;
    t->mask = size - 1;
    return 0;
}

/* Inserts key (or returns the existing slot), growing the table as needed; NULL when out of
 * memory. */
static ngram_slot *table_insert(ngram_table *t, uint64_t key, int *fresh)
{
    if ((t->used + 1) * 4 > (t->mask + 1) * 3 && table_grow(t))
        return NULL;
    for (uint64_t i = smt_hash_u64(key) & t->mask;; i = (i + 1) & t->mask) {
        ngram_slot *s = &t->slots[i];
        if (s->key == key) {
            *fresh = 0;
            return s;
        }
        if (s->key == 0) {
            s->key = key;
            t->used++;
            *fresh = 1;
            return s;
        }
    }
}

static uint32_t arpa_index(const dec_lm *lm, const char *word, size_t len)
{
    const arpa_lm *a = lm->impl;
    uint32_t id = smt_vocab_find(&a->vocab, word, len);
    return id == SMT_VOCAB_NONE ? 0 : id;
}

static float arpa_score(const dec_lm *lm, const dec_lm_state *in_p, uint32_t w, dec_lm_state *out)
{
    const arpa_lm *a = lm->impl;
    dec_lm_state in = *in_p;
    if (w >= a->n_words)
        w = 0;
    float prob = a->uni_prob[w];
    dec_lm_state o;
    memset(&o, 0, sizeof o);
    o.words[0] = w;
    o.backoff[0] = a->uni_backoff[w];
    unsigned next_use = has_extension(o.backoff[0]) ? 1 : 0, match = 1;
    uint64_t key = key_start(w);
    for (unsigned j = 1; j <= in.length && j < lm->order; j++) {
        key = key_extend(key, in.words[j - 1]);
        const ngram_slot *s = table_find(&a->tables[j + 1], key);
        if (!s)
            break;
        prob = s->prob;
        match = j + 1;
        if (j + 1 < lm->order) {
            o.backoff[j] = s->backoff;
            o.words[j] = in.words[j - 1];
            if (has_extension(s->backoff))
                next_use = j + 1;
        }
    }
    for (unsigned i = match - 1; i < in.length; i++)
        prob += in.backoff[i];
    for (unsigned i = next_use; i < DEC_LM_MAX_ORDER - 1; i++) {
        o.words[i] = 0;
        o.backoff[i] = 0;
    }
    o.length = (uint8_t)next_use;
    *out = o;
    return prob;
}

static void arpa_free(dec_lm *lm)
{
    if (!lm)
        return;
    arpa_lm *a = lm->impl;
    smt_vocab_builder_free(a->vb);
    free(a->uni_prob);
    free(a->uni_backoff);
    for (unsigned i = 0; i <= DEC_LM_MAX_ORDER; i++)
        free(a->tables[i].slots);
    free(a);
}

void dec_lm_begin_state(const dec_lm *lm, dec_lm_state *s)
{
    memset(s, 0, sizeof *s);
    dec_lm_state null;
    memset(&null, 0, sizeof null);
    /* <s>'s own probability is irrelevant; its backoff matters (KenLM's BeginSentenceState). */
    dec_lm_state tmp;
    lm->score(lm, &null, lm->bos, &tmp);
    s->words[0] = lm->bos;
    s->backoff[0] = tmp.length ? tmp.backoff[0] : 0.0f;
    s->length = 1;
}

/* ---------------------------------------------------------------- reading */

typedef struct reader {
    smt_lines *r;
    const char *path;
    smt_err *err;
} reader;

static int next_line(reader *rd, char **line, int required)
{
    size_t len;
    int rc = smt_lines_next(rd->r, line, &len, rd->err);
    if (rc < 0)
        return rc;
    if (rc == 0)
        return required ? smt_err_set(rd->err, SMT_ERR_PARSE, "%s: unexpected end of file",
                                      rd->path)
                        : 0;
    return 1;
}

#define PERR(...) smt_err_set(err, SMT_ERR_PARSE, __VA_ARGS__)

static int split_ws(char *s, char **tok, int max)
{
    int n = 0;
    while (*s) {
        while (*s == ' ' || *s == '\t' || *s == '\r')
            *s++ = '\0';
        if (!*s)
            break;
        if (n == max)
            return max + 1;
        tok[n++] = s;
        while (*s && *s != ' ' && *s != '\t' && *s != '\r')
            s++;
    }
    return n;
}

/* Marks the context of an n-gram (its words without the last) as extendable. ids: text order. */
static void mark_context(arpa_lm *a, const uint32_t *ids, unsigned n)
{
    unsigned c = n - 1; /* context length */
    if (c == 1) {
        if (!has_extension(a->uni_backoff[ids[0]]))
            a->uni_backoff[ids[0]] = 0.0f;
        return;
    }
    uint64_t key = key_start(ids[c - 1]);
    for (int i = (int)c - 2; i >= 0; i--)
        key = key_extend(key, ids[i]);
    ngram_slot *s = table_find(&a->tables[c], key);
    if (s && !has_extension(s->backoff))
        s->backoff = 0.0f;
}

/* Makes room in the unigram arrays for id. */
static int uni_grow(arpa_lm *a, uint32_t id)
{
    size_t cap = a->uni_cap * 2 > (size_t)id + 1 ? a->uni_cap * 2 : (size_t)id + 1;
    float *p = realloc(a->uni_prob, cap * sizeof *p);
    if (!p)
        return SMT_ERR_NOMEM;
    a->uni_prob = p;
    float *b = realloc(a->uni_backoff, cap * sizeof *b);
    if (!b)
        return SMT_ERR_NOMEM;
    a->uni_backoff = b;
    memset(p + a->uni_cap, 0, (cap - a->uni_cap) * sizeof *p);
    memset(b + a->uni_cap, 0, (cap - a->uni_cap) * sizeof *b);
    a->uni_cap = cap;
    return 0;
}

/* Parses a count line "ngram N=C" strictly: 1 with *n and *c, 0 when it is not one. */
static int count_line(const char *line, unsigned *n, uint64_t *c)
{
    size_t len = strlen(line);
    while (len && (line[len - 1] == ' ' || line[len - 1] == '\t' || line[len - 1] == '\r'))
        len--;
    if (len < 6 || strncmp(line, "ngram ", 6) != 0)
        return 0;
    const char *eq = memchr(line + 6, '=', len - 6);
    long long nv, cv;
    if (!eq || smt_parse_ll(line + 6, (size_t)(eq - line - 6), 1, 1000, &nv) ||
        smt_parse_ll(eq + 1, len - (size_t)(eq + 1 - line), 0, __LONG_LONG_MAX__, &cv) ||
        eq[1] == '+' || eq[1] == '-' || line[6] == '+' || line[6] == '-')
        return 0;
    *n = (unsigned)nv;
    *c = (uint64_t)cv;
    return 1;
}

static int read_section(arpa_lm *a, reader *rd, unsigned n, uint64_t count, smt_err *err)
{
    char *line, *tok[DEC_LM_MAX_ORDER + 3];
    uint32_t ids[DEC_LM_MAX_ORDER];
    for (uint64_t i = 0; i < count; i++) {
        int rc = next_line(rd, &line, 1);
        if (rc < 0)
            return rc;
        unsigned long ln = (unsigned long)smt_lines_lineno(rd->r);
        int nt = split_ws(line, tok, DEC_LM_MAX_ORDER + 2);
        if (nt == 0 || line[0] == '\\')
            return PERR("%s:%lu: %u-grams section has %llu lines, the header says %llu", rd->path,
                        ln, n, (unsigned long long)i, (unsigned long long)count);
        if (nt != (int)n + 1 && nt != (int)n + 2)
            return PERR("%s:%lu: expected %u words", rd->path, ln, n);
        float prob, bo = 0.0f;
        if (smt_parse_float(tok[0], strlen(tok[0]), -INFINITY, 0.0f, SMT_NUM_ALLOW_INF, &prob))
            return PERR("%s:%lu: bad log10 probability '%.64s'", rd->path, ln, tok[0]);
        if (nt == (int)n + 2 &&
            smt_parse_float(tok[n + 1], strlen(tok[n + 1]), -FLT_MAX, FLT_MAX, 0, &bo))
            return PERR("%s:%lu: bad backoff '%.64s'", rd->path, ln, tok[n + 1]);
        if (bo == 0.0f)
            bo = -0.0f; /* no extension until a longer n-gram uses it as a context */
        for (unsigned k = 0; k < n; k++) {
            if (n == 1) {
                int rc2 = smt_vocab_builder_add(a->vb, tok[1], strlen(tok[1]), &ids[0], err);
                if (rc2)
                    return rc2;
            } else {
                ids[k] = smt_vocab_find(&a->vocab, tok[k + 1], strlen(tok[k + 1]));
                if (ids[k] == SMT_VOCAB_NONE)
                    return PERR("%s:%lu: word '%s' is not a unigram", rd->path, ln, tok[k + 1]);
            }
        }
        if (n == 1) {
            if (ids[0] > a->uni_declared) /* <unk> comes first, with or without a line */
                return PERR("%s:%lu: more 1-grams than the header's %llu", rd->path, ln,
                            (unsigned long long)a->uni_declared);
            if (ids[0] >= a->uni_cap && uni_grow(a, ids[0]))
                return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
            a->uni_prob[ids[0]] = prob;
            a->uni_backoff[ids[0]] = bo;
            continue;
        }
        /* the key reads the n-gram backwards; its context must exist (KenLM refuses otherwise) */
        uint64_t key = key_start(ids[n - 1]);
        for (int k = (int)n - 2; k >= 0; k--) {
            if (k == 0 && n > 2) {
                /* key now covers the suffix ids[1..n): insert it when missing (KenLM's rule) */
                if (!table_find(&a->tables[n - 1], key)) {
                    /* prob of the suffix = what the lower orders give it */
                    dec_lm_state ctx;
                    memset(&ctx, 0, sizeof ctx);
                    for (unsigned m = 1; m + 1 < n; m++)
                        a->base.score(&a->base, &ctx, ids[m], &ctx);
                    float p = a->base.score(&a->base, &ctx, ids[n - 1], &ctx);
                    int fresh;
                    ngram_slot *s = table_insert(&a->tables[n - 1], key, &fresh);
                    if (!s)
                        return smt_err_set(err, SMT_ERR_NOMEM, "%s:%lu: out of memory",
                                           rd->path, ln);
                    s->prob = p;
                    s->backoff = 0.0f;
                }
            }
            key = key_extend(key, ids[k]);
        }
        int fresh;
        ngram_slot *s = table_insert(&a->tables[n], key, &fresh);
        if (!s)
            return smt_err_set(err, SMT_ERR_NOMEM, "%s:%lu: out of memory", rd->path, ln);
        s->prob = prob;
        s->backoff = bo;
        mark_context(a, ids, n);
    }
    return 0;
}

int dec_lm_arpa_load(dec_lm **out, const char *path, FILE *warn, smt_err *err)
{
    *out = NULL;
    arpa_lm *a = calloc(1, sizeof *a);
    if (!a)
        return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
    a->base.impl = a;
    a->base.index = arpa_index;
    a->base.score = arpa_score;
    a->base.free = arpa_free;
    a->base.kind = "arpa";
    reader rd = {NULL, path, err};
    uint64_t counts[DEC_LM_MAX_ORDER + 1] = {0};
    unsigned order = 0;
    char *line;
    int rc = smt_lines_open(&rd.r, path, 0, err);
    if (rc)
        goto fail;
    while ((rc = next_line(&rd, &line, 1)) == 1) {
        if (strcmp(line, "\\data\\") == 0)
            break;
        if (line[strspn(line, " \t\r")] && line[0] != '#') {
            rc = PERR("%s:%lu: text before \\data\\", path, (unsigned long)smt_lines_lineno(rd.r));
            goto fail;
        }
    }
    if (rc < 0)
        goto fail;
    while ((rc = next_line(&rd, &line, 1)) == 1) {
        unsigned n;
        uint64_t c;
        if (line[strspn(line, " \t\r")] == '\0')
            break;
        if (!count_line(line, &n, &c) || n != order + 1) {
            rc = PERR("%s:%lu: bad count line '%.64s' (expected 'ngram %u=COUNT')", path,
                      (unsigned long)smt_lines_lineno(rd.r), line, order + 1);
            goto fail;
        }
        if (n > DEC_LM_MAX_ORDER) {
            rc = smt_err_set(err, SMT_ERR_LIMIT, "%s: order %u is above %d", path, n,
                             DEC_LM_MAX_ORDER);
            goto fail;
        }
        counts[n] = c;
        order = n;
    }
    if (rc < 0)
        goto fail;
    if (order < 2) {
        rc = PERR("%s: an ARPA model needs order 2 or more", path);
        goto fail;
    }
    a->base.order = order;
    /* The declared counts only size the first allocations, capped by the file's size (a line of
     * the file holds at least a byte): tables and arrays grow with what is actually read. */
    struct stat sb;
    uint64_t cap = stat(path, &sb) == 0 && sb.st_size > 0 ? (uint64_t)sb.st_size : 0;
    if (cap < 65536)
        cap = 65536;
    a->uni_declared = counts[1];
    a->uni_cap = (size_t)((counts[1] < cap ? counts[1] : cap) + 1);
    a->n_words = 0;
    a->uni_prob = calloc(a->uni_cap, sizeof(float));
    a->uni_backoff = calloc(a->uni_cap, sizeof(float));
    if (!a->uni_prob || !a->uni_backoff ||
        (rc = smt_vocab_builder_create(&a->vb, err)) != 0) {
        rc = rc ? rc : smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
        goto fail;
    }
    uint32_t unk;
    if ((rc = smt_vocab_builder_add(a->vb, "<unk>", 5, &unk, err)) != 0)
        goto fail;
    a->uni_prob[0] = NAN; /* "not seen yet" */
    for (unsigned n = 2; n <= order; n++) {
        uint64_t want = counts[n] < cap ? counts[n] : cap, size = 16;
        while (size < want * 2 + 16)
            size <<= 1;
        a->tables[n].slots = calloc(size, sizeof(ngram_slot));
        a->tables[n].mask = size - 1;
        if (!a->tables[n].slots) {
            rc = smt_err_set(err, SMT_ERR_NOMEM, "out of memory for %llu %u-grams",
                             (unsigned long long)counts[n], n);
            goto fail;
        }
    }
    for (unsigned n = 1; n <= order; n++) {
        char want[32];
        snprintf(want, sizeof want, "\\%u-grams:", n);
        while ((rc = next_line(&rd, &line, 1)) == 1 && line[strspn(line, " \t\r")] == '\0')
            ;
        if (rc < 0)
            goto fail;
        if (strncmp(line, want, strlen(want)) != 0) {
            rc = PERR("%s:%lu: expected %s", path, (unsigned long)smt_lines_lineno(rd.r), want);
            goto fail;
        }
        if ((rc = read_section(a, &rd, n, counts[n], err)) != 0)
            goto fail;
        if (n == 1) {
            a->vocab = smt_vocab_builder_view(a->vb);
            a->n_words = a->vocab.n;
            if (isnan(a->uni_prob[0])) {
                a->uni_prob[0] = -100.0f;
                a->uni_backoff[0] = -0.0f;
                if (warn)
                    fprintf(warn, "warning: %s has no <unk>; using log10 p = -100 as KenLM\n",
                            path);
            }
        }
    }
    while ((rc = next_line(&rd, &line, 1)) == 1 && line[strspn(line, " \t\r")] == '\0')
        ;
    if (rc < 0)
        goto fail;
    if (strncmp(line, "\\end\\", 5) != 0) {
        rc = PERR("%s:%lu: expected \\end\\", path, (unsigned long)smt_lines_lineno(rd.r));
        goto fail;
    }
    smt_lines_close(rd.r);
    a->base.bos = smt_vocab_find(&a->vocab, "<s>", 3);
    a->base.eos = smt_vocab_find(&a->vocab, "</s>", 4);
    if (a->base.bos == SMT_VOCAB_NONE || a->base.eos == SMT_VOCAB_NONE) {
        arpa_free(&a->base);
        return PERR("%s: <s> or </s> is missing", path);
    }
    *out = &a->base;
    return 0;
fail:
    smt_lines_close(rd.r);
    arpa_free(&a->base);
    return rc;
}
