/* moses.ini reader: see moses_ini.h. */
#define _GNU_SOURCE
#include "moses_ini.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "smt_buf.h"
#include "smt_lines.h"
#include "smt_num.h"
#include "smt_words.h"

/* Moses's ini parameters (sections), each classified for this decoder:
 *   IMPL     implemented (read by dec_model_load or by the fastsmt tool);
 *   NOEFFECT cannot change the translations or the n-best lists: a warning;
 *   CHANGES  would change the output and is not implemented: an error.
 * A section that is no Moses parameter at all is an error too (as in Moses): a typo such as
 * [distortion-limt] must not silently fall back to a default. docs/decoder.md lists this table. */
enum { IMPL, NOEFFECT, CHANGES };
typedef struct section_class {
    const char *name;
    int cls;
} section_class;

static const section_class sections[] = {
    /* implemented */
    {"input-factors", IMPL}, {"mapping", IMPL}, {"distortion-limit", IMPL}, {"s", IMPL},
    {"stack", IMPL}, {"cube-pruning-pop-limit", IMPL}, {"threads", IMPL}, {"n-best-list", IMPL},
    {"search-algorithm", IMPL}, {"max-phrase-length", IMPL}, {"beam-threshold", IMPL},
    {"ttable-limit", IMPL}, {"report-segmentation", IMPL},
    {"include-segmentation-in-n-best", IMPL}, {"print-alignment-info", IMPL},
    {"print-alignment-info-in-n-best", IMPL}, {"mark-unknown", IMPL},
    {"unknown-word-prefix", IMPL}, {"unknown-word-suffix", IMPL}, {"show-weights", IMPL},
    {"inputtype", IMPL}, {"verbose", IMPL}, {"input-file", IMPL},
    {"cube-pruning-deterministic-search", IMPL}, /* always deterministic */
    {"relative-paths", IMPL}, /* fastsmt's own: where relative paths are looked up */
    /* the old format (before 2013), converted at load (convert_old); "IMPL" in the table of the
     * new format too, where dec_ini_load refuses them as a mix of the two formats */
    /* no effect on the output */
    {"description", NOEFFECT}, {"cache-path", NOEFFECT}, {"persistent-cache-size", NOEFFECT},
    {"use-persistent-cache", NOEFFECT}, {"clean-lm-cache", NOEFFECT}, {"no-cache", NOEFFECT},
    {"minphr-memory", NOEFFECT}, {"minlexr-memory", NOEFFECT}, {"serial", NOEFFECT},
    {"server", NOEFFECT}, {"server-port", NOEFFECT}, {"server-log", NOEFFECT},
    {"session-timeout", NOEFFECT}, {"session-cache-size", NOEFFECT},
    /* would change the output; not implemented */
    {"xml-input", IMPL}, {"xml-brackets", IMPL}, {"early-distortion-cost", IMPL},
    {"weight-file", IMPL}, {"report-segmentation-enriched", CHANGES},
    {"translation-details", CHANGES}, {"tree-translation-details", CHANGES},
    {"translation-all-details", CHANGES}, {"output-search-graph", CHANGES},
    {"output-search-graph-extended", CHANGES}, {"output-search-graph-slf", CHANGES},
    {"output-search-graph-hypergraph", CHANGES}, {"output-search-graph-pb", CHANGES},
    {"output-word-graph", CHANGES}, {"unpruned-search-graph", CHANGES},
    {"include-lhs-in-search-graph", CHANGES}, {"output-hypo-score", IMPL},
    {"print-id", CHANGES}, {"print-passthrough", CHANGES},
    {"print-passthrough-in-n-best", CHANGES}, {"print-all-derivations", CHANGES},
    {"report-all-factors", CHANGES}, {"report-all-factors-in-n-best", CHANGES},
    {"n-best-trees", CHANGES}, {"labeled-n-best-list", CHANGES}, {"n-best-factor", IMPL},
    {"lattice-samples", CHANGES}, {"distinct-nbest", CHANGES}, {"drop-unknown", IMPL},
    {"phrase-drop-allowed", CHANGES}, {"disable-discarding", CHANGES},
    {"monotone-at-punctuation", IMPL}, {"stack-diversity", CHANGES},
    {"cube-pruning-diversity", CHANGES}, {"cube-pruning-lazy-scoring", CHANGES},
    {"early-discarding-threshold", CHANGES}, {"translation-option-threshold", CHANGES},
    {"max-trans-opt-per-coverage", CHANGES}, {"max-partial-trans-opt", CHANGES},
    {"decoding-graph-backoff", IMPL}, {"minimum-bayes-risk", CHANGES}, {"mbr-size", CHANGES},
    {"mbr-scale", CHANGES}, {"lminimum-bayes-risk", CHANGES}, {"lmbr-thetas", CHANGES},
    {"lmbr-pruning-factor", CHANGES}, {"lmbr-p", CHANGES}, {"lmbr-r", CHANGES},
    {"lmbr-map-weight", CHANGES}, {"lattice-hypo-set", CHANGES}, {"consensus-decoding", CHANGES},
    {"constraint", CHANGES}, {"output-factors", CHANGES}, {"placeholder-factor", CHANGES},
    {"factor-delimiter", CHANGES}, {"feature-overwrite", IMPL}, {"feature-add", CHANGES},
    {"weight-add", CHANGES}, {"weight-overwrite", CHANGES}, {"alternate-weight-setting", CHANGES},
    {"start-translation-id", CHANGES}, {"sort-word-alignment", CHANGES},
    {"output-unknowns", IMPL}, {"alignment-output-file", CHANGES},
    {"continue-partial-translation", CHANGES}, {"recover-input-path", CHANGES},
    {"input-scores", CHANGES}, {"link-param-count", CHANGES}, {"references", CHANGES},
    {"mira", CHANGES}, {"text-type", CHANGES}, {"context-string", CHANGES},
    {"context-weights", CHANGES}, {"context-window", CHANGES}, {"time-out", CHANGES},
    {"always-create-direct-transopt", CHANGES}, {"lmodel-oov-feature", IMPL},
    {"non-terminals", CHANGES}, {"max-chart-span", CHANGES}, {"rule-limit", CHANGES},
    {"source-label-overlap", CHANGES}, {"unknown-lhs", CHANGES}, {"parsing-algorithm", CHANGES},
    {"s2t-parsing-algorithm", CHANGES}, {"default-non-term-for-empty-range-only", CHANGES},
    {"translation-systems", CHANGES}, {"generation-file", CHANGES}, {"lmodel-file", IMPL},
    {"lmodel-dub", CHANGES}, {"ttable-file", IMPL}, {"distortion-file", IMPL},
    {"distortion", CHANGES}, {"global-lexical-file", CHANGES}, {"glm-feature", CHANGES},
    {"dlm-model", CHANGES}, {"vlm-feature", CHANGES}, {"phrase-pair-feature", CHANGES},
    {"phrase-boundary-source-feature", CHANGES}, {"phrase-boundary-target-feature", CHANGES},
    {"phrase-length-feature", CHANGES}, {"target-word-insertion-feature", CHANGES},
    {"source-word-deletion-feature", CHANGES}, {"word-translation-feature", CHANGES},
    {"report-sparse-features", CHANGES}, {"weight-slm", CHANGES}, {"weight-bl", CHANGES},
    {"weight-d", IMPL}, {"weight-dlm", CHANGES}, {"weight-lr", CHANGES},
    {"weight-generation", CHANGES}, {"weight-i", CHANGES}, {"weight-l", IMPL},
    {"weight-lex", CHANGES}, {"weight-glm", CHANGES}, {"weight-wt", CHANGES},
    {"weight-pp", CHANGES}, {"weight-pb", CHANGES}, {"weight-t", IMPL}, {"weight-w", IMPL},
    {"weight-u", IMPL}, {"weight-e", CHANGES}, {"weight-p", IMPL},
    {NULL, 0}};

