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

/* Settings that override the ini (Moses's command-line flags). The value dec_options_default sets
 * (-1; a negative beam threshold) keeps the ini's value (or the default when the ini has none);
 * any other value outside its documented range makes dec_model_load fail with SMT_ERR_ARG.
 * The ini's boolean sections ([report-segmentation], [mark-unknown], ...) are read as the flags. */
typedef struct dec_options {
    int stack_size;               /* -s (default 200), 1 .. DEC_MAX_STACK */
    int pop_limit;                /* -cube-pruning-pop-limit (default 1000), 1 .. DEC_MAX_POP_LIMIT */
    int distortion_limit;         /* -dl; set distortion_limit_set to use it (-1 = unlimited) */
    int distortion_limit_set;
    const char *weight_overwrite; /* -weight-overwrite "Name= v ... Name= v ..." or NULL */
    FILE *warn;                   /* where warnings go (unknown ini keys); NULL: stderr */
    int report_segmentation;      /* -t: "|start-end| " after each phrase of the 1-best */
    int nbest_segmentation;       /* -include-segmentation-in-n-best: the same in n-best words */
    int print_alignment;          /* -print-alignment-info: "words ||| s-t s-t ..." in the 1-best */
    int nbest_alignment;          /* -print-alignment-info-in-n-best: " ||| s-t ..." after the total */
    FILE *alignment_file;         /* -alignment-output-file: dec_run writes each 1-best's alignment
                                   * there, one line per input line (NULL: none) */
    int max_phrase_len;           /* -max-phrase-length (-1: the ini's, default 20) */
    int table_limit;              /* -ttable-limit (-1: the phrase table's table-limit, default 20) */
    double beam_threshold;        /* -b / -beam-threshold (< 0: the ini's, default 1e-5) */
    int mark_unknown;             /* -mark-unknown: unknown words printed as prefix word suffix */
    const char *unknown_prefix;   /* -unknown-word-prefix (NULL: "UNK") */
    const char *unknown_suffix;   /* -unknown-word-suffix (NULL: "") */
    int verify;                   /* --verify / -verify-models: check every checksum of the binary
                                   * tables and LMs at load (reads every byte once) */
} dec_options;

/* Fills opt with "use the ini" for every setting. */
void dec_options_default(dec_options *opt);

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
/* The path a single-value ini section names ([input-file]), resolved as every path of the ini
 * (against the ini's directory); malloc'ed, or NULL when the section is absent or memory ran out. */
char *dec_model_param_path(const dec_model *m, const char *section);
/* A boolean ini section as Moses reads one (no value, true/yes/1, false/no/0): 0 when absent,
 * 1 when *out was read, or SMT_ERR_PARSE naming file:line. */
int dec_model_param_bool(const dec_model *m, const char *section, int *out, smt_err *err);

/* Moses's -show-weights: one line per feature in n-best order, "Name= w1 w2 ..." for a tuneable
 * feature and "Name UNTUNEABLE" for the others (what Moses's tuning scripts read to learn the
 * feature names, counts and starting weights). Returns 0 or SMT_ERR_IO. */
int dec_model_show_weights(const dec_model *m, FILE *out);

/* Seconds dec_model_load took. */
double dec_model_load_seconds(const dec_model *m);

/* A growable output buffer (data is NUL-terminated when len > 0). */
typedef struct dec_buf {
    char *data;
    size_t len, cap;
} dec_buf;
void dec_buf_free(dec_buf *b);

int dec_worker_create(dec_worker **out, dec_model *m, smt_err *err);
void dec_worker_free(dec_worker *w);

/* Translates one line (tokens separated by spaces or tabs; it need not be NUL-terminated).
 * best: receives the 1-best line with its newline (Moses's format: every word followed by a
 * space); an empty input line gives an empty line. nbest (may be NULL): receives up to n_best
 * lines "id ||| words ||| Feature= scores ... ||| total" with id = sent_id. score (may be NULL):
 * the model score of the 1-best. The buffers are appended to.
 * Returns 0, SMT_ERR_LIMIT (more than DEC_MAX_SENTENCE tokens), SMT_ERR_CORRUPT (a damaged
 * phrase-table group: the sentence is never translated with it) or SMT_ERR_NOMEM; on
 * SMT_ERR_LIMIT and SMT_ERR_CORRUPT an empty line is still appended to best. */
int dec_translate(dec_worker *w, const char *line, size_t len, uint64_t sent_id, dec_buf *best,
                  dec_buf *nbest, size_t n_best, int distinct, double *score, smt_err *err);

/* Translates every line of in to out (in input order) with threads workers (0 = all CPUs),
 * writing n-best lists to nbest when it is not NULL. A sentence that is too long is reported on
 * warn and gives an empty line. A sentence that cannot be translated for another reason (a damaged
 * phrase-table group) is reported on warn ("line N: ...") and gives an empty line too; the other
 * lines are translated and the call then fails with that error. A read error on in is an error
 * (SMT_ERR_IO naming the line), never an end of input. stats (may be NULL): lines, tokens,
 * seconds, summed 1-best model score. Returns 0, SMT_ERR_IO, SMT_ERR_NOMEM or SMT_ERR_CORRUPT. */
typedef struct dec_run_stats {
    uint64_t lines, tokens, refused;
    double seconds, score_sum;
} dec_run_stats;
int dec_run(dec_model *m, FILE *in, FILE *out, FILE *nbest, size_t n_best, int distinct,
            unsigned threads, FILE *warn, dec_run_stats *stats, smt_err *err);

/* dec_run reading the file at input (NULL or "-": standard input) through smt_lines, so that a
 * compressed input (.gz ...) is decompressed; a pipe or terminal is read as lines arrive and each
 * line is answered before the next is waited for. progress: 1 shows lines/s and words/s on stderr
 * while it runs, when stderr is a terminal. */
int dec_run_input(dec_model *m, const char *input, FILE *out, FILE *nbest, size_t n_best,
                  int distinct, unsigned threads, int progress, FILE *warn, dec_run_stats *stats,
                  smt_err *err);

#ifdef __cplusplus
}
#endif
#endif
