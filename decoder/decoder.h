/* decoder.h — a phrase-based decoder with Moses's features, search and output formats.
 *
 * A model is loaded from a moses.ini (text tables as Moses's training writes them, or the binaries
 * fastsmt-binarize writes) and then shared read-only by any number of workers, one per thread;
 * each worker translates one sentence at a time. docs/decoder.md is the user guide.
 *
 * Conventions: functions return 0 or a negative SMT_ERR_* code and fill an smt_err (may be NULL).
 * Thread-safety: a dec_model is safe to use from many threads at once (its phrase cache fills
 * itself lock-free); a dec_worker belongs to one thread. Results never depend on the thread count. */
#ifndef DECODER_H
#define DECODER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "smt_buf.h"
#include "smt_error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Sentences longer than this many tokens are refused (an empty output line and a message). */
#define DEC_MAX_SENTENCE 1000
/* The documented ranges of the search settings (flags and ini sections alike; docs/decoder.md). */
#define DEC_MAX_STACK (1 << 20)       /* -s / [s]: 1 .. DEC_MAX_STACK */
#define DEC_MAX_POP_LIMIT (1 << 20)   /* -cube-pruning-pop-limit: 1 .. DEC_MAX_POP_LIMIT */
#define DEC_MAX_TABLE_LIMIT (1 << 20) /* -ttable-limit / table-limit=: 0 (all) .. this */
/* -dl / [distortion-limit]: -1 (unlimited) .. DEC_MAX_SENTENCE; -max-phrase-length: 1 ..
 * DEC_MAX_SENTENCE; -b / [beam-threshold]: 0 .. 1 */

typedef struct dec_model dec_model;
typedef struct dec_worker dec_worker;
typedef struct dec_run_options dec_run_options; /* below, with dec_run */

/* Settings that override the ini (Moses's command-line flags). The value dec_options_default sets
 * (-1; a negative beam threshold) keeps the ini's value (or the default when the ini has none);
 * any other value outside its documented range makes dec_model_load fail with SMT_ERR_ARG.
 * What a line shows besides the translation's words (segmentation, alignment, marked unknown
 * words) is a run option (dec_run_options), not the model's. */
typedef struct dec_options {
    int stack_size;               /* -s (default 200), 1 .. DEC_MAX_STACK */
    int pop_limit;                /* -cube-pruning-pop-limit (default 1000), 1 .. DEC_MAX_POP_LIMIT */
    int distortion_limit;         /* -dl; set distortion_limit_set to use it (-1 = unlimited) */
    int distortion_limit_set;
    const char *weight_overwrite; /* -weight-overwrite "Name= v ... Name= v ..." or NULL */
    const char *feature_overwrite; /* -feature-overwrite "Name key=value ...", one spec per line
                                    * (the flag may be given again); NULL: the ini's
                                    * [feature-overwrite] lines */
    FILE *warn;                   /* where warnings go (unknown ini keys); NULL: stderr */
    int max_phrase_len;           /* -max-phrase-length (-1: the ini's, default 20) */
    int table_limit;              /* -ttable-limit (-1: the phrase table's table-limit, default 20) */
    double beam_threshold;        /* -b / -beam-threshold (< 0: the ini's, default 1e-5) */
    int verify;                   /* --verify / -verify-models: check every checksum of the binary
                                   * tables and LMs at load (reads every byte once) */
    int verbose;                  /* -v: the load's verbosity (-1: the ini's [verbose], else 1);
                                   * 2 or more: says on warn which path each file the ini names
                                   * was found at (the working directory's or beside the ini) */
    int early_distortion_cost;    /* -early-distortion-cost: 1 turns Moore & Quirk's early
                                   * distortion cost on; 0: the ini's [early-distortion-cost] */
    const char *weight_file;      /* -weight-file FILE, or NULL: the ini's [weight-file]. Moses
                                   * reads it as sparse feature weights only, which no feature
                                   * here has: a line that is not a comment is an error naming it */
    const char *model_cache;      /* -model-cache: the folder where text phrase tables and ARPA
                                   * LMs are kept binarized, so that the next load maps them at
                                   * once (created when missing; docs/decoder.md); NULL (the
                                   * default): no cache, each load binarizes them into a temporary
                                   * file ($TMPDIR, else /tmp, /var/tmp, /dev/shm), removed once
                                   * mapped. The library reads no other environment:
                                   * dec_model_cache_dir gives the tools' folder */
} dec_options;

/* Fills opt with "use the ini" for every setting (and no model cache). */
void dec_options_default(dec_options *opt);