/* The class of a section, or -1 when it is no Moses parameter. */
static int section_class_of(const char *name)
{
    for (const section_class *c = sections; c->name; c++)
        if (strcmp(c->name, name) == 0)
            return c->cls;
    return -1;
}

static int is_known(const char *name) { return section_class_of(name) == IMPL; }

/* Copies at most 48 bytes of s into out (size >= 64) without cutting a UTF-8 character, with
 * "..." when it was cut: the fragment of a line a message may echo. */
static const char *frag(const char *s, char *out)
{
    size_t n = strlen(s);
    if (n <= 48)
        return s;
    n = 48;
    while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
        n--;
    memcpy(out, s, n);
    memcpy(out + n, "...", 4);
    return out;
}

/* 1 when line[0..len) is text: valid UTF-8 without control bytes other than tab, CR and LF. */
static int is_text(const char *line, size_t len)
{
    const unsigned char *p = (const unsigned char *)line, *e = p + len;
    while (p < e) {
        unsigned c = *p;
        if (c < 0x80) {
            if ((c < 0x20 && c != '\t' && c != '\r' && c != '\n') || c == 0x7F)
                return 0;
            p++;
            continue;
        }
        int more = c >= 0xF0 ? 3 : c >= 0xE0 ? 2 : c >= 0xC2 ? 1 : -1;
        if (more < 0 || c > 0xF4 || e - p <= more)
            return 0;
        unsigned cp = c & (0x3F >> more);
        for (int k = 1; k <= more; k++) {
            if ((p[k] & 0xC0) != 0x80)
                return 0;
            cp = cp << 6 | (p[k] & 0x3F);
        }
        if ((more == 2 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
            (more == 3 && (cp < 0x10000 || cp > 0x10FFFF)))
            return 0;
        p += more + 1;
    }
    return 1;
}

static char *trim(char *s)
{
    const char *b = s, *e = s + strlen(s);
    smt_trim(&b, &e, SMT_WS_SPACE);
    s[e - s] = '\0';
    return s + (b - s);
}

/* Room for element n (zeroed) of an array of n elements of elem bytes that only push grows: its
 * capacity is n rounded up to a power of two (at least 4), so none is stored (a count that went
 * down leaves more room than that). */
static int push(void **arr, size_t n, size_t elem)
{
    size_t cap = n ? 4 : 0;
    while (cap < n)
        cap *= 2;
    if (smt_grow(arr, &cap, n + 1, elem, 4))
        return SMT_ERR_NOMEM;
    memset((char *)*arr + n * elem, 0, elem);
    return 0;
}

/* The next white-space separated token at *cursor, NUL-terminated in place. */
static char *next_token(char **cursor)
{
    char *s = *cursor;
    const char *pos = s, *w;
    size_t len;
    if (!smt_word_next(&pos, s + strlen(s), SMT_WS_SPACE, &w, &len))
        return NULL;
    char *t = s + (w - s);
    *cursor = t + len;
    if (t[len]) {
        t[len] = '\0';
        (*cursor)++;
    }
    return t;
}

static int parse_feature(dec_ini *ini, char *text, unsigned line, smt_err *err)
{
    if (push((void **)&ini->features, ini->n_features, sizeof *ini->features))
        return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
    dec_ini_feature *f = &ini->features[ini->n_features++];
    f->line = line;
    char *cur = text;
    f->type = strdup(next_token(&cur));
    if (!f->type)
        return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
    for (char *tok; (tok = next_token(&cur));) {
        char *eq = strchr(tok, '=');
        char fb[64];
        if (!eq || eq == tok)
            return smt_err_set(err, SMT_ERR_PARSE, "%s:%u: feature argument '%s' is not key=value",
                               ini->path, line, frag(tok, fb));
        *eq = '\0';
        for (size_t k = 0; k < f->n_args; k++)
            if (strcmp(f->keys[k], tok) == 0)
                return smt_err_set(err, SMT_ERR_PARSE, "%s:%u: key '%s' given twice",
                                   ini->path, line, frag(tok, fb));
        if (push((void **)&f->keys, f->n_args, sizeof *f->keys) ||
            push((void **)&f->values, f->n_args, sizeof *f->values))
            return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
        f->keys[f->n_args] = strdup(tok);
        f->values[f->n_args] = strdup(eq + 1);
        if (!f->keys[f->n_args] || !f->values[f->n_args])
            return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
        f->n_args++;
    }
    const char *name = dec_ini_feature_arg(f, "name");
    if (name) {
        f->name = strdup(name);
    } else {
        /* Moses's default: the type and a per-type counter */
        unsigned index = 0;
        for (size_t i = 0; i + 1 < ini->n_features; i++)
            if (strcmp(ini->features[i].type, f->type) == 0)
                index++;
        if (asprintf(&f->name, "%s%u", f->type, index) < 0)
            f->name = NULL;
    }
    if (!f->name)
        return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i + 1 < ini->n_features; i++)
        if (strcmp(ini->features[i].name, f->name) == 0)
            return smt_err_set(err, SMT_ERR_PARSE, "%s:%u: feature name '%s' already used at line %u",
                               ini->path, line, f->name, ini->features[i].line);
    return 0;
}

