/* moses_ini.h — reading the moses.ini files written by Moses's training and tuning.
 *
 * The subset phrase-based decoding needs: [feature] lines (`Type key=value ...`), [weight] lines
 * (`Name= v1 v2 ...`), and single-value sections such as [distortion-limit], [s] (alias [stack]),
 * [cube-pruning-pop-limit], [threads], [n-best-list], [search-algorithm], [input-factors], [mapping].
 * Feature names default as in Moses: the type followed by a per-type counter of the features of that
 * type declared so far (`Distortion0`, `LexicalReordering0`, ...). Every section is kept;
 * dec_ini_check_sections() sorts them into those this decoder implements, those that do not change
 * the output (a warning) and those that would and are not implemented (an error naming file:line);
 * docs/decoder.md lists the classification. Errors name `file:line`. A file that holds NUL or
 * control bytes or invalid UTF-8 is refused as "not a moses.ini (binary data at line N)", and no
 * message echoes more than a short, printable fragment of a line.
 * Relative paths given in the ini are looked up in the working directory first (Moses's rule), then
 * in the ini's folder; with fastsmt's own section [relative-paths] ini (what fastsmt-binarize
 * writes), in the ini's folder only (dec_ini_find). An old-format ini (before 2013: [ttable-file],
 * [lmodel-file], [distortion-file], [weight-t], [weight-l], [weight-d], [weight-w], [weight-u],
 * [weight-p]) is converted at load into the [feature] and [weight] lines Moses's Parameter makes
 * of it (dec_ini_load; docs/decoder.md).
 * Thread-safety: a loaded dec_ini is immutable and may be read from many threads. */
#ifndef DEC_MOSES_INI_H
#define DEC_MOSES_INI_H

#include <stddef.h>
#include <stdio.h>

#include "smt_error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dec_ini_feature {
    char *type;    /* e.g. "KENLM" */
    char *name;    /* the name= value, or the Moses default name */
    size_t n_args; /* key=value pairs after the type, name= included */
    char **keys;
    char **values;
    unsigned line;
} dec_ini_feature;

typedef struct dec_ini_weight {
    char *name;    /* e.g. "LM0" (without the '=') */
    size_t n;
    double *values;
    unsigned line;
} dec_ini_weight;

typedef struct dec_ini_section {
    char *name;    /* without brackets */
    size_t n;      /* value lines */
    char **values;
    unsigned *lines; /* the line of each value */
    unsigned line;   /* the line of the [header] */
    int known;       /* implemented by this decoder (see dec_ini_check_sections) */
} dec_ini_section;

typedef struct dec_ini {
    char *path;
    char *dir;     /* the ini's directory, for relative paths */
    size_t n_features;
    dec_ini_feature *features;
    size_t n_weights;
    dec_ini_weight *weights;
    size_t n_sections; /* all sections other than [feature] and [weight] */
    dec_ini_section *sections;
    unsigned feature_line, weight_line; /* the lines of [feature] / [weight]; 0 when absent */
    int old_format; /* 1: converted from the old format (features and weights made from it) */
    int beside_only; /* [relative-paths] ini: relative paths are beside the ini, never the cwd */
} dec_ini;

/* Parses path. Returns 0, SMT_ERR_IO or SMT_ERR_PARSE (naming file:line) or SMT_ERR_NOMEM.
 * [relative-paths] must hold one value, cwd-first or ini (else SMT_ERR_PARSE naming file:line). */
int dec_ini_load(dec_ini **out, const char *path, smt_err *err);
void dec_ini_free(dec_ini *ini);

/* The feature named name, or NULL. */
const dec_ini_feature *dec_ini_feature_named(const dec_ini *ini, const char *name);
/* The value of key in a feature line, or NULL. */
const char *dec_ini_feature_arg(const dec_ini_feature *f, const char *key);
/* The weights of a feature, or NULL. */
const dec_ini_weight *dec_ini_weight_named(const dec_ini *ini, const char *name);
/* The first value of a single-value section ("distortion-limit", "s", ...), or NULL.
 * [stack] and [s] are the same section. */
const char *dec_ini_param(const dec_ini *ini, const char *section);
/* Every value line of a section (*values points at them); 0 when the section is absent. */
size_t dec_ini_param_values(const dec_ini *ini, const char *section, char *const **values);

