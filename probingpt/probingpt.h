/* probingpt.h — a binarized Moses phrase table with integrated lexicalized reordering, queried in
 * place through mmap (Bogoychev's ProbingPT, thesis ch. 3). docs/probingpt.md is the user guide.
 *
 * File (an smt_file container of kind "PPT1"):
 *   params        ppt_params (below): score counts, flags, table sizes, the hash mask
 *   src.* tgt.*   source and target vocabularies (smt_vocab)
 *   hash          ppt_slot[num_slots] (8 bytes): linear probing on xxh3-64 of the source ids
 *   payload       uint32 words: one group per source phrase, all its targets together
 *   align.off     uint32[num_align + 1]: offsets (in points) into align.pts
 *   align.pts     uint8 pairs (source position, target position): the deduplicated alignments
 *   extra.*       the deduplicated text after the fifth field (smt_vocab, e.g. " |||")
 * A group:  u32 src_len, u32 n_targets, u32 group_words, u32 src_ids[src_len], then n_targets
 * records: u32 info (tgt_len | n_counts << 8 | (n_fields - 3) << 16 | reordering << 18 | extra << 19),
 * u32 align_id,
 * [u32 extra_id when extra is 0x1fff], u32 tgt_ids[tgt_len], f32 scores[num_scores],
 * f32 reordering[num_reordering_scores], f32 counts[n_counts]. extra: 0 none, else extra_id + 1.
 * reordering: 1 when the pair had a reordering-table entry (else it holds the defaults).
 * A lookup reads one hash slot (plus the next on a probe) and the group: the source ids at the head
 * of the group are compared with the query, so a 64-bit hash collision between two source phrases
 * never returns the other phrase's targets.
 *
 * Scores are stored as given in the text (probabilities, float32); callers take ln() and floor them
 * as Moses does. Error codes are the SMT_ERR_* of smt_error.h.
 * Thread-safety: a ppt_table is immutable once open; every query function may be called from any
 * number of threads at once on one handle, without locks. ppt_targets/ppt_target are per-caller. */
#ifndef PROBINGPT_H
#define PROBINGPT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "smt_error.h"
#include "smt_file.h"
#include "smt_vocab.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PPT_KIND "PPT1"
#define PPT_FORMAT_VERSION 2u /* history: docs/probingpt.md */
#define PPT_MAX_PHRASE_LEN 255u /* tokens per source or target phrase (alignment points are bytes) */
#define PPT_MAX_SCORES 64u      /* phrase scores, and reordering scores, per entry */
#define PPT_MAX_COUNTS 255u
#define PPT_MAX_PAYLOAD_WORDS ((1ull << 40) - 2) /* 4 TiB of payload */

enum {
    PPT_FLAG_REORDERING = 1u << 0, /* built with a reordering table */
    PPT_FLAG_LIMITED = 1u << 1     /* built with --table-limit */
};

/* The parameter block of the file (little-endian, 128 bytes). */
typedef struct ppt_params {
    uint32_t num_scores;
    uint32_t num_reordering_scores;
    uint32_t flags;
    uint32_t table_limit; /* 0: none */
    uint64_t num_sources;
    uint64_t num_targets;
    uint64_t num_slots;
    uint64_t hash_mask; /* applied to every key hash; all ones except in collision tests */
    uint64_t payload_words;
    uint64_t num_align;
    uint64_t num_extra;
    uint64_t collisions;   /* distinct sources whose 64-bit keys collided (resolved by the ids) */
    uint32_t max_src_len;  /* the longest source phrase (words): longer lookups miss at once */
    uint32_t reserved0;
    float reordering_default[4]; /* informational: the first defaults used for unmatched pairs */
    uint64_t reserved[2];
} ppt_params;

/* A hash slot: (tag << 40) | offset. offset: of the group in payload, in uint32 words (< 2^40 - 1);
 * tag: the top 24 bits of the key, (xxh3-64 of the source ids) & hash_mask, which skips almost every
 * group of another source without reading it. UINT64_MAX when empty. */
typedef uint64_t ppt_slot;
#define PPT_SLOT_OFFSET_BITS 40

typedef struct ppt_table ppt_table;