/* Parses "Name= v1 v2 ..." (also "Name=v1 v2"). line 0: from -weight-overwrite, and what (the
 * flag) names the place instead of file:line. */
static int parse_weight(dec_ini *ini, char *text, unsigned line, const char *what, smt_err *err)
{
    char where[600], fb[64];
    if (line)
        snprintf(where, sizeof where, "%s:%u", what, line);
    else
        snprintf(where, sizeof where, "%s", what);
    char *cur = text;
    char *tok = next_token(&cur);
    char *eq = tok ? strchr(tok, '=') : NULL;
    if (!eq || eq == tok)
        return smt_err_set(err, SMT_ERR_PARSE, "%s: weight line must start with 'Name=': '%s'",
                           where, frag(tok ? tok : text, fb));
    *eq = '\0';
    dec_ini_weight *w = NULL;
    for (size_t i = 0; i < ini->n_weights; i++)
        if (strcmp(ini->weights[i].name, tok) == 0)
            w = &ini->weights[i];
    if (w && line) /* a duplicate in the ini itself; -weight-overwrite (line 0) replaces */
        return smt_err_set(err, SMT_ERR_PARSE, "%s: weights for '%s' already given at line %u",
                           where, frag(tok, fb), w->line);
    if (!w) {
        if (push((void **)&ini->weights, ini->n_weights, sizeof *ini->weights))
            return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
        w = &ini->weights[ini->n_weights++];
        if (!(w->name = strdup(tok)))
            return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
    }
    w->line = line;
    w->n = 0;
    char *rest = eq + 1;
    for (;;) {
        char *v = *rest ? rest : next_token(&cur);
        rest = "";
        if (!v)
            break;
        double d;
        int rc = smt_parse_double(v, strlen(v), -DBL_MAX, DBL_MAX, 0, &d);
        if (rc)
            return smt_err_set(err, SMT_ERR_PARSE, "%s: weight '%s' of '%s' is not %s", where,
                               frag(v, fb), w->name,
                               rc == SMT_ERR_LIMIT ? "a finite number" : "a number");
        if (push((void **)&w->values, w->n, sizeof *w->values))
            return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
        w->values[w->n++] = d;
    }
    if (w->n == 0)
        return smt_err_set(err, SMT_ERR_PARSE, "%s: no weights for '%s'", where, w->name);
    return 0;
}

static int add_section(dec_ini *ini, const char *name, unsigned line, smt_err *err)
{
    const char *canon = strcmp(name, "stack") == 0 ? "s" : name;
    for (size_t i = 0; i < ini->n_sections; i++)
        if (strcmp(ini->sections[i].name, canon) == 0)
            return smt_err_set(err, SMT_ERR_PARSE, "%s:%u: section [%.64s] already given at line %u",
                               ini->path, line, name, ini->sections[i].line);
    if (push((void **)&ini->sections, ini->n_sections, sizeof *ini->sections))
        return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
    dec_ini_section *s = &ini->sections[ini->n_sections++];
    s->line = line;
    s->known = is_known(canon);
    if (!(s->name = strdup(canon)))
        return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
    return 0;
}

/* The ini's lines through the common reader (read errors, a byte-order mark, compression). */
static int parse(dec_ini *ini, smt_lines *f, smt_err *err)
{
    char *s;
    size_t got;
    unsigned line = 0;
    enum { NONE, FEATURE, WEIGHT, OTHER } mode = NONE;
    int rc = 0;
    char fb[64];
    while (!rc && (rc = smt_lines_next(f, &s, &got, err)) == 1) {
        rc = 0;
        line++;
        if (!is_text(s, got)) { /* never echo what may be binary data */
            rc = smt_err_set(err, SMT_ERR_FORMAT, "%s: not a moses.ini (binary data at line %u)",
                             ini->path, line);
            break;
        }
        s = trim(s);
        if (!*s || *s == '#')
            continue;
        if (*s == '[') {
            char *close = strchr(s, ']');
            if (!close || close[1] != '\0' || close == s + 1) {
                rc = smt_err_set(err, SMT_ERR_PARSE, "%s:%u: malformed section header '%s'",
                                 ini->path, line, frag(s, fb));
                break;
            }
            *close = '\0';
            const char *name = s + 1;
            if (strcmp(name, "feature") == 0) {
                mode = FEATURE;
                ini->feature_line = ini->feature_line ? ini->feature_line : line;
            } else if (strcmp(name, "weight") == 0) {
                mode = WEIGHT;
                ini->weight_line = ini->weight_line ? ini->weight_line : line;
            }
            else {
                mode = OTHER;
                rc = add_section(ini, name, line, err);
            }
            continue;
        }
        switch (mode) {
        case NONE:
            rc = smt_err_set(err, SMT_ERR_PARSE, "%s:%u: '%s' outside any [section]", ini->path,
                             line, frag(s, fb));
            break;
        case FEATURE: rc = parse_feature(ini, s, line, err); break;
        case WEIGHT: rc = parse_weight(ini, s, line, ini->path, err); break;
        case OTHER: {
            dec_ini_section *sec = &ini->sections[ini->n_sections - 1];
            if (push((void **)&sec->values, sec->n, sizeof *sec->values) ||
                push((void **)&sec->lines, sec->n, sizeof *sec->lines) ||
                !(sec->values[sec->n] = strdup(s)))
                rc = smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
            else
                sec->lines[sec->n++] = line;
            break;
        }
        }
    }

    return rc;
}


/* ---------------------------------------------------------------- the old format (before 2013)
 * Converted as Moses's Parameter::ConvertWeightArgs does (read in moses/Parameter.cpp, written
 * here anew): the features in the order Moses adds them — each [lmodel-file] line (SRILM, IRSTLM,
 * KENLM), Distortion and each [distortion-file] line (LexicalReordering) when [weight-d] is given,
 * PhrasePenalty when [weight-p] is given, WordPenalty, UnknownWordPenalty, then each [ttable-file]
 * line — named by Moses's default (type + counter: KENLM0, PhraseDictionaryMemory0, ...), with
 * their weights taken in order from the old weight sections. Moses passes each old weight through
 * a float printed with 6 significant digits (SPrint); so does this conversion. Stricter than Moses
 * where Moses would silently drop something: one weight per line, no weight left over, no
 * [distortion-file] without [weight-d]. */