/* The model cache folder the tools use, from the values of the environment variables the caller
 * read: NULL (no cache) when fastsmt_cache ($FASTSMT_CACHE) is "0", else
 * xdg_cache_home/fastsmt ($XDG_CACHE_HOME, when absolute), else home/.cache/fastsmt ($HOME, when
 * absolute), else NULL. Each argument may be NULL (unset). Malloc'ed; NULL also when memory ran
 * out. */
char *dec_model_cache_dir(const char *fastsmt_cache, const char *xdg_cache_home, const char *home);

/* Loads the model a moses.ini describes. Every file is opened and checked before this returns:
 * a missing file, a table whose score count differs from the ini's num-features, an unsupported
 * feature or a weight vector of the wrong length is an error naming the file or ini line, and so
 * is an ini section that would change the output but is not implemented, a number that is not
 * one or lies outside its documented range, and a setting in opt outside its range (SMT_ERR_ARG).
 * Returns 0, SMT_ERR_IO, SMT_ERR_PARSE, SMT_ERR_FORMAT, SMT_ERR_CORRUPT, SMT_ERR_UNSUPPORTED,
 * SMT_ERR_ARG or SMT_ERR_NOMEM. */
int dec_model_load(dec_model **out, const char *ini_path, const dec_options *opt, smt_err *err);
void dec_model_free(dec_model *m);

/* The first value of a single-value ini section ("threads", "distortion-limit", ...), or NULL. */
const char *dec_model_param(const dec_model *m, const char *section);
/* Every value line of an ini section ("n-best-list": "FILE N [distinct]", on one line or more);
 * returns how many, 0 when absent. */
size_t dec_model_param_values(const dec_model *m, const char *section, char *const **values);
/* The ini line of value i of a section (the header's line when i is past the values), 0 when the
 * section is absent: for messages that name file:line. */
unsigned dec_model_param_line(const dec_model *m, const char *section, size_t i);
/* A numeric ini section read strictly (whole value, in [lo, hi]): 0 when absent (*out untouched),
 * 1 when read, or SMT_ERR_PARSE with "moses.ini:LINE: [section] ..." in err. */
int dec_model_param_ll(const dec_model *m, const char *section, long long lo, long long hi,
                       long long *out, smt_err *err);
/* The path a single-value ini section names ([input-file]): the working directory's when it
 * exists there (as Moses; not with [relative-paths] ini), else the path beside the ini; malloc'ed,
 * or NULL when the section is absent or memory ran out. */
char *dec_model_param_path(const dec_model *m, const char *section);
/* The same with the ini's file rule and its errors: a relative path is looked up in the working
 * directory first (as Moses; [relative-paths] ini: never), then beside the ini; neither:
 * SMT_ERR_IO naming the tried paths and the ini line; both, different files: a warning on warn
 * (may be NULL), which also receives which was used when the load's verbosity is 2 or more.
 * Returns 0 when the section is absent, 1 with *out (malloc'ed), or the error. */
int dec_model_param_file(const dec_model *m, const char *section, FILE *warn, char **out,
                         smt_err *err);
/* A boolean ini section as Moses reads one (no value, true/yes/1, false/no/0): 0 when absent,
 * 1 when *out was read, or SMT_ERR_PARSE naming file:line. */
int dec_model_param_bool(const dec_model *m, const char *section, int *out, smt_err *err);

/* Moses's -show-weights: one line per feature in n-best order, "Name= w1 w2 ..." for a tuneable
 * feature and "Name UNTUNEABLE" for the others (what Moses's tuning scripts read to learn the
 * feature names, counts and starting weights). Returns 0 or SMT_ERR_IO. */
int dec_model_show_weights(const dec_model *m, FILE *out);

/* What dec_binarize makes of an ARPA language model. */
typedef struct dec_binarize_options {
    int lm_probing; /* 1: KenLM's probing binary (out_dir/<name>.probing, glm build probing's
                     * bytes): the decoder's fastest LM walk, a larger file, no checksums (KenLM's
                     * format has none), scored on the CPU only; 0: a .glm (checksummed, smaller,
                     * also for -lm-batch gpu) */
} dec_binarize_options;

