/* model.c — a decoder model from a moses.ini: features in Moses's score order, weights, the
 * tables and LMs (text or binary, told apart by their first bytes), and the search settings. */
#define _GNU_SOURCE
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "dec_ff.h"
#include "smt_lines.h"
#include "smt_num.h"
#include "smt_sniff.h"
#include "smt_words.h"
#include "smt_progress.h"

void dec_options_default(dec_options *opt)
{
    memset(opt, 0, sizeof *opt);
    opt->stack_size = -1;
    opt->pop_limit = -1;
    opt->distortion_limit = -1;
    opt->max_phrase_len = -1;
    opt->table_limit = -1;
    opt->beam_threshold = -1;
    opt->verbose = -1;
}

double dec_model_load_seconds(const dec_model *m) { return m->load_seconds; }

int dec_model_show_weights(const dec_model *m, FILE *out)
{
    for (unsigned f = 0; f < m->n_features; f++) { /* the n-best list's order */
        const dec_feature *ft = &m->features[f];
        if (!ft->tuneable) {
            fprintf(out, "%s UNTUNEABLE\n", ft->name);
            continue;
        }
        fprintf(out, "%s=", ft->name);
        for (unsigned k = 0; k < ft->n; k++)
            fprintf(out, " %.6f", (double)(float)m->weights[ft->offset + k]); /* Moses: fixed, 6 */
        fputc('\n', out);
    }
    return fflush(out) || ferror(out) ? SMT_ERR_IO : 0;
}

const char *dec_model_param(const dec_model *m, const char *section)
{
    return dec_ini_param(m->ini, section);
}

size_t dec_model_param_values(const dec_model *m, const char *section, char *const **values)
{
    return dec_ini_param_values(m->ini, section, values);
}

unsigned dec_model_param_line(const dec_model *m, const char *section, size_t i)
{
    return dec_ini_param_line(m->ini, section, i);
}

int dec_model_param_ll(const dec_model *m, const char *section, long long lo, long long hi,
                       long long *out, smt_err *err)
{
    return dec_ini_param_ll(m->ini, section, lo, hi, out, err);
}

char *dec_model_param_path(const dec_model *m, const char *section)
{
    const char *v = dec_ini_param(m->ini, section);
    return v ? dec_ini_resolve(m->ini, v) : NULL;
}

int dec_model_param_file(const dec_model *m, const char *section, FILE *warn, char **out,
                         smt_err *err)
{
    *out = NULL;
    const char *v = dec_ini_param(m->ini, section);
    if (!v)
        return 0;
    int rc = dec_ini_find(m->ini, v, dec_ini_param_line(m->ini, section, 0), warn, m->verbose,
                          out, err);
    return rc ? rc : 1;
}

int dec_model_param_bool(const dec_model *m, const char *section, int *out, smt_err *err)
{
    return dec_ini_param_bool(m->ini, section, out, err);
}

/* 1 when the file is a fastsmt binary (or, for an LM, a KenLM binary: glm queries it in place), 0
 * when text (plain or compressed), <0 when it cannot be read or is a KenLM binary where a phrase
 * table is expected. */
static int is_binary(const char *path, int lm, smt_err *err)
{
    int kind = smt_file_kind(path, NULL, err);
    if (kind == SMT_KIND_KENLM && !lm)
        return smt_err_set(err, SMT_ERR_UNSUPPORTED, "%s: a KenLM binary (a language model), not "
                           "a phrase table", path);
    return kind < 0 ? kind : kind == SMT_KIND_FASTSMT || kind == SMT_KIND_KENLM;
}

/* The feature types this decoder implements (dec_ff.h's table): each one's definition. */
typedef const dec_ff_def *(*def_fn)(void);
static const def_fn ff_defs[] = {
#define X(n, op, es, ex, pa, st) ff_##n##_def,
    DEC_FEATURES(X)
#undef X
};
#define N_DEFS (sizeof ff_defs / sizeof *ff_defs)

/* The definition of an ini type, NULL when no feature implements it. */
static const dec_ff_def *def_of(const char *type)
{
    for (size_t i = 0; i < N_DEFS; i++) {
        const dec_ff_def *d = ff_defs[i]();
        for (const char *const *t = d->types; *t; t++)
            if (!strcmp(*t, type))
                return d;
    }
    return NULL;
}

/* Every feature's keys (Moses's FeatureFunction); keys Moses knows that would change the output
 * and are not implemented are an error. */
static const dec_ff_key common_keys[] = {{"name", DEC_KEY_TEXT},   {"num-features", DEC_KEY_TEXT},
                                         {"tuneable", DEC_KEY_BOOL}, {"verbose", DEC_KEY_COUNT},
                                         {"filterable", DEC_KEY_BOOL}, {NULL, DEC_KEY_TEXT}};
static const char *const unsupported_keys[] = {"default-scores", "tuneable-components",
                                               "sparse-feature", "feature-name-overwrite", NULL};

static int in_list(const char *const *list, const char *s)
{
    for (; *list; list++)
        if (!strcmp(*list, s))
            return 1;
    return 0;
}

static const dec_ff_key *find_key(const dec_ff_key *keys, const char *name)
{
    for (; keys->name; keys++)
        if (!strcmp(keys->name, name))
            return keys;
    return NULL;
}

/* The key `name` of a feature defined by d: its own or every feature's. A key only another
 * feature reads is accepted, checked and ignored (Moses would refuse it; this decoder always took
 * it). NULL: no feature reads such a key (Moses refuses an unknown argument too). */
static const dec_ff_key *key_of(const dec_ff_def *d, const char *name)
{
    const dec_ff_key *k = find_key(d->keys, name);
    if (!k)
        k = find_key(common_keys, name);
    for (size_t i = 0; !k && i < N_DEFS; i++)
        k = find_key(ff_defs[i]()->keys, name);
    return k;
}

int dec_ff_bool(const char *v)
{
    if (!strcmp(v, "true") || !strcmp(v, "1"))
        return 1;
    if (!strcmp(v, "false") || !strcmp(v, "0"))
        return 0;
    return -1;
}

