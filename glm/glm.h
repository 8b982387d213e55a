/* glm.h — a backoff n-gram language model (ARPA semantics, scores identical to KenLM) stored as
 * the gLM trie: unigrams in an array indexed by word id, every trie node's children in a
 * minimum-depth B-tree of node size K laid out breadth-first, keys apart from values (thesis ch. 4).
 *
 * The trie is keyed in reverse: level 1 is the predicted word w, level 2 the word before it, and so
 * on, so one walk from w backwards through the history finds the longest matching n-gram and, on the
 * way, the backoffs of every n-gram ending in w — exactly what the next word's score needs.
 *
 * Conventions: functions return 0 or a negative SMT_ERR_* code and fill an smt_err (may be NULL).
 * Thread-safety: a glm_model is immutable once open; every query function may be called from any
 * number of threads at once on one model. A glm_gpu context is used by one thread at a time.
 * This header compiles as C11 and as CUDA C++. */
#ifndef GLM_H
#define GLM_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "smt_error.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GLM_MAX_ORDER 6      /* highest n-gram order supported (KenLM's default maximum) */
#define GLM_DEFAULT_K 31     /* B-tree node size: K-1 = 30 keys of 4 bytes = one 128-byte read */
#define GLM_MIN_K 3
#define GLM_MAX_K 1024
#define GLM_UNK 0u           /* the id of <unk>; every unknown word maps to it */
#define GLM_NONE UINT32_MAX  /* "no word": pads the front of short n-gram rows */

typedef uint32_t glm_word;
typedef struct glm_model glm_model;

/* ---------------------------------------------------------------- building */

typedef struct glm_build_options {
    uint32_t K;     /* B-tree node size (>= GLM_MIN_K, <= GLM_MAX_K); 0 means GLM_DEFAULT_K */
    int progress;   /* 1 force the meter on stderr, 0 only on a terminal, -1 never */
    FILE *warn;     /* where warnings (missing <unk>) go; NULL: nowhere */
    int unk_given;  /* KenLM's build_binary -u: */
    float unk_log10; /* <unk>'s log10 probability when the ARPA lacks <unk> (else -100) */
    int positive_to_zero; /* build_binary -i: a positive log10 probability (IRSTLM's bug) is read
                           * as 0 instead of refused */
    uint32_t prob_bits;    /* build_binary -q/-b: 0 and 0 store floats; else probabilities and */
    uint32_t backoff_bits; /* backoffs of orders 2..N quantized to these bits (1..25 each) with
                            * KenLM's binning; unigrams stay floats */
    int probing;              /* build_binary probing: write KenLM's probing binary (its format,
                               * the bytes build_binary writes; glm and KenLM both read it)
                               * instead of a .glm; K and quantization do not apply */
    float probing_multiplier; /* build_binary -p: buckets per entry of its tables, > 1 (0: 1.5) */
    uint64_t sort_memory;     /* build_binary -S, a trie's: bytes for sorting the n-grams and
                               * for finished levels, half each and at most 64 MiB each, past
                               * which they go to temporary files; a level is laid out in
                               * memory when it fits in a quarter, else sorted on disk too (0:
                               * 80% of the physical memory, else 1 GiB, as KenLM) */
    const char *temp_dir;     /* build_binary -T: the temporary files' folder (NULL: the
                               * output's); refused at once when no file can be made there */
} glm_build_options;

#define GLM_MAX_QUANT_BITS 25

typedef struct glm_build_stats {
    unsigned order;
    uint64_t declared[GLM_MAX_ORDER + 1]; /* counts from the \data\ header, [1..order] */
    uint64_t stored[GLM_MAX_ORDER + 1];   /* stored counts: + <unk> if missing, + inserted suffixes */
    uint64_t file_size;
    int unk_added;                        /* 1 when <unk> was missing and substituted */
    uint64_t temp_bytes;                  /* a trie's finished levels that went through the
                                           * temporary file (more than -S): 0 when none did */
} glm_build_stats;

/* Reads an ARPA file (plain or gzip) with KenLM's semantics and writes the binary model.
 * opt may be NULL (defaults); stats may be NULL.
 * Returns 0; SMT_ERR_PARSE (the message names file:line), SMT_ERR_IO, SMT_ERR_NOMEM,
 * SMT_ERR_LIMIT (order outside 2..GLM_MAX_ORDER, more than 2^32-2 n-grams of one order) or
 * SMT_ERR_ARG (bad K, or out_path is the ARPA file itself). The output appears atomically (see
 * smt_file.h). The trie's allocations follow the lines read, never the header's counts alone,
 * so a header declaring huge counts costs nothing before its lines are missed; a probing build
 * (opt->probing) sizes its tables from the declared counts, as KenLM does, in one zero-filled
 * mapping whose pages become resident only as entries land in them (counts beyond the address
 * space: SMT_ERR_NOMEM). Thread-safe. */