/* Binarizes the text models ini_path names, for fast loading (what fastsmt-binarize does): the
 * phrase table and its lexicalized reordering table become one probingpt file
 * (out_dir/phrase-table.ppt, reordering integrated), every KENLM ARPA file a glm file
 * (out_dir/<name>.glm; opt->lm_probing: out_dir/<name>.probing; opt may be NULL: a .glm), and out_dir/moses.ini is the input ini with [relative-paths] ini, those
 * feature lines pointing at the binaries and every other line kept as it was (an old-format ini:
 * written converted, in the new format). Files under out_dir (the binaries, and any other file
 * the ini names there) are named relative to it, so that out_dir can be moved or copied; files
 * outside it (tables already binary, not rebuilt; [input-file], [weight-file]) by absolute path;
 * everything by absolute path when out_dir/moses.ini is a link to a file in another folder.
 * out_dir is created when missing. No input is ever overwritten (an output that would replace the ini or a table is
 * refused with SMT_ERR_ARG), and the new moses.ini is written under a temporary name and loaded
 * (dec_model_load) before it takes its name: success means the binarized model works. report (may
 * be NULL) receives one line per table built. Returns 0, SMT_ERR_IO, SMT_ERR_PARSE,
 * SMT_ERR_FORMAT, SMT_ERR_ARG, SMT_ERR_NOMEM or what the load of a table returns. */
int dec_binarize(const char *ini_path, const char *out_dir, const dec_binarize_options *opt,
                 FILE *report, smt_err *err);

/* The files the model was loaded from: the moses.ini, each file its features name (tables, LMs,
 * found as the load found them) and its [weight-file]. *files is one malloc'ed block holding the
 * *n paths (free(*files) frees all). Returns 0, SMT_ERR_IO (a file no longer found) or
 * SMT_ERR_NOMEM. */
int dec_model_files(const dec_model *m, char ***files, size_t *n, smt_err *err);

/* Seconds dec_model_load took. */
double dec_model_load_seconds(const dec_model *m);

/* A worker; what its lines show (segmentation, alignment) is the ini's until
 * dec_worker_set_options. Returns 0, SMT_ERR_PARSE (a malformed ini section) or SMT_ERR_NOMEM. */
int dec_worker_create(dec_worker **out, dec_model *m, smt_err *err);
void dec_worker_free(dec_worker *w);
/* What w's lines show from now on: opt's segmentation and alignment settings (opt resolved
 * first when it is not yet; NULL: the ini's). Returns 0 or what dec_run_options_resolve returns. */
int dec_worker_set_options(dec_worker *w, const dec_run_options *opt, smt_err *err);

/* Translates one line (tokens separated by spaces or tabs; it need not be NUL-terminated).
 * best: receives the 1-best line with its newline (Moses's format: every word followed by a
 * space); an empty input line gives an empty line. nbest (may be NULL): receives up to n_best
 * lines "id ||| words ||| Feature= scores ... ||| total" with id = sent_id. score (may be NULL):
 * the model score of the 1-best. The buffers are appended to.
 * Returns 0, SMT_ERR_LIMIT (more than DEC_MAX_SENTENCE tokens), SMT_ERR_CORRUPT (a damaged
 * phrase-table group: the sentence is never translated with it) or SMT_ERR_NOMEM; on
 * SMT_ERR_LIMIT and SMT_ERR_CORRUPT an empty line is still appended to best. */
int dec_translate(dec_worker *w, const char *line, size_t len, uint64_t sent_id, smt_buf *best,
                  smt_buf *nbest, size_t n_best, int distinct, double *score, smt_err *err);

/* One phrase of a translation (its segmentation): the source words src_start..src_end (0-based,
 * inclusive: what -t prints as "|src_start-src_end|") translated as the target words tgt_start ..
 * tgt_start + n_tgt - 1 (n_tgt may be 0: a phrase that deletes its source). */
typedef struct dec_phrase {
    uint32_t src_start, src_end, tgt_start, n_tgt;
} dec_phrase;

/* A translation as data, what every text output of the decoder is formatted from. words.data holds
 * the target words separated by single spaces (unknown words marked when the worker's options say
 * -mark-unknown); word i is words.data[word_off[i] .. word_off[i + 1] - 1) (word_off has n_words + 1
 * entries). phrases: in target order. align: n_align (source, target) pairs of sentence positions
 * (align[2k], align[2k + 1]), phrase by phrase in target order and within a phrase sorted, as
 * -alignment-output-file prints them. Start from {0}; the arrays are reused by the next call and
 * released by dec_translation_free. */
typedef struct dec_translation {
    smt_buf words;
    uint32_t *word_off;
    size_t n_words;
    dec_phrase *phrases;
    size_t n_phrases;
    uint32_t *align;
    size_t n_align;
    double score;                               /* the model score */
    size_t cap_word_off_, cap_phrases_, cap_align_; /* private */
} dec_translation;

