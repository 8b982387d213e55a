/* glm_internal.h — private structures shared by the glm sources (not part of the API). */
#ifndef GLM_INTERNAL_H
#define GLM_INTERNAL_H

#include <stdint.h>
#include <stdio.h>

#include "glm.h"
#include "glm_layout.h"
#include "smt_file.h"
#include "smt_vocab.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GLM_KIND "GLM1"
#define GLM_KIND_VERSION 1u

/* The parameter block of a .glm file (build options and counts that decide how to read it). */
typedef struct glm_params {
    uint32_t order, K;
    uint64_t count[GLM_MAX_ORDER + 1];    /* stored n-grams per order (count[1] = vocabulary) */
    uint64_t declared[GLM_MAX_ORDER + 1]; /* counts the ARPA header declared */
    uint32_t bos, eos;
    uint32_t unk_added;
    /* 0: values stored as floats (sections mid, top); else quantized (build_binary -q -b):
     * prob bits | backoff bits << 8, each 1..25, | GLM_QUANT_PACKED, sections keys (bit-packed),
     * mid (unigrams only), qrec, qbins, qbase, qshape (glm_layout.h). Files before quantization
     * hold 0 here; quantized files of the first layout (uint32 keys, absolute child offsets)
     * lack GLM_QUANT_PACKED and are refused by name. */
    uint32_t quant;
} glm_params;

#define GLM_QUANT_PACKED (1u << 16)

/* GLM_OPEN_INDEX: per level k (2..N) an open-addressing table over the children of every level
 * k-1 entry that has at least min_n of them: (parent, key) -> index in level k. Linear probing,
 * slot = fastrange(hash(parent, key)); an empty slot has idx UINT32_MAX. A slot matches when its
 * key is the one sought and its idx lies inside the parent's child range (ranges of one level are
 * disjoint), so no parent needs to be stored. */
typedef struct glm_hslot {
    uint32_t key, idx;
} glm_hslot;

typedef struct glm_bigidx {
    const glm_hslot *slots[GLM_MAX_ORDER + 1]; /* [k], k = 2..N; NULL: no group indexed */
    uint32_t nslots[GLM_MAX_ORDER + 1];
    uint32_t min_n;                            /* 0: no index */
    void *mem;                                 /* the mapping holding every table */
    size_t mem_len;
} glm_bigidx;

static inline uint32_t glm_bigidx_slot(uint32_t parent, uint32_t key, uint32_t nslots)
{
    uint64_t h = (((uint64_t)parent << 32) | key) * 0x9E3779B97F4A7C15ull;
    h ^= h >> 31;
    h *= 0xD6E8FEB86659FD93ull;
    return (uint32_t)(((h >> 32) * (uint64_t)nslots) >> 32);
}

struct glm_fast; /* glm_batch.c: the fast path's view of the layout and index */
struct glm_kenlm; /* glm_kenlm.c: a KenLM binary queried in place (glm_kenlm.h) */

struct glm_model {
    struct glm_fast *fast; /* NULL until glm_fast_refresh */
    smt_mapped *map;
    smt_vocab vocab;
    glm_layout lay;
    glm_params par;
    void *huge; /* GLM_OPEN_HUGE: the copy in 2 MB pages (munmap'ed at close) */
    size_t huge_len;
    glm_bigidx bix; /* GLM_OPEN_INDEX */
    /* the backend: NULL for a .glm trie; a KenLM binary otherwise (map, vocab's tables, lay's
     * arrays and the index are then unused; par, lay.order and vocab.n are filled) */
    struct glm_kenlm *ken;
};

/* (Re)builds the GLM_OPEN_INDEX tables over every group of at least min_n keys (glm_open uses
 * GLM_INDEX_MIN; tests use smaller ones). Returns 0 or SMT_ERR_NOMEM. Not thread-safe. */
#define GLM_INDEX_MIN 256
int glm_bigidx_build(glm_model *m, uint64_t min_n, smt_err *err);

/* (Re)computes m->fast from the layout and the current index; frees it when m is NULL-safe.
 * Returns 0 or SMT_ERR_NOMEM. Not thread-safe (called by glm_open and glm_bigidx_build). */
int glm_fast_refresh(glm_model *m);
void glm_fast_free(glm_model *m);
/* glm_score through the fast path's walk (the index, node counts): the same floats and state. */
float glm_score_fast(const glm_model *m, const glm_state *in, glm_word w, glm_state *out,
                     unsigned *ngram_length);

/* The readable references the tests hold the fast paths to (plain walks, one query at a time;
 * identical results): glm_score's (glm_model.c) and glm_score_rows's (glm_batch.c). */
