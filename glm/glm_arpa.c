/* glm_arpa.c — reading an ARPA file with KenLM's semantics (lm/read_arpa.cc, lm/search_hashed.cc):
 * counts trusted exactly, \end\ required, -inf probabilities, zero backoff = "no extension" (-0.0)
 * until some n-gram uses the n-gram as context, a missing <unk> substituted with -100 and backoff
 * +0.0 (KenLM's: it "extends", so a state after an unknown word keeps it), missing
 * <s>/</s> and unknown words errors, a missing context an error, and a missing suffix inserted as
 * KenLM's probing model does (probability = lower-order probability + backoffs), in file order,
 * because the inserted entries change which later n-grams find their context (a probing build
 * here, a trie build in its sort on disk, glm_ext.c). */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS, madvise */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "glm_internal.h"
#include "glm_kenlm.h"
#include "smt_buf.h"
#include "smt_lines.h"
#include "smt_num.h"
#include "smt_progress.h"
#include "smt_words.h"

/* Anonymous memory, 2 MB aligned and advised to huge pages (but its tail: no part of a huge page
 * beyond bytes is made resident); raw and len are for munmap. */
void *glm_alloc_huge(size_t bytes, void **raw, size_t *len)
{
    const size_t huge = 2u << 20;
    *len = (bytes + 2 * huge - 1) & ~(huge - 1);
    char *r = mmap(NULL, *len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (r == MAP_FAILED)
        return NULL;
    char *base = (char *)(((uintptr_t)r + huge - 1) & ~(uintptr_t)(huge - 1));
#ifdef MADV_HUGEPAGE /* the whole 2 MB pages of [base, base + bytes): a tail is no huge page */
    if (bytes >= huge) /* a hint: failure is harmless */
        madvise(base, bytes & ~(huge - 1), MADV_HUGEPAGE);
#endif
    *raw = r;
    return base;
}

/* A probing build's tables pt[1..order] (the vocabulary's, then each order's, sized from the
 * declared counts as KenLM sizes them), zeroed, in one mapping of 2 MB pages: 0 or -1. */
static int pt_alloc(glm_arpa *a, float mult)
{
    uint64_t total = 0;
    for (unsigned n = 1; n <= a->order; n++) {
        glm_kenlm_fill *f = &a->pt[n];
        f->esz = n == 1 ? 12 : n < a->order ? 16 : 12;
        glm_kenlm_table_size(&f->t, glm_kenlm_buckets(a->declared[n], mult));
        if (f->t.buckets > (SIZE_MAX / 2 - total) / f->esz)
            return -1;
        total += (f->t.buckets * f->esz + 63) & ~63ull;
    }
    uint8_t *p = glm_alloc_huge((size_t)total, &a->pt_mem, &a->pt_mem_len);
    if (!p)
        return -1;
    for (unsigned n = 1; n <= a->order; n++) {
        a->pt[n].tab = p;
        p += (a->pt[n].t.buckets * a->pt[n].esz + 63) & ~63ull;
    }
    return 0;
}

/* ------------------------------------------------------------------ line parsing */

typedef struct reader {
    smt_lines *lines;
    const char *path;
    smt_err *err;
    smt_progress prog;
    char *line;
    size_t len;
    size_t flen[GLM_MAX_ORDER + 3]; /* the lengths of the fields ngram_line split */
    int positive_to_zero;           /* build_binary -i */
    uint64_t at_line;               /* nonzero: the line of the n-gram being stored */
    uint64_t line0[GLM_MAX_ORDER + 1]; /* a trie build on disk: each order's first line */
    int ext_failed;                 /* the sort on disk gave the error */
} reader;

/* The line an error names: the line read, or the earlier one being stored (at_line). */
static uint64_t lineno(const reader *r)
{
    return r->at_line ? r->at_line : smt_lines_lineno(r->lines);
}

/* Next line; 1, 0 at end of input, or an error code. */
static int next_line(reader *r)
{
    int rc = smt_lines_next(r->lines, &r->line, &r->len, r->err);
    if (rc > 0 && r->prog.enabled) /* every line: the meter itself redraws a few times a second */
        smt_progress_update(&r->prog, smt_lines_bytes_read(r->lines));
    return rc;
}

/* A NUL byte: no word holds one (the unigrams are checked, so an n-gram's word with one is
 * unknown) and no number; a header line with one is refused here, not read up to it. */
static int nul_error(reader *r)
{
    return smt_err_set(r->err, SMT_ERR_PARSE, "%s:%llu: a NUL byte in the line", r->path,
                       (unsigned long long)lineno(r));
}

/* next_line for the lines around the n-grams (headers, counts, blank lines, \end\). */
static int next_text_line(reader *r)
{
    int rc = next_line(r);
    return rc > 0 && memchr(r->line, '\0', r->len) ? nul_error(r) : rc;
}

/* A blank line: only KenLM's spaces (the line holds no NUL: next_text_line). */
static int is_blank(const reader *r) { return smt_words_blank(r->line, r->len, SMT_WS_SPACE); }

/* Next line that is not blank; at end of input an error naming what was expected. */
static int next_nonblank(reader *r, const char *expected)
{
    for (;;) {
        int rc = next_text_line(r);
        if (rc < 0)
            return rc;
        if (rc == 0)
            return smt_err_set(r->err, SMT_ERR_PARSE, "%s:%llu: unexpected end of file, expected %s",
                               r->path, (unsigned long long)lineno(r), expected);
        if (!is_blank(r))
            return 1;
    }
}

/* Splits the line in place on spaces and tabs (each field NUL-terminated); returns the number of
 * fields (up to max + 1: one more than max says "too many"), their lengths in len[] when len is
 * not NULL (the number and word parsers need them: no strlen per field). */
static unsigned split(reader *r, char **f, size_t *len, unsigned max)
{
    const char *w[GLM_MAX_ORDER + 3];
    size_t wl[GLM_MAX_ORDER + 3];
    size_t keep = (size_t)max + 1 < GLM_MAX_ORDER + 3 ? (size_t)max + 1 : GLM_MAX_ORDER + 3;
    size_t n = smt_words_split(r->line, r->len, SMT_WS_BLANK, w, wl, keep);
    if (n > keep)
        n = keep;
    for (size_t i = 0; i < n; i++) { /* after the split: the NULs overwrite separators */
        f[i] = r->line + (w[i] - r->line);
        f[i][wl[i]] = '\0';
        if (len)
            len[i] = wl[i];
    }
    return (unsigned)n;
}

/* A float field, strictly (smt_num.h: whole token, plain decimal, correctly rounded as KenLM's
 * reader rounds it). Rejected rather than read as some other value: NaN, hexadecimal, trailing
 * junk, and a finite number too large for a float (strtof made it an infinity). "-inf" only where
 * allow_inf says (probabilities, as KenLM). */
static int parse_float(reader *r, const char *s, size_t len, float *out, const char *what,
                       int allow_inf)
{
    int rc = smt_parse_float(s, len, -INFINITY, INFINITY, allow_inf ? SMT_NUM_ALLOW_INF : 0,
                             out);
    if (rc == SMT_ERR_LIMIT)
        return smt_err_set(r->err, SMT_ERR_PARSE, "%s:%llu: %s '%.64s' is out of a float's range",
                           r->path, (unsigned long long)lineno(r), what, s);
    if (rc)
        return smt_err_set(r->err, SMT_ERR_PARSE, "%s:%llu: bad %s '%.64s'", r->path,
                           (unsigned long long)lineno(r), what, s);
    return 0;
}

/* The probability as KenLM stores it: positive values rejected, the sign forced on (so 0 reads as
 * -0.0, as KenLM's sign-bit trick returns it). */
static int parse_prob(reader *r, const char *s, size_t len, float *out)
{
    int rc = parse_float(r, s, len, out, "log10 probability", 1);
    if (rc)
        return rc;
    if (*out > 0.0f && r->positive_to_zero)
        *out = 0.0f; /* build_binary -i: IRSTLM's positive probabilities read as 0 */
    if (*out > 0.0f)
        return smt_err_set(r->err, SMT_ERR_PARSE,
                           "%s:%llu: positive log10 probability %.64s (KenLM rejects it too; "
                           "build_binary -i, glm build -i, reads it as 0)", r->path,
                           (unsigned long long)lineno(r), s);
    *out = -fabsf(*out);
    return 0;
}

/* A backoff: NaN and infinities rejected (as KenLM); any zero becomes -0.0, KenLM's "no extension" mark. */
static int parse_backoff(reader *r, const char *s, size_t len, float *out)
{
    int rc = parse_float(r, s, len, out, "log10 backoff", 0);
    if (rc)
        return rc;
    if (*out == 0.0f)
        *out = -0.0f;
    return 0;
}

/* ------------------------------------------------------------------ sections */

/* "ngram N=count" (blanks around the fields tolerated): N and count are whole decimal integers
 * (smt_num.h); a negative, malformed or overflowing number is an error naming the line, never a
 * wrapped count. */
static int count_line(reader *r, unsigned *n, uint64_t *count)
{
    const char *s = r->line, *line_end = r->line + r->len;
    while (s < line_end && smt_is_sep((unsigned char)*s, SMT_WS_BLANK))
        s++;
    const char *eq = memchr(s, '=', (size_t)(line_end - s));
    if (line_end - s < 6 || strncmp(s, "ngram", 5) != 0 ||
        !smt_is_sep((unsigned char)s[5], SMT_WS_BLANK) || !eq)
        return smt_err_set(r->err, SMT_ERR_PARSE, "%s:%llu: expected 'ngram N=count', got '%.64s'",
                           r->path, (unsigned long long)lineno(r), r->line);
    s += 5;
    while (smt_is_sep((unsigned char)*s, SMT_WS_BLANK))
        s++;
    const char *c = eq + 1, *end = line_end;
    smt_trim(&c, &end, SMT_WS_BLANK);
    long long order, v;
    int rc = smt_parse_ll(s, (size_t)(eq - s), 1, GLM_MAX_ORDER + 1, &order);
    if (rc == SMT_ERR_PARSE)
        return smt_err_set(r->err, SMT_ERR_PARSE, "%s:%llu: bad order '%.*s' in '%.64s'", r->path,
                           (unsigned long long)lineno(r), (int)(eq - s), s, r->line);
    if (rc)
        return smt_err_set(r->err, SMT_ERR_LIMIT, "%s:%llu: order %.*s outside 1..%d", r->path,
                           (unsigned long long)lineno(r), (int)(eq - s), s, GLM_MAX_ORDER);
    rc = smt_parse_ll(c, (size_t)(end - c), 0, INT64_MAX, &v);
    if (rc == SMT_ERR_PARSE)
        return smt_err_set(r->err, SMT_ERR_PARSE, "%s:%llu: bad %lld-gram count '%.*s'", r->path,
                           (unsigned long long)lineno(r), order, (int)(end - c), c);
    if (rc)
        return smt_err_set(r->err, *c == '-' ? SMT_ERR_PARSE : SMT_ERR_LIMIT,
                           "%s:%llu: %lld-gram count %.*s: %s", r->path,
                           (unsigned long long)lineno(r), order, (int)(end - c), c,
                           *c == '-' ? "a count cannot be negative" : "at most 2^32-2");
    *n = (unsigned)order;
    *count = (uint64_t)v;
    return 0;
}

static int read_counts(reader *r, glm_arpa *a)
{
    int rc;
    for (;;) { /* only blank and '#' comment lines before \data\ */
        if ((rc = next_text_line(r)) < 0)
            return rc;
        if (rc == 0)
            return smt_err_set(r->err, SMT_ERR_PARSE, "%s: empty file, expected \\data\\", r->path);
        if (is_blank(r) || r->line[0] == '#')
            continue;
        char *f[2];
        if (split(r, f, NULL, 1) == 1 && strcmp(f[0], "\\data\\") == 0)
            break;
        return smt_err_set(r->err, SMT_ERR_PARSE, "%s:%llu: expected \\data\\", r->path,
                           (unsigned long long)lineno(r));
    }
    a->order = 0;
    for (;;) {
        if ((rc = next_text_line(r)) < 0)
            return rc;
        if (rc == 0 || is_blank(r))
            break;
        unsigned n = 0;
        uint64_t c = 0;
        if ((rc = count_line(r, &n, &c)))
            return rc;
        if (n != a->order + 1)
            return smt_err_set(r->err, SMT_ERR_PARSE, "%s:%llu: ngram %u follows order %u", r->path,
                               (unsigned long long)lineno(r), n, a->order);
        if (n > GLM_MAX_ORDER)
            return smt_err_set(r->err, SMT_ERR_LIMIT, "%s:%llu: order %u above the maximum %d",
                               r->path, (unsigned long long)lineno(r), n, GLM_MAX_ORDER);
        if (c >= UINT32_MAX - 1)
            return smt_err_set(r->err, SMT_ERR_LIMIT, "%s:%llu: %llu %u-grams: at most 2^32-2",
                               r->path, (unsigned long long)lineno(r), (unsigned long long)c, n);
        a->declared[n] = c;
        a->order = n;
    }
    if (a->order < 2)
        return smt_err_set(r->err, SMT_ERR_PARSE, "%s:%llu: order %u: an LM needs order 2 or more",
                           r->path, (unsigned long long)lineno(r), a->order);
    return 0;
}

static int read_header(reader *r, unsigned n)
{
    int rc = next_nonblank(r, "a section header");
    if (rc < 0)
        return rc;
    char want[32];
    snprintf(want, sizeof want, "\\%u-grams:", n);
    char *f[2];
    if (split(r, f, NULL, 1) != 1 || strcmp(f[0], want) != 0)
        return smt_err_set(r->err, SMT_ERR_PARSE, "%s:%llu: expected '%s' (were there more n-grams "
                           "than declared?)", r->path, (unsigned long long)lineno(r), want);
    return 0;
}

/* How many records to allocate at first for a section of order n that declares `declared`: at
 * most what the input can hold, so that a header's count costs nothing until its lines arrive. An
 * n-gram line takes at least 2n + 2 bytes ("p w1 .. wn\n" with one-byte fields); the input may be
 * compressed, so its size times INPUT_RATIO (far above what ARPA text compresses to) bounds the
 * lines; an input of unknown size (a pipe) starts small. The arrays grow as lines arrive, so a
 * file beyond the bound still reads, only with a few reallocations. */
#define INPUT_RATIO 8
static uint64_t input_cap(const reader *r, unsigned n, uint64_t declared)
{
    uint64_t total = smt_lines_total_bytes(r->lines);
    uint64_t bound = total ? total / (2 * n + 2) * INPUT_RATIO + 1024 : (uint64_t)1 << 16;
    return declared < bound ? declared : bound;
}

/* The next n-gram line of a section of order n: fields in f, count checked. */
static int ngram_line(reader *r, unsigned n, uint64_t i, uint64_t count, char **f, unsigned *nf)
{
    int rc = next_line(r);
    if (rc < 0)
        return rc;
    if (rc == 0)
        return smt_err_set(r->err, SMT_ERR_PARSE,
                           "%s:%llu: end of file after %llu of %llu declared %u-grams", r->path,
                           (unsigned long long)lineno(r), (unsigned long long)i,
                           (unsigned long long)count, n);
    *nf = split(r, f, r->flen, n + 2);
    if (*nf == 1 && f[0][0] == '\\')
        return smt_err_set(r->err, SMT_ERR_PARSE,
                           "%s:%llu: section ends after %llu of %llu declared %u-grams", r->path,
                           (unsigned long long)lineno(r), (unsigned long long)i,
                           (unsigned long long)count, n);
    if (*nf < n + 1 || *nf > n + 2)
        return smt_err_set(r->err, SMT_ERR_PARSE, "%s:%llu: expected a %u-gram line, got %u fields",
                           r->path, (unsigned long long)lineno(r), n, *nf);
    return 0;
}

/* The unigram arrays hold ids [0, *cap); grown to hold id (at first exactly, then doubling), the
 * new part of seen zeroed. */
static int grow_unigrams(glm_arpa *a, char **seen, size_t *cap, uint64_t id)
{
    if (id < *cap)
        return 0;
    size_t need = (size_t)id + 1, c = *cap;
    if (smt_grow(&a->uprob, &c, need, sizeof *a->uprob, need))
        return -1;
    c = *cap;
    if (smt_grow(&a->ubo, &c, need, sizeof *a->ubo, need))
        return -1;
    c = *cap;
    if (smt_grow(seen, &c, need, 1, need))
        return -1;
    memset(*seen + *cap, 0, c - *cap);
    *cap = c;
    return 0;
}

static int read_unigrams(reader *r, glm_arpa *a)
{
    uint64_t count = a->declared[1];
    size_t cap = 0;
    char *seen = NULL;
    int rc = 0;
    /* sized by what the input can hold, not by the header's word (see input_cap) */
    if (grow_unigrams(a, &seen, &cap, input_cap(r, 1, count))) {
        free(seen);
        return smt_err_set(r->err, SMT_ERR_NOMEM, "%s: out of memory for %llu unigrams", r->path,
                           (unsigned long long)count);
    }
    uint32_t id;
    if ((rc = smt_vocab_builder_add(a->vocab, "<unk>", 5, &id, r->err))) /* KenLM: <unk> is 0 */
        goto out;
    if ((rc = read_header(r, 1)))
        goto out;
    for (uint64_t i = 0; i < count; i++) {
        char *f[4];
        unsigned nf;
        float prob = 0.0f, bo = -0.0f;
        if ((rc = ngram_line(r, 1, i, count, f, &nf)) ||
            (rc = parse_prob(r, f[0], r->flen[0], &prob)) ||
            (nf == 3 && (rc = parse_backoff(r, f[2], r->flen[2], &bo))))
            goto out;
        if (memchr(f[1], '\0', r->flen[1])) {
            rc = nul_error(r);
            goto out;
        }
        smt_vocab v = smt_vocab_builder_view(a->vocab);
        uint32_t before = v.n;
        if ((rc = smt_vocab_builder_add(a->vocab, f[1], r->flen[1], &id, r->err)))
            goto out;
        if (id >= count + 1 || (id < before && seen[id])) {
            rc = smt_err_set(r->err, SMT_ERR_PARSE, "%s:%llu: duplicate unigram '%s'", r->path,
                             (unsigned long long)lineno(r), f[1]);
            goto out;
        }
        if (grow_unigrams(a, &seen, &cap, id)) {
            rc = smt_err_set(r->err, SMT_ERR_NOMEM, "%s:%llu: out of memory", r->path,
                             (unsigned long long)lineno(r));
            goto out;
        }
        seen[id] = 1;
        a->uprob[id] = prob;
        a->ubo[id] = bo;
    }
    a->nvocab = smt_vocab_builder_view(a->vocab).n;
    if (!seen[0]) {
        a->unk_added = 1;
        a->uprob[0] = a->unk_log10;
        a->ubo[0] = 0.0f;
    } else if (a->nvocab != count) { /* cannot happen: ids are dense */
        rc = smt_err_set(r->err, SMT_ERR_PARSE, "%s: unigram count mismatch", r->path);
        goto out;
    }
    smt_vocab v = smt_vocab_builder_view(a->vocab);
    a->bos = smt_vocab_find(&v, "<s>", 3);
    a->eos = smt_vocab_find(&v, "</s>", 4);
    if (a->bos == SMT_VOCAB_NONE || a->eos == SMT_VOCAB_NONE)
        rc = smt_err_set(r->err, SMT_ERR_PARSE, "%s: the unigrams lack %s (KenLM requires it)",
                         r->path, a->bos == SMT_VOCAB_NONE ? "<s>" : "</s>");
out:
    free(seen);
    return rc;
}

/* The word with id (error messages only: the words of a probing build are scanned). */
static const char *word_of(const glm_arpa *a, uint32_t id)
{
    if (a->vocab) {
        smt_vocab v = smt_vocab_builder_view(a->vocab);
        return smt_vocab_word(&v, id, NULL);
    }
    const char *w = a->words;
    for (uint32_t i = 0; i < id; i++)
        w += strlen(w) + 1;
    return w;
}

/* The id of an n-gram's word, or SMT_VOCAB_NONE: through the builder, or in a probing build
 * through KenLM's table of word hashes (hash: the word's glm_kenlm_word_hash; as KenLM looks
 * words up; <unk> is not in it). */
static inline uint32_t word_id(const glm_arpa *a, const smt_vocab *v, const char *w, size_t len,
                               uint64_t hash)
{
    if (a->vocab)
        return smt_vocab_find(v, w, len);
    const uint8_t *e = glm_kenlm_fill_find(&a->pt[1], hash);
    uint32_t id = SMT_VOCAB_NONE;
    if (e)
        memcpy(&id, e + 8, 4);
    else if (len == 5 && memcmp(w, "<unk>", 5) == 0)
        id = 0;
    return id;
}

/* A probing build after its unigrams: the vocabulary becomes KenLM's table of word hashes (pt[1],
 * ids 1..nvocab-1) and a copy of the words, and the builder is freed. A word hashing to 0 or to
 * another word's hash is refused (a KenLM table holds neither). */
static int vocab_to_probing(reader *r, glm_arpa *a)
{
    smt_vocab v = smt_vocab_builder_view(a->vocab);
    for (uint32_t id = 1; id < a->nvocab; id++) {
        size_t len;
        const char *word = smt_vocab_word(&v, id, &len);
        uint64_t key = glm_kenlm_word_hash(word, len);
        uint8_t *e;
        if (!key || glm_kenlm_fill_add(&a->pt[1], key, &e))
            return smt_err_set(r->err, SMT_ERR_LIMIT, "%s: unigram '%s' hashes to %s, which "
                               "KenLM's probing layout cannot store: build a trie", r->path, word,
                               key ? "the 64-bit hash of another" : "0");
        memcpy(e + 8, &id, 4);
    }
    a->words_len = (size_t)v.off[a->nvocab];
    if (!(a->words = malloc(a->words_len)))
        return smt_err_set(r->err, SMT_ERR_NOMEM, "%s: out of memory", r->path);
    memcpy(a->words, v.str, a->words_len);
    smt_vocab_builder_free(a->vocab);
    a->vocab = NULL;
    return 0;
}

/* The error for an n-gram (ids reversed) whose context (its first n - 1 words) is not stored. */
static int missing_context(reader *r, glm_arpa *a, unsigned n, const uint32_t *ids)
{
    char buf[256] = "";
    for (unsigned k = 0; k + 1 < n && strlen(buf) < 200; k++) {
        strcat(buf, k ? " " : "");
        strncat(buf, word_of(a, ids[n - 1 - k]), 40);
    }
    return smt_err_set(r->err, SMT_ERR_PARSE,
                       "%s:%llu: the context '%s' of this %u-gram is not a %u-gram "
                       "(KenLM: the context of every n-gram should appear)",
                       r->path, (unsigned long long)lineno(r), buf, n, n - 1);
}

/* glm build probing: an entry's {prob, backoff} after its 8-byte key. */
static inline float *pt_prob(uint8_t *e) { return (float *)(void *)(e + 8); }
static inline float *pt_bo(uint8_t *e) { return (float *)(void *)(e + 12); }

/* Adds an n-gram of order n with key to the probing table: 0, or an error naming the line. */
static int pt_add(reader *r, glm_arpa *a, unsigned n, uint64_t key, float prob, float bo,
                  uint8_t **e)
{
    glm_kenlm_fill *t = &a->pt[n];
    if (key == 0)
        return smt_err_set(r->err, SMT_ERR_LIMIT, "%s:%llu: a %u-gram hashes to 0, which KenLM's "
                           "probing layout cannot store: build a trie", r->path,
                           (unsigned long long)lineno(r), n);
    int rc = glm_kenlm_fill_add(t, key, e);
    if (rc > 0)
        return smt_err_set(r->err, SMT_ERR_PARSE, "%s:%llu: duplicate %u-gram (or one with the "
                           "64-bit hash of another, which KenLM's probing layout cannot store)",
                           r->path, (unsigned long long)lineno(r), n);
    if (rc < 0)
        return smt_err_set(r->err, SMT_ERR_LIMIT, "%s:%llu: the %u-grams' probing table is full: "
                           "too many missing suffixes inserted (KenLM: avoid pruning n-grams like "
                           "\"bar baz quux\" when \"foo bar baz quux\" is still in the model, or "
                           "increase the multiplier -p)", r->path, (unsigned long long)lineno(r),
                           n);
    memcpy(pt_prob(*e), &prob, 4);
    if (n < a->order)
        memcpy(pt_bo(*e), &bo, 4);
    return 0;
}

/* An n-gram of a probing build between its line and its storing (PT_AHEAD lines later, its
 * buckets fetched meanwhile): suf[k] the key of ids[0..k) (the suffixes), ctx[k] of ids[1..1+k)
 * (the contexts). */
#define PT_AHEAD 8
typedef struct pt_pending {
    uint32_t ids[GLM_MAX_ORDER];
    uint64_t suf[GLM_MAX_ORDER + 1], ctx[GLM_MAX_ORDER + 1];
    float prob, bo;
    uint64_t line;
} pt_pending;

/* Fills p's keys from its ids and starts the reads of the buckets store_probing looks at. */
static void pt_keys(const glm_arpa *a, unsigned n, pt_pending *p)
{
    const uint32_t *ids = p->ids;
    p->suf[1] = ids[0];
    p->ctx[1] = ids[1];
    for (unsigned k = 2; k <= n; k++)
        p->suf[k] = glm_kenlm_combine(p->suf[k - 1], ids[k - 1]);
    for (unsigned k = 2; k < n; k++)
        p->ctx[k] = glm_kenlm_combine(p->ctx[k - 1], ids[k]);
    glm_kenlm_fill_ahead(&a->pt[n], p->suf[n]);
    if (n > 2) {
        glm_kenlm_fill_ahead(&a->pt[n - 1], p->suf[n - 1]);
        glm_kenlm_fill_ahead(&a->pt[n - 1], p->ctx[n - 1]);
    }
}

/* Stores an n-gram in the probing tables, keyed as KenLM keys them (glm_kenlm_combine of the ids,
 * predicted word first): the duplicate check, the missing suffixes inserted (FixSRI), the
 * context's backoff marked as extended, and the "extends left" marks set as they arise: every
 * stored n-gram's suffix one order down gets its sign bit cleared. */
static int store_probing(reader *r, glm_arpa *a, unsigned n, const pt_pending *p)
{
    const uint32_t *ids = p->ids;
    const uint64_t *suf = p->suf, *ctx = p->ctx;
    float prob = p->prob, bo = p->bo;
    uint8_t *e;
    int rc = pt_add(r, a, n, suf[n], prob, bo, &e);
    if (rc)
        return rc;
    /* the longest stored suffix, order m (1: the unigram), its entry at */
    unsigned m = n - 1;
    uint8_t *at = NULL;
    while (m >= 2 && !(at = suf[m] ? glm_kenlm_fill_find(&a->pt[m], suf[m]) : NULL))
        m--;
    float lp = m == 1 ? a->uprob[ids[0]] : *pt_prob(at);
    if (m == 1)
        a->uprob[ids[0]] = fabsf(lp);
    else
        *pt_prob(at) = fabsf(lp);
    if (m + 1 < n) { /* KenLM's FixSRI; each inserted one extends left */
        float blank = fabsf(lp);
        unsigned k = m + 1;
        if (m == 1) {
            blank = glm_fixsri_next(blank, a->ubo[ids[1]]);
            glm_set_extension(&a->ubo[ids[1]]);
            if ((rc = pt_add(r, a, 2, suf[2], fabsf(blank), -0.0f, &e)))
                return rc;
            k = 3;
        }
        for (; k < n; k++) {
            uint8_t *c = ctx[k - 1] ? glm_kenlm_fill_find(&a->pt[k - 1], ctx[k - 1]) : NULL;
            if (c) {
                glm_set_extension(pt_bo(c));
                blank = glm_fixsri_next(blank, *pt_bo(c));
            }
            if ((rc = pt_add(r, a, k, suf[k], fabsf(blank), -0.0f, &e)))
                return rc;
        }
    }
    if (n == 2) {
        glm_set_extension(&a->ubo[ids[1]]);
    } else {
        uint8_t *c = ctx[n - 1] ? glm_kenlm_fill_find(&a->pt[n - 1], ctx[n - 1]) : NULL;
        if (!c)
            return missing_context(r, a, n, ids);
        glm_set_extension(pt_bo(c));
    }
    return 0;
}

/* store_probing of a pending n-gram, errors naming its line. */
static int pt_store(reader *r, glm_arpa *a, unsigned n, const pt_pending *p)
{
    r->at_line = p->line;
    int rc = store_probing(r, a, n, p);
    r->at_line = 0;
    return rc;
}

/* Reads the i-th n-gram line of order n (of count): its ids (reversed), probability, backoff. */
static int parse_ngram(reader *r, glm_arpa *a, unsigned n, uint64_t i, uint64_t count,
                       const smt_vocab *v, uint32_t *ids, float *prob, float *bo)
{
    char *f[GLM_MAX_ORDER + 3];
    unsigned nf;
    int rc;
    *prob = 0.0f;
    *bo = -0.0f;
    if ((rc = ngram_line(r, n, i, count, f, &nf)) ||
        (rc = parse_prob(r, f[0], r->flen[0], prob)) ||
        (nf == n + 2 && (rc = parse_backoff(r, f[n + 1], r->flen[n + 1], bo))))
        return rc;
    if (n == a->order && nf == n + 2 && *bo != 0.0f)
        return smt_err_set(r->err, SMT_ERR_PARSE,
                           "%s:%llu: non-zero backoff %s on the highest order", r->path,
                           (unsigned long long)lineno(r), f[n + 1]);
    uint64_t wh[GLM_MAX_ORDER] = {0};
    for (unsigned k = 0; a->pt && k < n; k++) { /* the words' buckets fetched together */
        wh[k] = glm_kenlm_word_hash(f[1 + k], r->flen[1 + k]);
        glm_kenlm_fill_ahead(&a->pt[1], wh[k]);
    }
    for (unsigned k = 0; k < n; k++) {
        uint32_t id = word_id(a, v, f[1 + k], r->flen[1 + k], wh[k]);
        if (id == SMT_VOCAB_NONE || (id == 0 && a->unk_added))
            return smt_err_set(r->err, SMT_ERR_PARSE,
                               "%s:%llu: word '%s' of a %u-gram is not a unigram", r->path,
                               (unsigned long long)lineno(r), f[1 + k], n);
        ids[n - 1 - k] = id;
    }
    return 0;
}

/* The n-grams of order n, each to the sort on disk (a trie build), or in a probing build stored
 * PT_AHEAD lines after it is read (store_probing; the earlier lines are stored before a line's
 * error is given, so the first error in the file is the one reported). */
static int read_ngrams(reader *r, glm_arpa *a, unsigned n)
{
    uint64_t count = a->declared[n], i = 0;
    int rc = read_header(r, n);
    if (rc)
        return rc;
    smt_vocab v = {0};
    if (a->vocab)
        v = smt_vocab_builder_view(a->vocab);
    uint32_t ids[GLM_MAX_ORDER];
    float prob, bo;
    pt_pending ring[PT_AHEAD];
    for (; i < count; i++) {
        if ((rc = parse_ngram(r, a, n, i, count, &v, ids, &prob, &bo)))
            break;
        if (a->ext) { /* sorted later (glm_ext_check); a 2-gram's context marked now */
            if (i == 0)
                r->line0[n] = lineno(r);
            if ((rc = glm_ext_add(a->ext, n, ids, prob, bo, r->err))) {
                r->ext_failed = 1;
                return rc;
            }
            if (n == 2)
                glm_set_extension(&a->ubo[ids[1]]);
            continue;
        }
        pt_pending *p = &ring[i % PT_AHEAD];
        if (i >= PT_AHEAD && (rc = pt_store(r, a, n, p)))
            return rc;
        memcpy(p->ids, ids, n * sizeof *ids);
        p->prob = prob;
        p->bo = bo;
        p->line = lineno(r);
        pt_keys(a, n, p);
    }
    for (uint64_t j = i > PT_AHEAD ? i - PT_AHEAD : 0; a->pt && j < i; j++) {
        int src = pt_store(r, a, n, &ring[j % PT_AHEAD]);
        if (src)
            return src;
    }
    if (!rc && a->ext && (rc = glm_ext_end_order(a->ext, n, r->err)))
        r->ext_failed = 1;
    return rc;
}

static int read_end(reader *r)
{
    int rc = next_nonblank(r, "\\end\\");
    if (rc < 0)
        return rc;
    char *f[2];
    if (split(r, f, NULL, 1) != 1 || strcmp(f[0], "\\end\\") != 0)
        return smt_err_set(r->err, SMT_ERR_PARSE,
                           "%s:%llu: expected \\end\\ (were there more n-grams than declared?)",
                           r->path, (unsigned long long)lineno(r));
    while ((rc = next_text_line(r)) > 0)
        if (!is_blank(r))
            return smt_err_set(r->err, SMT_ERR_PARSE, "%s:%llu: text after \\end\\", r->path,
                               (unsigned long long)lineno(r));
    return rc;
}

/* A trie build's n-grams sorted on disk (glm_ext_check), orders 2..upto: those read when the
 * reading ended (rc: 0 or its error, at a later line than any n-gram read). The first error of
 * the file is the sort's when it finds one (it names an n-gram's line), else rc. */
static int ext_check(reader *r, glm_arpa *a, unsigned upto, int rc)
{
    glm_ext *x = a->ext;
    glm_ext_bad bad;
    smt_err quiet;
    if (rc) { /* the order being read is checked as far as it was read */
        x->order = upto;
        if (glm_ext_end_order(x, upto, &quiet))
            return rc;
    }
    int crc = glm_ext_check(x, a->uprob, a->ubo, &bad, rc ? &quiet : r->err);
    if (crc || !bad.kind)
        return rc ? rc : crc;
    r->at_line = r->line0[bad.n] + bad.index;
    if (bad.kind == GLM_EXT_DUP)
        rc = smt_err_set(r->err, SMT_ERR_PARSE, "%s:%llu: duplicate %u-gram", r->path,
                         (unsigned long long)lineno(r), bad.n);
    else
        rc = missing_context(r, a, bad.n, bad.ids);
    r->at_line = 0;
    return rc;
}

void glm_arpa_free(glm_arpa *a)
{
    smt_vocab_builder_free(a->vocab);
    free(a->uprob);
    free(a->ubo);
    if (a->pt_mem)
        munmap(a->pt_mem, a->pt_mem_len);
    free(a->pt);
    free(a->words);
    memset(a, 0, sizeof *a);
}

int glm_arpa_read(glm_arpa *a, const char *path, int progress, FILE *warn, float unk_log10,
                  int positive_to_zero, float probing_mult, glm_ext *ext, smt_err *err)
{
    memset(a, 0, sizeof *a);
    a->ext = probing_mult != 0.0f ? NULL : ext;
    reader r = {0};
    r.path = path;
    r.err = err;
    r.positive_to_zero = positive_to_zero;
    a->unk_log10 = unk_log10;
    /* a probing build reads on its own thread and in small chunks: the reading thread's chunks
     * would be memory beyond the output's tables */
    int rc = smt_lines_open(&r.lines, path,
                            probing_mult != 0.0f ? SMT_LINES_SMALL : SMT_LINES_THREADED, err);
    if (rc)
        return rc;
    smt_progress_init(&r.prog, "reading ARPA", smt_lines_total_bytes(r.lines), progress);
    if ((rc = smt_vocab_builder_create(&a->vocab, err)) || (rc = read_counts(&r, a)) ||
        (a->ext && (rc = glm_ext_levels(a->ext, a->order, err))))
        goto out;
    if (probing_mult != 0.0f && !(a->pt = calloc(GLM_MAX_ORDER + 1, sizeof *a->pt))) {
        rc = smt_err_set(err, SMT_ERR_NOMEM, "%s: out of memory", path);
        goto out;
    }
    if (a->pt && pt_alloc(a, probing_mult)) {
        rc = smt_err_set(err, SMT_ERR_NOMEM, "%s: out of memory for the probing tables of the "
                         "declared counts", path);
        goto out;
    }
    if ((rc = read_unigrams(&r, a)) || (a->pt && (rc = vocab_to_probing(&r, a))))
        goto out;
    if (a->ext)
        glm_ext_vocab(a->ext, a->nvocab);
    if (a->unk_added && warn) {
        fprintf(warn, "%s: warning: the ARPA file is missing <unk>; substituting log10 "
                      "probability %g (as KenLM does)\n", path, (double)unk_log10);
    }
    unsigned reached = 0;
    for (unsigned n = 2; n <= a->order && !rc; n++) {
        reached = n;
        rc = read_ngrams(&r, a, n);
    }
    if (!rc)
        rc = read_end(&r);
    if (a->ext && reached && !r.ext_failed && rc != SMT_ERR_NOMEM)
        rc = ext_check(&r, a, reached, rc);
out:
    smt_progress_finish(&r.prog, smt_lines_bytes_read(r.lines));
    smt_lines_close(r.lines);
    if (rc)
        glm_arpa_free(a);
    return rc;
}
