/* glm_kenlm.c — KenLM binary models (build_binary's output) read in place: the header checks, the
 * probing and rest probing layouts' hash tables probed as KenLM probes them, the trie layouts
 * (plain, quantized, array-compressed pointers: see open_trie) searched as KenLM searches them, and
 * the scoring paths (one word, rows, sentences with prefetching) on glm_layout.h's shared state
 * logic.
 *
 * A probing file, as KenLM's lm/binary_format.cc, lm/vocab.cc and lm/search_hashed.cc lay it out
 * (x86-64, little-endian; "pack 4" structures have no padding after a uint64 + uint32; a trie file
 * has the same header):
 *   Sanity (88 bytes): the magic "mmap lm http://kheafield.com/code format version 5\n\0\0" padded
 *     to 56 bytes, floats 0, 1, -0.5, uint32 1, 0xffffffff, 0, uint64 1.
 *   FixedWidthParameters (20 bytes): uint8 order, float probing_multiplier, int32 model_type,
 *     bool has_vocabulary, uint32 search_version; then uint64 counts[order]; the whole header
 *     padded to 8 bytes.
 *   Vocabulary: {uint32 version = 0, uint32 bound}, then a probing table of {uint64 hash, uint32
 *     id} (12 bytes) with buckets(count[1]).
 *     bound is count[1], or count[1] + 1 when the ARPA had no <unk> (KenLM's header counts the
 *     ARPA's unigrams; the unigrams' spare slot then holds <unk>, backoff +0.0: "extends").
 *   Search (probing): unigrams {float prob, float backoff} x (count[1] + 1); for each middle order
 *     n a table of {uint64 key, float prob, float backoff} with buckets(count[n]); the highest
 *     order a table of {uint64 key, float prob} (12 bytes). Rest probing (model type 1, made by
 *     build_binary -r) is the same with a third float, the rest cost, after each unigram's and
 *     middle entry's backoff: 12-byte unigrams and 20-byte middle entries ("pack 4", lm/value.hh
 *     RestValue); query's scores never read it, Moses's phrase estimates do (glm_phrase_estimate).
 *   Then, when has_vocabulary, the words in id order, each NUL-terminated, <unk> first.
 * A probing table of e entries has buckets = max(e + 1, (uint64)(multiplier * (float)e)); a key
 * sits at or after bucket key % buckets (linear probing, wrapping); key 0 marks an empty bucket.
 * An n-gram's key: h = w (the predicted word's id), then h = CombineWordHash(h, h_i) for each
 * previous word, most recent first. A stored probability's sign bit is clear when the n-gram is the
 * suffix of a longer one (KenLM's "extends left"); the value returned always has it set. */
#define _DEFAULT_SOURCE /* MAP_POPULATE */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "glm_internal.h"
#include "glm_kenlm.h"

#define KEN_MAGIC_INCOMPLETE "mmap lm http://kheafield.com/code incomplete\n"

enum { KEN_PROBING = 0, KEN_REST_PROBING, KEN_TRIE, KEN_QUANT_TRIE, KEN_ARRAY_TRIE,
       KEN_QUANT_ARRAY_TRIE };

static const char *const ken_layout[6] = {
    "probing", "rest probing", "trie", "trie with quantization",
    "trie with array-compressed pointers",
    "trie with quantization and array-compressed pointers"};

void glm_kenlm_sanity(uint8_t s[GLM_KENLM_SANITY_BYTES])
{
    static const char magic[] = GLM_KENLM_MAGIC_PREFIX " 5\n";
    memset(s, 0, GLM_KENLM_SANITY_BYTES);
    memcpy(s, magic, sizeof magic - 1); /* the two NULs that follow are the memset's */
    const float f[3] = {0.0f, 1.0f, -0.5f};
    const uint32_t u[3] = {1u, UINT32_MAX, 0u};
    const uint64_t one = 1;
    memcpy(s + 56, f, sizeof f);
    memcpy(s + 68, u, sizeof u);
    memcpy(s + 80, &one, sizeof one);
}

static inline uint64_t ld64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}
static inline uint32_t ld32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}
static inline float ldf(const uint8_t *p)
{
    float v;
    memcpy(&v, p, 4);
    return v;
}

/* ---------------------------------------------------------------- hashing */

/* The entry of key's bucket in table t (entry bytes esz). */
static inline const uint8_t *bucket_entry(const glm_kenlm_table *t, size_t esz, uint64_t key)
{
    return t->base + glm_kenlm_bucket(t, key) * esz;
}

/* The entry holding key in table t (entry bytes esz), probing from entry e, or NULL. A table with
 * no empty bucket (only a damaged file has one) ends the probe at its second wrap instead of
 * looping. */
static inline const uint8_t *probe_at(const glm_kenlm_table *t, size_t esz, uint64_t key,
                                      const uint8_t *e)
{
    for (int wrapped = 0;;) {
        uint64_t got = ld64(e);
        if (got == key)
            return e;
        if (got == 0)
            return NULL;
        if ((e += esz) == t->end) {
            if (wrapped++)
                return NULL;
            e = t->base;
        }
    }
}

static inline const uint8_t *probe(const glm_kenlm_table *t, size_t esz, uint64_t key)
{
    return probe_at(t, esz, key, bucket_entry(t, esz, key));
}

/* Prefetches a probe from entry e on: its line and the next. A probe often runs past the first
 * line: a miss scans about 5 buckets at KenLM's 1.5 multiplier (Knuth's formula for linear
 * probing), 80 bytes of 16-byte entries; a third line does not pay (docs/glm.md). */
static inline void prefetch_probe(const uint8_t *e)
{
    __builtin_prefetch(e);
    __builtin_prefetch(e + 64);
}

static inline void prefetch_key(const glm_kenlm_table *t, size_t esz, uint64_t key)
{
    prefetch_probe(bucket_entry(t, esz, key));
}

glm_word glm_kenlm_find_hashed(const glm_kenlm *k, uint64_t h)
{
    if (k->sorted) { /* a trie: id = 1 + position among the sorted hashes, found from the index
                      * of their top bits */
        uint64_t b = h >> k->vshift;
        for (uint32_t p = k->vstart[b], e = k->vstart[b + 1]; p < e; p++) {
            uint64_t v = ld64(k->sorted + 8 * p);
            if (v >= h)
                return v == h ? (glm_word)(p + 1) : GLM_UNK;
        }
        return GLM_UNK;
    }
    const uint8_t *e = probe(&k->vocab, 12, h);
    return e ? ld32(e + 8) : GLM_UNK; /* ids were checked < bound at open */
}

const char *glm_kenlm_word(const glm_kenlm *k, glm_word id, size_t *len)
{
    if (!k->word_off || id >= k->bound) {
        if (len)
            *len = 0;
        return NULL;
    }
    if (len)
        *len = (size_t)(k->word_off[id + 1] - k->word_off[id] - 1);
    return k->words + k->word_off[id];
}

/* ---------------------------------------------------------------- opening */

uint64_t glm_kenlm_buckets(uint64_t entries, float multiplier)
{
    float f = multiplier * (float)entries; /* KenLM multiplies in float */
    uint64_t b = f >= 18446744073709551615.0f ? UINT64_MAX : (uint64_t)f;
    return b > entries + 1 ? b : entries + 1;
}

/* Claims [*at, *at + bytes) of the file, or fails naming what does not fit. */
static int claim(const char *path, size_t len, uint64_t *at, uint64_t bytes, const uint8_t *base,
                 const uint8_t **out, const char *what, smt_err *err)
{
    if (bytes > len || *at > len - bytes)
        return smt_err_set(err, SMT_ERR_CORRUPT,
                           "%s: a KenLM binary of %zu bytes, too short for its %s (%llu bytes "
                           "at offset %llu): truncated or damaged",
                           path, len, what, (unsigned long long)bytes, (unsigned long long)*at);
    *out = base + *at;
    *at += bytes;
    return 0;
}

