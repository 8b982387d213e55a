/* The vocabulary of smt_vocab.h: lookups in a written table, and the builder. */
#include "smt_vocab.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "smt_buf.h"
#include "smt_hash.h"

uint32_t smt_vocab_find(const smt_vocab *v, const char *word, size_t len)
{
    if (v->n == 0)
        return SMT_VOCAB_NONE;
    uint64_t h = smt_hash_bytes(word, len);
    uint32_t tag = (uint32_t)(h >> 32);
    for (uint64_t i = h & v->mask;; i = (i + 1) & v->mask) {
        const smt_vocab_slot *s = &v->slots[i];
        if (s->id == SMT_VOCAB_NONE)
            return SMT_VOCAB_NONE;
        if (s->tag == tag) {
            size_t wl;
            const char *w = smt_vocab_word(v, s->id, &wl);
            if (wl == len && memcmp(w, word, len) == 0)
                return s->id;
        }
    }
}

static int names(char out[3][SMT_FILE_SECTION_NAME_MAX + 1], const char *prefix, smt_err *err)
{
    static const char *const suffix[3] = {".str", ".off", ".hash"};
    for (int i = 0; i < 3; i++)
        if ((size_t)snprintf(out[i], SMT_FILE_SECTION_NAME_MAX + 1, "%s%s", prefix, suffix[i]) >
            SMT_FILE_SECTION_NAME_MAX)
            return smt_err_set(err, SMT_ERR_ARG, "vocabulary prefix '%s' too long", prefix);
    return 0;
}

int smt_vocab_load(smt_vocab *v, const smt_mapped *m, const char *prefix, smt_err *err)
{
    char nm[3][SMT_FILE_SECTION_NAME_MAX + 1];
    int rc = names(nm, prefix, err);
    if (rc)
        return rc;
    const void *str, *off, *slots;
    uint64_t str_size, n_off, n_slots;
    if ((rc = smt_mapped_require(m, nm[0], 1, UINT64_MAX, &str, &str_size, err)) ||
        (rc = smt_mapped_require(m, nm[1], 8, UINT64_MAX, &off, &n_off, err)) ||
        (rc = smt_mapped_require(m, nm[2], sizeof(smt_vocab_slot), UINT64_MAX, &slots, &n_slots,
                                 err)))
        return rc;
    const char *path = smt_mapped_path(m);
    const uint64_t *o = off;
    const char *s = str;
    const smt_vocab_slot *sl = slots;
    if (n_off == 0 || n_off - 1 > SMT_VOCAB_MAX_WORDS || o[0] != 0 || o[n_off - 1] != str_size)
        return smt_err_set(err, SMT_ERR_CORRUPT, "%s: vocabulary '%s' offsets corrupted", path,
                           prefix);
    uint64_t n = n_off - 1;
    for (uint64_t i = 0; i < n; i++)
        if (o[i + 1] <= o[i] || o[i + 1] > str_size || s[o[i + 1] - 1] != '\0')
            return smt_err_set(err, SMT_ERR_CORRUPT, "%s: vocabulary '%s' word %llu corrupted",
                               path, prefix, (unsigned long long)i);
    if (n_slots == 0 || (n_slots & (n_slots - 1)) || n_slots <= n)
        return smt_err_set(err, SMT_ERR_CORRUPT, "%s: vocabulary '%s' hash table corrupted", path,
                           prefix);
    /* Every id in range, and at least one empty slot: a lookup probes until it meets one, so a
     * damaged table without any would loop forever. */
    uint64_t used = 0;
    for (uint64_t i = 0; i < n_slots; i++) {
        if (sl[i].id == SMT_VOCAB_NONE)
            continue;
        if (sl[i].id >= n)
            return smt_err_set(err, SMT_ERR_CORRUPT, "%s: vocabulary '%s' hash table corrupted",
                               path, prefix);
        used++;
    }
    if (used != n)
        return smt_err_set(err, SMT_ERR_CORRUPT, "%s: vocabulary '%s' hash table holds %llu ids, "
                           "expected %llu", path, prefix, (unsigned long long)used,
                           (unsigned long long)n);
    v->str = s;
    v->off = o;
    v->slots = sl;
    v->str_size = str_size;
    v->n = (uint32_t)n;
    v->mask = n_slots - 1;
    return 0;
}

/* ---------------------------------------------------------------- builder */

struct smt_vocab_builder {
    smt_buf str; /* every word followed by its NUL */
    uint64_t *off;
    size_t off_cap; /* entries */
    smt_vocab_slot *slots;
    uint64_t n_slots;
    uint32_t n;
};

smt_vocab smt_vocab_builder_view(const smt_vocab_builder *b)
{
    smt_vocab v = {b->str.data, b->off, b->slots, b->str.len, b->n, b->n_slots - 1};
    return v;
}