float glm_score_ref(const glm_model *m, const glm_state *in, glm_word w, glm_state *out,
                    unsigned *ngram_length);
int glm_score_rows_ref(const glm_model *m, const glm_word *rows, size_t n_rows, float *prob,
                       uint8_t *len, smt_err *err);

/* Fills the K-dependent tables and level offsets of a layout from order, K and counts. */
void glm_layout_setup(glm_layout *L, uint32_t order, uint32_t K, const uint64_t *count);
/* After glm_layout_setup: the quantized layout's key bits (enough for the largest word id),
 * record, bin and base offsets for qp/qb bits (1..25) and the child shape of each level k
 * (2..N-1): shape[k] = delta bits | block shift << 8 (the qshape section; NULL: all zero). Fills
 * L's section sizes (pkey_bytes, qrec_bytes, nqbins, nqbase). Returns 0, or -1 when a shape is
 * out of range (delta bits > 32, shift > 31, or anything set outside 2..N-1). */
#define GLM_QSHAPE_N (GLM_MAX_ORDER + 1)
int glm_layout_quant(glm_layout *L, uint32_t qp, uint32_t qb, const uint32_t *shape);
/* The number of mid entries (glm_mid) a file stores: levels 1..N-1 with their sentinels, or the
 * unigrams only in a quantized file. */
uint64_t glm_layout_nmid(const glm_layout *L);

/* ---- ARPA reading (glm_arpa.c) */

/* Marks a backoff as extended (KenLM's SetExtension): -0.0, the one value glm_has_extension
 * refuses, becomes +0.0. */
static inline void glm_set_extension(float *bo)
{
    if (*bo == 0.0f)
        *bo = 0.0f;
}

struct glm_ext;

typedef struct glm_arpa {
    unsigned order;
    uint64_t declared[GLM_MAX_ORDER + 1];
    smt_vocab_builder *vocab;
    uint32_t nvocab;
    float *uprob, *ubo; /* by word id */
    uint32_t bos, eos;
    int unk_added;
    float unk_log10; /* what a missing <unk> gets */
    /* glm build probing: orders 2..order go straight into KenLM's probing tables pt[n] (sized by
     * the declared counts); an n-gram's probability there has its sign bit clear
     * once it extends left, and so does a unigram's in uprob */
    struct glm_kenlm_fill *pt;
    /* and, after the unigrams, the vocabulary is KenLM's table of word hashes pt[1] (every word
     * but <unk>) and the words (each NUL-terminated, in id order); vocab is then freed */
    char *words;
    size_t words_len;
    void *pt_mem; /* the mapping holding pt[1..order]'s tables (glm_alloc_huge) */
    size_t pt_mem_len;
    /* a trie build: orders 2..order go to ext's runs (the unigrams' "extends" marks are set as
     * the 2-grams are read) */
    struct glm_ext *ext;
} glm_arpa;

/* Anonymous memory, 2 MB aligned and advised to huge pages but for its tail (less than 2 MB),
 * zeroed; *raw and *len are for munmap. NULL when out of memory. */
void *glm_alloc_huge(size_t bytes, void **raw, size_t *len);

/* Reads an ARPA file with KenLM's semantics (see docs/glm.md). On failure a is freed. */
/* unk_log10: <unk>'s log10 probability when the file lacks it (KenLM: -100); positive_to_zero:
 * a positive log10 probability reads as 0 (build_binary -i) instead of being an error. */
/* probing_mult: 0 for a trie build, whose n-grams go to ext (glm_ext_check run on them: the
 * file's first error is the sort's or the reading's), else the multiplier of the probing tables
 * (pt). */
int glm_arpa_read(glm_arpa *a, const char *path, int progress, FILE *warn, float unk_log10,
                  int positive_to_zero, float probing_mult, struct glm_ext *ext, smt_err *err);
void glm_arpa_free(glm_arpa *a);
/* KenLM's FixSRI: an inserted suffix's value x from the one it extends (the absolute log10
 * probability of the stored suffix the insertion starts from, or within one insertion the
 * previous inserted suffix's x) and its context's backoff; it is stored as -|x| (the trie) or
 * |x| (a probing table, where it extends left). */
float glm_fixsri_next(float from, float ctx_bo);

/* ---- a trie build's finished levels (glm_spill.c): bytes appended in order, then read back once
 * in order. Up to limit bytes stay in memory; past it everything goes to a temporary file in dir
 * (made, and unlinked, at open), in blocks of at most 1 MiB, each with its length and a hash
 * seeded with its index, checked when read back: a damaged file is SMT_ERR_CORRUPT, a failed
 * write SMT_ERR_IO ("DIR: temporary file: write error: <reason>"). */
