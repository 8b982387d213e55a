/* glm_kenlm.h — glm's second backend: a KenLM binary (build_binary's output) queried in place.
 *
 * Supported: the `probing` layout (KenLM's default), `rest probing` (probing with rest costs,
 * build_binary -r), `trie`, `trie -q N -b M` (quantized) and `trie -a N` (array-compressed
 * pointers, with or without quantization). A probing file's vocabulary is a linear-probing hash
 * table of MurmurHash64A word hashes (ids in ARPA order, <unk> 0); its n-grams are linear-probing
 * hash tables of n-gram hashes (the word ids chained by KenLM's CombineWordHash, predicted word
 * first), so the words of an n-gram are not stored and the file cannot be converted: it is mapped
 * and probed as KenLM probes it. A trie file's bit-packed levels are searched as KenLM searches
 * them (the same entries, hence the same floats; quantized values are read from the file's own
 * bins). A rest probing file's rest costs serve only glm_kenlm_phrase_estimate (Moses's phrase
 * estimates); the scores are the probing layout's.
 *
 * A model opened from a KenLM binary is a glm_model with `ken` set: glm_model.c, glm_batch.c and
 * glm_text.c dispatch to the functions below; the state logic (glm_finish, glm_row_combine) is
 * glm_layout.h's, shared with the trie, so the two backends follow one set of rules. This file
 * calls nothing of glm's .c files (it sits beside glm_layout.h at the bottom of the layers). */
#ifndef GLM_KENLM_H
#define GLM_KENLM_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "glm.h"
#include "smt_error.h"

struct glm_model;

typedef struct glm_kenlm_table {
    const uint8_t *base; /* buckets * entry bytes, entries {uint64 key; payload}, key 0 = empty */
    uint64_t buckets;
    /* key % buckets without a division: m = floor((2^64 - 1) / buckets), so m >= 2^64 / buckets - 1
     * and q = floor(key * m / 2^64) is the quotient or one less (q > key / buckets - 2, q <= key /
     * buckets); key - q * buckets then needs at most one subtraction (exact for every 64-bit key,
     * tests/test_glm_kenlm.c). One multiply where Lemire's 128-bit remainder takes four. */
    uint64_t m;
    const uint8_t *end; /* base + buckets * entry bytes, where a probe wraps (a file's tables) */
} glm_kenlm_table;

/* KenLM's CombineWordHash: an n-gram's key is its predicted word's id, then combined with each
 * earlier word's id, most recent first. */
static inline uint64_t glm_kenlm_combine(uint64_t cur, glm_word next)
{
    return (cur * 8978948897894561157ull) ^
           ((uint64_t)(1u + (uint64_t)next) * 17894857484156487943ull);
}

/* The buckets of a probing table of `entries` entries: max(entries + 1, (uint64)(multiplier *
 * (float)entries)), KenLM's sizing (in float). */
uint64_t glm_kenlm_buckets(uint64_t entries, float multiplier);

/* KenLM's Sanity block as build_binary writes it on a little-endian 64-bit machine: the magic
 * (GLM_KENLM_MAGIC_PREFIX " 5\n", NUL-padded to 56 bytes), then test floats and integers. */
#define GLM_KENLM_SANITY_BYTES 88u
#define GLM_KENLM_MAGIC_PREFIX "mmap lm http://kheafield.com/code format version"
void glm_kenlm_sanity(uint8_t s[GLM_KENLM_SANITY_BYTES]);
/* FixedWidthParameters: uint8 order, float multiplier, int32 model type, bool has_vocabulary,
 * uint32 search version (offsets 0, 4, 8, 12, 16); the order's counts (uint64) follow. */
#define GLM_KENLM_FIXED_BYTES 20u

/* The bytes before the vocabulary: sanity, parameters and counts, padded to 8. */
static inline uint64_t glm_kenlm_header_bytes(unsigned order)
{
    return (GLM_KENLM_SANITY_BYTES + GLM_KENLM_FIXED_BYTES + 8ull * order + 7) & ~7ull;
}

/* A stored probability with its sign bit set (negative) or clear: KenLM keeps "extends left" in
 * it (clear: some n-gram one order up has this one as its suffix). */
static inline float glm_kenlm_set_sign(float p, int negative)
{
    union { float f; uint32_t u; } v;
    v.f = p;
    v.u = negative ? (v.u | 0x80000000u) : (v.u & 0x7fffffffu);
    return v.f;
}

/* Sets t's bucket count (>= 1) and its reciprocal. */
static inline void glm_kenlm_table_size(glm_kenlm_table *t, uint64_t buckets)
{
    t->buckets = buckets;
    t->m = UINT64_MAX / buckets;
}

static inline uint64_t glm_kenlm_bucket(const glm_kenlm_table *t, uint64_t key)
{
    uint64_t q = (uint64_t)(((unsigned __int128)key * t->m) >> 64);
    uint64_t r = key - q * t->buckets, s;
    return __builtin_sub_overflow(r, t->buckets, &s) ? r : s;
}