int glm_build(const char *arpa_path, const char *out_path, const glm_build_options *opt,
              glm_build_stats *stats, smt_err *err);

/* ---------------------------------------------------------------- opening */

enum {
    GLM_OPEN_VERIFY = 1u << 0,   /* check every section checksum and the trie's bounds */
    GLM_OPEN_POPULATE = 1u << 1, /* pre-fault the mapping */
    GLM_OPEN_READ = 1u << 2,     /* read the file into memory instead of mapping it */
    GLM_OPEN_HUGE = 1u << 3,     /* copy the trie and vocabulary (a KenLM binary: the whole
                                    file) into 2 MB pages (fewer TLB misses where the kernel maps
                                    the page cache with 4 KB pages only; costs one copy, 1-2 s of
                                    system time per GB) */
    GLM_OPEN_INDEX = 1u << 4     /* build an in-memory hash index over the big B-tree groups (at
                                    least 256 keys) for the fast paths (glm_score_rows,
                                    glm_query_lines): one probe instead of 2-4 node steps; mono
                                    lm.5: ~20 MB and ~0.1 s. Scores are unchanged. */
};
/* The load every tool and binding uses unless told otherwise (glm query, the decoder, the Python
 * module): the file mapped and read in at once, as KenLM's default; docs/glm.md has why. */
enum { GLM_OPEN_DEFAULT = GLM_OPEN_POPULATE };

/* Opens a model written by glm_build. Always checks the container, the parameters and every
 * section size; with GLM_OPEN_VERIFY also checksums and every child pointer and key, so that a
 * verified model can never be read out of bounds. Returns 0, SMT_ERR_IO, SMT_ERR_FORMAT,
 * SMT_ERR_VERSION, SMT_ERR_INCOMPLETE, SMT_ERR_CORRUPT or SMT_ERR_NOMEM.
 * A KenLM binary (build_binary's probing, trie, -q/-b quantized and -a array-compressed layouts)
 * opens too and is queried in place with KenLM's own word ids (docs/glm.md), and so does rest
 * probing (build_binary -r: the probing layout with rest costs, see glm_phrase_estimate).
 * Such a model has no GPU path and glm_node_size 0. */
int glm_open(glm_model **out, const char *path, unsigned flags, smt_err *err);

/* Opens either kind of model, as KenLM's query does: a fastsmt binary with glm_open, or an ARPA
 * file (plain, gzip, xz, bzip2 or zstd) binarized with glm_build (bopt; NULL: defaults) into a
 * temporary file removed once open ($TMPDIR, else /tmp, /var/tmp or /dev/shm: smt_temp_file).
 * The kind is told by the file's first bytes (smt_file_kind). Returns glm_open's codes,
 * glm_build's (a file that is neither names its first bad line); a KenLM binary is opened by
 * glm_open. */
int glm_load(glm_model **out, const char *path, unsigned flags, const glm_build_options *bopt,
             smt_err *err);

/* Closes and frees. Accepts NULL. */
void glm_close(glm_model *m);

unsigned glm_order(const glm_model *m);
uint32_t glm_node_size(const glm_model *m);                 /* K */
uint64_t glm_count(const glm_model *m, unsigned n);         /* stored n-grams of order n */
uint64_t glm_file_size(const glm_model *m);
uint32_t glm_vocab_size(const glm_model *m);
uint64_t glm_index_bytes(const glm_model *m); /* memory of the GLM_OPEN_INDEX tables (0: none) */
/* 1 when the model's probabilities and backoffs are quantized (glm_build_options.prob_bits, or a
 * KenLM `trie -q -b` binary), with the bits in *prob_bits and *backoff_bits (either may be NULL);
 * 0 (and 0 bits) otherwise. */
int glm_quantization(const glm_model *m, unsigned *prob_bits, unsigned *backoff_bits);
/* What the model is, in words: "glm" (a .glm file, floats or quantized), or for a KenLM binary
 * "kenlm probing", "kenlm rest probing", "kenlm trie", "kenlm trie -q", "kenlm trie -a" or
 * "kenlm trie -a -q" (build_binary's layouts). A static string. */