/* Translates one line as dec_translate does and gives the 1-best as data. Returns what
 * dec_translate returns; on SMT_ERR_LIMIT and SMT_ERR_CORRUPT out is an empty translation. */
int dec_translate_data(dec_worker *w, const char *line, size_t len, dec_translation *out,
                       smt_err *err);
void dec_translation_free(dec_translation *t);

/* Moses's words of t, appended to out: every word followed by a space, and with segmentation
 * (-t) "|src_start-src_end| " after each phrase that has words. The 1-best line's and each n-best
 * line's words field are this. Returns 0 or SMT_ERR_NOMEM. */
int dec_translation_format(const dec_translation *t, int segmentation, smt_buf *out);

/* ---- n-best lists as data: what every n-best line is formatted from ---- */

/* A feature as n-best lists show it: its name ("LM0", "TranslationModel0", as Moses numbers them;
 * owned by the model), where its values lie in an entry's scores (scores[offset .. offset +
 * n_values)) and whether n-best lines print it (0: tuneable=false, scored but not printed). */
typedef struct dec_feature_info {
    const char *name;
    size_t offset, n_values;
    int tuneable;
} dec_feature_info;

/* The model's features in n-best order; dec_model_feature fills *out for i below that count. */
size_t dec_model_num_features(const dec_model *m);
void dec_model_feature(const dec_model *m, size_t i, dec_feature_info *out);

/* The feature field of an n-best line, appended to out: " Name= v v ..." for each tuneable
 * feature in n-best order, each value printed with %g as a float (Moses's OutputAllFeatureScores,
 * what its server returns as "fvals"); scores as dec_nbest_entry's. Returns 0 or SMT_ERR_NOMEM. */
int dec_format_scores(const dec_model *m, const double *scores, smt_buf *out);

/* One hypothesis of an n-best list. Its line is "id ||| WORDS ||| Name= v ... ||| total", where
 * WORDS is dec_translation_format(&t, the list's segmentation), each tuneable feature's values
 * are printed with %g, and the total too; then " ||| " and the segmentation (phrase by phrase
 * "src_start[-src_end]=tgt_start[-tgt_end]", -include-segmentation-in-n-best) and " ||| " and the
 * alignment ("s-t " per point, -print-alignment-info-in-n-best) when the worker's options ask for
 * them and t has phrases. An empty input line gives one entry with no words, every value 0. */
typedef struct dec_nbest_entry {
    dec_translation t;    /* words, phrases and word alignment; t.score: the search's model
                           * score of the hypothesis */
    double *scores;       /* n_scores feature values (dec_feature_info's offsets), summed over
                           * the hypothesis's phrases in float as Moses does */
    size_t n_scores;
    double total;         /* weights · scores, summed in float feature by feature */
    size_t cap_scores_;   /* private */
} dec_nbest_entry;

/* An n-best list: entries[0 .. n), best first. segmentation: the worker's -t (its lines' words
 * carry the source ranges). Start from {0}; the list owns all its memory, which the next call
 * filling it reuses (pointers into entries stay valid until then) and dec_nbest_free releases.
 * One list is used by one thread at a time. */
typedef struct dec_nbest {
    dec_nbest_entry *entries;
    size_t n;
    int segmentation;
    size_t cap_; /* private: entries allocated */
} dec_nbest;

/* Translates one line as dec_translate does (best, score and the errors the same; sent_id only
 * names the line in messages) and gives up to n_best hypotheses of its n-best list (distinct:
 * no two with the same words) as data in nbest: the entries whose lines dec_translate appends to
 * its nbest buffer. nbest->n is 0 for a refused line or n_best 0. */
int dec_translate_nbest(dec_worker *w, const char *line, size_t len, uint64_t sent_id,
                        smt_buf *best, dec_nbest *nbest, size_t n_best, int distinct,
                        double *score, smt_err *err);
void dec_nbest_free(dec_nbest *l);

/* How a run is driven: the output streams and Moses's run flags. Each field is what a flag sets;
 * dec_run_options_default marks every one "not given" (-1 or NULL), and dec_run_options_resolve
 * fills what was not given from the ini ([threads], [verbose], [show-weights], [input-file],
 * [n-best-list]) and then from the defaults: a flag wins over the ini, the ini over the default. */