static int table(const char *path, size_t len, uint64_t *at, uint64_t entries, float mult,
                 size_t esz, const uint8_t *base, glm_kenlm_table *t, const char *what,
                 smt_err *err)
{
    glm_kenlm_table_size(t, glm_kenlm_buckets(entries, mult));
    if (t->buckets > (uint64_t)len / esz)
        return smt_err_set(err, SMT_ERR_CORRUPT,
                           "%s: a KenLM binary of %zu bytes, too short for its %s (%llu "
                           "buckets): truncated or damaged",
                           path, len, what, (unsigned long long)t->buckets);
    int rc = claim(path, len, at, t->buckets * esz, base, &t->base, what, err);
    t->end = rc ? NULL : t->base + t->buckets * esz;
    return rc;
}

static int check_header(const uint8_t *b, size_t len, const char *path, smt_err *err)
{
    uint8_t ref[GLM_KENLM_SANITY_BYTES];
    glm_kenlm_sanity(ref);
    size_t inc = strlen(KEN_MAGIC_INCOMPLETE), pre = strlen(GLM_KENLM_MAGIC_PREFIX);
    if (len >= inc && memcmp(b, KEN_MAGIC_INCOMPLETE, inc) == 0)
        return smt_err_set(err, SMT_ERR_INCOMPLETE,
                           "%s: a KenLM binary that did not finish building", path);
    if (len < pre || memcmp(b, GLM_KENLM_MAGIC_PREFIX, pre) != 0)
        return smt_err_set(err, SMT_ERR_FORMAT, "%s: not a KenLM binary", path);
    if (len < GLM_KENLM_SANITY_BYTES)
        return smt_err_set(err, SMT_ERR_CORRUPT,
                           "%s: a KenLM binary of %zu bytes, shorter than its header: truncated",
                           path, len);
    if (memcmp(b, ref, pre + 4) != 0) { /* " 5\n\0" after the prefix: the version */
        char v[16] = {0};
        for (size_t i = 0; i < sizeof v - 1 && pre + 1 + i < 56 && b[pre + 1 + i] >= ' ' &&
                           b[pre + 1 + i] < 127;
             i++)
            v[i] = (char)b[pre + 1 + i];
        return smt_err_set(err, SMT_ERR_VERSION,
                           "%s: a KenLM binary of format version \"%s\"; only version 5 (KenLM "
                           "since 2012) is supported",
                           path, v);
    }
    if (memcmp(b, ref, GLM_KENLM_SANITY_BYTES) != 0)
        return smt_err_set(err, SMT_ERR_FORMAT,
                           "%s: a KenLM binary whose test values (floats, integers, byte order) "
                           "do not match this machine's: built on another architecture, or "
                           "damaged",
                           path);
    return 0;
}

/* The probing layout from *at on: the vocabulary table and the search's tables. */
static int open_probing(glm_kenlm *k, const char *path, const uint8_t *b, size_t len, uint64_t *at,
                        smt_err *err)
{
    int rc;
    unsigned order = k->order;
    /* the vocabulary */
    const uint8_t *vh = NULL;
    if ((rc = claim(path, len, at, 8, b, &vh, "vocabulary header", err)))
        return rc;
    if (ld32(vh) != 0)
        return smt_err_set(err, SMT_ERR_VERSION,
                           "%s: a KenLM binary with probing vocabulary version %u (0 expected)",
                           path, ld32(vh));
    /* the words: the unigrams, plus <unk> when the ARPA lacked it (KenLM then counts the ARPA's
     * unigrams only, and the spare unigram slot holds <unk>) */
    k->bound = ld32(vh + 4);
    if (k->bound != k->count[1] && k->bound != k->count[1] + 1)
        return smt_err_set(err, SMT_ERR_CORRUPT,
                           "%s: a KenLM binary whose vocabulary holds %u words for %llu unigrams",
                           path, k->bound, (unsigned long long)k->count[1]);
    if ((rc = table(path, len, at, k->count[1], k->multiplier, 12, b, &k->vocab, "vocabulary", err)))
        return rc;
    /* the search: rest probing adds a float (the rest cost) to each unigram and middle entry */
    int rest = k->type == KEN_REST_PROBING;
    k->uni_size = rest ? 12 : 8;
    k->mid_size = rest ? 20 : 16;
    if ((rc = claim(path, len, at, (k->count[1] + 1) * k->uni_size, b, &k->uni, "unigrams", err)))
        return rc;
    for (unsigned n = 2; n < order; n++) {
        char what[32];
        snprintf(what, sizeof what, "%u-grams", n);
        if ((rc = table(path, len, at, k->count[n], k->multiplier, k->mid_size, b, &k->mid[n],
                        what, err)))
            return rc;
    }
    {
        char what[32];
        snprintf(what, sizeof what, "%u-grams", order);
        if ((rc = table(path, len, at, k->count[order], k->multiplier, 12, b, &k->longest, what, err)))
            return rc;
    }
    /* every id in the vocabulary table is a word's (ids index the unigrams unchecked later) */
    uint64_t used = 0;
    for (uint64_t i = 0; i < k->vocab.buckets; i++) {
        const uint8_t *e = k->vocab.base + i * 12;
        if (ld64(e) == 0)
            continue;
        uint32_t id = ld32(e + 8);
        if (id == 0 || id >= k->bound)
            return smt_err_set(err, SMT_ERR_CORRUPT,
                               "%s: a KenLM binary whose vocabulary table holds id %u (1..%u "
                               "expected): damaged",
                               path, id, k->bound - 1);
        used++;
    }
    if (used + 1 != k->bound || used == k->vocab.buckets)
        return smt_err_set(err, SMT_ERR_CORRUPT,
                           "%s: a KenLM binary whose vocabulary table holds %llu words for %u: "
                           "damaged",
                           path, (unsigned long long)used, k->bound - 1);
    return 0;
}

/* KenLM's RequiredBits: the bits to store integers up to max. */
static uint8_t required_bits(uint64_t max)
{
    uint8_t r = 0;
    while (max) {
        r++;
        max >>= 1;
    }
    return r;
}

/* A bit-packed level of entries (+1 for the last child pointer) and 8 bytes of slack. */
/* ArrayBhiksha's choice of how many high bits of a child pointer go to the offset array: the
 * chop that saves most bits (lm/bhiksha.cc), computed with the same wrapping arithmetic. */
static uint8_t chop_bits(uint64_t max_offset, uint64_t max_next, uint8_t configured)
{
    uint8_t required = required_bits(max_next), best = 0;
    int64_t lowest = INT64_MAX;
    uint8_t top = required < configured ? required : configured;
    for (uint8_t chop = 0; chop <= top; chop++) {
        int64_t change = (int64_t)((max_next >> (required - chop)) * 64 - max_offset * chop);
        if (change < lowest) {
            lowest = change;
            best = chop;
        }
    }
    return best;
}