const char *glm_layout_name(const glm_model *m);

/* The id of a word (ids follow the ARPA unigram order with <unk> at 0, as KenLM assigns them),
 * or GLM_UNK when unknown. */
glm_word glm_index(const glm_model *m, const char *word, size_t len);
/* The word of an id (< glm_vocab_size), NUL-terminated; length in *len when not NULL. */
const char *glm_word_str(const glm_model *m, glm_word id, size_t *len);
glm_word glm_bos(const glm_model *m); /* <s> */
glm_word glm_eos(const glm_model *m); /* </s> */

/* ---------------------------------------------------------------- decoder state */

/* The right state of a hypothesis: the last words (most recent first), shortened to the longest
 * suffix that can still be extended, and their backoffs. Two states with equal words have equal
 * futures; compare with glm_state_equal and hash with glm_state_hash (KenLM's hash_value: the
 * same hash as KenLM's for the same words; backoffs are determined by the words, so neither looks
 * at them). Unused entries are kept zero so states can be copied bytewise. */
typedef struct glm_state {
    glm_word words[GLM_MAX_ORDER - 1];
    float backoff[GLM_MAX_ORDER - 1];
    uint8_t length;
} glm_state;

/* The state after "<s>" (length 1, as KenLM's BeginSentenceState). */
void glm_state_begin(const glm_model *m, glm_state *s);
/* The empty state (KenLM's NullContextState). */
void glm_state_null(glm_state *s);
int glm_state_equal(const glm_state *a, const glm_state *b);
uint64_t glm_state_hash(const glm_state *s);

/* Scores word w after state in: returns log10 p(w | in) exactly as KenLM's FullScore (float,
 * additions in KenLM's order), sets *ngram_length (may be NULL) to the matched n-gram length
 * (1 for an unknown word) and *out to the new state (out may equal in). w must be < vocab size. */
float glm_score(const glm_model *m, const glm_state *in, glm_word w, glm_state *out,
                unsigned *ngram_length);

/* The estimate of phrase w[0..n) scored from the empty context, as Moses's KENLM feature makes it
 * (KenLM's lm::ngram::RuleScore): the words' scores in order (float sums), where the words at the
 * phrase's open left edge (their longest match may still extend left, and each one lengthened the
 * state) count their match's rest cost instead. Only a KenLM rest probing binary (build_binary
 * -r) stores rest costs; for every other model the rest cost is the probability and this is the
 * sum of glm_score's values from glm_state_null, the same float. Ids must be < vocab size. */
float glm_phrase_estimate(const glm_model *m, const glm_word *w, size_t n);

/* ---------------------------------------------------------------- batch scoring of states */

/* Scores n independent queries at once: for each i, prob[i] = glm_score(m, &in[i], w[i], &out[i],
 * &l) and len[i] = l (len may be NULL) — the same float and the same out state byte for byte
 * (unused entries zero). out may be in itself (each out[i] is written after in[i] is read);
 * otherwise the two must not overlap. The walks of many queries advance in lock-step with
 * prefetching (glm_score_rows's lanes), so a batch of 16 or more is several times faster than a
 * loop of glm_score on a model bigger than the caches; a KenLM binary loops its FullScore with
 * its buckets prefetched a few queries ahead. Single-threaded; thread-safe. Returns 0 or
 * SMT_ERR_ARG (a word id not below glm_vocab_size, a state longer than order - 1 or holding such
 * an id: nothing is written). */
int glm_score_states(const glm_model *m, const glm_state *in, const glm_word *w, size_t n,
                     float *prob, glm_state *out, uint8_t *len, smt_err *err);

/* ---------------------------------------------------------------- batch scoring of n-gram rows */

/* rows is (n_rows, order): row r holds an n-gram in text order, the predicted word last, shorter
 * contexts padded at the front with GLM_NONE. prob[r] receives log10 p(last | context) (the same
 * float a state built from that context gives) and len[r] the matched length (len may be NULL).
 * Lanes of rows are searched in lock-step with prefetching; threads > 1 splits the batch over a
 * private pool (0 = all CPUs). Returns 0, SMT_ERR_ARG (a word id out of range) or SMT_ERR_NOMEM.
 * Thread-safe. */
int glm_score_rows(const glm_model *m, const glm_word *rows, size_t n_rows, float *prob,
                   uint8_t *len, unsigned threads, smt_err *err);

/* ---------------------------------------------------------------- GPU */

typedef struct glm_gpu glm_gpu;