/* Every key of the features this decoder implements, checked by its kind (another type is refused
 * by name when the features are laid out, whatever its keys). */
static int check_keys(const dec_ini *ini, smt_err *err)
{
    for (size_t i = 0; i < ini->n_features; i++) {
        const dec_ini_feature *f = &ini->features[i];
        const dec_ff_def *d = def_of(f->type);
        if (!d)
            continue;
        for (size_t k = 0; k < f->n_args; k++) {
            const char *name = f->keys[k], *v = f->values[k];
            if (in_list(unsupported_keys, name))
                return smt_err_set(err, SMT_ERR_UNSUPPORTED,
                                   "%s:%u: key '%s' of %s is not implemented by this decoder and "
                                   "would change the output",
                                   ini->path, f->line, name, f->name);
            const dec_ff_key *key = key_of(d, name);
            if (!key)
                return smt_err_set(err, SMT_ERR_PARSE,
                                   "%s:%u: %s has no key '%.64s' (a misspelling? an unknown key "
                                   "would change what the line means)",
                                   ini->path, f->line, f->name, name);
            long long x; /* keys are unique (the ini reader checks): the arg is this value */
            int rc = 0;
            if (key->kind == DEC_KEY_FACTOR) {
                rc = dec_ini_feature_ll(ini, f, name, 0, 1000, &x, err);
                if (rc > 0 && x != 0)
                    return smt_err_set(err, SMT_ERR_UNSUPPORTED,
                                       "%s:%u: %s %s=%lld: only factor 0 (plain words) is "
                                       "supported",
                                       ini->path, f->line, f->name, name, x);
            } else if (key->kind == DEC_KEY_COUNT) {
                rc = dec_ini_feature_ll(ini, f, name, 0, 1000000, &x, err);
            } else if (key->kind == DEC_KEY_BOOL && dec_ff_bool(v) < 0) {
                return smt_err_set(err, SMT_ERR_PARSE,
                                   "%s:%u: %s %s='%.64s' is not a boolean (true, false, 1 or 0)",
                                   ini->path, f->line, f->name, name, v);
            }
            if (rc < 0)
                return rc;
        }
    }
    return 0;
}

int dec_ff_num_features(const dec_ff_line *l, unsigned dflt, unsigned *n, smt_err *err)
{
    long long v;
    int rc = dec_ini_feature_ll(l->ini, l->f, "num-features", 1, 64, &v, err);
    if (rc < 0)
        return rc;
    *n = rc ? (unsigned)v : dflt;
    return 0;
}

int dec_ff_add(dec_model *m, const dec_ff_line *l, unsigned n, int tuneable, smt_err *err)
{
    if (smt_grow(&m->features, &m->cap_features, m->n_features + 1, sizeof *m->features, 8))
        return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
    dec_feature *nf = &m->features[m->n_features];
    if (!(nf->name = strdup(l->f->name)))
        return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
    nf->offset = m->n_scores;
    nf->n = n;
    const char *t = dec_ini_feature_arg(l->f, "tuneable");
    nf->tuneable = t ? dec_ff_bool(t) == 1 : tuneable;
    m->n_features++;
    m->n_scores += n;
    return 0;
}

int dec_ff_add_single(dec_model *m, const dec_ff_line *l, int *has, unsigned *off, int tuneable,
                      smt_err *err)
{
    unsigned n;
    int rc = dec_ff_num_features(l, 1, &n, err);
    if (rc)
        return rc;
    if (n != 1)
        return smt_err_set(err, SMT_ERR_PARSE, "%s:%u: %s has 1 score, not %u", l->ini->path,
                           l->f->line, l->f->name, n);
    *has = 1;
    *off = m->n_scores;
    return dec_ff_add(m, l, 1, tuneable, err);
}

/* A feature type this decoder does not implement, named (Moses's binarized tables: what they are
 * and what to give instead). */
static int unsupported_type(const dec_ini *ini, const dec_ini_feature *f, smt_err *err)
{
    static const struct {
        const char *type, *what;
    } moses_bin[] = {
        {"PhraseDictionaryCompact", "Moses's CompactPT (.minphr)"},
        {"PhraseDictionaryOnDisk", "Moses's OnDisk table (a folder)"},
        {"PhraseDictionaryBinary", "Moses's binary table (.binphr)"},
        {"PhraseDictionaryALSuffixArray", "a Moses suffix-array table"},
        {"Mmsapt", "a Moses suffix-array table"},
    };
    for (size_t k = 0; k < sizeof moses_bin / sizeof *moses_bin; k++)
        if (!strcmp(f->type, moses_bin[k].type))
            return smt_err_set(err, SMT_ERR_UNSUPPORTED,
                               "%s:%u: %s is %s, which fastsmt cannot read: give the "
                               "text phrase table (PhraseDictionaryMemory) or binarize "
                               "it with fastsmt-binarize", ini->path, f->line,
                               f->type, moses_bin[k].what);
    return smt_err_set(err, SMT_ERR_UNSUPPORTED,
                       "%s:%u: feature type %.64s is not supported by this decoder",
                       ini->path, f->line, f->type);
}

/* Lays out the score vector: stateful features first, then stateless, each in ini order (the
 * order Moses prints them in n-best lists); each feature reads its line (its configure). */
static int layout(dec_model *m, const dec_ini *ini, const dec_ini_feature **pt_f,
                  const dec_ini_feature **lr_f, const dec_ini_feature **lm_f, smt_err *err)
{
    size_t n_pt = 0;
    for (size_t i = 0; i < ini->n_features; i++)
        n_pt += def_of(ini->features[i].type) == ff_tm_def();
    if (!(m->tables = calloc(n_pt ? n_pt : 1, sizeof *m->tables)))
        return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
    /* [lmodel-oov-feature] in a new-format ini: Moses's global switch of the LM OOV feature
     * (StaticData's lmodel-oov-feature), for every LM whose line has no oov-feature= */
    dec_ff_line l = {ini, NULL, pt_f, lr_f, lm_f, 0};
    if (dec_ini_param_bool(ini, "lmodel-oov-feature", &l.all_oov, err) < 0)
        return SMT_ERR_PARSE;
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < ini->n_features; i++) {
            const dec_ini_feature *f = &ini->features[i];
            const dec_ff_def *d = def_of(f->type);
            if ((d && d->stateful) != (pass == 0))
                continue;
            if (!d)
                return unsupported_type(ini, f, err);
            l.f = f;
            int rc = d->configure(m, &l, err);
            if (rc)
                return rc;
        }
    }
    if (!m->n_tables)
        return smt_err_set(err, SMT_ERR_PARSE, "%s: no phrase table feature", ini->path);
    return 0;
}