/* All the targets of one source phrase: a view into the mapped file, iterated by ppt_targets_next. */
typedef struct ppt_targets {
    const ppt_table *table;
    const uint32_t *src_ids; /* the source phrase, src_len ids */
    uint32_t src_len;
    uint32_t n;              /* number of targets */
    const uint32_t *cursor;  /* internal */
    const uint32_t *end;     /* internal: the end of the group */
    uint32_t left;           /* internal */
    int error;               /* 0, or SMT_ERR_CORRUPT once ppt_targets_next met a damaged record */
} ppt_targets;

/* One target phrase. Pointers point into the mapped file. */
typedef struct ppt_target {
    const uint32_t *words;     /* target ids (tgt vocabulary), n_words of them */
    uint32_t n_words;
    const float *scores;       /* ppt_num_scores() values */
    const float *reordering;   /* ppt_num_reordering_scores() values (NULL when 0) */
    const float *counts;       /* n_counts values (the counts field; often 3) */
    uint32_t n_counts;
    uint32_t n_fields;         /* fields of the text line: 3..5, 6 when extra text followed */
    uint32_t align_id;         /* index of the alignment in the table's deduplicated set */
    const uint8_t *align;      /* n_align pairs: align[2i] source position, align[2i+1] target */
    uint32_t n_align;
    uint32_t extra_id;         /* SMT_VOCAB_NONE when the line had at most five fields */
    int has_reordering;        /* 1: the pair had a reordering-table entry; 0: `reordering` holds the
                                * build's defaults (Moses would give such a pair no reordering score),
                                * or the table has no reordering scores */
} ppt_target;

/* ---- opening ---- */

/* Maps and validates a table. flags: SMT_OPEN_* of smt_file.h (SMT_OPEN_VERIFY checks checksums
 * and walks the whole payload, as ppt_verify does).
 * Returns 0, SMT_ERR_IO, SMT_ERR_FORMAT, SMT_ERR_VERSION, SMT_ERR_INCOMPLETE, SMT_ERR_CORRUPT or
 * SMT_ERR_NOMEM with a message naming the file. Every bound a lookup trusts is checked here or at
 * the lookup, so a damaged file gives an error, never a crash. */
int ppt_open(ppt_table **out, const char *path, unsigned flags, smt_err *err);

/* Unmaps and frees. Accepts NULL. Not concurrently with queries on the same handle. */
void ppt_close(ppt_table *t);

/* Checks every section checksum and walks every group of the payload (bounds, ids, alignment and
 * extra ids, hash slots). Returns 0 or SMT_ERR_CORRUPT with the first problem. O(file size). */
int ppt_verify(const ppt_table *t, smt_err *err);

/* ---- lookups (thread-safe, lock-free) ---- */

/* Looks up the source phrase given as ids of the source vocabulary (ppt_src_vocab()).
 * Returns 0 and fills *out when found; SMT_ERR_NOTFOUND when the table has no such phrase (also
 * when n is 0, longer than the table's longest source (params max_src_len), or an id is
 * SMT_VOCAB_NONE); SMT_ERR_CORRUPT when
 * the group header read is damaged (its records are checked by ppt_targets_next). Reads one hash
 * slot (more on a probe sequence) and the head of the group: O(1) in the number of targets. */
int ppt_lookup_ids(const ppt_table *t, const uint32_t *src_ids, size_t n, ppt_targets *out);

/* Looks up a source phrase given as text: tokens separated by spaces or tabs (runs allowed).
 * A word absent from the source vocabulary is an immediate miss. Same return codes as
 * ppt_lookup_ids. */
int ppt_lookup(const ppt_table *t, const char *phrase, size_t len, ppt_targets *out);

/* Advances the iteration over targets: fills *t and returns 1, or returns 0 when no target is left.
 * Each record is bounds- and id-checked before it is handed out (its alignment points must lie
 * inside the phrase pair); a damaged one ends the iteration (returns 0) and sets it->error to
 * SMT_ERR_CORRUPT, so `while (ppt_targets_next(&it, &t))` never sees garbage. A caller must check
 * it->error after the loop: a damaged group is an error, never a shorter list of targets (the
 * decoder fails the sentence; damage a lookup cannot see, such as a flipped score bit, only the
 * checksums of SMT_OPEN_VERIFY / ppt_verify catch). */
int ppt_targets_next(ppt_targets *it, ppt_target *t);

/* ---- properties ---- */