/* 1 when this build has CUDA and a device is present, else 0 (never fails). */
int glm_gpu_available(void);

/* Copies the model's trie to the current device and creates a stream and workspace.
 * Returns 0, SMT_ERR_UNSUPPORTED (no CUDA in this build, or no device) or SMT_ERR_CUDA naming the
 * failing statement. */
int glm_gpu_create(glm_gpu **out, const glm_model *m, smt_err *err);
void glm_gpu_free(glm_gpu *g);

/* Lanes per row in the kernel: 32 (a warp per row, the default), 4, 8 or 16 (a tile reads each
 * B-tree node's keys together), or 1 (a thread per row, binary search). Every setting gives the
 * same results (bench_glm measures each). Returns 0 or SMT_ERR_ARG. */
#define GLM_GPU_LANES_DEFAULT 32
int glm_gpu_set_lanes(glm_gpu *g, unsigned lanes, smt_err *err);

/* Like glm_score_rows, on the device: rows/prob/len in host memory (copied both ways). */
int glm_gpu_score_rows(glm_gpu *g, const glm_word *rows, size_t n_rows, float *prob, uint8_t *len,
                       smt_err *err);

/* glm_score_states on the device: in/w/prob/out/len in host memory (len may be NULL), copied
 * both ways through page-locked staging buffers kept in g (grown as needed, so repeated calls of
 * a similar size allocate nothing). The walk, the value decoding and KenLM's state logic are the
 * CPU's own code (glm_layout.h), so prob and out equal glm_score's byte for byte. out may be in.
 * Returns 0, SMT_ERR_ARG (as glm_score_states), SMT_ERR_NOMEM, SMT_ERR_CUDA or
 * SMT_ERR_UNSUPPORTED (a build without CUDA). */
int glm_gpu_score_states(glm_gpu *g, const glm_state *in, const glm_word *w, size_t n,
                         float *prob, glm_state *out, uint8_t *len, smt_err *err);

/* The same in two halves, so the calling thread can work while the device scores:
 * glm_gpu_states_start checks and stages the queries (in and w may be reused as soon as it
 * returns) and queues the copies and the kernel; glm_gpu_states_finish waits for them and writes
 * the n results of the last start into prob, out (may be that start's in) and len (may be NULL).
 * One batch in flight per context; finish without a start is SMT_ERR_ARG. */
int glm_gpu_states_start(glm_gpu *g, const glm_state *in, const glm_word *w, size_t n,
                         smt_err *err);
int glm_gpu_states_finish(glm_gpu *g, float *prob, glm_state *out, uint8_t *len, smt_err *err);

/* ---------------------------------------------------------------- KenLM's query */

enum { GLM_VERBOSE_SUMMARY = 0, GLM_VERBOSE_SENTENCE = 1, GLM_VERBOSE_WORD = 2 };
enum { GLM_PATH_FAST = 0, GLM_PATH_REF = 1, GLM_PATH_GPU = 2 };

typedef struct glm_query_options {
    int verbosity;    /* GLM_VERBOSE_* (KenLM's -v); default word */
    int null_context; /* KenLM's -n: no <s> context and no </s> */
    unsigned threads; /* scoring threads (1 default; 0 = all CPUs) */
    int path;         /* GLM_PATH_*: fast CPU (default), reference CPU, GPU */
    int flush_lines;  /* KenLM's -b: each line scored and printed (flushed) as soon as it is read,
                       * for interactive use; "-" is then read line by line */
} glm_query_options;

typedef struct glm_query_stats {
    double total, total_oov; /* KenLM's corpus_total and corpus_total_oov_only */
    uint64_t oovs, tokens, lines;
    double ppl_incl, ppl_excl;
} glm_query_stats;

/* A part of a query split over processes (glm query under mpirun): KenLM's corpus sums are doubles
 * that add floats in input order, which is not associative, so each part keeps its addends (each
 * line's float total, each OOV token's log10 p, in order) and the whole run adds them again, part
 * after part, into the very digits one process prints. Start from {0}. */
typedef struct glm_query_sums {
    float *line_totals;
    size_t n_lines;
    float *oov_probs;
    size_t n_oov;
    uint64_t tokens;            /* scored tokens (</s> included) */
    size_t cap_lines_, cap_oov_; /* private */
} glm_query_sums;
void glm_query_sums_free(glm_query_sums *s);
/* Adds a part's addends to st in their order (st starts zeroed; parts in input order). */
void glm_query_stats_add(glm_query_stats *st, const glm_query_sums *s);
/* Computes st's perplexities and writes KenLM's four summary lines to out (flushed). Returns 0 or
 * SMT_ERR_IO. */