static int load_weights(dec_model *m, const dec_ini *ini, FILE *warn, smt_err *err)
{
    m->weights = calloc(m->n_scores + 1, sizeof(double));
    if (!m->weights)
        return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
    for (unsigned i = 0; i < m->n_features; i++) {
        const dec_feature *f = &m->features[i];
        const dec_ini_weight *w = dec_ini_weight_named(ini, f->name);
        if (!w && !f->tuneable) { /* Moses's default for an untuneable feature (an ini written
                                   * by mert-moses.pl lists the tuneable ones only) */
            for (unsigned k = 0; k < f->n; k++)
                m->weights[f->offset + k] = 1.0;
            continue;
        }
        if (!w)
            return smt_err_set(err, SMT_ERR_PARSE, "%s: no weights for feature %s", ini->path,
                               f->name);
        if (w->n != f->n && w->line == 0) /* given by -weight-overwrite */
            return smt_err_set(err, SMT_ERR_PARSE, "-weight-overwrite: %s has %u scores but %zu "
                               "weights", f->name, f->n, w->n);
        if (w->n != f->n)
            return smt_err_set(err, SMT_ERR_PARSE, "%s:%u: %s has %u scores but %zu weights",
                               ini->path, w->line, f->name, f->n, w->n);
        for (unsigned k = 0; k < f->n; k++)
            m->weights[f->offset + k] = w->values[k];
    }
    for (size_t i = 0; i < ini->n_weights; i++) {
        unsigned k = 0;
        while (k < m->n_features && strcmp(m->features[k].name, ini->weights[i].name))
            k++;
        if (k == m->n_features && ini->weights[i].line == 0) /* a typo would change nothing */
            return smt_err_set(err, SMT_ERR_PARSE,
                               "-weight-overwrite: '%.64s' is not a feature of %s",
                               ini->weights[i].name, ini->path);
        if (k == m->n_features)
            fprintf(warn, "warning: %s:%u: weights for '%.64s', which is not a feature\n",
                    ini->path, ini->weights[i].line, ini->weights[i].name);
    }
    for (unsigned l = 0; l < m->n_lms; l++) {
        m->w_lm[l] = (float)m->weights[m->off_lm[l]];
        m->w_lm_oov[l] = m->lm_oov[l] ? (float)m->weights[m->off_lm[l] + 1] : 0;
    }
    m->w_dist = m->has_dist ? (float)m->weights[m->off_dist] : 0;
    m->w_uwp = m->has_uwp ? (float)m->weights[m->off_uwp] : 0;
    if (m->has_reo)
        for (unsigned k = 0; k < m->lr_types * (m->lr_dir == DEC_LR_BIDI ? 2u : 1u); k++)
            m->w_reo[k] = (float)m->weights[m->off_reo + k];
    return 0;
}

/* Moses's weight file (-weight-file FILE, [weight-file]): one "name value" a line, a line starting
 * with '#' a comment (FVector::load). Moses loads it as sparse feature weights only (the dense
 * features' weights are indexed by position and come from [weight]; its help says "do not put
 * weights for core features in here"), added to the ini's. No feature of this decoder has sparse
 * scores, so every weight there is refused by name: a dense feature's name (Moses would not change
 * that feature's weight), or a sparse feature's (not implemented). what names the file in messages
 * (the ini's line for [weight-file]). */
static int read_weight_file(dec_model *m, const char *path, const char *what, smt_err *err)
{
    smt_lines *r;
    int rc = smt_lines_open(&r, path, 0, err);
    if (rc)
        return rc;
    char *line;
    size_t len;
    while ((rc = smt_lines_next(r, &line, &len, err)) == 1) {
        unsigned long long ln = (unsigned long long)smt_lines_lineno(r);
        if ((len && line[0] == '#') || smt_words_blank(line, len, SMT_WS_SPACE))
            continue;
        const char *pos = line, *end = line + len, *name, *val, *extra;
        size_t nl, vl, xl;
        double v;
        smt_word_next(&pos, end, SMT_WS_SPACE, &name, &nl);
        if (!smt_word_next(&pos, end, SMT_WS_SPACE, &val, &vl) ||
            smt_word_next(&pos, end, SMT_WS_SPACE, &extra, &xl) ||
            smt_parse_double(val, vl, -DBL_MAX, DBL_MAX, 0, &v)) {
            rc = smt_err_set(err, SMT_ERR_PARSE,
                             "%s:%llu: expected 'name value' (a feature name and a finite "
                             "number)%s", path, ln, what);
            break;
        }
        unsigned k = 0;
        while (k < m->n_features &&
               !(strlen(m->features[k].name) == nl && !memcmp(m->features[k].name, name, nl)))
            k++;
        if (k < m->n_features)
            rc = smt_err_set(err, SMT_ERR_UNSUPPORTED,
                             "%s:%llu: %s is a dense feature: Moses reads a weight file as sparse "
                             "feature weights only and would not change its weight; give it in "
                             "[weight] or -weight-overwrite%s",
                             path, ln, m->features[k].name, what);
        else
            rc = smt_err_set(err, SMT_ERR_UNSUPPORTED,
                             "%s:%llu: sparse feature weight '%.*s': sparse features are not "
                             "supported%s",
                             path, ln, (int)(nl > 64 ? 64 : nl), name, what);
        break;
    }
    smt_lines_close(r);
    return rc < 0 ? rc : 0;
}