#define DEC_MAX_THREADS 1024 /* -threads / [threads]: 0 (every CPU; "all") .. this */
#define DEC_MAX_NBEST 1000000 /* -n-best-list N / [n-best-list] N: 0 .. this */
#define DEC_MAX_VERBOSE 10    /* -v / [verbose]: 0 .. this */
#define DEC_MAX_NBEST_FACTOR 1000000 /* -n-best-factor / [n-best-factor]: 0 .. this */
/* -lm-batch: the search's LM queries one at a time (off: the reference), or gathered from many
 * expansions of several sentences decoded in lock-step by each thread and scored together by
 * glm's batched walks on the CPU (cpu) or its CUDA kernel (gpu; refused without a device). */
enum { DEC_LM_BATCH_OFF = 0, DEC_LM_BATCH_CPU = 1, DEC_LM_BATCH_GPU = 2 };
#define DEC_MAX_LM_BATCH_WIDTH 1024
typedef struct dec_run_options {
    int threads;                /* -threads: 0 = every CPU; -1: the ini's [threads], else 1 */
    int verbose;                /* -v: -1: the ini's [verbose], else 1; > 0: dec_run_input shows
                                 * lines/s and words/s on stderr while it runs, on a terminal */
    int show_weights;           /* -show-weights: 1; -1: the ini's [show-weights], else 0 (read by
                                 * the caller: dec_model_show_weights) */
    const char *input;          /* -input-file (dec_run_input): NULL: the ini's [input-file]
                                 * (against the ini's folder), else "-", standard input */
    const char *nbest_path;     /* -n-best-list FILE ("-": the output stream); NULL: the ini's */
    int n_best;                 /* its N, 0 .. DEC_MAX_NBEST (0: no list) */
    int distinct;               /* its "distinct" */
    FILE *nbest;                /* a stream for the list instead of nbest_path (NULL: none) */
    const char *alignment_path; /* -alignment-output-file: each 1-best's word alignment, one line
                                 * per input line (an empty line for an empty or refused one) */
    FILE *alignment;            /* a stream for it instead of alignment_path (NULL: none) */
    FILE *warn;                 /* where a refused line is reported; NULL: stderr */
    /* What each line shows; 1 sets it, -1: the ini's section of the same name, else 0. */
    int report_segmentation;    /* -t: "|start-end| " after each phrase with words, in the 1-best
                                 * and the n-best words (Moses's OutputSurface) */
    int nbest_segmentation;     /* -include-segmentation-in-n-best: " ||| s-e=t-u ..." after the
                                 * n-best total (Moses's field) */
    int print_alignment;        /* -print-alignment-info: "words ||| s-t s-t " in the 1-best */
    int nbest_alignment;        /* -print-alignment-info-in-n-best: " ||| s-t s-t " last */
    int mark_unknown;           /* -mark-unknown: unknown words printed as prefix word suffix (the
                                 * scores are the same) */
    const char *unknown_prefix; /* -unknown-word-prefix (NULL: the ini's, else "UNK") */
    const char *unknown_suffix; /* -unknown-word-suffix (NULL: the ini's, else "") */
    int drop_unknown;           /* -drop-unknown / -du: an unknown word without a digit is
                                 * translated as nothing (Moses: its penalty stays; a word with a
                                 * digit still passes through); -1: the ini's, else 0 */
    int output_hypo_score;      /* -output-hypo-score: the 1-best's model score and a space before
                                 * its words; -1: the ini's, else 0 */
    int nbest_factor;           /* -n-best-factor: a distinct list examines at most N * this paths
                                 * (0: unlimited, Moses's N * 1000 steps); -1: the ini's, else 20 */
    const char *unknowns_path;  /* -output-unknowns FILE: each input line's unknown source words,
                                 * each followed by a space, one line per input line; NULL: the
                                 * ini's [output-unknowns] */
    FILE *unknowns;             /* a stream for it instead of unknowns_path (NULL: none) */
    const char *xml_input;      /* -xml-input: "pass-through" (markup is words; the default),
                                 * "ignore" (markup stripped), "exclusive" (a tagged span is
                                 * translated only by its tag's options), "inclusive" (the tag's
                                 * options compete with the table's), "constraint" (as inclusive,
                                 * but a table option over a tagged span must contain one of its
                                 * translations); in every mode but pass-through <wall/> and
                                 * <zone> constrain reordering; NULL: the ini's */
    int monotone_at_punct;      /* -monotone-at-punctuation / -mp: walls around , . ! ? : ; "
                                 * (no reordering across them); -1: the ini's, else 0 */
    const char *xml_brackets;   /* -xml-brackets "LB RB" (default "< >"); NULL: the ini's */
    int lm_batch;               /* -lm-batch: how the search asks its LMs (DEC_LM_BATCH_*);
                                 * -1: DEC_LM_BATCH_DEFAULT. Every setting gives the same output. */
    int lm_batch_width;         /* -lm-batch-width: sentences each thread decodes in lock-step
                                 * with -lm-batch cpu|gpu (1 .. DEC_MAX_LM_BATCH_WIDTH); -1: 16 */
    int resolved;               /* set by dec_run_options_resolve */
    char *owned_[2];            /* private: what dec_run_options_resolve allocated */
} dec_run_options;