static const dec_ini_section *find_section(const dec_ini *ini, const char *section);

static const char *const old_sections[] = {
    "ttable-file", "lmodel-file", "distortion-file", "weight-d", "weight-l", "weight-t",
    "weight-w", "weight-u", "weight-p", "weight-i", "weight-generation", "generation-file",
    "lmodel-oov-feature", NULL};

static void drop_section(dec_ini *ini, const char *name)
{
    for (size_t i = 0; i < ini->n_sections; i++) {
        dec_ini_section *s = &ini->sections[i];
        if (strcmp(s->name, name))
            continue;
        free(s->name);
        free(s->lines);
        for (size_t k = 0; k < s->n; k++)
            free(s->values[k]);
        free(s->values);
        memmove(s, s + 1, (ini->n_sections - i - 1) * sizeof *s);
        ini->n_sections--;
        return;
    }
}

/* The whitespace-separated tokens of a value line (at most max; *n their count) in buf. */
static size_t split_tokens(const char *line, char *buf, size_t size, char **tok, size_t max)
{
    snprintf(buf, size, "%s", line);
    char *cur = buf, *t;
    size_t n = 0;
    while ((t = next_token(&cur)) && n < max)
        tok[n++] = t;
    return t ? max + 1 : n; /* more than max: max + 1 */
}

/* The old weights of a section, taken in order: value *next of sec (one number a line). */
typedef struct old_weights {
    const dec_ini_section *sec;
    size_t next;
} old_weights;

/* Appends " %g" of the next old weight (Moses's float, 6 significant digits) to a weight line. */
static int take_weight(const dec_ini *ini, old_weights *ow, const char *feature, char *line,
                       size_t size, smt_err *err)
{
    char fb[64];
    if (!ow->sec || ow->next >= ow->sec->n)
        return smt_err_set(err, SMT_ERR_PARSE, "%s:%u: [%s] has %zu weights, too few for %s",
                           ini->path, ow->sec ? ow->sec->line : 0,
                           ow->sec ? ow->sec->name : "weight", ow->sec ? ow->sec->n : 0,
                           feature);
    const char *v = ow->sec->values[ow->next];
    unsigned vl = ow->sec->lines[ow->next];
    double d;
    int rc = smt_parse_double(v, strlen(v), -DBL_MAX, DBL_MAX, 0, &d);
    if (rc)
        return smt_err_set(err, SMT_ERR_PARSE,
                           "%s:%u: [%s] '%s' is not %s (one weight a line, as Moses reads them)",
                           ini->path, vl, ow->sec->name, frag(v, fb),
                           rc == SMT_ERR_LIMIT ? "a finite number" : "a number");
    ow->next++;
    size_t len = strlen(line);
    snprintf(line + len, size - len, " %g", (double)(float)d);
    return 0;
}

/* Every old weight was used (Moses ignores the rest; here it is an error). */
static int weights_used(const dec_ini *ini, const old_weights *ow, smt_err *err)
{
    if (ow->sec && ow->next < ow->sec->n)
        return smt_err_set(err, SMT_ERR_PARSE,
                           "%s:%u: [%s] has %zu weights, the features it weighs take %zu",
                           ini->path, ow->sec->lines[ow->next], ow->sec->name, ow->sec->n,
                           ow->next);
    return 0;
}

static int add_line(dec_ini *ini, int weight, const char *text, unsigned line, smt_err *err)
{
    char *copy = strdup(text);
    if (!copy)
        return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
    int rc = weight ? parse_weight(ini, copy, line, ini->path, err)
                    : parse_feature(ini, copy, line, err);
    free(copy);
    return rc;
}