typedef struct glm_spill {
    uint8_t *mem; /* the bytes while nothing is spilled */
    size_t len, cap;
    uint64_t limit, total, nread;
    char *dir;
    int fd, spilled;
    uint8_t *blk; /* the block being written, or read */
    size_t blen, bpos, bsize;
    uint64_t nblocks;
    uint64_t foff, roff; /* the file's length written; the next block glm_spill_get reads */
} glm_spill;

int glm_spill_open(glm_spill *s, uint64_t limit, const char *dir, smt_err *err);
/* SMT_ERR_CORRUPT, "DIR: temporary file damaged (WHAT)": a temporary file of dir read back
 * wrong. */
int glm_temp_damaged(smt_err *err, const char *dir, const char *what, ...)
    __attribute__((format(printf, 3, 4)));
/* glm_spill_open with blocks of at most bsize bytes (64 .. 1 MiB) instead of 1 MiB. */
int glm_spill_open_blocks(glm_spill *s, uint64_t limit, size_t bsize, const char *dir,
                          smt_err *err);
int glm_spill_put(glm_spill *s, const void *data, size_t n, smt_err *err);
/* Ends the appends; the reads start at the first byte. */
int glm_spill_rewind(glm_spill *s, smt_err *err);
int glm_spill_get(glm_spill *s, void *data, size_t n, smt_err *err);
void glm_spill_close(glm_spill *s);

/* A spill of limit 0 also holds runs, each read back any number of times while appends go on:
 * glm_spill_mark ends the block being written and gives the position where the next bytes go; a
 * cursor reads the bytes between two marks (its own block buffer, pread). */
typedef struct glm_spill_pos {
    uint64_t off, block;
} glm_spill_pos;

typedef struct glm_spill_cur {
    const glm_spill *s;
    glm_spill_pos at, end;
    uint8_t *blk;
    size_t blen, bpos;
} glm_spill_cur;

int glm_spill_mark(glm_spill *s, glm_spill_pos *pos, smt_err *err);
int glm_spill_cur_open(glm_spill_cur *c, const glm_spill *s, glm_spill_pos from,
                       glm_spill_pos to, smt_err *err);
/* The next n bytes: 0, 1 at the end of the run (nothing read), or an error (a run ending inside
 * the n bytes is SMT_ERR_CORRUPT). */
int glm_spill_cur_get(glm_spill_cur *c, void *data, size_t n, smt_err *err);
void glm_spill_cur_close(glm_spill_cur *c);

/* ---- a trie build's n-grams sorted on disk (glm_ext.c). Each order's records (reversed ids,
 * prob, backoff but at the highest order, their index in the order) go through a buffer of
 * bounded size into sorted runs in a temporary file, with their contexts; glm_ext_check merges
 * each order into its level file, in lexicographic order of the reversed ids, each record with
 * its parent's rank in the level below (a 2-gram's: its first word), and marks every level's
 * records used as a context (ext, a bit per rank). A missing suffix is inserted as KenLM's FixSRI
 * inserts it (the blanks, held in memory per order); a duplicate or a missing context is reported
 * as the first one in file order (glm_ext_bad). */
typedef struct glm_ext_level {
    glm_spill runs;              /* the runs: records (ids, prob, bo, index), contexts (ids[1..n),
                                  * index) */
    glm_spill_pos *rmark, *cmark; /* each run's first and end position */
    size_t nr, nc;
    glm_spill lev; /* the level: (ids, prob, bo, parent's rank) in order */
    glm_spill_pos lev_start, lev_end;
    uint64_t count, nread; /* the level's records; those read (the blanks are the rest) */
    uint64_t *ext; /* by rank: used as a context (levels below the highest, once checked) */
    uint32_t *blank; /* the inserted suffixes in order: (ids, inserter (2 words), x, context bo) */
    size_t nblank, blank_cap;
} glm_ext_level;

typedef struct glm_ext {
    unsigned order, top, idbits; /* order: checked up to; top: the file's */
    char *dir;
    uint32_t *buf, *tmp; /* the records being buffered, the sort's other array */
    size_t buf_bytes, nbuf; /* buf_bytes: each array's (the layout's sorters take as much) */
    glm_ext_level l[GLM_MAX_ORDER + 1];
} glm_ext;

/* The first error glm_ext_check found in file order: kind (GLM_EXT_DUP: the record is a
 * duplicate of an earlier one; GLM_EXT_NOCTX: its context ids[1..n) is not stored when it is
 * read), the record's order n and its index there; kind 0: none. */