/* A probing table being filled (glm build probing): buckets entries of esz bytes {uint64 key,
 * payload}, key 0 empty, linear probing from glm_kenlm_bucket; count entries so far. */
typedef struct glm_kenlm_fill {
    glm_kenlm_table t;
    uint8_t *tab;
    size_t esz;
    uint64_t count;
} glm_kenlm_fill;

/* The entry holding key, or NULL (always for key 0, which no table holds). */
static inline uint8_t *glm_kenlm_fill_find(const glm_kenlm_fill *f, uint64_t key)
{
    if (key == 0)
        return NULL;
    for (uint64_t b = glm_kenlm_bucket(&f->t, key);;) {
        uint8_t *e = f->tab + b * f->esz;
        uint64_t got;
        memcpy(&got, e, 8);
        if (got == key)
            return e;
        if (got == 0)
            return NULL;
        if (++b == f->t.buckets)
            b = 0;
    }
}

/* Adds key (not 0): 0 and *e its new entry (payload zero), 1 when key is there already (*e: its
 * entry), -1 when the table is full (KenLM keeps one bucket empty). */
static inline int glm_kenlm_fill_add(glm_kenlm_fill *f, uint64_t key, uint8_t **e)
{
    for (uint64_t b = glm_kenlm_bucket(&f->t, key);;) {
        uint8_t *x = f->tab + b * f->esz;
        uint64_t got;
        memcpy(&got, x, 8);
        *e = x;
        if (got == key)
            return 1;
        if (got == 0) {
            if (f->count + 1 >= f->t.buckets)
                return -1;
            f->count++;
            memcpy(x, &key, 8);
            return 0;
        }
        if (++b == f->t.buckets)
            b = 0;
    }
}

/* Starts the read of key's first bucket. */
static inline void glm_kenlm_fill_ahead(const glm_kenlm_fill *f, uint64_t key)
{
    __builtin_prefetch(f->tab + glm_kenlm_bucket(&f->t, key) * f->esz, 1);
}

/* One bit-packed trie level: entry i at bit i * total_bits holds the word (word_bits), the value
 * (value_bits: 31-bit probability + 32-bit backoff, or the quantized codes) and, below the
 * highest order, the first child (next_bits); entry i+1's child ends i's range. */
typedef struct glm_kenlm_bits {
    const uint8_t *base;
    /* array-compressed pointers (trie -a): a child pointer is (j << next_bits) | the inline bits,
     * j the last position of off[] (noff uint64) not above the entry's index */
    const uint8_t *off;
    uint64_t noff;
    uint32_t *jidx; /* (entries >> jshift) + 1 entries: jidx[b], the last j with off[j] <=
                     * b << jshift (about two per j), where the search for an entry's j starts */
    unsigned jshift;
    uint64_t word_mask, next_mask;
    uint8_t word_bits, value_bits, next_bits, total_bits;
} glm_kenlm_bits;

typedef struct glm_kenlm {
    int type; /* KenLM's model type: 0 probing, 1 rest probing, 2 trie, 3 quantized, 4
               * array-compressed, 5 both */
    void *map;          /* the whole file, mapped read-only (NULL when copied: huge_raw) */
    size_t map_len;
    void *huge_raw;     /* GLM_OPEN_HUGE: the file read into 2 MB pages (huge_len bytes) */
    size_t huge_len;
    unsigned order;
    uint64_t count[GLM_MAX_ORDER + 1]; /* [1..order] as the header gives them */
    float multiplier;                  /* probing_multiplier */
    glm_kenlm_table vocab;             /* entries {uint64 hash; uint32 id}: 12 bytes */
    uint32_t bound;                    /* words including <unk> */
    const uint8_t *uni;                /* (count[1] + 1) x {float prob, float backoff[, rest]} */
    glm_kenlm_table mid[GLM_MAX_ORDER + 1]; /* [k], k = 2..order-1: {key, prob, backoff[, rest]} */
    glm_kenlm_table longest;                /* {key, prob}: 12 bytes */
    /* trie layouts: the sorted vocabulary (word id = 1 + position of the word's hash), unigrams
     * {float prob, float backoff, uint64 first child} x (count[1] + 2), levels 2..order */
    const uint8_t *sorted;
    uint64_t nsorted;
    uint32_t *vstart; /* 2^(64 - vshift) + 1 entries: vstart[b], the first position of the sorted
                       * hashes whose top bits are >= b (about one word per b) */
    unsigned vshift;
    size_t uni_size; /* bytes per unigram: 8 (probing), 12 (rest probing) or 16 (trie) */
    size_t mid_size; /* bytes per middle entry (probing layouts): 16, or 20 with the rest cost */
    glm_kenlm_bits lev[GLM_MAX_ORDER + 1];
    int quant;                                   /* trie with quantization */
    uint8_t prob_bits, backoff_bits;
    const uint8_t *qprob[GLM_MAX_ORDER + 1];     /* [k]: 2^prob_bits floats */
    const uint8_t *qbackoff[GLM_MAX_ORDER + 1];  /* [k], k < order: 2^backoff_bits floats */
    const char *words;                      /* the words at the end of the file (NULL: absent) */
    uint64_t *word_off;                     /* bound + 1 offsets into words (NULL: absent) */
    uint32_t bos, eos;
} glm_kenlm;