static int convert_old(dec_ini *ini, smt_err *err)
{
    /* [lmodel-oov-feature] alone does not make an ini old: the new format has it too (Moses's
     * global LM OOV switch, read by dec_model_load) */
    const dec_ini_section *first = NULL;
    for (const char *const *n = old_sections; *n && !first; n++)
        if (strcmp(*n, "lmodel-oov-feature"))
            first = find_section(ini, *n);
    if (!first)
        return 0;
    if (ini->feature_line || ini->weight_line) /* Moses: "Don't mix old and new ini file format" */
        return smt_err_set(err, SMT_ERR_PARSE,
                           "%s:%u: [%s] is an old-format (before 2013) section, but the ini has "
                           "[%s] at line %u: do not mix the old and the new format",
                           ini->path, first->line, first->name,
                           ini->feature_line ? "feature" : "weight",
                           ini->feature_line ? ini->feature_line : ini->weight_line);
    static const char *const refused[][2] = {
        {"weight-i", "input scores (confusion networks and lattices) are not supported"},
        {"weight-generation", "generation steps (factored models) are not supported"},
        {"generation-file", "generation steps (factored models) are not supported"},
        {"weight-dlm", "a discriminative LM is not supported"}};
    for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
        const dec_ini_section *s = find_section(ini, refused[i][0]);
        if (s)
            return smt_err_set(err, SMT_ERR_UNSUPPORTED, "%s:%u: [%s]: %s", ini->path, s->line,
                               s->name, refused[i][1]);
    }
    ini->old_format = 1;
    char line[4096], buf[4096], *tok[8], fb[64];
    int rc;
    /* [weight-w]: WordPenalty<i> for each value (the feature is added below) */
    old_weights ww = {find_section(ini, "weight-w"), 0};
    for (size_t i = 0; ww.sec && ww.next < ww.sec->n; i++) {
        unsigned l = ww.sec->lines[ww.next];
        snprintf(line, sizeof line, "WordPenalty%zu=", i);
        if ((rc = take_weight(ini, &ww, "WordPenalty", line, sizeof line, err)) ||
            (rc = add_line(ini, 1, line, l, err)))
            return rc;
    }
    /* [lmodel-file] "type factor order path" with [weight-l] (and [lmodel-oov-feature]) */
    const dec_ini_section *lms = find_section(ini, "lmodel-file");
    const dec_ini_section *oov = find_section(ini, "lmodel-oov-feature");
    old_weights wl = {find_section(ini, "weight-l"), 0};
    unsigned lm_count[3] = {0, 0, 0};
    for (size_t i = 0; lms && i < lms->n; i++) {
        unsigned l = lms->lines[i];
        size_t n = split_tokens(lms->values[i], buf, sizeof buf, tok, 4);
        if (n != 4)
            return smt_err_set(err, SMT_ERR_PARSE,
                               "%s:%u: [lmodel-file] '%s': expected 'type factor order path'",
                               ini->path, l, frag(lms->values[i], fb));
        const char *type = !strcmp(tok[0], "0")   ? "SRILM"
                           : !strcmp(tok[0], "1") ? "IRSTLM"
                           : !strcmp(tok[0], "8") || !strcmp(tok[0], "9") ? "KENLM"
                                                                          : NULL;
        if (!type)
            return smt_err_set(err, SMT_ERR_UNSUPPORTED,
                               "%s:%u: [lmodel-file] LM type %s is not supported (0 SRILM, 1 "
                               "IRSTLM, 8 and 9 KENLM are read as ARPA files)",
                               ini->path, l, frag(tok[0], fb));
        int with_oov = 0;
        if (oov && i < oov->n) {
            long long x;
            smt_err e2;
            char what[600];
            snprintf(what, sizeof what, "%s:%u: [lmodel-oov-feature]", ini->path, oov->lines[i]);
            if (smt_parse_ll_arg(what, oov->values[i], 0, 1, &x, &e2))
                return smt_err_set(err, SMT_ERR_PARSE, "%s", e2.msg);
            with_oov = (int)x;
        }
        unsigned *cnt = &lm_count[type[0] == 'S' ? 0 : type[0] == 'I' ? 1 : 2];
        snprintf(line, sizeof line, "%s%u=", type, (*cnt)++);
        for (int k = 0; k <= with_oov; k++)
            if ((rc = take_weight(ini, &wl, line, line, sizeof line, err)))
                return rc;
        if ((rc = add_line(ini, 1, line, l, err)))
            return rc;
        snprintf(line, sizeof line, "%s factor=%s order=%s num-features=%d%s%s path=%s", type,
                 tok[1], tok[2], 1 + with_oov, with_oov ? " oov-feature=1" : "",
                 !strcmp(tok[0], "9") ? " lazyken=1" : !strcmp(tok[0], "8") ? " lazyken=0" : "",
                 tok[3]);
        if ((rc = add_line(ini, 0, line, l, err)))
            return rc;
    }
    if ((rc = weights_used(ini, &wl, err)))
        return rc;
    /* [weight-u]: UnknownWordPenalty0 */
    old_weights wu = {find_section(ini, "weight-u"), 0};
    if (wu.sec) {
        snprintf(line, sizeof line, "UnknownWordPenalty0=");
        if ((rc = take_weight(ini, &wu, line, line, sizeof line, err)) ||
            (rc = weights_used(ini, &wu, err)) || (rc = add_line(ini, 1, line, wu.sec->line, err)))
            return rc;
    }
    /* [weight-d]: Distortion0, then each [distortion-file] "factors type n path" */
    old_weights wd = {find_section(ini, "weight-d"), 0};
    const dec_ini_section *dfs = find_section(ini, "distortion-file");
    if (dfs && !wd.sec)
        return smt_err_set(err, SMT_ERR_PARSE,
                           "%s:%u: [distortion-file] without [weight-d] (Moses would drop the "
                           "reordering model)", ini->path, dfs->line);
    if (wd.sec) {
        snprintf(line, sizeof line, "Distortion0=");
        if ((rc = take_weight(ini, &wd, line, line, sizeof line, err)) ||
            (rc = add_line(ini, 0, "Distortion", wd.sec->line, err)) ||
            (rc = add_line(ini, 1, line, wd.sec->line, err)))
            return rc;
        for (size_t i = 0; dfs && i < dfs->n; i++) {
            unsigned l = dfs->lines[i];
            long long nf;
            smt_err e2;
            char what[600], *dash;
            size_t n = split_tokens(dfs->values[i], buf, sizeof buf, tok, 4);
            snprintf(what, sizeof what, "%s:%u: [distortion-file] score count", ini->path, l);
            if (n != 4 || !(dash = strchr(tok[0], '-')))
                return smt_err_set(err, SMT_ERR_PARSE,
                                   "%s:%u: [distortion-file] '%s': expected 'in-out type scores "
                                   "path' (e.g. 0-0 wbe-msd-bidirectional-fe-allff 6 path)",
                                   ini->path, l, frag(dfs->values[i], fb));
            if (smt_parse_ll_arg(what, tok[2], 1, 64, &nf, &e2))
                return smt_err_set(err, SMT_ERR_PARSE, "%s", e2.msg);
            *dash = '\0';
            snprintf(line, sizeof line, "LexicalReordering%zu=", i);
            for (long long k = 0; k < nf; k++)
                if ((rc = take_weight(ini, &wd, line, line, sizeof line, err)))
                    return rc;
            if ((rc = add_line(ini, 1, line, l, err)))
                return rc;
            snprintf(line, sizeof line,
                     "LexicalReordering type=%s input-factor=%s output-factor=%s num-features=%s "
                     "path=%s",
                     tok[1], tok[0], dash + 1, tok[2], tok[3]);
            if ((rc = add_line(ini, 0, line, l, err)))
                return rc;
        }
        if ((rc = weights_used(ini, &wd, err)))
            return rc;
    }
    /* [weight-p]: PhrasePenalty */
    old_weights wp = {find_section(ini, "weight-p"), 0};
    if (wp.sec) {
        snprintf(line, sizeof line, "PhrasePenalty0=");
        if ((rc = take_weight(ini, &wp, line, line, sizeof line, err)) ||
            (rc = weights_used(ini, &wp, err)) ||
            (rc = add_line(ini, 0, "PhrasePenalty", wp.sec->line, err)) ||
            (rc = add_line(ini, 1, line, wp.sec->line, err)))
            return rc;
    }
    unsigned base = first->line;
    if ((rc = add_line(ini, 0, "WordPenalty", ww.sec ? ww.sec->line : base, err)) ||
        (rc = add_line(ini, 0, "UnknownWordPenalty", wu.sec ? wu.sec->line : base, err)))
        return rc;
    /* [ttable-file] "implementation in out scores path" with [weight-t] and [ttable-limit] */
    const dec_ini_section *pts = find_section(ini, "ttable-file");
    const dec_ini_section *lim = find_section(ini, "ttable-limit");
    old_weights wt = {find_section(ini, "weight-t"), 0};
    if (pts && lim && lim->n != 1 && lim->n < pts->n)
        return smt_err_set(err, SMT_ERR_PARSE,
                           "%s:%u: [ttable-limit] has %zu values for %zu translation tables",
                           ini->path, lim->line, lim->n, pts->n);
    for (size_t i = 0; pts && i < pts->n; i++) {
        unsigned l = pts->lines[i];
        size_t n = split_tokens(pts->values[i], buf, sizeof buf, tok, 5);
        if (n != 5)
            return smt_err_set(err, SMT_ERR_PARSE,
                               "%s:%u: [ttable-file] '%s': expected 'implementation in-factors "
                               "out-factors scores path'%s",
                               ini->path, l, frag(pts->values[i], fb),
                               n == 4 ? " (the 4-field format is no longer read, as in Moses)"
                                      : "");
        static const char *const impls[][2] = {
            {"1", "PhraseDictionaryBinary (a Moses binary phrase table)"},
            {"2", "PhraseDictionaryOnDisk (a Moses on-disk table)"},
            {"12", "PhraseDictionaryCompact (a Moses CompactPT file)"},
            {"8", "PhraseDictionarySuffixArray"},
            {"14", "PhraseDictionaryDynSuffixArray"},
            {"15", "PhraseDictionaryDynamicCacheBased"}};
        if (strcmp(tok[0], "0") && strcmp(tok[0], "6")) {
            for (size_t k = 0; k < sizeof impls / sizeof *impls; k++)
                if (!strcmp(tok[0], impls[k][0]))
                    return smt_err_set(err, SMT_ERR_UNSUPPORTED,
                                       "%s:%u: [ttable-file] implementation %s is %s: not "
                                       "supported; binarize the text table with "
                                       "fastsmt-binarize",
                                       ini->path, l, tok[0], impls[k][1]);
            return smt_err_set(err, SMT_ERR_UNSUPPORTED,
                               "%s:%u: [ttable-file] implementation '%s' is not supported (0, a "
                               "text table, is)",
                               ini->path, l, frag(tok[0], fb));
        }
        long long nf;
        smt_err e2;
        char what[600];
        snprintf(what, sizeof what, "%s:%u: [ttable-file] score count", ini->path, l);
        if (smt_parse_ll_arg(what, tok[3], 1, 64, &nf, &e2))
            return smt_err_set(err, SMT_ERR_PARSE, "%s", e2.msg);
        snprintf(line, sizeof line, "PhraseDictionaryMemory%zu=", i);
        for (long long k = 0; k < nf; k++)
            if ((rc = take_weight(ini, &wt, line, line, sizeof line, err)))
                return rc;
        if ((rc = add_line(ini, 1, line, l, err)))
            return rc;
        char limit[96] = "";
        if (lim && lim->n)
            snprintf(limit, sizeof limit, " table-limit=%.64s", lim->values[lim->n == 1 ? 0 : i]);
        snprintf(line, sizeof line,
                 "PhraseDictionaryMemory input-factor=%s output-factor=%s path=%s "
                 "num-features=%s%s",
                 tok[1], tok[2], tok[4], tok[3], limit);
        if ((rc = add_line(ini, 0, line, l, err)))
            return rc;
    }
    if ((rc = weights_used(ini, &wt, err)))
        return rc;
    for (const char *const *n = old_sections; *n; n++)
        drop_section(ini, *n);
    if (pts)
        drop_section(ini, "ttable-limit");
    return 0;
}