/* The weight file of the flag, else the ini's [weight-file] (found as the ini's other files). */
static int weight_file(dec_model *m, const dec_options *opt, FILE *warn, smt_err *err)
{
    if (opt->weight_file)
        return read_weight_file(m, opt->weight_file, " (-weight-file)", err);
    char *const *v;
    size_t n = dec_ini_param_values(m->ini, "weight-file", &v);
    if (!n)
        return 0;
    unsigned line = dec_ini_param_line(m->ini, "weight-file", 0);
    if (n != 1)
        return smt_err_set(err, SMT_ERR_PARSE, "%s:%u: [weight-file] takes one file, not %zu",
                           m->ini->path, line, n);
    char *path = NULL, what[600];
    int rc = dec_ini_find(m->ini, v[0], line, warn, m->verbose, &path, err);
    if (rc)
        return rc;
    snprintf(what, sizeof what, " ([weight-file] of %s:%u)", m->ini->path, line);
    rc = read_weight_file(m, path, what, err);
    free(path);
    return rc;
}

/* An SRILM or IRSTLM feature naming a text file: read as ARPA through glm when it is one (a note
 * on warn, once per model: *warned), else an error naming the type. Returns 0 or the error. */
static int srilm_irstlm_arpa(const dec_ini *ini, const dec_ini_feature *f, const char *path,
                             FILE *warn, int *warned, smt_err *err)
{
    smt_lines *r;
    int rc = smt_lines_open(&r, path, 0, err), arpa = 0;
    if (rc)
        return rc;
    char *s;
    size_t len;
    while ((rc = smt_lines_next(r, &s, &len, err)) == 1) {
        const char *b = s, *e = s + len;
        smt_trim(&b, &e, SMT_WS_SPACE);
        if (b == e)
            continue;
        arpa = e - b == 6 && !memcmp(b, "\\data\\", 6);
        break;
    }
    smt_lines_close(r);
    if (rc < 0)
        return rc;
    if (!arpa)
        return smt_err_set(err, SMT_ERR_UNSUPPORTED,
                           "%s:%u: %s: %s is not an ARPA file (no \\data\\ header): an %s "
                           "binary LM cannot be read; give the %s feature the ARPA file",
                           ini->path, f->line, f->name, path, f->type, f->type);
    if (!*warned && warn)
        fprintf(warn, "warning: %s:%u: %s is a %s feature naming an ARPA file: read as ARPA (as "
                      "KENLM would)\n", ini->path, f->line, f->name, f->type);
    *warned = 1;
    return 0;
}

/* Opens phrase table k (pt_f) with the reordering scores of lr_f (NULL: none). Every table
 * carries the reordering model's scores of its own pairs: a text table is binarized with the
 * reordering table integrated (probingpt looks each pair up in it, so an option of any table
 * gets the scores Moses's LexicalReordering finds for its (source, target) pair, and none for a
 * pair the reordering table lacks); a binary table must have them integrated already. */
static int open_table(dec_model *m, unsigned k, const dec_ini_feature *pt_f,
                      const dec_ini_feature *lr_f, const char *reo_path, FILE *warn, int verify,
                      const char *cache, smt_err *err)
{
    const dec_ini *ini = m->ini;
    dec_table *tb = &m->tables[k];
    const char *p = dec_ini_feature_arg(pt_f, "path");
    if (!p)
        return smt_err_set(err, SMT_ERR_PARSE, "%s:%u: %s has no path", ini->path, pt_f->line,
                           pt_f->name);
    char *pt_path = NULL;
    int rc = dec_ini_find(ini, p, pt_f->line, warn, m->verbose, &pt_path, err);
    if (rc)
        return rc;
    struct stat pst;
    if (stat(pt_path, &pst) == 0 && S_ISDIR(pst.st_mode)) {
        rc = smt_err_set(err, SMT_ERR_UNSUPPORTED,
                         "%s:%u: %s is a folder: Moses2's ProbingPT (CreateProbingPT) writes one, "
                         "fastsmt reads its own .ppt file: binarize the text phrase table with "
                         "fastsmt-binarize", ini->path, pt_f->line, pt_path);
        goto out;
    }
    int bin = is_binary(pt_path, 0, err);
    if (bin < 0) {
        rc = bin;
        goto out;
    }
    unsigned n_tm = tb->n_scores, n_reo = 0;
    if (lr_f) {
        n_reo = m->lr_types * (m->lr_dir == DEC_LR_BIDI ? 2u : 1u);
        if (!reo_path && !bin) {
            rc = smt_err_set(err, SMT_ERR_PARSE,
                             "%s:%u: %s has no path (only a binary phrase table integrates the "
                             "reordering scores; %s at line %u is a text table)", ini->path,
                             lr_f->line, lr_f->name, pt_f->name, pt_f->line);
            goto out;
        }
        if (reo_path) {
            int rb = is_binary(reo_path, 0, err);
            if (rb < 0) {
                rc = rb;
                goto out;
            }
            if (bin && !rb) {
                rc = smt_err_set(err, SMT_ERR_UNSUPPORTED,
                                 "%s:%u: a binary phrase table needs its reordering scores "
                                 "integrated (%s at line %u is binary, the reordering table is "
                                 "text): run fastsmt-binarize on the text tables", ini->path,
                                 lr_f->line, pt_f->name, pt_f->line);
                goto out;
            }
            if (!bin && rb) {
                rc = smt_err_set(err, SMT_ERR_UNSUPPORTED,
                                 "%s:%u: %s names a binary file, but %s at line %u is a text "
                                 "phrase table: give the text reordering table (each text table "
                                 "is binarized with it), or binarize the model with "
                                 "fastsmt-binarize", ini->path, lr_f->line, lr_f->name,
                                 pt_f->name, pt_f->line);
                goto out;
            }
        }
    }
    if (bin)
        rc = dec_pt_ppt_open(&tb->pt, pt_path, verify, err);
    else
        rc = dec_pt_text_open(&tb->pt, pt_path, lr_f ? reo_path : NULL, verify, cache, err);
    if (rc)
        goto out;
    /* A text table disagreeing with the ini: the ini line is what is wrong (a binary's: the file) */
    if (tb->pt->n_scores != n_tm) {
        rc = bin ? smt_err_set(err, SMT_ERR_FORMAT,
                               "%s: %u scores per phrase, the moses.ini says %u", pt_path,
                               tb->pt->n_scores, n_tm)
                 : smt_err_set(err, SMT_ERR_PARSE,
                               "%s:%u: %s num-features=%u, but %s has %u scores per phrase",
                               ini->path, pt_f->line, pt_f->name, n_tm, pt_path,
                               tb->pt->n_scores);
        goto out;
    }
    if (lr_f && tb->pt->n_reo != n_reo) {
        rc = bin ? smt_err_set(err, SMT_ERR_FORMAT,
                               "%s: %u reordering scores per phrase, the moses.ini says %u",
                               pt_path, tb->pt->n_reo, n_reo)
                 : smt_err_set(err, SMT_ERR_PARSE,
                               "%s:%u: %s has %u scores, but %s has %u per phrase", ini->path,
                               lr_f->line, lr_f->name, n_reo, reo_path, tb->pt->n_reo);
        goto out;
    }
out:
    free(pt_path);
    return rc;
}