const smt_vocab *ppt_src_vocab(const ppt_table *t);
const smt_vocab *ppt_tgt_vocab(const ppt_table *t);
/* The extra text of extra_id (< num_extra), e.g. " |||"; its length in *len. */
const char *ppt_extra_text(const ppt_table *t, uint32_t extra_id, size_t *len);
uint32_t ppt_num_scores(const ppt_table *t);
uint32_t ppt_num_reordering_scores(const ppt_table *t);
const ppt_params *ppt_get_params(const ppt_table *t);
const smt_mapped *ppt_mapped(const ppt_table *t);

/* Calls fn for every source group in file order (the input order) and stops at the first non-zero
 * value fn returns, which it returns. Returns SMT_ERR_CORRUPT on a damaged group. Used by dump. */
typedef int (*ppt_group_fn)(void *ctx, ppt_targets *group);
int ppt_foreach(const ppt_table *t, ppt_group_fn fn, void *ctx);

/* ---- text output ---- */

/* Writes the float as the shortest "%g" text (6 to 9 significant digits) that reads back as the
 * same float, which reproduces what Moses wrote. buf: at least 32 bytes. Returns the length. */
int ppt_format_float(char *buf, float v);

/* Writes the phrase-table line of target x of group g, as Moses writes it, with a newline:
 * "src ||| tgt ||| scores[ ||| alignment[ ||| counts[ |||extra]]]" (the fields the input line had).
 * Returns 0 or SMT_ERR_IO. */
int ppt_write_line(FILE *out, const ppt_table *t, const ppt_targets *g, const ppt_target *x);

/* Writes the reordering-table line "src ||| tgt ||| r1 ... rK" of target x, with a newline. */
int ppt_write_reordering_line(FILE *out, const ppt_table *t, const ppt_targets *g, const ppt_target *x);

/* Writes the whole table in file order: phrase-table lines to pt_out and, when rt_out is not NULL
 * and the table has reordering scores, reordering lines to rt_out. Returns 0, SMT_ERR_IO or
 * SMT_ERR_CORRUPT. */
int ppt_dump(const ppt_table *t, FILE *pt_out, FILE *rt_out, smt_err *err);

/* ---- building ---- */

typedef struct ppt_build_options {
    const char *phrase_table;   /* text or gzip; "-" is standard input */
    const char *reordering;     /* NULL: none; text or gzip; must be a file when out of order */
    const char *out;            /* the .ppt file (written under a temporary name, then renamed) */
    uint32_t table_limit;       /* 0: keep every target, in input order; N: the N best, best first */
    const float *weights;       /* num_scores weights for table_limit (NULL: all 1) */
    uint32_t num_weights;
    const float *reordering_default; /* NULL: see docs (1/3 for 3 or 6 scores, ...) */
    uint32_t num_reordering_default; /* 1 (used for every score) or the number of scores */
    int progress;               /* 1 force the meter, 0 on a terminal only, -1 never */
    int threaded_input;         /* 1 (default in the tool): decompress on a helper thread */
    uint64_t hash_mask;         /* 0 means all ones; tests pass few bits to force collisions */
} ppt_build_options;

typedef struct ppt_build_report {
    uint64_t lines;              /* phrase-table lines read */
    uint64_t sources, targets;   /* in the file (after table_limit) */
    uint64_t pruned;             /* targets dropped by table_limit */
    uint64_t reordering_lines;
    uint64_t no_reordering;      /* pairs that got the default reordering scores */
    uint64_t orphan_reordering;  /* reordering entries with no (kept) phrase pair */
    uint64_t split_sources;      /* source phrases whose lines were not contiguous (merged) */
    uint64_t collisions;         /* 64-bit key collisions between distinct sources (resolved) */
    uint64_t input_bytes;        /* uncompressed bytes parsed (both tables) */
    uint64_t file_size;
    double seconds;
} ppt_build_report;

/* Builds opt->out from the text tables. On failure no file that ppt_open accepts is left at
 * opt->out (an existing file there is untouched). Returns 0, SMT_ERR_PARSE ("file:line: what"),
 * SMT_ERR_LIMIT, SMT_ERR_IO, SMT_ERR_NOMEM or SMT_ERR_ARG. report may be NULL. */
int ppt_build(const ppt_build_options *opt, ppt_build_report *report, smt_err *err);

#ifdef __cplusplus
}
#endif
#endif