enum { GLM_EXT_DUP = 1, GLM_EXT_NOCTX = 2 };
typedef struct glm_ext_bad {
    unsigned kind, n;
    uint64_t index;
    uint32_t ids[GLM_MAX_ORDER];
} glm_ext_bad;

/* mem: the bytes of the sort's two arrays (at least 64 records each); dir: the files' folder. */
int glm_ext_open(glm_ext *x, uint64_t mem, const char *dir, smt_err *err);
/* The files of orders 2..order (the reader, once it knows the order). */
int glm_ext_levels(glm_ext *x, unsigned order, smt_err *err);
/* The vocabulary's size (the ids' bits the sort looks at). */
void glm_ext_vocab(glm_ext *x, uint32_t nvocab);
int glm_ext_add(glm_ext *x, unsigned n, const uint32_t *ids, float prob, float bo, smt_err *err);
int glm_ext_end_order(glm_ext *x, unsigned n, smt_err *err);
/* Orders 2..x->order into their levels; uprob/ubo: the unigrams (an inserted 2-gram's values
 * come from them, its context's "extends" mark goes to ubo). 0 with bad->kind set when the file
 * has an error, else 0 or an error code. */
int glm_ext_check(glm_ext *x, const float *uprob, float *ubo, glm_ext_bad *bad, smt_err *err);
/* A cursor over level n's records (after glm_ext_check): (n + 3) words each. */
int glm_ext_lev_open(glm_ext *x, unsigned n, glm_spill_cur *c, smt_err *err);
void glm_ext_close(glm_ext *x);

/* A k-way merge of sorted runs of w-word records by their first m words: a binary heap of the
 * runs by their current record (equal records: the earlier run first). */
typedef struct glm_merge {
    glm_spill_cur *cur;
    uint32_t *rec; /* (nr, w): each run's current record */
    size_t *heap, nh, nr;
    unsigned w, m;
    int advance; /* the top's run moves on at the next call */
} glm_merge;

/* The next record in order (*out, valid until the next call): 1, 0 at the end, or an error. */
int glm_merge_next(glm_merge *g, const uint32_t **out, smt_err *err);
void glm_merge_close(glm_merge *g);

/* Records of w words sorted by their first (below 2^bits) through a buffer of mem bytes (two
 * arrays, at least 64 records each) into runs in a temporary file in dir, merged any number of
 * times once ended. */
typedef struct glm_sorter {
    glm_spill sp;
    glm_spill_pos *marks;
    size_t nr, cap, n;
    uint32_t *buf, *tmp;
    unsigned w, bits;
} glm_sorter;

int glm_sorter_open(glm_sorter *t, unsigned w, unsigned bits, uint64_t mem, const char *dir,
                    smt_err *err);
int glm_sorter_add(glm_sorter *t, const uint32_t *rec, smt_err *err);
int glm_sorter_end(glm_sorter *t, smt_err *err);
int glm_sorter_merge(const glm_sorter *t, glm_merge *g, smt_err *err);
void glm_sorter_close(glm_sorter *t);

/* ---- B-tree construction (glm_build.c) */

/* slot_to_rank[s] = the rank (in sorted order) of the key stored at breadth-first slot s of an
 * n-key B-tree. */
void glm_bt_order(const glm_layout *L, uint64_t n, uint32_t *slot_to_rank);

/* ---- glm_gpu_score_rows with rows/prob/len already in device memory (no copies; len may be
 * NULL), for bench_glm's measure of the kernel alone (glm_gpu.cu). Synchronizes before
 * returning. */
int glm_gpu_score_rows_device(glm_gpu *g, const glm_word *d_rows, size_t n_rows, float *d_prob,
                              uint8_t *d_len, smt_err *err);

/* ---- glm_score_states (glm_batch.c) and glm_gpu_score_states (glm_gpu.cu): the check both make
 * before any walk (which trust the ids): every word and every state word below nvocab, every
 * state no longer than order - 1. Returns 0 or SMT_ERR_ARG naming the query. */
static inline int glm_states_check(unsigned order, uint32_t nvocab, const glm_state *in,
                                   const glm_word *w, size_t n, smt_err *err)
{
    for (size_t i = 0; i < n; i++) {
        if (w[i] >= nvocab)
            return smt_err_set(err, SMT_ERR_ARG, "query %zu: word id %u out of range (%u words)",
                               i, (unsigned)w[i], (unsigned)nvocab);
        if (in[i].length > order - 1)
            return smt_err_set(err, SMT_ERR_ARG,
                               "query %zu: state length %u exceeds the order - 1 (%u)", i,
                               (unsigned)in[i].length, order - 1);
        for (unsigned j = 0; j < in[i].length; j++)
            if (in[i].words[j] >= nvocab)
                return smt_err_set(err, SMT_ERR_ARG,
                                   "query %zu: state word %u id %u out of range (%u words)", i, j,
                                   (unsigned)in[i].words[j], (unsigned)nvocab);
    }
    return 0;
}