static int load_tables(dec_model *m, const dec_ini_feature *const *pt_f,
                       const dec_ini_feature *lr_f, const dec_ini_feature *const *lm_f,
                       FILE *warn, int verify, const char *cache, smt_err *err)
{
    const dec_ini *ini = m->ini;
    int warned = 0; /* the SRILM/IRSTLM note, once */
    char *reo_path = NULL;
    int rc = 0;
    const char *rp = lr_f ? dec_ini_feature_arg(lr_f, "path") : NULL;
    if (rp && (rc = dec_ini_find(ini, rp, lr_f->line, warn, m->verbose, &reo_path, err)))
        goto out;
    for (unsigned k = 0; k < m->n_tables; k++)
        if ((rc = open_table(m, k, pt_f[k], lr_f, reo_path, warn, verify, cache, err)))
            goto out;
    for (unsigned l = 0; l < m->n_lms; l++) {
        const char *lp = dec_ini_feature_arg(lm_f[l], "path");
        if (!lp) {
            rc = smt_err_set(err, SMT_ERR_PARSE, "%s:%u: %s has no path", ini->path,
                             lm_f[l]->line, lm_f[l]->name);
            goto out;
        }
        char *lm_path = NULL;
        if ((rc = dec_ini_find(ini, lp, lm_f[l]->line, warn, m->verbose, &lm_path, err)))
            goto out;
        /* glm reads both: a .glm binary is mapped, an ARPA file (any compression) binarized */
        int lb = is_binary(lm_path, 1, err);
        if (lb == 0 && strcmp(lm_f[l]->type, "KENLM"))
            lb = srilm_irstlm_arpa(ini, lm_f[l], lm_path, warn, &warned, err);
        rc = lb < 0 ? lb : dec_lm_open(&m->lms[l], lm_path, verify, cache, err);
        long long o;
        int has_o = rc ? 0 : dec_ini_feature_ll(ini, lm_f[l], "order", 1, 255, &o, err);
        if (has_o < 0)
            rc = has_o;
        else if (has_o && (unsigned)o != glm_order(m->lms[l]))
            fprintf(warn, "warning: %s: order %u, the moses.ini says %lld\n", lm_path,
                    glm_order(m->lms[l]), o);
        free(lm_path);
        if (rc)
            goto out;
    }
out:
    free(reo_path);
    return rc;
}

/* The model's target vocabulary (the first table's, then the other tables' new words), each
 * table's map into it, the LM id of every model target word, and the tables' caches. */
static int build_maps(dec_model *m, smt_err *err)
{
    const smt_vocab *v0 = m->tables[0].pt->tgt_vocab;
    m->n_tgt0 = m->n_tgt = v0->n;
    for (unsigned t = 1; t < m->n_tables; t++) {
        const smt_vocab *v = m->tables[t].pt->tgt_vocab;
        if (!m->tgt_extra_b && smt_vocab_builder_create(&m->tgt_extra_b, err))
            return SMT_ERR_NOMEM;
        if (!(m->tables[t].to_model = malloc(((size_t)v->n + 1) * sizeof(uint32_t))))
            return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
        for (uint32_t i = 0; i < v->n; i++) {
            size_t len;
            const char *w = smt_vocab_word(v, i, &len);
            uint32_t id = smt_vocab_find(v0, w, len);
            if (id == SMT_VOCAB_NONE) {
                int rc = smt_vocab_builder_add(m->tgt_extra_b, w, len, &id, err);
                if (rc)
                    return rc;
                if ((uint64_t)id + m->n_tgt0 >= DEC_PASS_BIT)
                    return smt_err_set(err, SMT_ERR_LIMIT, "more than %u target words in the "
                                       "phrase tables", DEC_PASS_BIT);
                id += m->n_tgt0;
            }
            m->tables[t].to_model[i] = id;
        }
    }
    if (m->tgt_extra_b) {
        m->tgt_extra = smt_vocab_builder_view(m->tgt_extra_b);
        m->n_tgt = m->n_tgt0 + m->tgt_extra.n;
    }
    uint32_t n = m->n_tgt;
    m->tgt2lm = calloc(DEC_MAX_LMS, sizeof(uint32_t *));
    if (!m->tgt2lm)
        return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
    for (unsigned l = 0; l < m->n_lms; l++) {
        if (!(m->tgt2lm[l] = malloc((n + 1) * sizeof(uint32_t))))
            return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
        for (uint32_t i = 0; i < n; i++) {
            size_t len;
            const char *w = dec_word(m, i, NULL, NULL, &len);
            m->tgt2lm[l][i] = glm_index(m->lms[l], w, len);
        }
        m->lm_eos[l] = glm_eos(m->lms[l]);
    }
    for (unsigned t = 0; t < m->n_tables; t++) {
        dec_table *tb = &m->tables[t];
        uint64_t size = 1024;
        while (size < tb->pt->n_sources * 2)
            size <<= 1;
        tb->cache = calloc(size, sizeof *tb->cache);
        if (!tb->cache)
            return smt_err_set(err, SMT_ERR_NOMEM, "out of memory for the phrase cache");
        tb->cache_mask = size - 1;
        atomic_init(&tb->n_misses, 0);
    }
    return 0;
}