static int read_relative_paths(dec_ini *ini, smt_err *err);

int dec_ini_load(dec_ini **out, const char *path, smt_err *err)
{
    *out = NULL;
    dec_ini *ini = calloc(1, sizeof *ini);
    if (!ini || !(ini->path = strdup(path)) || !(ini->dir = strdup(path))) {
        dec_ini_free(ini);
        return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
    }
    char *slash = strrchr(ini->dir, '/');
    if (slash)
        slash[slash == ini->dir ? 1 : 0] = '\0';
    else
        strcpy(ini->dir, ".");
    smt_lines *f;
    int rc = smt_lines_open(&f, path, 0, err);
    if (rc) {
        dec_ini_free(ini);
        return rc;
    }
    rc = parse(ini, f, err);
    smt_lines_close(f);
    if (!rc)
        rc = convert_old(ini, err);
    if (!rc)
        rc = read_relative_paths(ini, err);
    if (rc) {
        dec_ini_free(ini);
        return rc;
    }
    *out = ini;
    return 0;
}

static void free_strs(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

void dec_ini_free(dec_ini *ini)
{
    if (!ini)
        return;
    for (size_t i = 0; i < ini->n_features; i++) {
        dec_ini_feature *f = &ini->features[i];
        free(f->type);
        free(f->name);
        free_strs(f->keys, f->n_args);
        free_strs(f->values, f->n_args);
    }
    for (size_t i = 0; i < ini->n_weights; i++) {
        free(ini->weights[i].name);
        free(ini->weights[i].values);
    }
    for (size_t i = 0; i < ini->n_sections; i++) {
        free(ini->sections[i].name);
        free(ini->sections[i].lines);
        free_strs(ini->sections[i].values, ini->sections[i].n);
    }
    free(ini->features);
    free(ini->weights);
    free(ini->sections);
    free(ini->path);
    free(ini->dir);
    free(ini);
}

const dec_ini_feature *dec_ini_feature_named(const dec_ini *ini, const char *name)
{
    for (size_t i = 0; i < ini->n_features; i++)
        if (strcmp(ini->features[i].name, name) == 0)
            return &ini->features[i];
    return NULL;
}

const char *dec_ini_feature_arg(const dec_ini_feature *f, const char *key)
{
    for (size_t i = 0; i < f->n_args; i++)
        if (strcmp(f->keys[i], key) == 0)
            return f->values[i];
    return NULL;
}

const dec_ini_weight *dec_ini_weight_named(const dec_ini *ini, const char *name)
{
    for (size_t i = 0; i < ini->n_weights; i++)
        if (strcmp(ini->weights[i].name, name) == 0)
            return &ini->weights[i];
    return NULL;
}

const char *dec_ini_param(const dec_ini *ini, const char *section)
{
    const char *canon = strcmp(section, "stack") == 0 ? "s" : section;
    for (size_t i = 0; i < ini->n_sections; i++)
        if (strcmp(ini->sections[i].name, canon) == 0)
            return ini->sections[i].n ? ini->sections[i].values[0] : NULL;
    return NULL;
}

size_t dec_ini_param_values(const dec_ini *ini, const char *section, char *const **values)
{
    for (size_t i = 0; i < ini->n_sections; i++)
        if (strcmp(ini->sections[i].name, section) == 0) {
            *values = ini->sections[i].values;
            return ini->sections[i].n;
        }
    *values = NULL;
    return 0;
}

char *dec_ini_resolve(const dec_ini *ini, const char *path)
{
    char *out = NULL;
    smt_err e;
    if (dec_ini_find(ini, path, 0, NULL, 0, &out, &e) != SMT_ERR_IO) /* found, or out of memory */
        return out;
    if (asprintf(&out, "%s/%s", ini->dir, path) < 0) /* found nowhere: the path beside the ini */
        return NULL;
    return out;
}

int dec_ini_find(const dec_ini *ini, const char *path, unsigned line, FILE *warn, int verbose,
                 char **out, smt_err *err)
{
    *out = NULL;
    if (path[0] == '/') {
        if (!(*out = strdup(path)))
            return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
        return 0;
    }
    /* beside: the path opened; in_cwd, shown: both as absolute paths, for the messages */
    char *beside = NULL, *cwd = getcwd(NULL, 0), *in_cwd = NULL, *shown = NULL;
    if (asprintf(&beside, "%s/%s", ini->dir, path) < 0)
        beside = NULL;
    if (beside && asprintf(&in_cwd, "%s/%s", cwd ? cwd : ".", path) < 0)
        in_cwd = NULL;
    if (in_cwd && (beside[0] == '/' ? !(shown = strdup(beside))
                                    : asprintf(&shown, "%s/%s", cwd ? cwd : ".", beside) < 0))
        shown = NULL;
    if (!shown) {
        free(beside), free(cwd), free(in_cwd);
        return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
    }
    free(cwd);
    struct stat sc, si;
    int has_c = !ini->beside_only && stat(path, &sc) == 0, has_i = stat(beside, &si) == 0;
    int rc = 0;
    char fb[64];
    if (has_c) {
        if (has_i && (sc.st_dev != si.st_dev || sc.st_ino != si.st_ino) && warn)
            fprintf(warn,
                    "warning: %s:%u: %s is both in the working directory (%s) and beside the ini "
                    "(%s), different files: the working directory's is used, as Moses does\n",
                    ini->path, line, frag(path, fb), in_cwd, shown);
        else if (verbose >= 2 && warn)
            fprintf(warn, "%s:%u: %s: found in the working directory (%s)\n", ini->path, line,
                    frag(path, fb), in_cwd);
        if (!(*out = strdup(path)))
            rc = smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
    } else if (has_i) {
        if (verbose >= 2 && warn)
            fprintf(warn, "%s:%u: %s: found beside the ini (%s)\n", ini->path, line,
                    frag(path, fb), shown);
        *out = beside;
        beside = NULL;
    } else if (ini->beside_only) {
        rc = smt_err_set(err, SMT_ERR_IO,
                         "%s:%u: %s: not found beside the ini (%s; [relative-paths] ini: the "
                         "working directory is not searched)",
                         ini->path, line, frag(path, fb), shown);
    } else {
        rc = smt_err_set(err, SMT_ERR_IO,
                         "%s:%u: %s: not found in the working directory (%s) nor beside the ini "
                         "(%s)",
                         ini->path, line, frag(path, fb), in_cwd, shown);
    }
    free(beside);
    free(in_cwd);
    free(shown);
    return rc;
}

int dec_ini_overwrite_feature(dec_ini *ini, const char *spec, const char *what, smt_err *err)
{
    const char *pos = spec, *end = spec + strlen(spec), *w;
    size_t wl;
    char fb[64];
    if (!smt_word_next(&pos, end, SMT_WS_SPACE, &w, &wl))
        return smt_err_set(err, SMT_ERR_PARSE, "%s: empty, expected \"Name key=value ...\"", what);
    dec_ini_feature *f = NULL;
    for (size_t i = 0; i < ini->n_features && !f; i++)
        if (strlen(ini->features[i].name) == wl && !memcmp(ini->features[i].name, w, wl))
            f = &ini->features[i];
    if (!f)
        return smt_err_set(err, SMT_ERR_PARSE, "%s: no feature named '%.*s'", what,
                           (int)(wl > 48 ? 48 : wl), w);
    int any = 0;
    while (smt_word_next(&pos, end, SMT_WS_SPACE, &w, &wl)) {
        const char *eq = memchr(w, '=', wl);
        char *tok = strndup(w, wl);
        if (!tok)
            return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
        if (!eq || eq == w) {
            int rc = smt_err_set(err, SMT_ERR_PARSE, "%s: '%s' is not key=value", what, frag(tok, fb));
            free(tok);
            return rc;
        }
        tok[eq - w] = '\0';
        const char *key = tok, *val = tok + (eq - w) + 1;
        if (!strcmp(key, "name")) {
            free(tok);
            return smt_err_set(err, SMT_ERR_PARSE, "%s: a feature's name cannot be overwritten", what);
        }
        size_t k = 0;
        while (k < f->n_args && strcmp(f->keys[k], key) != 0)
            k++;
        char *v = strdup(val), *kk = k == f->n_args ? strdup(key) : NULL;
        if (!v || (k == f->n_args && (!kk || push((void **)&f->keys, f->n_args, sizeof *f->keys) ||
                                      push((void **)&f->values, f->n_args, sizeof *f->values)))) {
            free(v), free(kk), free(tok);
            return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
        }
        if (k == f->n_args) {
            f->keys[k] = kk;
            f->values[k] = NULL;
            f->n_args++;
        }
        free(f->values[k]);
        f->values[k] = v;
        free(tok);
        any = 1;
    }
    if (!any)
        return smt_err_set(err, SMT_ERR_PARSE, "%s: '%s' has no key=value to set", what,
                           frag(spec, fb));
    return 0;
}

int dec_ini_overwrite_weights(dec_ini *ini, const char *spec, smt_err *err)
{
    /* Split the spec before each token holding '=' (a name; values never contain one) and parse
     * each part as a weight line. */
    char *copy = strdup(spec);
    if (!copy)
        return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
    int rc = 0;
    char *cur = copy;
    while (!rc) {
        const char *pos = cur, *end = cur + strlen(cur), *w;
        size_t len;
        if (!smt_word_next(&pos, end, SMT_WS_SPACE, &w, &len))
            break;
        /* the start of the next name token after this one (or the end) */
        char *next = copy + (pos - copy);
        const char *t;
        while (smt_word_next(&pos, end, SMT_WS_SPACE, &t, &len)) {
            if (memchr(t, '=', len)) {
                next = copy + (t - copy);
                break;
            }
            next = copy + (pos - copy);
        }
        char saved = *next;
        *next = '\0';
        rc = parse_weight(ini, cur, 0, "-weight-overwrite", err);
        *next = saved;
        cur = next;
    }
    free(copy);
    return rc;
}

size_t dec_ini_unknown(const dec_ini *ini, char *buf, size_t n)
{
    size_t count = 0, used = 0;
    if (n)
        buf[0] = '\0';
    for (size_t i = 0; i < ini->n_sections; i++) {
        if (ini->sections[i].known)
            continue;
        int w = snprintf(buf + used, used < n ? n - used : 0, "%s[%s]", count ? ", " : "",
                         ini->sections[i].name);
        if (w > 0 && used + (size_t)w < n)
            used += (size_t)w;
        count++;
    }
    return count;
}

static const dec_ini_section *find_section(const dec_ini *ini, const char *section)
{
    const char *canon = strcmp(section, "stack") == 0 ? "s" : section;
    for (size_t i = 0; i < ini->n_sections; i++)
        if (strcmp(ini->sections[i].name, canon) == 0)
            return &ini->sections[i];
    return NULL;
}

unsigned dec_ini_param_line(const dec_ini *ini, const char *section, size_t i)
{
    const dec_ini_section *s = find_section(ini, section);
    if (!s)
        return 0;
    return i < s->n ? s->lines[i] : s->line;
}

/* The one value of a single-value section: 0 absent, 1 found (*v, *line), or SMT_ERR_PARSE. */
static int single_value(const dec_ini *ini, const char *section, const char **v, unsigned *line,
                        smt_err *err)
{
    const dec_ini_section *s = find_section(ini, section);
    if (!s)
        return 0;
    if (s->n == 0)
        return smt_err_set(err, SMT_ERR_PARSE, "%s:%u: [%s] has no value", ini->path, s->line,
                           s->name);
    if (s->n > 1)
        return smt_err_set(err, SMT_ERR_PARSE, "%s:%u: [%s] has %zu values, expected one",
                           ini->path, s->lines[1], s->name, s->n);
    *v = s->values[0];
    *line = s->lines[0];
    return 1;
}

/* [relative-paths]: cwd-first (Moses's rule, the default) or ini (beside the ini only). */
static int read_relative_paths(dec_ini *ini, smt_err *err)
{
    const char *v = NULL;
    unsigned line = 0;
    int rc = single_value(ini, "relative-paths", &v, &line, err);
    if (rc <= 0)
        return rc;
    if (strcmp(v, "ini") && strcmp(v, "cwd-first")) {
        char fb[64];
        return smt_err_set(err, SMT_ERR_PARSE,
                           "%s:%u: [relative-paths] '%s' is neither cwd-first nor ini", ini->path,
                           line, frag(v, fb));
    }
    ini->beside_only = !strcmp(v, "ini");
    return 0;
}

int dec_ini_param_ll(const dec_ini *ini, const char *section, long long lo, long long hi,
                     long long *out, smt_err *err)
{
    const char *v = NULL;
    unsigned line = 0;
    int rc = single_value(ini, section, &v, &line, err);
    if (rc <= 0)
        return rc;
    char what[600];
    snprintf(what, sizeof what, "%s:%u: [%s]", ini->path, line, find_section(ini, section)->name);
    smt_err e2;
    if (smt_parse_ll_arg(what, v, lo, hi, out, &e2))
        return smt_err_set(err, SMT_ERR_PARSE, "%s", e2.msg);
    return 1;
}

int dec_ini_param_double(const dec_ini *ini, const char *section, double lo, double hi,
                         double *out, smt_err *err)
{
    const char *v = NULL;
    unsigned line = 0;
    int rc = single_value(ini, section, &v, &line, err);
    if (rc <= 0)
        return rc;
    char what[600];
    snprintf(what, sizeof what, "%s:%u: [%s]", ini->path, line, find_section(ini, section)->name);
    smt_err e2;
    if (smt_parse_double_arg(what, v, lo, hi, out, &e2))
        return smt_err_set(err, SMT_ERR_PARSE, "%s", e2.msg);
    return 1;
}

int dec_ini_param_bool(const dec_ini *ini, const char *section, int *out, smt_err *err)
{
    const dec_ini_section *s = find_section(ini, section);
    if (!s)
        return 0;
    if (s->n == 0) { /* Moses: a boolean parameter given without a value is true */
        *out = 1;
        return 1;
    }
    if (s->n > 1)
        return smt_err_set(err, SMT_ERR_PARSE, "%s:%u: [%s] has %zu values, expected one",
                           ini->path, s->lines[1], s->name, s->n);
    const char *v = s->values[0];
    if (!strcmp(v, "true") || !strcmp(v, "yes") || !strcmp(v, "1"))
        *out = 1;
    else if (!strcmp(v, "false") || !strcmp(v, "no") || !strcmp(v, "0"))
        *out = 0;
    else
        return smt_err_set(err, SMT_ERR_PARSE,
                           "%s:%u: [%s] '%.64s' is not a boolean (true, false, 1 or 0)",
                           ini->path, s->lines[0], s->name, v);
    return 1;
}

int dec_ini_feature_ll(const dec_ini *ini, const dec_ini_feature *f, const char *key, long long lo,
                       long long hi, long long *out, smt_err *err)
{
    const char *v = dec_ini_feature_arg(f, key);
    if (!v)
        return 0;
    char what[600];
    snprintf(what, sizeof what, "%s:%u: %s %s=", ini->path, f->line, f->name, key);
    smt_err e2;
    if (smt_parse_ll_arg(what, v, lo, hi, out, &e2))
        return smt_err_set(err, SMT_ERR_PARSE, "%s", e2.msg);
    return 1;
}

int dec_ini_check_sections(const dec_ini *ini, FILE *warn, smt_err *err)
{
    for (size_t i = 0; i < ini->n_sections; i++) {
        const dec_ini_section *s = &ini->sections[i];
        int cls = section_class_of(s->name);
        if (cls < 0)
            return smt_err_set(err, SMT_ERR_PARSE, "%s:%u: [%.64s] is not a Moses parameter",
                               ini->path, s->line, s->name);
        if (cls == CHANGES)
            return smt_err_set(err, SMT_ERR_UNSUPPORTED,
                               "%s:%u: [%s] is not implemented by this decoder and would change "
                               "the output",
                               ini->path, s->line, s->name);
        if (cls == NOEFFECT && warn)
            fprintf(warn, "warning: %s:%u: [%s] is ignored (it does not change the output)\n",
                    ini->path, s->line, s->name);
    }
    return 0;
}