/* The line of value i of a section (i past the values, or no values: the header's line); 0 when
 * the section is absent. */
unsigned dec_ini_param_line(const dec_ini *ini, const char *section, size_t i);

/* A numeric single-value section, read strictly (the whole value, in [lo, hi]). Returns 0 when the
 * section is absent (*out untouched), 1 when *out was read, or SMT_ERR_PARSE naming file:line and
 * the section ("moses.ini:12: [s] '100abc' is not an integer", "... is out of range [1, 1048576]",
 * "[s] has no value", "[s] has 2 values, expected one"). */
int dec_ini_param_ll(const dec_ini *ini, const char *section, long long lo, long long hi,
                     long long *out, smt_err *err);
int dec_ini_param_double(const dec_ini *ini, const char *section, double lo, double hi,
                         double *out, smt_err *err);
/* A boolean section the way Moses reads one: present with no value, or "true", "yes", "1":
 * *out = 1; "false", "no", "0": *out = 0. Returns 0 when absent, 1 when read, or SMT_ERR_PARSE. */
int dec_ini_param_bool(const dec_ini *ini, const char *section, int *out, smt_err *err);

/* A feature key's value read strictly: 0 when the key is absent (*out untouched), 1 when read, or
 * SMT_ERR_PARSE naming file:line, the feature and the key. */
int dec_ini_feature_ll(const dec_ini *ini, const dec_ini_feature *f, const char *key, long long lo,
                       long long hi, long long *out, smt_err *err);

/* Sorts the ini's sections into Moses's parameters this decoder implements, those that cannot
 * change the output (a warning on warn, which may be NULL), and those that would change it and are
 * not implemented, or are no Moses parameter at all (SMT_ERR_UNSUPPORTED / SMT_ERR_PARSE naming
 * file:line and the section). Returns 0 or the error. */
int dec_ini_check_sections(const dec_ini *ini, FILE *warn, smt_err *err);

/* Finds a file the ini names (line: the ini line naming it) as Moses does, then beside the ini:
 * an absolute path is kept; a relative one is looked up in the working directory first (Moses's
 * rule), then in the ini's folder. verbose >= 2: says on warn which was used. Both exist and are
 * different files: a warning on warn (the working directory's is used). Neither exists:
 * SMT_ERR_IO "moses.ini:7: pt.gz: not found in the working directory (/x/pt.gz) nor beside the
 * ini (/y/pt.gz)". With [relative-paths] ini (ini->beside_only) the working directory is never
 * looked at: the ini's folder only. The one resolver of the ini's paths. *out: malloc'ed. warn
 * may be NULL. Returns 0 or the error. */
int dec_ini_find(const dec_ini *ini, const char *path, unsigned line, FILE *warn, int verbose,
                 char **out, smt_err *err);
/* The same rule without messages: the path dec_ini_find finds, else (found nowhere) the path
 * beside the ini (malloc'ed; NULL when out of memory). */
char *dec_ini_resolve(const dec_ini *ini, const char *path);

/* Applies a Moses -feature-overwrite spec, "Name key=value ..." (what names the place in messages:
 * the flag, or "moses.ini:LINE: [feature-overwrite]"): each key of feature Name takes the value,
 * or is added; name= cannot change. Returns 0, SMT_ERR_PARSE (no such feature, a malformed
 * spec) or SMT_ERR_NOMEM. The keys are checked with the others at load. */
int dec_ini_overwrite_feature(dec_ini *ini, const char *spec, const char *what, smt_err *err);

/* Applies a Moses -weight-overwrite string ("LM0= 0.5 WordPenalty0= -1"). A name that is not yet
 * in the ini is added. Returns 0, SMT_ERR_PARSE or SMT_ERR_NOMEM. */
int dec_ini_overwrite_weights(dec_ini *ini, const char *spec, smt_err *err);

/* Writes into buf (size n) a comma-separated list of the sections that this decoder does not
 * implement; returns the number of them. */
size_t dec_ini_unknown(const dec_ini *ini, char *buf, size_t n);

#ifdef __cplusplus
}
#endif
#endif