/* An int setting: the option when opt_set, else the ini's section, else dflt; either value
 * range-checked against [lo, hi] (the option's message names the flag, -section). */
static int setting(const dec_ini *ini, const char *section, int opt_set, int opt_value, int lo,
                   int hi, int dflt, int *out, smt_err *err)
{
    if (opt_set) {
        if (opt_value < lo || opt_value > hi)
            return smt_err_set(err, SMT_ERR_ARG, "-%s %d is out of range [%d, %d]", section,
                               opt_value, lo, hi);
        *out = opt_value;
        return 0;
    }
    long long v;
    int rc = dec_ini_param_ll(ini, section, lo, hi, &v, err);
    if (rc < 0)
        return rc;
    *out = rc ? (int)v : dflt;
    return 0;
}

/* The step of a [mapping] line (value, its nt words tok) appended to m's decoding paths. */
static int mapping_step(dec_model *m, const char *value, unsigned line, char *const *tok,
                        size_t nt, smt_err *err)
{
    const dec_ini *ini = m->ini;
    const char *path_s = "0", *type = NULL, *idx_s = NULL;
    if (nt == 3)
        path_s = tok[0], type = tok[1], idx_s = tok[2];
    else if (nt == 2 && (!strcmp(tok[0], "T") || !strcmp(tok[0], "G")))
        type = tok[0], idx_s = tok[1];
    else if (nt == 2)
        return smt_err_set(err, SMT_ERR_UNSUPPORTED,
                           "%s:%u: [mapping] '%.64s': a step named by its feature (Moses's "
                           "LoadDecodeGraphsNew) is not supported: write 'PATH T INDEX' (the "
                           "phrase tables numbered from 0 in [feature] order)",
                           ini->path, line, value);
    else
        return smt_err_set(err, SMT_ERR_PARSE,
                           "%s:%u: [mapping] '%.64s': expected 'PATH T INDEX' or 'T INDEX'",
                           ini->path, line, value);
    if (!strcmp(type, "G"))
        return smt_err_set(err, SMT_ERR_UNSUPPORTED,
                           "%s:%u: [mapping] '%.64s': generation steps (factored models) are "
                           "not supported", ini->path, line, value);
    if (strcmp(type, "T"))
        return smt_err_set(err, SMT_ERR_PARSE,
                           "%s:%u: [mapping] '%.64s': step type '%.16s' is neither T "
                           "(translation) nor G (generation)", ini->path, line, value, type);
    char what[600];
    long long pv, kv;
    smt_err e2;
    snprintf(what, sizeof what, "%s:%u: [mapping] decoding path", ini->path, line);
    if (smt_parse_ll_arg(what, path_s, 0, DEC_MAX_TABLES, &pv, &e2))
        return smt_err_set(err, SMT_ERR_PARSE, "%s", e2.msg);
    snprintf(what, sizeof what, "%s:%u: [mapping] phrase table index", ini->path, line);
    if (smt_parse_ll_arg(what, idx_s, 0, DEC_MAX_TABLES, &kv, &e2))
        return smt_err_set(err, SMT_ERR_PARSE, "%s", e2.msg);
    if (pv == (long long)m->n_paths - 1 && m->n_paths)
        return smt_err_set(err, SMT_ERR_UNSUPPORTED,
                           "%s:%u: [mapping] '%.64s': a second step in decoding path %lld "
                           "(a factored model joining several tables) is not supported; "
                           "alternative paths ('0 T 0', '1 T 1') are",
                           ini->path, line, value, pv);
    if (pv != (long long)m->n_paths)
        return smt_err_set(err, SMT_ERR_PARSE,
                           "%s:%u: [mapping] '%.64s': decoding path %lld after path %d (paths "
                           "are numbered 0, 1, ... in order)",
                           ini->path, line, value, pv, (int)m->n_paths - 1);
    if (kv >= (long long)m->n_tables)
        return smt_err_set(err, SMT_ERR_PARSE,
                           "%s:%u: [mapping] '%.64s': there is no phrase table %lld (the ini "
                           "has %u, numbered from 0 in [feature] order)",
                           ini->path, line, value, kv, m->n_tables);
    m->paths[m->n_paths++].table = (unsigned)kv;
    return 0;
}

/* One [mapping] line (value, at ini line `line`) of the decoding paths: its words are split as the
 * ini's lines are (smt_words' SMT_WS_SPACE; Moses splits on space and tab, which are among
 * them). */
static int mapping_line(dec_model *m, const char *value, unsigned line, smt_err *err)
{
    char *copy = strdup(value), *tok[4];
    if (!copy)
        return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
    size_t nt = 0, wl;
    const char *pos = copy, *end = copy + strlen(copy), *w;
    while (smt_word_next(&pos, end, SMT_WS_SPACE, &w, &wl)) {
        if (nt < 4) {
            tok[nt++] = copy + (w - copy);
            copy[w - copy + (ptrdiff_t)wl] = '\0'; /* NUL separates words too: pos goes on */
        } else {
            nt = 5;
        }
    }
    int rc = mapping_step(m, value, line, tok, nt, err);
    free(copy);
    return rc;
}

/* The decoding paths, as Moses's StaticData::LoadDecodeGraphs reads [mapping]: "P T K" (path P,
 * translation step over phrase table K, the tables numbered in ini order) or "T K" (path 0); no
 * [mapping] is "0 T 0". A path starts at the previous one or the next; each path here is one
 * translation step: two steps in one path (a factored join) and generation steps ("G") are
 * refused by name. [decoding-graph-backoff]: one value per path (Moses reads them in order; the
 * first path's is never used), a number of words (translation_options.c says what it does). */