/* bhiksha: -1 for plain child pointers, else the configured bits of array compression. */
static int bits_level(const char *path, const uint8_t *b, size_t len, uint64_t *at,
                      uint64_t entries, uint64_t max_vocab, uint8_t value_bits, uint64_t max_next,
                      int has_next, int bhiksha, glm_kenlm_bits *L, unsigned n, smt_err *err)
{
    int rc;
    L->word_bits = required_bits(max_vocab);
    L->next_bits = has_next ? required_bits(max_next) : 0;
    if (has_next && bhiksha >= 0) {
        uint8_t required = L->next_bits, chop = chop_bits(entries + 1, max_next, (uint8_t)bhiksha);
        L->next_bits = (uint8_t)(required - chop);
        L->noff = (max_next >> (required - chop)) + 1;
        uint64_t start = *at, bytes = 8 * (1 + L->noff) + 7;
        const uint8_t *region = NULL;
        char what[48];
        snprintf(what, sizeof what, "%u-gram pointer array", n);
        if ((rc = claim(path, len, at, bytes, b, &region, what, err)))
            return rc;
        L->off = b + ((start + 7) & ~7ull) + 8; /* after an 8-byte header, 8-byte aligned */
        if (region[0] != 0 || region[1] != bhiksha)
            return smt_err_set(err, SMT_ERR_CORRUPT,
                               "%s: a KenLM trie whose %u-gram pointer array has header %u/%u "
                               "(0/%d expected)",
                               path, n, region[0], region[1], bhiksha);
        uint64_t prev = 0;
        for (uint64_t j = 0; j < L->noff; j++) { /* sorted, from 0: the lookups rely on it */
            uint64_t v = ld64(L->off + 8 * j);
            if ((j == 0 && v != 0) || v < prev)
                return smt_err_set(err, SMT_ERR_CORRUPT,
                                   "%s: a KenLM trie whose %u-gram pointer array is out of order: "
                                   "damaged",
                                   path, n);
            prev = v;
        }
        /* the index of j by entry: buckets of 2^jshift entries, at least one per two j */
        unsigned sh = 0;
        while (sh < 63 && (entries >> sh) + 1 > 2 * L->noff)
            sh++;
        uint64_t nb = (entries >> sh) + 1, j = 0;
        L->jshift = sh;
        L->jidx = malloc((size_t)nb * sizeof *L->jidx);
        if (!L->jidx)
            return smt_err_set(err, SMT_ERR_NOMEM, "%s: out of memory", path);
        for (uint64_t bk = 0; bk < nb; bk++) {
            while (j + 1 < L->noff && ld64(L->off + 8 * (j + 1)) <= bk << sh)
                j++;
            L->jidx[bk] = (uint32_t)j;
        }
    }
    L->value_bits = value_bits;
    unsigned total = (unsigned)L->word_bits + value_bits + L->next_bits;
    if (L->word_bits > 32 || L->next_bits > 32 || total > 255)
        return smt_err_set(err, SMT_ERR_CORRUPT, "%s: a KenLM trie with %u-bit %u-grams", path,
                           total, n);
    L->total_bits = (uint8_t)total;
    L->word_mask = (1ull << L->word_bits) - 1;
    L->next_mask = (1ull << L->next_bits) - 1;
    char what[32];
    snprintf(what, sizeof what, "%u-grams", n);
    uint64_t bytes = ((1 + entries) * total + 7) / 8 + 8;
    return claim(path, len, at, bytes, b, &L->base, what, err);
}

/* The trie layouts from *at on: the sorted vocabulary, the quantizer's bins, the unigrams and the
 * bit-packed levels (lm/search_trie.cc's SetupMemory order). */
static int open_trie(glm_kenlm *k, const char *path, const uint8_t *b, size_t len, uint64_t *at,
                     smt_err *err)
{
    int rc;
    unsigned order = k->order;
    const uint8_t *v = NULL;
    if ((rc = claim(path, len, at, 8 + 8 * k->count[1], b, &v, "vocabulary", err)))
        return rc;
    k->nsorted = ld64(v);
    k->sorted = v + 8;
    if (k->nsorted + 1 != k->count[1])
        return smt_err_set(err, SMT_ERR_CORRUPT,
                           "%s: a KenLM binary whose vocabulary holds %llu words for %llu unigrams",
                           path, (unsigned long long)k->nsorted + 1,
                           (unsigned long long)k->count[1]);
    /* the index of the hashes by their top bits (one bucket per word, rounded up to a power of
     * two), made in the pass that checks their order */
    unsigned bits = 1;
    while (((uint64_t)1 << bits) < k->nsorted)
        bits++;
    uint64_t nb = (uint64_t)1 << bits, next = 0;
    k->vshift = 64 - bits;
    k->vstart = malloc((size_t)(nb + 1) * sizeof *k->vstart);
    if (!k->vstart)
        return smt_err_set(err, SMT_ERR_NOMEM, "%s: out of memory", path);
    for (uint64_t i = 0; i < k->nsorted; i++) {
        uint64_t h = ld64(k->sorted + 8 * i);
        if (i > 0 && ld64(k->sorted + 8 * (i - 1)) >= h)
            return smt_err_set(err, SMT_ERR_CORRUPT,
                               "%s: a KenLM binary whose sorted vocabulary is out of order at %llu: "
                               "damaged",
                               path, (unsigned long long)i);
        for (uint64_t top = h >> k->vshift; next <= top; next++)
            k->vstart[next] = (uint32_t)i;
    }
    while (next <= nb)
        k->vstart[next++] = (uint32_t)k->nsorted;
    k->bound = (uint32_t)k->count[1];
    uint8_t mid_bits = 63, top_bits = 31;
    if (k->type == KEN_QUANT_TRIE || k->type == KEN_QUANT_ARRAY_TRIE) {
        const uint8_t *q = NULL;
        if ((rc = claim(path, len, at, 8, b, &q, "quantization header", err)))
            return rc;
        if (q[0] != 2)
            return smt_err_set(err, SMT_ERR_VERSION,
                               "%s: a KenLM binary with quantization version %u (2 expected)", path,
                               q[0]);
        if (q[1] < 1 || q[1] > 25 || q[2] < 1 || q[2] > 25)
            return smt_err_set(err, SMT_ERR_CORRUPT,
                               "%s: a KenLM binary quantized to %u/%u bits (1..25 allowed)", path,
                               q[1], q[2]);
        k->quant = 1;
        k->prob_bits = q[1];
        k->backoff_bits = q[2];
        for (unsigned n = 2; n < order; n++) {
            if ((rc = claim(path, len, at, 4ull << k->prob_bits, b, &k->qprob[n], "bins", err)) ||
                (rc = claim(path, len, at, 4ull << k->backoff_bits, b, &k->qbackoff[n], "bins",
                            err)))
                return rc;
        }
        if ((rc = claim(path, len, at, 4ull << k->prob_bits, b, &k->qprob[order], "bins", err)))
            return rc;
        mid_bits = (uint8_t)(k->prob_bits + k->backoff_bits);
        top_bits = k->prob_bits;
    }
    k->uni_size = 16;
    if ((rc = claim(path, len, at, (k->count[1] + 2) * 16, b, &k->uni, "unigrams", err)))
        return rc;
    int bhiksha = -1; /* array-compressed pointers: the bits configured, in the first header */
    if ((k->type == KEN_ARRAY_TRIE || k->type == KEN_QUANT_ARRAY_TRIE) && order > 2) {
        if (*at + 2 > len)
            return smt_err_set(err, SMT_ERR_CORRUPT, "%s: a KenLM trie cut before its bigrams",
                               path);
        if (b[*at] != 0)
            return smt_err_set(err, SMT_ERR_VERSION,
                               "%s: a KenLM trie with pointer compression version %u (0 expected)",
                               path, b[*at]);
        bhiksha = b[*at + 1];
    }
    for (unsigned n = 2; n <= order; n++)
        if ((rc = bits_level(path, b, len, at, k->count[n], k->count[1],
                             n < order ? mid_bits : top_bits, n < order ? k->count[n + 1] : 0,
                             n < order, bhiksha, &k->lev[n], n, err)))
            return rc;
    /* the unigrams' child ranges: monotone, ending at the bigrams' count */
    uint64_t prev = 0;
    for (uint64_t w = 0; w <= k->count[1]; w++) {
        uint64_t c = ld64(k->uni + w * 16 + 8);
        if (c < prev || c > k->count[2])
            return smt_err_set(err, SMT_ERR_CORRUPT,
                               "%s: a KenLM binary whose unigram %llu points outside the bigrams: "
                               "damaged",
                               path, (unsigned long long)w);
        prev = c;
    }
    return 0;
}