/* ---- batch scoring (glm_batch.c; the state logic it shares is glm_layout.h's) */

/* Scores sentences [s0, s1) of a block: tokens ids[sstart[s] .. sstart[s+1]) each scored after the
 * previous ones of its sentence, starting from <s> (or the null context). prob/len per token.
 * fast: the level-synchronous walks (glm_batch.c); else one word at a time (reference). */
void glm_score_sentences(const glm_model *m, const glm_word *ids, const uint64_t *sstart,
                         size_t s0, size_t s1, int null_context, int fast, float *prob,
                         uint8_t *len);

/* ---- the level-synchronous sentence drivers (glm_batch.c's glm trie, glm_kenlm.c's KenLM trie):
 * the tokens of a chunk are walked each with its full history inside its sentence (up to N - 1
 * words, <s> first unless null_context) instead of its state, so no walk waits for the previous
 * token; KenLM's state logic follows in text order. The histories are one array filled backwards
 * in text order: a token's history (most recent word first) starts just below its own word. */
#define GLM_CHUNK 256
#define GLM_CHUNK_RB (2 * GLM_CHUNK + GLM_MAX_ORDER + 2)

/* Fills rb (GLM_CHUNK_RB words) with the histories of tokens [t0, t1) (at most GLM_CHUNK, t1 not
 * past the last sentence): hist[i] and nh[i] (at most H words) are token t0 + i's. *s is a
 * sentence not after t0's; it is moved to t1 - 1's. */
static inline void glm_chunk_histories(const glm_word *ids, const uint64_t *sstart, size_t *s,
                                       uint64_t t0, uint64_t t1, unsigned H, int null_context,
                                       glm_word bos, glm_word *rb, const glm_word **hist,
                                       uint8_t *nh)
{
    size_t si = *s;
    unsigned pos = GLM_CHUNK_RB;
    while (t0 >= sstart[si + 1])
        si++;
    uint64_t p0 = t0 - sstart[si];
    if (p0 > 0) { /* the chunk starts inside a sentence: its context first */
        if (!null_context && p0 < H)
            rb[--pos] = bos;
        for (unsigned u = p0 < H ? (unsigned)p0 : H; u > 0; u--)
            rb[--pos] = ids[t0 - u];
    }
    for (uint64_t t = t0; t < t1; t++) {
        while (t >= sstart[si + 1])
            si++;
        uint64_t p = t - sstart[si] + (null_context ? 0 : 1); /* history words available */
        if (p == 1 && !null_context)
            rb[--pos] = bos;
        hist[t - t0] = rb + pos;
        nh[t - t0] = (uint8_t)(p < H ? p : H);
        rb[--pos] = ids[t];
    }
    *s = si;
}

/* ---- text blocks (glm_text.c): lines tokenized (SMT_WS_SPACE) and looked up, ready for
 * glm_score_sentences. A zeroed block is empty; reset it by zeroing ntok, nlines and ntxt. */
typedef struct glm_block {
    glm_word *ids;
    uint32_t *woff;   /* word mode: offset of each token's text in txt (UINT32_MAX: </s>) */
    uint64_t *sstart; /* per line: first token; n_lines + 1 entries */
    uint32_t *nwords; /* per line: words excluding </s> */
    float *prob;
    uint8_t *len;
    char *txt;
    size_t ntok, captok, nlines, caplines, ntxt, captxt;
    struct glm_word_cache *wc; /* word ids by the words' bytes (glm_text.c), made once the
                                * block has seen a few thousand words (wseen), or the caller's */
    uint64_t wseen;
} glm_block;

/* Appends line [line, line + n) (n < 2^32) to the block: its word ids, then </s> when eos. It
 * reserves n / 2 + 2 more tokens and 2 more lines, growing the arrays (smt_grow) only past captok
 * and caplines: a block on caller-owned arrays with room for those never reallocates them.
 * Returns 0 or -1 (out of memory). A block serves one model from its first line to
 * glm_block_free (the word cache holds that model's ids; another model empties it). */
int glm_block_add_line(glm_block *b, const glm_model *m, const char *line, size_t n, int eos);
void glm_block_free(glm_block *b);

#ifdef __cplusplus
}
#endif
#endif