static int decoding_paths(dec_model *m, const dec_ini_feature *const *pt_f, FILE *warn,
                          smt_err *err)
{
    const dec_ini *ini = m->ini;
    char *const *mv;
    size_t nmv = dec_ini_param_values(ini, "mapping", &mv);
    if (!(m->paths = calloc(nmv ? nmv : 1, sizeof *m->paths)))
        return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
    m->n_paths = nmv ? 0 : 1; /* no [mapping]: "0 T 0" */
    for (size_t i = 0; i < nmv; i++) {
        int rc = mapping_line(m, mv[i], dec_ini_param_line(ini, "mapping", i), err);
        if (rc)
            return rc;
    }
    char *const *bv;
    size_t nbv = dec_ini_param_values(ini, "decoding-graph-backoff", &bv);
    for (size_t i = 0; i < nbv; i++) {
        unsigned line = dec_ini_param_line(ini, "decoding-graph-backoff", i);
        if (i >= m->n_paths)
            return smt_err_set(err, SMT_ERR_PARSE,
                               "%s:%u: [decoding-graph-backoff] has %zu values for %u decoding "
                               "path%s", ini->path, line, nbv, m->n_paths,
                               m->n_paths == 1 ? "" : "s");
        char what[600];
        long long b;
        smt_err e2;
        snprintf(what, sizeof what, "%s:%u: [decoding-graph-backoff]", ini->path, line);
        if (smt_parse_ll_arg(what, bv[i], 0, DEC_MAX_SENTENCE, &b, &e2))
            return smt_err_set(err, SMT_ERR_PARSE, "%s", e2.msg);
        m->paths[i].backoff = (unsigned)b;
    }
    for (unsigned k = 0; k < m->n_tables; k++) { /* loaded and scored 0, as Moses does */
        unsigned g = 0;
        while (g < m->n_paths && m->paths[g].table != k)
            g++;
        if (g == m->n_paths && warn)
            fprintf(warn, "warning: %s:%u: %s is in no decoding path ([mapping]): its scores are 0 "
                          "in every translation\n", ini->path, pt_f[k]->line, pt_f[k]->name);
    }
    return 0;
}

/* The search settings and output options: flags (opt) first, then the ini, then the defaults; all
 * numbers strict and range-checked (docs/decoder.md lists the ranges). */
static int search_settings(dec_model *m, const dec_options *opt,
                           const dec_ini_feature *const *pt_f, FILE *warn, smt_err *err)
{
    const dec_ini *ini = m->ini;
    int rc;
    if ((rc = setting(ini, "s", opt->stack_size != -1, opt->stack_size, 1, DEC_MAX_STACK, 200,
                      &m->stack_size, err)) ||
        (rc = setting(ini, "cube-pruning-pop-limit", opt->pop_limit != -1, opt->pop_limit, 1,
                      DEC_MAX_POP_LIMIT, 1000, &m->pop_limit, err)) ||
        (rc = setting(ini, "distortion-limit", opt->distortion_limit_set, opt->distortion_limit,
                      -1, DEC_MAX_SENTENCE, -1, &m->distortion_limit, err)) ||
        (rc = setting(ini, "max-phrase-length", opt->max_phrase_len != -1, opt->max_phrase_len,
                      1, DEC_MAX_SENTENCE, 20, &m->max_phrase_len, err)))
        return rc;
    /* each table's limit: the flag, the table's table-limit=, the ini's [ttable-limit], 20 */
    for (unsigned k = 0; k < m->n_tables; k++) {
        long long tl;
        int has_tl = dec_ini_feature_ll(ini, pt_f[k], "table-limit", 0, DEC_MAX_TABLE_LIMIT, &tl,
                                        err);
        if (has_tl < 0)
            return has_tl;
        if ((rc = setting(ini, "ttable-limit", opt->table_limit != -1 || has_tl,
                          opt->table_limit != -1 ? opt->table_limit : (int)tl, 0,
                          DEC_MAX_TABLE_LIMIT, 20, &m->tables[k].table_limit, err)))
            return rc;
    }
    double b = 0.00001;
    if (!(opt->beam_threshold < 0)) { /* set (NaN included, refused below) */
        if (!(opt->beam_threshold >= 0 && opt->beam_threshold <= 1))
            return smt_err_set(err, SMT_ERR_ARG, "beam threshold %g is out of range [0, 1]",
                               opt->beam_threshold);
        b = opt->beam_threshold;
    } else if ((rc = dec_ini_param_double(ini, "beam-threshold", 0, 1, &b, err)) < 0) {
        return rc;
    }
    m->beam_width = b > 0 ? (float)log(b) : -INFINITY;
    /* Moses's [early-distortion-cost] (-early-distortion-cost): a boolean section */
    m->early_distortion = opt->early_distortion_cost != 0;
    if (!m->early_distortion &&
        (rc = dec_ini_param_bool(ini, "early-distortion-cost", &m->early_distortion, err)) < 0)
        return rc;
    int it = 0, sa = 1;
    if ((rc = setting(ini, "inputtype", 0, 0, 0, 3, 0, &it, err)) ||
        (rc = setting(ini, "search-algorithm", 0, 0, 0, 9, 1, &sa, err)))
        return rc;
    if (it != 0)
        return smt_err_set(err, SMT_ERR_UNSUPPORTED,
                           "%s:%u: [inputtype] %d: only plain text (0) is read", ini->path,
                           dec_ini_param_line(ini, "inputtype", 0), it);
    if (sa != 1)
        return smt_err_set(err, SMT_ERR_UNSUPPORTED,
                           "%s:%u: [search-algorithm] %d: only cube pruning (1) is implemented",
                           ini->path, dec_ini_param_line(ini, "search-algorithm", 0), sa);
    /* the output sections are dec_run_options' (dec_run_options_resolve reads them); an ini is
     * still checked whole here, so that a malformed one fails at load */
    static const char *const output_sections[] = {"report-segmentation",
                                                  "include-segmentation-in-n-best",
                                                  "print-alignment-info",
                                                  "print-alignment-info-in-n-best",
                                                  "mark-unknown"};
    for (size_t i = 0; i < sizeof output_sections / sizeof *output_sections; i++) {
        int v;
        if ((rc = dec_ini_param_bool(ini, output_sections[i], &v, err)) < 0)
            return rc;
    }
    if ((rc = decoding_paths(m, pt_f, warn, err)))
        return rc;
    char *const *mv;
    size_t nmv;
    nmv = dec_ini_param_values(ini, "input-factors", &mv);
    for (size_t i = 0; i < nmv; i++)
        if (strcmp(mv[i], "0"))
            return smt_err_set(err, SMT_ERR_UNSUPPORTED,
                               "%s:%u: [input-factors] '%.64s': only factor 0 (plain words) is "
                               "read",
                               ini->path, dec_ini_param_line(ini, "input-factors", i), mv[i]);
    return 0;
}