int glm_kenlm_open(glm_model *m, const char *path, unsigned flags, smt_err *err)
{
    if (flags & GLM_OPEN_VERIFY) /* nothing to verify against: never claim it was */
        return smt_err_set(err, SMT_ERR_UNSUPPORTED,
                           "%s: a KenLM binary carries no checksums to verify (--verify applies "
                           "to .glm files)",
                           path);
    glm_kenlm *k = calloc(1, sizeof *k);
    if (!k)
        return smt_err_set(err, SMT_ERR_NOMEM, "%s: out of memory", path);
    m->ken = k;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return smt_err_errno(err, SMT_ERR_IO, errno, "%s: cannot open", path);
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return smt_err_errno(err, SMT_ERR_IO, e, "%s: cannot stat", path);
    }
    if (!S_ISREG(st.st_mode) || st.st_size <= 0) {
        close(fd);
        return smt_err_set(err, SMT_ERR_FORMAT, "%s: not a KenLM binary (not a regular file)",
                           path);
    }
    size_t len = (size_t)st.st_size;
    void *map;
    if (flags & GLM_OPEN_HUGE) {
        /* the file read into anonymous memory advised to 2 MB pages: the probes of tables of
         * tens of MB then miss the TLB far less than on the file's 4 KB page-cache pages */
        const size_t huge = 2u << 20;
        size_t hl = (len + 2 * huge - 1) & ~(huge - 1);
        char *raw = mmap(NULL, hl, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (raw == MAP_FAILED) {
            close(fd);
            return smt_err_set(err, SMT_ERR_NOMEM, "%s: cannot allocate %zu bytes", path, hl);
        }
        k->huge_raw = raw;
        k->huge_len = hl;
        char *base = (char *)(((uintptr_t)raw + huge - 1) & ~(uintptr_t)(huge - 1));
#ifdef MADV_HUGEPAGE
        madvise(base, (size_t)(raw + hl - base), MADV_HUGEPAGE); /* a hint: failure is harmless */
#endif
        for (size_t got = 0; got < len;) {
            ssize_t r = pread(fd, base + got, len - got < (8u << 20) ? len - got : (8u << 20),
                              (off_t)got);
            if (r < 0 && errno == EINTR)
                continue;
            if (r <= 0) {
                int e = r < 0 ? errno : EIO;
                close(fd);
                return smt_err_errno(err, SMT_ERR_IO, e, "%s: cannot read", path);
            }
            got += (size_t)r;
        }
        close(fd);
        map = base;
    } else {
        int mf = MAP_SHARED;
        if (flags & (GLM_OPEN_POPULATE | GLM_OPEN_READ))
            mf |= MAP_POPULATE;
        map = mmap(NULL, len, PROT_READ, mf, fd, 0);
        int e = errno;
        close(fd);
        if (map == MAP_FAILED)
            return smt_err_errno(err, SMT_ERR_IO, e, "%s: cannot map", path);
        k->map = map;
    }
    k->map_len = len;
    const uint8_t *b = map;
    int rc = check_header(b, len, path, err);
    if (rc)
        return rc;
    if (len < GLM_KENLM_SANITY_BYTES + GLM_KENLM_FIXED_BYTES)
        return smt_err_set(err, SMT_ERR_CORRUPT, "%s: a KenLM binary cut inside its header", path);
    const uint8_t *fx = b + GLM_KENLM_SANITY_BYTES;
    unsigned order = fx[0];
    float mult = ldf(fx + 4);
    uint32_t type = ld32(fx + 8), search_version = ld32(fx + 16);
    uint8_t has_vocab = fx[12];
    if (type > KEN_QUANT_ARRAY_TRIE)
        return smt_err_set(err, SMT_ERR_CORRUPT,
                           "%s: a KenLM binary of unknown model type %u (KenLM knows 0..5)", path,
                           type);
    int hashed = type == KEN_PROBING || type == KEN_REST_PROBING;
    unsigned want_version = hashed ? 0 : 1;
    if (search_version != want_version)
        return smt_err_set(err, SMT_ERR_VERSION,
                           "%s: a KenLM binary of the %s layout, search version %u (%u expected)",
                           path, ken_layout[type], search_version, want_version);
    k->type = type;
    if (order < 2 || order > GLM_MAX_ORDER)
        return smt_err_set(err, SMT_ERR_UNSUPPORTED,
                           "%s: a KenLM binary of order %u: orders 2..%d are supported", path,
                           order, GLM_MAX_ORDER);
    if (!(mult > 1.0f) || isinf(mult))
        return smt_err_set(err, SMT_ERR_CORRUPT,
                           "%s: a KenLM binary with probing multiplier %g (must be > 1)", path,
                           (double)mult);
    if (has_vocab > 1)
        return smt_err_set(err, SMT_ERR_CORRUPT, "%s: a KenLM binary with a bad vocabulary flag %u",
                           path, has_vocab);
    uint64_t hdr = glm_kenlm_header_bytes(order);
    if (len < hdr)
        return smt_err_set(err, SMT_ERR_CORRUPT, "%s: a KenLM binary cut inside its header", path);
    k->order = order;
    k->multiplier = mult;
    for (unsigned n = 1; n <= order; n++) {
        k->count[n] = ld64(fx + GLM_KENLM_FIXED_BYTES + 8 * (n - 1));
        if (k->count[n] == 0 || k->count[n] >= UINT32_MAX - 1)
            return smt_err_set(err, SMT_ERR_CORRUPT,
                               "%s: a KenLM binary declaring %llu %u-grams (1 .. 2^32-3 allowed)",
                               path, (unsigned long long)k->count[n], n);
    }
    uint64_t at = hdr;
    rc = hashed ? open_probing(k, path, b, len, &at, err) : open_trie(k, path, b, len, &at, err);
    if (rc)
        return rc;
    /* the words, when stored: exactly bound NUL-terminated strings, <unk> first */
    if (has_vocab) {
        k->word_off = malloc(((size_t)k->bound + 1) * sizeof *k->word_off);
        if (!k->word_off)
            return smt_err_set(err, SMT_ERR_NOMEM, "%s: out of memory", path);
        k->words = (const char *)b + at;
        uint64_t o = at;
        for (uint32_t id = 0; id < k->bound; id++) {
            const uint8_t *z = o < len ? memchr(b + o, 0, len - o) : NULL;
            if (!z)
                return smt_err_set(err, SMT_ERR_CORRUPT,
                                   "%s: a KenLM binary whose word list ends after %u of its %u "
                                   "words: truncated",
                                   path, id, k->bound);
            k->word_off[id] = o - at;
            o = (uint64_t)(z - b) + 1;
        }
        k->word_off[k->bound] = o - at;
        if (k->word_off[1] != 6 || memcmp(k->words, "<unk>", 6) != 0)
            return smt_err_set(err, SMT_ERR_CORRUPT,
                               "%s: a KenLM binary whose word list does not start with <unk>",
                               path);
    }
    k->bos = glm_kenlm_find_hashed(k, glm_kenlm_word_hash("<s>", 3));
    k->eos = glm_kenlm_find_hashed(k, glm_kenlm_word_hash("</s>", 4));
    /* what the rest of glm reads of a model */
    m->par.order = order;
    m->par.K = 0;
    for (unsigned n = 1; n <= order; n++)
        m->par.count[n] = m->par.declared[n] = k->count[n];
    m->par.count[1] = k->bound; /* the stored words, <unk> included (glm's count) */
    m->par.bos = k->bos;
    m->par.eos = k->eos;
    m->lay.order = order;
    memcpy(m->lay.count, m->par.count, sizeof m->lay.count);
    m->vocab.n = k->bound;
    return 0;
}

