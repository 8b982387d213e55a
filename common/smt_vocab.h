/* smt_vocab.h — a vocabulary: words (byte strings) ⇄ dense 32-bit ids assigned in insertion order.
 *
 * The same layout serves building in memory and querying a mapped file:
 *   <prefix>.str   every word followed by a NUL, concatenated
 *   <prefix>.off   uint64 offsets into .str, n+1 of them (word i is str[off[i]] .. str[off[i+1]-2])
 *   <prefix>.hash  open-addressing table of {uint32 id, uint32 high hash bits}, a power of two in size,
 *                  at most half full (at most 2/3 when written by smt_vocab_builder_write_dense); empty
 *                  slots hold id SMT_VOCAB_NONE. Keyed by xxh3-64 of the word.
 * Loading a mapped vocabulary validates every offset and id, so a damaged file is an error, never a
 * crash.
 * Thread-safety: a smt_vocab view is immutable, so any number of threads may look words up in it. A
 * builder is used by one thread at a time. */
#ifndef SMT_VOCAB_H
#define SMT_VOCAB_H

#include <stddef.h>
#include <stdint.h>

#include "smt_error.h"
#include "smt_file.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SMT_VOCAB_NONE UINT32_MAX
#define SMT_VOCAB_MAX_WORDS (UINT32_MAX - 1u)

typedef struct smt_vocab_slot {
    uint32_t id;
    uint32_t tag; /* high 32 bits of the word's hash */
} smt_vocab_slot;

/* A read-only view (of a mapped file or of a builder's arrays). */
typedef struct smt_vocab {
    const char *str;
    const uint64_t *off;
    const smt_vocab_slot *slots;
    uint64_t str_size;
    uint32_t n;
    uint64_t mask; /* slot count - 1 */
} smt_vocab;

/* Finds a word; returns its id or SMT_VOCAB_NONE. */
uint32_t smt_vocab_find(const smt_vocab *v, const char *word, size_t len);

/* The word with id (< v->n), NUL-terminated; its length in *len when len is not NULL. */
static inline const char *smt_vocab_word(const smt_vocab *v, uint32_t id, size_t *len)
{
    if (len)
        *len = (size_t)(v->off[id + 1] - v->off[id] - 1);
    return v->str + v->off[id];
}

/* Loads and validates the sections <prefix>.str/.off/.hash of a mapped file. */
int smt_vocab_load(smt_vocab *v, const smt_mapped *m, const char *prefix, smt_err *err);

/* ---- building ---- */

typedef struct smt_vocab_builder smt_vocab_builder;

int smt_vocab_builder_create(smt_vocab_builder **out, smt_err *err);
void smt_vocab_builder_free(smt_vocab_builder *b);

/* Returns the id of word, adding it when new. Returns 0, SMT_ERR_NOMEM or SMT_ERR_LIMIT. */
int smt_vocab_builder_add(smt_vocab_builder *b, const char *word, size_t len, uint32_t *id,
                          smt_err *err);

/* A view of the builder's current contents (valid until the next add). */
smt_vocab smt_vocab_builder_view(const smt_vocab_builder *b);

/* Writes the three sections <prefix>.str/.off/.hash. */
int smt_vocab_builder_write(const smt_vocab_builder *b, smt_writer *w, const char *prefix,
                            smt_err *err);
/* The same, with the hash table re-made at the smallest power of two at most 2/3 full (the
 * builder's own is at most half full): for files where size comes before a few more probes per
 * lookup (glm's quantized files; the mono lm.5's 266,391 words take 2^19 slots instead of 2^20,
 * 4 MB less). Readers see no difference. Returns 0, SMT_ERR_NOMEM or the writer's error. */
int smt_vocab_builder_write_dense(const smt_vocab_builder *b, smt_writer *w, const char *prefix,
                                  smt_err *err);

#ifdef __cplusplus
}
#endif
#endif