/* Moses's -feature-overwrite (each line of flags) or the ini's [feature-overwrite] values. */
static int feature_overwrite(dec_ini *ini, const char *flags, smt_err *err)
{
    if (flags) { /* its non-empty lines */
        int rc = 0;
        for (const char *l = flags; *l && !rc;) {
            const char *nl = strchr(l, '\n');
            size_t n = nl ? (size_t)(nl - l) : strlen(l);
            if (n) {
                char *spec = strndup(l, n);
                rc = spec ? dec_ini_overwrite_feature(ini, spec, "-feature-overwrite", err)
                          : smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
                free(spec);
            }
            l += n + (nl != NULL);
        }
        return rc;
    }
    char *const *v;
    size_t n = dec_ini_param_values(ini, "feature-overwrite", &v);
    for (size_t i = 0; i < n; i++) {
        char what[600];
        snprintf(what, sizeof what, "%s:%u: [feature-overwrite]", ini->path,
                 dec_ini_param_line(ini, "feature-overwrite", i));
        int rc = dec_ini_overwrite_feature(ini, v[i], what, err);
        if (rc)
            return rc;
    }
    return 0;
}

int dec_model_load(dec_model **out, const char *ini_path, const dec_options *opt_in, smt_err *err)
{
    double t0 = smt_now();
    *out = NULL;
    dec_options dflt;
    dec_options_default(&dflt);
    const dec_options *opt = opt_in ? opt_in : &dflt;
    FILE *warn = opt->warn ? opt->warn : stderr;
    dec_model *m = calloc(1, sizeof *m);
    if (!m)
        return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
    int rc = dec_ini_load(&m->ini, ini_path, err);
    m->verbose = opt->verbose;
    long long v;
    if (!rc && m->verbose < 0) /* the ini's [verbose] (a malformed one is reported by the run) */
        m->verbose = dec_ini_param_ll(m->ini, "verbose", 0, DEC_MAX_VERBOSE, &v, NULL) > 0 ? (int)v : 1;
    if (!rc && opt->weight_overwrite)
        rc = dec_ini_overwrite_weights(m->ini, opt->weight_overwrite, err);
    if (!rc) /* -feature-overwrite, one spec per line, else the ini's [feature-overwrite] */
        rc = feature_overwrite(m->ini, opt->feature_overwrite, err);
    const dec_ini_feature *pt_f[DEC_MAX_TABLES] = {0}, *lr_f = NULL, *lm_f[DEC_MAX_LMS] = {0};
    if (!rc && !(rc = dec_ini_check_sections(m->ini, warn, err)) &&
        !(rc = check_keys(m->ini, err)))
        rc = layout(m, m->ini, pt_f, &lr_f, lm_f, err);
    if (!rc)
        rc = load_weights(m, m->ini, warn, err);
    if (!rc)
        rc = weight_file(m, opt, warn, err);
    if (!rc)
        rc = search_settings(m, opt, pt_f, warn, err);
    if (!rc)
        rc = load_tables(m, pt_f, lr_f, lm_f, warn, opt->verify, opt->model_cache, err);
    if (!rc)
        rc = build_maps(m, err);
    if (rc) {
        dec_model_free(m);
        return rc;
    }
    m->load_seconds = smt_now() - t0;
    *out = m;
    return 0;
}

void dec_model_free(dec_model *m)
{
    if (!m)
        return;
    dec_cache_free(m);
    if (m->tgt2lm)
        for (unsigned l = 0; l < DEC_MAX_LMS; l++)
            free(m->tgt2lm[l]);
    free(m->tgt2lm);
    for (unsigned l = 0; l < m->n_lms; l++)
        glm_close(m->lms[l]);
    for (unsigned t = 0; m->tables && t < m->n_tables; t++) {
        dec_pt_close(m->tables[t].pt);
        free(m->tables[t].to_model);
    }
    free(m->tables);
    free(m->paths);
    smt_vocab_builder_free(m->tgt_extra_b);
    for (unsigned i = 0; i < m->n_features; i++)
        free(m->features[i].name);
    free(m->features);
    free(m->weights);
    dec_ini_free(m->ini);
    free(m);
}

const char *dec_word(const dec_model *m, uint32_t id, const char *const *src_tokens,
                     const uint32_t *src_lens, size_t *len)
{
    if (id & DEC_PASS_BIT) {
        *len = src_lens[id & ~DEC_PASS_BIT];
        return src_tokens[id & ~DEC_PASS_BIT];
    }
    if (id < m->n_tgt0)
        return smt_vocab_word(m->tables[0].pt->tgt_vocab, id, len);
    return smt_vocab_word(&m->tgt_extra, id - m->n_tgt0, len);
}

uint32_t dec_tgt_find(const dec_model *m, const char *w, size_t len)
{
    uint32_t id = smt_vocab_find(m->tables[0].pt->tgt_vocab, w, len);
    if (id == SMT_VOCAB_NONE && m->tgt_extra.n) {
        id = smt_vocab_find(&m->tgt_extra, w, len);
        if (id != SMT_VOCAB_NONE)
            id += m->n_tgt0;
    }
    return id;
}