void glm_kenlm_close(glm_kenlm *k)
{
    if (!k)
        return;
    if (k->huge_raw)
        munmap(k->huge_raw, k->huge_len);
    else if (k->map)
        munmap(k->map, k->map_len);
    free(k->word_off);
    free(k->vstart);
    for (unsigned n = 0; n <= GLM_MAX_ORDER; n++)
        free(k->lev[n].jidx);
    free(k);
}

/* ---------------------------------------------------------------- scoring */

static inline float with_sign(float p) { return glm_kenlm_set_sign(p, 1); }
static inline int independent_left(float p)
{
    union { float f; uint32_t u; } v;
    v.f = p;
    return (v.u >> 31) != 0;
}

/* The walk of glm_layout.h's glm_walk on a KenLM trie (below): from w through hist[0..nh) (most
 * recent first) as deep as KenLM goes. Returns the matched length; prob, bo as glm_walk's (bo
 * holds GLM_MAX_ORDER floats; those past the match are left undefined). */
static inline unsigned trie_walk(const glm_kenlm *k, glm_word w, const glm_word *hist,
                                 unsigned nh, float *prob, float *bo);

/* One level of a probing walk: the n-gram of key (its bucket's entry at) in table t, the highest
 * order's when top, below it of msz-byte entries (16, or 20 with a rest cost). Returns -1 when it is
 * missing; else sets *prob (signed as glm_walk's) and, below the highest order, *bo, and returns
 * 1 when a longer n-gram may extend it left, 0 when the walk ends here. When e is not NULL, *e
 * gets the entry found. */
static inline int ken_level(const glm_kenlm_table *t, int top, size_t msz, uint64_t key,
                            const uint8_t *at, float *prob, float *bo, const uint8_t **e)
{
    if (top) { /* {key, prob} entries */
        const uint8_t *x = probe_at(t, 12, key, at);
        if (!x)
            return -1;
        *prob = ldf(x + 8);
        if (e)
            *e = x;
        return 0;
    }
    const uint8_t *x = probe_at(t, msz, key, at); /* {key, prob, backoff[, rest]} */
    if (!x)
        return -1;
    float p = ldf(x + 8);
    *prob = with_sign(p);
    *bo = ldf(x + 12);
    if (e)
        *e = x;
    return !independent_left(p);
}

/* The keys of a walk computed ahead (the sentence window's ring): the (l + 1)-gram's key and its
 * bucket's entry are key[l - 1] and at[l - 1], its table lt[l]. */
typedef struct hash_keys {
    const glm_kenlm_table *lt;
    const uint64_t *key;
    const uint8_t *const *at;
} hash_keys;

/* The hashed family's one walk (as trie_walk's, over ken_level): from w (unigram entries of usz
 * bytes, middle ones of msz) through nh words of history as deep as KenLM goes (it stops early
 * where an n-gram extends no further left), each level's key hashed from hist (most recent first)
 * as it goes, or taken from ks where it is not NULL. For the phrase estimate (rest
 * and indep may be NULL): *rest gets the longest match's rest cost (its probability where the
 * file stores none, and at the highest order), *indep KenLM's FullScoreReturn::independent_left:
 * 0 only when the history ran out while the match could still extend left. */
static inline __attribute__((always_inline)) unsigned
hash_walk(const glm_kenlm *k, unsigned N, glm_word w, const glm_word *hist, unsigned nh,
          const hash_keys *ks, size_t usz, size_t msz, float *prob, float *bo, float *rest,
          int *indep)
{
    int has_rest = k->type == KEN_REST_PROBING;
    const uint8_t *u = k->uni + (uint64_t)w * usz;
    float p = ldf(u);
    *prob = with_sign(p);
    bo[0] = ldf(u + 4);
    if (rest)
        *rest = has_rest ? ldf(u + 8) : *prob;
    int more = !independent_left(p);
    unsigned len = 1;
    uint64_t key = w;
    while (len <= nh && more) {
        int top = len + 1 == N;
        const glm_kenlm_table *t;
        const uint8_t *at;
        if (ks) {
            t = &ks->lt[len];
            key = ks->key[len - 1];
            at = ks->at[len - 1];
        } else {
            key = glm_kenlm_combine(key, hist[len - 1]);
            t = top ? &k->longest : &k->mid[len + 1];
            at = bucket_entry(t, top ? 12 : msz, key);
        }
        float lp;
        const uint8_t *e = NULL;
        if ((more = ken_level(t, top, msz, key, at, &lp, &bo[len], rest ? &e : NULL)) < 0)
            break;
        *prob = lp;
        if (rest)
            *rest = has_rest && !top ? ldf(e + 16) : lp;
        len++;
    }
    if (indep) /* still extendable only where the history ran out first (more stayed 1) */
        *indep = more <= 0;
    return len;
}

static inline unsigned ken_walk(const glm_kenlm *k, glm_word w, const glm_word *hist, unsigned nh,
                                float *prob, float *bo)
{
    if (k->sorted)
        return trie_walk(k, w, hist, nh, prob, bo);
    return hash_walk(k, k->order, w, hist, nh, NULL, k->uni_size, k->mid_size, prob, bo, NULL,
                     NULL);
}

/* A bit-packed level's fields are read as util/bit_packing.hh reads them, by glm_rd_bits
 * (glm_layout.h, shared with glm's own quantized files); a float field is 32 of its bits. */