int smt_vocab_builder_create(smt_vocab_builder **out, smt_err *err)
{
    *out = NULL;
    smt_vocab_builder *b = calloc(1, sizeof *b);
    if (!b)
        return smt_err_set(err, SMT_ERR_NOMEM, "vocabulary: out of memory");
    b->off_cap = 1 << 12;
    b->n_slots = 1 << 13;
    int rc = smt_buf_reserve(&b->str, 1 << 16);
    b->off = malloc(b->off_cap * sizeof *b->off);
    b->slots = malloc(b->n_slots * sizeof *b->slots);
    if (rc || !b->off || !b->slots) {
        smt_vocab_builder_free(b);
        return smt_err_set(err, SMT_ERR_NOMEM, "vocabulary: out of memory");
    }
    memset(b->slots, 0xff, b->n_slots * sizeof *b->slots);
    b->off[0] = 0;
    *out = b;
    return 0;
}

void smt_vocab_builder_free(smt_vocab_builder *b)
{
    if (!b)
        return;
    smt_buf_free(&b->str);
    free(b->off);
    free(b->slots);
    free(b);
}

static void place(smt_vocab_slot *slots, uint64_t mask, uint64_t h, uint32_t id)
{
    uint64_t i = h & mask;
    while (slots[i].id != SMT_VOCAB_NONE)
        i = (i + 1) & mask;
    slots[i].id = id;
    slots[i].tag = (uint32_t)(h >> 32);
}

/* A table of n_slots (a power of two above b->n) holding every word of b, or NULL. */
static smt_vocab_slot *replace_all(const smt_vocab_builder *b, uint64_t n_slots)
{
    smt_vocab_slot *s = malloc(n_slots * sizeof *s);
    if (!s)
        return NULL;
    memset(s, 0xff, n_slots * sizeof *s);
    for (uint32_t id = 0; id < b->n; id++) {
        size_t len = (size_t)(b->off[id + 1] - b->off[id] - 1);
        place(s, n_slots - 1, smt_hash_bytes(b->str.data + b->off[id], len), id);
    }
    return s;
}

static int grow_slots(smt_vocab_builder *b)
{
    uint64_t n_slots = b->n_slots * 2;
    smt_vocab_slot *s = replace_all(b, n_slots);
    if (!s)
        return SMT_ERR_NOMEM;
    free(b->slots);
    b->slots = s;
    b->n_slots = n_slots;
    return 0;
}

int smt_vocab_builder_add(smt_vocab_builder *b, const char *word, size_t len, uint32_t *id,
                          smt_err *err)
{
    smt_vocab v = smt_vocab_builder_view(b);
    uint32_t found = smt_vocab_find(&v, word, len);
    if (found != SMT_VOCAB_NONE) {
        *id = found;
        return 0;
    }
    if (b->n >= SMT_VOCAB_MAX_WORDS)
        return smt_err_set(err, SMT_ERR_LIMIT, "vocabulary: more than %u words", SMT_VOCAB_MAX_WORDS);
    if (smt_buf_reserve(&b->str, len + 1) ||
        smt_grow(&b->off, &b->off_cap, (size_t)b->n + 2, sizeof *b->off, 0) ||
        (2 * ((uint64_t)b->n + 1) > b->n_slots && grow_slots(b)))
        return smt_err_set(err, SMT_ERR_NOMEM, "vocabulary: out of memory");
    memcpy(b->str.data + b->str.len, word, len);
    b->str.len += len + 1; /* the word and its NUL */
    b->str.data[b->str.len - 1] = '\0';
    b->str.data[b->str.len] = '\0';
    uint32_t new_id = b->n++;
    b->off[b->n] = b->str.len;
    place(b->slots, b->n_slots - 1, smt_hash_bytes(word, len), new_id);
    *id = new_id;
    return 0;
}

static int write_sections(const smt_vocab_builder *b, const smt_vocab_slot *slots,
                          uint64_t n_slots, smt_writer *w, const char *prefix, smt_err *err)
{
    char nm[3][SMT_FILE_SECTION_NAME_MAX + 1];
    int rc = names(nm, prefix, err);
    if (!rc)
        rc = smt_writer_section(w, nm[0], b->str.data, b->str.len, err);
    if (!rc)
        rc = smt_writer_section(w, nm[1], b->off, ((size_t)b->n + 1) * sizeof *b->off, err);
    if (!rc)
        rc = smt_writer_section(w, nm[2], slots, (size_t)n_slots * sizeof *slots, err);
    return rc;
}

int smt_vocab_builder_write(const smt_vocab_builder *b, smt_writer *w, const char *prefix,
                            smt_err *err)
{
    return write_sections(b, b->slots, b->n_slots, w, prefix, err);
}

int smt_vocab_builder_write_dense(const smt_vocab_builder *b, smt_writer *w, const char *prefix,
                                  smt_err *err)
{
    uint64_t n_slots = 2; /* the smallest power of two with 3n <= 2 slots (and so n < slots) */
    while (3 * (uint64_t)b->n > 2 * n_slots)
        n_slots *= 2;
    if (n_slots >= b->n_slots)
        return write_sections(b, b->slots, b->n_slots, w, prefix, err);
    smt_vocab_slot *s = replace_all(b, n_slots);
    if (!s)
        return smt_err_set(err, SMT_ERR_NOMEM, "vocabulary: out of memory");
    int rc = write_sections(b, s, n_slots, w, prefix, err);
    free(s);
    return rc;
}