int glm_query_summary(FILE *out, glm_query_stats *st, smt_err *err);

/* Scores every line of the open reader in (common/smt_lines.h: a file or "-" = stdin, plain or
 * compressed, opened with smt_lines_open; a byte range; a stream; memory), which stays open, and
 * writes KenLM query's output to out (NULL: nothing is written; stats still filled). Per word
 * "word=id length log10p\t", per line "Total: x OOV: n", then the four summary lines. Unlike
 * KenLM, a last line without a newline is scored. Every write to out is checked and out is flushed
 * before returning: a failed write (a full disk) stops the run with SMT_ERR_IO. sums NULL: that
 * output; else (a part of a split query) no summary lines are written and the part's addends are
 * appended to sums (stats, when given, are the part's). Returns 0, SMT_ERR_IO (reading or
 * writing), SMT_ERR_NOMEM, SMT_ERR_UNSUPPORTED/SMT_ERR_CUDA (GPU path). */
typedef struct smt_lines smt_lines;
int glm_query_lines(const glm_model *m, smt_lines *in, FILE *out, const glm_query_options *opt,
                    glm_query_sums *sums, glm_query_stats *stats, smt_err *err);

/* Writes a float in its shortest round-trip form the way KenLM prints it ("-2.0209007", "-inf",
 * "-1.5e-7" style exponents below 1e-6). buf must hold 32 bytes. Returns the length. */
int glm_format_float(char *buf, float x);
/* The same for a double (perplexities). */
int glm_format_double(char *buf, double x);

/* ---------------------------------------------------------------- many sentences at once */

typedef struct glm_lines_options {
    int bos;          /* 1: every line is scored after <s> (KenLM's bos=True); 0: the null context */
    int eos;          /* 1: </s> is scored after the last word (KenLM's eos=True) */
    unsigned threads; /* scoring threads (0 = all CPUs); 1 runs in the calling thread */
    /* Per-token outputs (KenLM's full_scores), each NULL when not wanted: for every token of every
     * line in order (a line's words, then </s> when eos), token_prob its log10 p, token_len its
     * matched n-gram length and token_word its id (GLM_UNK: unknown; </s> never is), the values
     * glm_score gives it. token_cap is the arrays' size in tokens: the lines' words counted with
     * smt_words_count(..., SMT_WS_SPACE), plus one per line when eos. */
    float *token_prob;
    uint8_t *token_len;
    glm_word *token_word;
    size_t token_cap;
    /* NULL, or a word cache the caller keeps across calls on this model (glm_word_cache_new):
     * used where the call runs in the calling thread (threads 1, or one line); one call at a
     * time. */
    struct glm_word_cache *word_cache;
} glm_lines_options;

/* Word ids by their bytes, for glm_score_lines calls of one line each (a sentence a call, as
 * KenLM's Python score()) that would otherwise look every word up: a cache kept by the caller,
 * emptied when used with another model. NULL when out of memory. */
typedef struct glm_word_cache glm_word_cache;
glm_word_cache *glm_word_cache_new(void);
void glm_word_cache_free(glm_word_cache *c);

/* Scores n lines (lines[i] of lens[i] bytes, no NUL needed), words split at SMT_WS_SPACE (KenLM's
 * white space, and NUL), through the fast batched path: total[i] receives the float sum, in
 * KenLM's order, of the log10 probabilities of the words and of </s> (when eos) — the value of
 * KenLM's Python score(line, bos, eos) and of query's "Total:". words[i] (may be NULL) the
 * number of words (</s> not counted), oovs[i] (may be NULL) how many of them are unknown; the
 * per-token outputs of opt, when given, each token's values. opt NULL: bos, eos, one thread.
 * Each line must be shorter than 4 GiB. Returns 0, SMT_ERR_ARG (also: more tokens than
 * token_cap, nothing written), SMT_ERR_LIMIT (a line of 4 GiB or more) or SMT_ERR_NOMEM (outputs
 * then undefined).
 * Thread-safe; threads != 1 runs a private pool for the call. */
int glm_score_lines(const glm_model *m, const char *const *lines, const size_t *lens, size_t n,
                    const glm_lines_options *opt, float *total, uint32_t *words, uint32_t *oovs,
                    smt_err *err);

#ifdef __cplusplus
}
#endif
#endif