static inline float rd_f32(const uint8_t *base, uint64_t bit)
{
    uint32_t u = (uint32_t)glm_rd_bits(base, bit, 0xffffffffu);
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* The trie walk (KenLM's TrieSearch lookups, lm/search_trie.hh) as a cursor of single reads:
 * trie_walk runs one to its end, the sentence driver advances many in turn. Each level is searched
 * inside the parent's child range by interpolation, as KenLM searches (word ids are hash ranks,
 * spread evenly), so a big range costs a few reads instead of log2 of its size. The search keeps
 * bounds known below and above the word sought (virtual ones at the range's ends, words -1 and
 * bound); each pivot lies strictly between them, so it ends and reads only inside the range
 * whatever a damaged file holds. A range that is not inside the next level ends the walk. */
typedef struct trie_cur {
    const glm_word *hist;
    uint64_t bi, ai;  /* the entries left to search at level len + 1 */
    uint64_t piv;     /* the next entry read */
    int64_t x;        /* the word sought: hist[len - 1] */
    int64_t bv, av;   /* the words of the bounds: the entries between lie in (bv, av) */
    unsigned nh, len; /* history words, the matched length */
    int done;
    float prob, bo[GLM_MAX_ORDER];
} trie_cur;

/* The next pivot of c's search for x (pf: prefetch its entry), or the walk's end when no entry is
 * left. x lies strictly between the bounds' words: trie_range checks it, and a step moves a bound
 * only to a word on x's side. */
static inline __attribute__((always_inline)) void trie_pivot(const glm_kenlm *k, trie_cur *c,
                                                             int64_t x, const int pf)
{
    if (c->bi >= c->ai) {
        c->done = 1;
        return;
    }
    uint64_t m = c->ai - c->bi, off = (uint64_t)(x - c->bv - 1), span = (uint64_t)(c->av - c->bv - 1);
    c->piv = c->bi + (m < (1ull << 32) ? off * m / span
                                       : (uint64_t)((unsigned __int128)off * m / span));
    if (pf) {
        const glm_kenlm_bits *L = &k->lev[c->len + 1];
        __builtin_prefetch(L->base + ((c->piv * L->total_bits) >> 3));
    }
}

/* Starts the search among children [lo, hi) of the entry matched at level len, or ends the walk. */
static inline __attribute__((always_inline)) void trie_range(const glm_kenlm *k, trie_cur *c,
                                                             uint64_t lo, uint64_t hi, const int pf)
{
    if (c->len > c->nh || c->len >= k->order || hi > k->count[c->len + 1]) {
        c->done = 1;
        return;
    }
    int64_t x = c->hist[c->len - 1]; /* a word id, > the lower bound's -1 */
    if (x >= (int64_t)k->bound) {
        c->done = 1;
        return;
    }
    c->bi = lo;
    c->ai = hi;
    c->x = x;
    c->bv = -1;
    c->av = k->bound;
    trie_pivot(k, c, x, pf);
}

/* A walk from word w through hist[0..nh) (most recent first): reads w's unigram. */
static inline __attribute__((always_inline)) void trie_start(const glm_kenlm *k, trie_cur *c,
                                                             glm_word w, const glm_word *hist,
                                                             unsigned nh, const int pf)
{
    const uint8_t *u = k->uni + (uint64_t)w * 16;
    c->hist = hist;
    c->nh = nh;
    c->len = 1;
    c->done = 0;
    c->prob = ldf(u);
    c->bo[0] = ldf(u + 4);
    trie_range(k, c, ld64(u + 8), ld64(u + 24), pf);
}

/* One read of a walk: the pivot's word; on a match the entry's value and its child range. Returns
 * whether the walk is done. q: the file is quantized (k->quant), its codes' masks pm and bm
 * (prob_bits and backoff_bits ones). */
static inline __attribute__((always_inline)) int trie_step(const glm_kenlm *k, trie_cur *c,
                                                           const int pf, const int q, uint64_t pm,
                                                           uint64_t bm)
{
    unsigned n = c->len + 1;
    const glm_kenlm_bits *L = &k->lev[n];
    int64_t x = c->x;
    uint64_t e = c->piv, bit = e * L->total_bits;
    int64_t w = (int64_t)glm_rd_bits(L->base, bit, L->word_mask);
    if (w < x) {
        c->bi = e + 1;
        c->bv = w;
        trie_pivot(k, c, x, pf);
        return c->done;
    }
    if (w > x) {
        c->ai = e;
        c->av = w;
        trie_pivot(k, c, x, pf);
        return c->done;
    }
    bit += L->word_bits;
    c->len = n;
    if (n == k->order) {
        c->prob = q ? ldf(k->qprob[n] + 4 * glm_rd_bits(L->base, bit, pm))
                    : with_sign(rd_f32(L->base, bit));
        c->done = 1;
        return c->done;
    }
    if (q) { /* the backoff's code, then the probability's: at most 50 bits, one read */
        uint64_t v = glm_rd_bits(L->base, bit, UINT64_MAX >> 7);
        c->bo[n - 1] = ldf(k->qbackoff[n] + 4 * (v & bm));
        c->prob = ldf(k->qprob[n] + 4 * ((v >> k->backoff_bits) & pm));
    } else {
        c->prob = with_sign(rd_f32(L->base, bit));
        c->bo[n - 1] = rd_f32(L->base, bit + 31);
    }
    uint64_t nb = bit + L->value_bits;
    uint64_t lo = glm_rd_bits(L->base, nb, L->next_mask);
    uint64_t hi = glm_rd_bits(L->base, nb + L->total_bits, L->next_mask);
    if (L->off) { /* array-compressed: the high bits from the offset array */
        uint64_t jb = L->jidx[e >> L->jshift], je;
        while (jb + 1 < L->noff && ld64(L->off + 8 * (jb + 1)) <= e)
            jb++;
        for (je = jb; je + 1 < L->noff && ld64(L->off + 8 * (je + 1)) <= e + 1;)
            je++;
        lo |= jb << L->next_bits;
        hi |= je << L->next_bits;
    }
    trie_range(k, c, lo, hi, pf);
    return c->done;
}

/* The masks of a quantized file's probability and backoff codes. */
static inline uint64_t prob_mask(const glm_kenlm *k) { return (1ull << k->prob_bits) - 1; }
static inline uint64_t backoff_mask(const glm_kenlm *k) { return (1ull << k->backoff_bits) - 1; }

static inline unsigned trie_walk(const glm_kenlm *k, glm_word w, const glm_word *hist,
                                 unsigned nh, float *prob, float *bo)
{
    trie_cur c;
    trie_start(k, &c, w, hist, nh, 0);
    if (!c.done)
        while (!trie_step(k, &c, 0, k->quant, prob_mask(k), backoff_mask(k)))
            ;
    *prob = c.prob;
    memcpy(bo, c.bo, sizeof c.bo); /* a fixed size: two moves, not a copy loop */
    return c.len;
}

/* Prefetches the buckets ken_walk will read for w after hist[0..nh) (the keys follow from the
 * words alone, so every level's bucket can be fetched at once). */
static inline void ken_prefetch(const glm_kenlm *k, glm_word w, const glm_word *hist, unsigned nh)
{
    if (k->sorted) { /* a trie: each level's range follows from the previous one */
        __builtin_prefetch(k->uni + (uint64_t)w * 16);
        return;
    }
    __builtin_prefetch(k->uni + (uint64_t)w * k->uni_size);
    uint64_t key = w;
    unsigned top = nh < k->order - 1 ? nh : k->order - 1;
    for (unsigned len = 1; len <= top; len++) {
        key = glm_kenlm_combine(key, hist[len - 1]);
        if (len + 1 == k->order)
            prefetch_key(&k->longest, 12, key);
        else
            prefetch_key(&k->mid[len + 1], k->mid_size, key);
    }
}

void glm_kenlm_state_start(const glm_kenlm *k, int null_context, glm_state *s)
{
    memset(s, 0, sizeof *s);
    if (null_context)
        return;
    s->length = 1;
    s->words[0] = k->bos;
    s->backoff[0] = ldf(k->uni + (uint64_t)k->bos * k->uni_size + 4);
}

float glm_kenlm_score(const glm_model *m, const glm_state *in, glm_word w, glm_state *out,
                      unsigned *ngram_length)
{
    float prob, bo[GLM_MAX_ORDER];
    if (!m->ken->sorted) /* every level's bucket follows from the words: fetched at once */
        ken_prefetch(m->ken, w, in->words, in->length);
    unsigned len = ken_walk(m->ken, w, in->words, in->length, &prob, bo);
    if (ngram_length)
        *ngram_length = len;
    return glm_finish(&m->lay, in, w, len, prob, bo, out);
}

/* KenLM's lm::ngram::RuleScore from the empty context, Moses's phrase estimate: each word's
 * FullScore from the state of the words before it, where a word whose match may still extend
 * left (not independent_left) and whose state grew by one word counts its match's rest cost
 * instead; the first word that does not closes the left edge, and every later word counts its
 * probability (the backoffs included). */
float glm_kenlm_phrase_estimate(const glm_model *m, const glm_word *w, size_t n)
{
    const glm_kenlm *k = m->ken;
    glm_state st;
    glm_kenlm_state_start(k, 1, &st);
    float total = 0;
    int left_done = 0;
    for (size_t i = 0; i < n; i++) {
        float prob, rest, bo[GLM_MAX_ORDER];
        int indep;
        unsigned before = st.length;
        unsigned len = hash_walk(k, k->order, w[i], st.words, st.length, NULL, k->uni_size,
                                 k->mid_size, &prob, bo, &rest, &indep);
        prob = glm_finish(&m->lay, &st, w[i], len, prob, bo, &st);
        if (left_done) {
            total += prob;
        } else if (indep) {
            total += prob;
            left_done = 1;
        } else {
            total += rest;
            left_done = st.length != before + 1;
        }
    }
    return total;
}

/* Runs the c started walks wk[0..c) (c <= GLM_CHUNK) to their ends: every live walk one read per
 * round, its next read prefetched, so the reads of one round overlap. q: k->quant, a constant in
 * each of trie_run's two copies. */
static inline __attribute__((always_inline)) void trie_rounds(const glm_kenlm *k, trie_cur *wk,
                                                              unsigned c, const int q)
{
    uint64_t pm = prob_mask(k), bm = backoff_mask(k);
    uint16_t live[GLM_CHUNK];
    unsigned nl = 0;
    for (unsigned i = 0; i < c; i++)
        if (!wk[i].done)
            live[nl++] = (uint16_t)i;
    while (nl) {
        unsigned nn = 0;
        for (unsigned x = 0; x < nl; x++) {
            trie_cur *cu = &wk[live[x]];
            if (!trie_step(k, cu, 1, q, pm, bm))
                live[nn++] = live[x];
        }
        nl = nn;
    }
}

static void trie_run(const glm_kenlm *k, trie_cur *wk, unsigned c)
{
    if (k->quant)
        trie_rounds(k, wk, c, 1);
    else
        trie_rounds(k, wk, c, 0);
}

/* glm_kenlm_score_states on a trie: chunks of queries walked together (trie_run), each finished
 * from its own state once the chunk's walks are done (out may equal in). */
static void trie_states(const glm_model *m, const glm_state *in, const glm_word *w, size_t n,
                        float *prob, glm_state *out, uint8_t *len)
{
    const glm_kenlm *k = m->ken;
    trie_cur wk[GLM_CHUNK];
    for (size_t j0 = 0; j0 < n; j0 += GLM_CHUNK) {
        unsigned c = n - j0 < GLM_CHUNK ? (unsigned)(n - j0) : GLM_CHUNK;
        for (unsigned i = 0; i < c; i++)
            __builtin_prefetch(k->uni + (uint64_t)w[j0 + i] * 16);
        for (unsigned i = 0; i < c; i++)
            trie_start(k, &wk[i], w[j0 + i], in[j0 + i].words, in[j0 + i].length, 1);
        trie_run(k, wk, c);
        for (unsigned i = 0; i < c; i++) {
            size_t j = j0 + i;
            if (len)
                len[j] = (uint8_t)wk[i].len;
            prob[j] = glm_finish(&m->lay, &in[j], w[j], wk[i].len, wk[i].prob, wk[i].bo, &out[j]);
        }
    }
}

void glm_kenlm_score_states(const glm_model *m, const glm_state *in, const glm_word *w, size_t n,
                            float *prob, glm_state *out, uint8_t *len)
{
    const glm_kenlm *k = m->ken;
    if (k->sorted && n > 2) { /* one or two queries: no walks to overlap, the loop below */
        trie_states(m, in, w, n, prob, out, len);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        if (i + 4 < n) /* a few queries ahead: every level's bucket (probing) or unigram (trie) */
            ken_prefetch(k, w[i + 4], in[i + 4].words, in[i + 4].length);
        unsigned l;
        prob[i] = glm_kenlm_score(m, &in[i], w[i], &out[i], &l);
        if (len)
            len[i] = (uint8_t)l;
    }
}

void glm_kenlm_score_rows(const glm_model *m, const glm_word *rows, size_t n_rows, float *prob,
                          uint8_t *len)
{
    const glm_kenlm *k = m->ken;
    unsigned N = k->order;
    for (size_t r = 0; r < n_rows; r++) {
        const glm_word *row = rows + r * N;
        glm_word hist[GLM_MAX_ORDER];
        int nh = glm_row_context(N, k->bound, row, hist);
        if (nh < 0)
            nh = 0; /* callers check the ids first */
        if (r + 4 < n_rows) { /* a few rows ahead: both walks' buckets */
            const glm_word *ahead = rows + (r + 4) * N;
            glm_word h2[GLM_MAX_ORDER];
            int n2 = glm_row_context(N, k->bound, ahead, h2);
            if (n2 >= 0) {
                ken_prefetch(k, ahead[N - 1], h2, (unsigned)n2);
                if (n2 > 0)
                    ken_prefetch(k, h2[0], h2 + 1, (unsigned)n2 - 1);
            }
        }
        float pa, pb, boA[GLM_MAX_ORDER], boB[GLM_MAX_ORDER];
        unsigned la = ken_walk(k, row[N - 1], hist, (unsigned)nh, &pa, boA), lb = 0;
        if (nh > 0)
            lb = ken_walk(k, hist[0], hist + 1, (unsigned)nh - 1, &pb, boB);
        prob[r] = glm_row_combine(la, pa, lb, boB);
        if (len)
            len[r] = (uint8_t)la;
    }
}

/* The probing layout's sentence path: a sliding window of KEN_AHEAD tokens, across sentences,
 * their keys kept in a ring of KEN_RING (> KEN_AHEAD, a power of two). */
#define KEN_AHEAD 32
#define KEN_RING 64
_Static_assert(KEN_AHEAD < KEN_RING && (KEN_RING & (KEN_RING - 1)) == 0, "the ring holds the window");

/* A token's key chain in the ring: the keys and bucket entries of its n-grams, KenLM's tables. */
typedef struct ken_chain {
    uint64_t key[GLM_MAX_ORDER];
    const uint8_t *at[GLM_MAX_ORDER];
} ken_chain;

/* One link of a chain: the (l + 1)-gram's key from the l-gram's and the word x, its bucket's entry
 * in lt[l] (es[l] bytes), prefetched. Returns the key. */
static inline __attribute__((always_inline)) uint64_t
chain_link(uint64_t key, glm_word x, unsigned l, const glm_kenlm_table *lt, const size_t *es,
           ken_chain *c)
{
    key = glm_kenlm_combine(key, x);
    const uint8_t *at = bucket_entry(&lt[l], es[l], key);
    c->key[l - 1] = key;
    c->at[l - 1] = at;
    prefetch_probe(at);
    return key;
}

/* Computes and prefetches the chain c of token ids[pt] (and its unigram, usz bytes), the token
 * `before` tokens after its sentence's start: its history the words before it in the sentence,
 * most recent first, then <s> unless null_context, order - 1 words at most; lt[l] and es[l] the
 * (l + 1)-grams' table and entry bytes. */
static inline __attribute__((always_inline)) void
chain_fill(const glm_kenlm *k, unsigned N, const glm_word *ids, uint64_t pt, uint64_t before,
           int null_context, const glm_kenlm_table *lt, const size_t *es, size_t usz, ken_chain *c)
{
    const glm_word *h = ids + pt;
    __builtin_prefetch(k->uni + (uint64_t)h[0] * usz);
    unsigned nt = before < N - 1 ? (unsigned)before : N - 1, l = 1;
    uint64_t key = h[0];
    for (; l <= nt; l++)
        key = chain_link(key, h[-(ptrdiff_t)l], l, lt, es, c);
    if (nt < N - 1 && !null_context)
        chain_link(key, k->bos, l, lt, es, c);
}

/* glm_kenlm_score_sentences on a probing file, fast: while token t is scored, the keys and buckets
 * of token t + KEN_AHEAD (from its full history in its sentence) are computed, kept in a ring and
 * prefetched. hash_walk from t's state then probes a prefix of that key chain (the state's words
 * are the first words of the same history) without hashing again. usz and msz: the unigram and
 * middle entry bytes, constants in each caller below. */
static inline __attribute__((always_inline)) void
probing_window(const glm_model *m, const glm_word *ids, const uint64_t *sstart, size_t s0,
               size_t s1, int null_context, const glm_state *begin, float *prob, uint8_t *len,
               const size_t usz, const size_t msz, const unsigned order)
{
    const glm_kenlm *k = m->ken;
    const unsigned N = order ? order : k->order;
    ken_chain ring[KEN_RING];
    glm_kenlm_table lt[GLM_MAX_ORDER]; /* lt[l]: (a copy of) the table of the (l + 1)-grams */
    size_t es[GLM_MAX_ORDER];          /* and its entry bytes */
    for (unsigned l = 1; l < N; l++) {
        lt[l] = l + 1 == N ? k->longest : k->mid[l + 1];
        es[l] = l + 1 == N ? 12 : msz;
    }
    /* pt: the next token to fill, in sentence ps of [pbeg, pnext); filled one token a step, up to
     * KEN_AHEAD ahead of the walk */
    size_t ps = s0;
    uint64_t tend = sstart[s1], pt = sstart[s0], pbeg = pt, pnext = sstart[s0 + 1];
    for (uint64_t ahead = tend - pt < KEN_AHEAD ? tend : pt + KEN_AHEAD; pt < ahead; pt++) {
        while (pt >= pnext) {
            pbeg = pnext;
            pnext = sstart[++ps + 1];
        }
        chain_fill(k, N, ids, pt, pt - pbeg, null_context, lt, es, usz, &ring[pt % KEN_RING]);
    }
    for (size_t s = s0; s < s1; s++) {
        glm_state st = *begin;
        for (uint64_t t = sstart[s]; t < sstart[s + 1]; t++) {
            if (pt < tend) { /* pt == t + KEN_AHEAD */
                while (pt >= pnext) {
                    pbeg = pnext;
                    pnext = sstart[++ps + 1];
                }
                chain_fill(k, N, ids, pt, pt - pbeg, null_context, lt, es, usz,
                           &ring[pt % KEN_RING]);
                pt++;
            }
            /* the walk from the state follows a prefix of the key chain computed ahead */
            const ken_chain *c = &ring[t % KEN_RING];
            hash_keys ks = {lt, c->key, c->at};
            float pr, bo[GLM_MAX_ORDER];
            unsigned l =
                hash_walk(k, N, ids[t], NULL, st.length, &ks, usz, msz, &pr, bo, NULL, NULL);
            prob[t] = glm_finish_backoffs(N, &st, l, pr, bo); /* the keys hold the words */
            len[t] = (uint8_t)l;
        }
    }
}

/* The sentence path for each entry size, as constants: probing, and rest probing. */
static void probing_sentences(const glm_model *m, const glm_word *ids, const uint64_t *sstart,
                              size_t s0, size_t s1, int null_context, const glm_state *begin,
                              float *prob, uint8_t *len)
{
    switch (m->ken->order) { /* the common orders as constants: their loops unrolled */
    case 3:
        probing_window(m, ids, sstart, s0, s1, null_context, begin, prob, len, 8, 16, 3);
        break;
    case 4:
        probing_window(m, ids, sstart, s0, s1, null_context, begin, prob, len, 8, 16, 4);
        break;
    case 5:
        probing_window(m, ids, sstart, s0, s1, null_context, begin, prob, len, 8, 16, 5);
        break;
    default:
        probing_window(m, ids, sstart, s0, s1, null_context, begin, prob, len, 8, 16, 0);
    }
}
static void rest_probing_sentences(const glm_model *m, const glm_word *ids,
                                   const uint64_t *sstart, size_t s0, size_t s1, int null_context,
                                   const glm_state *begin, float *prob, uint8_t *len)
{
    probing_window(m, ids, sstart, s0, s1, null_context, begin, prob, len, 12, 20, 0);
}
/* glm_kenlm_score_sentences on a trie, fast: the tokens of a chunk are walked each from its full
 * history (glm_chunk_histories), every live walk one read per round with its next read
 * prefetched, then KenLM's state logic in text order (exact for the reason glm_batch.c's
 * sentences_levelsync gives; a token whose walk went deeper than its state allows is rescored
 * from the state). */
static void trie_sentences(const glm_model *m, const glm_word *ids, const uint64_t *sstart,
                           size_t s0, size_t s1, int null_context, const glm_state *begin,
                           float *prob, uint8_t *len)
{
    const glm_kenlm *k = m->ken;
    unsigned N = k->order;
    trie_cur wk[GLM_CHUNK];
    const glm_word *hist[GLM_CHUNK];
    uint8_t nh[GLM_CHUNK];
    glm_word rb[GLM_CHUNK_RB];
    glm_state st = *begin;
    size_t s = s0, fs = s0;
    uint64_t T1 = sstart[s1];
    for (uint64_t t0 = sstart[s0]; t0 < T1;) {
        uint64_t t1 = t0 + GLM_CHUNK < T1 ? t0 + GLM_CHUNK : T1;
        unsigned c = (unsigned)(t1 - t0);
        glm_chunk_histories(ids, sstart, &s, t0, t1, N - 1, null_context, k->bos, rb, hist, nh);
        for (unsigned i = 0; i < c; i++)
            __builtin_prefetch(k->uni + (uint64_t)ids[t0 + i] * 16);
        for (unsigned i = 0; i < c; i++)
            trie_start(k, &wk[i], ids[t0 + i], hist[i], nh[i], 1);
        trie_run(k, wk, c);
        for (uint64_t t = t0; t < t1; t++) { /* KenLM's state logic in text order */
            while (t >= sstart[fs + 1])
                fs++;
            if (t == sstart[fs])
                st = *begin;
            const trie_cur *cu = &wk[t - t0];
            if (cu->len > (unsigned)st.length + 1u) {
                unsigned l;
                memcpy(st.words, cu->hist, st.length * sizeof st.words[0]);
                prob[t] = glm_kenlm_score(m, &st, ids[t], &st, &l);
                len[t] = (uint8_t)l;
                continue;
            }
            prob[t] = glm_finish_backoffs(N, &st, cu->len, cu->prob, cu->bo);
            len[t] = (uint8_t)cu->len;
        }
        t0 = t1;
    }
}

void glm_kenlm_score_sentences(const glm_model *m, const glm_word *ids, const uint64_t *sstart,
                               size_t s0, size_t s1, int null_context, int fast, float *prob,
                               uint8_t *len)
{
    const glm_kenlm *k = m->ken;
    glm_state begin;
    glm_kenlm_state_start(k, null_context, &begin);
    if (fast && k->sorted) {
        trie_sentences(m, ids, sstart, s0, s1, null_context, &begin, prob, len);
        return;
    }
    if (fast) {
        (k->type == KEN_REST_PROBING ? rest_probing_sentences : probing_sentences)(
            m, ids, sstart, s0, s1, null_context, &begin, prob, len);
        return;
    }
    for (size_t s = s0; s < s1; s++) {
        glm_state st = begin;
        for (uint64_t t = sstart[s]; t < sstart[s + 1]; t++) {
            unsigned l;
            prob[t] = glm_kenlm_score(m, &st, ids[t], &st, &l);
            len[t] = (uint8_t)l;
        }
    }
}