/* Opens the KenLM binary at path into m (m->ken, m->par, m->lay.order and m->vocab.n are set).
 * Checks KenLM's sanity header (magic, version, test values), the parameters, every table's size
 * against the file length and the vocabulary. Returns 0, SMT_ERR_IO, SMT_ERR_FORMAT (not a KenLM
 * binary, or one of another architecture), SMT_ERR_VERSION, SMT_ERR_INCOMPLETE,
 * SMT_ERR_UNSUPPORTED (a layout or order not supported: the message names it), SMT_ERR_CORRUPT or
 * SMT_ERR_NOMEM. GLM_OPEN_VERIFY is SMT_ERR_UNSUPPORTED (KenLM's files carry no checksums, and
 * "verified" must not be claimed). flags: GLM_OPEN_HUGE reads the file into anonymous memory
 * advised to 2 MB pages; else it is mapped, GLM_OPEN_POPULATE and GLM_OPEN_READ read the mapping
 * in at once; the others do not apply. */
int glm_kenlm_open(struct glm_model *m, const char *path, unsigned flags, smt_err *err);
void glm_kenlm_close(glm_kenlm *k);

/* KenLM's word hash (util::MurmurHash64A, seed 0; also its State hash over the ids' bytes), inline
 * for the query's word lookups; the tail's 1 to 7 bytes are read as one little-endian number in
 * at most three loads. */
static inline uint64_t glm_kenlm_word_hash(const char *word, size_t len)
{
    const uint64_t m = 0xc6a4a7935bd1e995ull;
    const unsigned r = 47;
    uint64_t h = (uint64_t)len * m; /* seed 0 */
    const uint8_t *p = (const uint8_t *)word;
    size_t body = len & ~(size_t)7;
    for (size_t i = 0; i < body; i += 8) {
        uint64_t k;
        memcpy(&k, p + i, 8);
        k *= m;
        k ^= k >> r;
        k *= m;
        h ^= k;
        h *= m;
    }
    size_t rest = len & 7;
    if (rest) {
        const uint8_t *t = p + body;
        uint64_t v = 0;
        unsigned at = 0;
        if (rest & 4) {
            uint32_t x;
            memcpy(&x, t, 4);
            v = x;
            at = 4;
        }
        if (rest & 2) {
            uint16_t x;
            memcpy(&x, t + at, 2);
            v |= (uint64_t)x << (8 * at);
            at += 2;
        }
        if (rest & 1)
            v |= (uint64_t)t[at] << (8 * at);
        h ^= v;
        h *= m;
    }
    h ^= h >> r;
    h *= m;
    h ^= h >> r;
    return h;
}

/* The id of the word of hash h (0 when unknown). */
glm_word glm_kenlm_find_hashed(const glm_kenlm *k, uint64_t h);
static inline void glm_kenlm_prefetch_word(const glm_kenlm *k, uint64_t h)
{
    if (k->vocab.base) /* probing: the bucket */
        __builtin_prefetch(k->vocab.base + glm_kenlm_bucket(&k->vocab, h) * 12);
    else if (k->vstart) /* a trie: the index entry of glm_kenlm_find_hashed's search */
        __builtin_prefetch(k->vstart + (h >> k->vshift));
}
const char *glm_kenlm_word(const glm_kenlm *k, glm_word id, size_t *len);

/* The state after <s> (or the empty state when null_context). */
void glm_kenlm_state_start(const glm_kenlm *k, int null_context, glm_state *s);
/* glm_score for a KenLM model: KenLM's FullScore. */
float glm_kenlm_score(const struct glm_model *m, const glm_state *in, glm_word w, glm_state *out,
                      unsigned *ngram_length);
/* Whether the file stores rest costs (KenLM's rest probing, model type 1). */
static inline int glm_kenlm_has_rest(const glm_kenlm *k) { return k->type == 1; }
/* glm_phrase_estimate for a KenLM rest probing model (KenLM's RuleScore over the phrase). */
float glm_kenlm_phrase_estimate(const struct glm_model *m, const glm_word *w, size_t n);
/* glm_score_rows for a KenLM model (ids already checked). */
void glm_kenlm_score_rows(const struct glm_model *m, const glm_word *rows, size_t n_rows,
                          float *prob, uint8_t *len);
/* glm_score_states for a KenLM model (ids and lengths already checked): glm_kenlm_score per query,
 * the probes of the query four ahead prefetched. out may equal in. */
void glm_kenlm_score_states(const struct glm_model *m, const glm_state *in, const glm_word *w,
                            size_t n, float *prob, glm_state *out, uint8_t *len);
/* glm_score_sentences for a KenLM model; fast: the probes of a chunk of tokens prefetched first. */
void glm_kenlm_score_sentences(const struct glm_model *m, const glm_word *ids,
                               const uint64_t *sstart, size_t s0, size_t s1, int null_context,
                               int fast, float *prob, uint8_t *len);

#endif