/* Marks every setting "not given". */
void dec_run_options_default(dec_run_options *o);
/* out = given (NULL: all "not given") with what was not given taken from m's ini, then the
 * defaults. A malformed ini section is SMT_ERR_PARSE with "moses.ini:LINE: [section] ..." in err
 * (out is then released). Release out with dec_run_options_release. */
int dec_run_options_resolve(const dec_model *m, const dec_run_options *given,
                            dec_run_options *out, smt_err *err);
/* Resolved options may point into m's ini: use them while m is loaded. */
/* Frees what dec_run_options_resolve allocated (not the streams the caller gave). */
void dec_run_options_release(dec_run_options *o);

/* Translates every line of in to out (in input order) with opt->threads workers, writing the
 * n-best list and the alignment where opt says (a stream given in opt, else the file its path
 * names, opened for writing here and closed, with its errors checked, before this returns; "-"
 * for the n-best list: out). opt NULL or not yet resolved: dec_run_options_resolve is applied
 * first, so that a library caller gets the ini's settings as the fastsmt tool does.
 * A sentence that cannot be translated (more than DEC_MAX_SENTENCE tokens, or a damaged
 * phrase-table group) is reported on warn ("line N: ...") and gives an empty line (and an empty
 * alignment line); the other lines are translated and the call then fails with the first such
 * error (SMT_ERR_LIMIT or SMT_ERR_CORRUPT). in is read from where it stands as smt_lines reads a
 * file (smt_lines_open_stream: plain or compressed, byte-order marks and "\r\n" dropped) and is
 * not closed; a read error on it is an error (SMT_ERR_IO naming the line), never an end of input.
 * in is read a chunk at a time, so a pipe or terminal is answered when a chunk fills or it ends:
 * to answer each line as it arrives, use dec_run_input (or dec_run_lines on smt_lines_open).
 * stats (may be NULL): lines, tokens, refused lines, seconds, summed 1-best model score. Returns 0, SMT_ERR_IO, SMT_ERR_PARSE or SMT_ERR_ARG (the run settings),
 * SMT_ERR_LIMIT, SMT_ERR_CORRUPT or SMT_ERR_NOMEM. */
typedef struct dec_run_stats {
    uint64_t lines, tokens, refused;
    double seconds, score_sum;
    /* the LM batches (-lm-batch cpu|gpu; zero with off): the back end used, the batches, the
     * expansions scored in them, the questions the workers' caches answered, the calls to the
     * LM's batch and the questions asked in them, and the wall time inside those calls (summed
     * over the threads) */
    int lm_batch;
    uint64_t lm_batches, lm_expansions, lm_hits, lm_calls, lm_queries;
    double lm_seconds;
} dec_run_stats;
int dec_run(dec_model *m, FILE *in, FILE *out, const dec_run_options *opt, dec_run_stats *stats,
            smt_err *err);

/* dec_run reading the file at opt->input (NULL or "-": standard input) through smt_lines (a
 * compressed input, .gz ..., is decompressed); a pipe or terminal is read as lines arrive and
 * each line is answered before the next is waited for. The input is opened before any output
 * file, so that a missing input leaves none behind. */
int dec_run_input(dec_model *m, FILE *out, const dec_run_options *opt, dec_run_stats *stats,
                  smt_err *err);

/* dec_run on the lines of an open reader (common/smt_lines.h; opt->input is not used), which stays
 * open: a part of a bigger input (smt_lines_open_range, smt_lines_open_mem) keeps the whole input's
 * numbering, the n-best ids and "line N" messages counting from the reader's line number when the
 * call starts. How a run split over processes (fastsmt under mpirun) translates its parts. No
 * progress meter. */
typedef struct smt_lines smt_lines;
int dec_run_lines(dec_model *m, smt_lines *in, FILE *out, const dec_run_options *opt,
                  dec_run_stats *stats, smt_err *err);

#ifdef __cplusplus
}
#endif
#endif
