/* dec_ff.h — the decoder's features, each defined once (Moses2's FF/), and the table of them.
 *
 * A feature is one header, private/ff_NAME.h, whose static inline functions ff_NAME_HOOK are every
 * place the decoder scores it, and one entry in DEC_FEATURES below, which says which hooks it has
 * (1) and so where the drivers call it. The hooks (all but present optional):
 *   present   int (m): whether the model has the feature (the drivers skip it otherwise);
 *   option    void (m, o, float *score): a translation option is built (cands.c; an unknown
 *             word's and an XML option's in translation_options.c and xml_options.c): adds the
 *             weighted in-isolation score to its static score;
 *   estimate  void (m, o, float *future): adds the weighted estimate that is not part of the static
 *             score (the LM of the phrase alone) to the option's future score;
 *   expand    void (s, h, prev, complete, double *score): a hypothesis is expanded (search.c);
 *             complete: it covers the whole sentence (the final </s>); adds the weighted score of
 *             h after prev and keeps in h what the feature keeps (its LM states and scores);
 *   path      void (m, h, prev, float *sc): a node of an n-best path (nbest.c): adds the feature's
 *             unweighted values of h after prev (the node before it on the path) to the dense
 *             vector sc, from what the search computed (the LM is not queried again);
 *   state     uint64_t state_hash(m, h, k) and int state_equal(m, a, b): a stateful feature's
 *             state (search.c's recombination: hypotheses with the same coverage, last end and
 *             equal states of every feature recombine);
 *   def       const dec_ff_def *(void), required: its ini types, keys and configuration (below;
 *             model.c lays the features out and loads them through it).
 * The drivers below expand the table at compile time: no indirect call in the search's inner
 * loop. The table's order is the order of evaluation (it fixes the float arithmetic, so output
 * stays byte-identical); the order features are printed in is the ini's (dec_model.features). */
#ifndef DEC_FF_H
#define DEC_FF_H

#include <string.h>

#include "dec_search.h"

/* A translation option as the option and estimate hooks see it. */
typedef struct dec_option {
    uint32_t n_words;
    const float *scores;      /* the table's probabilities (n_scores); NULL: an unknown word */
    const uint32_t *lm_words; /* n_lms * n_words LM ids, LM by LM; NULL: no LM estimate */
    const float *tm_ln;       /* the TM scores as ln already (an XML option), or NULL */
    unsigned table;           /* the phrase table whose scores these are (dec_model.tables) */
} dec_option;

/* What a feature reads from its ini line (Moses2's FeatureFunction::SetParameter). Each ff_NAME.h
 * defines ff_NAME_def(): the ini types it implements, whether it has a state, the keys of its own
 * line (every feature's keys are model.c's) and configure, which reads the line into the model and
 * takes the feature's place in the score vector (dec_ff_add); model.c checks every key's value by
 * its kind before any feature reads it. */
typedef enum dec_key_kind {
    DEC_KEY_TEXT,   /* read and checked where it is used */
    DEC_KEY_BOOL,   /* true, false, 1 or 0 */
    DEC_KEY_FACTOR, /* a factor index (0 .. 1000): only 0, plain words, is supported */
    DEC_KEY_COUNT   /* an integer 0 .. 1000000 */
} dec_key_kind;

typedef struct dec_ff_key {
    const char *name; /* NULL ends a list */
    dec_key_kind kind;
} dec_ff_key;

/* The ini line of a feature being laid out, and where the loading finds the lines of the tables,
 * the reordering model and the LMs afterwards (pt_f[n_tables], *lr_f, lm_f[n_lms]). */
typedef struct dec_ff_line {
    const dec_ini *ini;
    const dec_ini_feature *f;
    const dec_ini_feature **pt_f, **lr_f, **lm_f;
    int all_oov; /* [lmodel-oov-feature]: the LMs' oov-feature= when their line has none */
} dec_ff_line;

typedef struct dec_ff_def {
    const char *const *types; /* NULL-terminated */
    int stateful;             /* laid out first (Moses's score order: stateful, then stateless) */
    const dec_ff_key *keys;
    int (*configure)(dec_model *m, const dec_ff_line *l, smt_err *err);
} dec_ff_def;

/* model.c's helpers for configure. num_features: the line's num-features= (1 .. 64; dflt when
 * absent). add: n scores of the line's feature appended to the score vector (tuneable unless its
 * tuneable= says otherwise). add_single: a feature of exactly one score, *has set and *off its
 * place. bool: a boolean key's value (1 or 0; -1 neither). Errors: SMT_ERR_* with err set. */
int dec_ff_num_features(const dec_ff_line *l, unsigned dflt, unsigned *n, smt_err *err);
int dec_ff_add(dec_model *m, const dec_ff_line *l, unsigned n, int tuneable, smt_err *err);
int dec_ff_add_single(dec_model *m, const dec_ff_line *l, int *has, unsigned *off, int tuneable,
                      smt_err *err);
int dec_ff_bool(const char *v);

/* ff_NAME_def of a feature with one score and no key of its own (ini type TYPE; its presence and
 * place in the model's fields HAS and OFF; TUNEABLE by default; STATEFUL). */
#define DEC_FF_SINGLE_SCORE(NAME, TYPE, HAS, OFF, TUNEABLE, STATEFUL)                             \
    static inline int ff_##NAME##_configure(dec_model *m, const dec_ff_line *l, smt_err *err)     \
    {                                                                                              \
        return dec_ff_add_single(m, l, &m->HAS, &m->OFF, TUNEABLE, err);                           \
    }                                                                                              \
    static inline const dec_ff_def *ff_##NAME##_def(void)                                          \
    {                                                                                              \
        static const char *const types[] = {TYPE, NULL};                                           \
        static const dec_ff_key keys[] = {{NULL, DEC_KEY_TEXT}};                                   \
        static const dec_ff_def def = {types, STATEFUL, keys, ff_##NAME##_configure};              \
        return &def;                                                                               \
    }

#include "ff_distortion.h"
#include "ff_lm.h"
#include "ff_phrase_penalty.h"
#include "ff_reordering.h"
#include "ff_tm.h"
#include "ff_unknown.h"
#include "ff_word_penalty.h"

/* X(name, option, estimate, expand, path, state), in the order of evaluation. */
#define DEC_FEATURES(X)                                                                            \
    X(tm, 1, 0, 0, 1, 0)                                                                           \
    X(word_penalty, 1, 0, 0, 1, 0)                                                                 \
    X(phrase_penalty, 1, 0, 0, 1, 0)                                                               \
    X(unknown, 1, 0, 0, 1, 0)                                                                      \
    X(lm, 1, 1, 1, 1, 1)                                                                           \
    X(distortion, 0, 0, 1, 1, 0)                                                                   \
    X(reordering, 0, 0, 1, 1, 1)

#define DEC_FF_IF_0(...)
#define DEC_FF_IF_1(...) __VA_ARGS__

/* An option's static score (every option hook) and future score (then every estimate hook). */
static inline void dec_ff_option(const dec_model *m, const dec_option *o, float *stat,
                                 float *future)
{
    float s = 0;
#define X(n, op, es, ex, pa, st) DEC_FF_IF_##op(if (ff_##n##_present(m)) ff_##n##_option(m, o, &s);)
    DEC_FEATURES(X)
#undef X
    *stat = s;
#define X(n, op, es, ex, pa, st)                                                                   \
    DEC_FF_IF_##es(if (ff_##n##_present(m)) ff_##n##_estimate(m, o, &s);)
    DEC_FEATURES(X)
#undef X
    *future = s;
}

/* Adds the weighted scores of the expansion h of prev to *score. */
static inline void dec_ff_expand(dec_search *s, hyp *h, const hyp *prev, int complete,
                                 double *score)
{
    const dec_model *m = s->m;
    (void)m;
#define X(n, op, es, ex, pa, st)                                                                   \
    DEC_FF_IF_##ex(if (ff_##n##_present(m)) ff_##n##_expand(s, h, prev, complete, score);)
    DEC_FEATURES(X)
#undef X
}

/* Adds the feature values of path node h after prev to sc. */
static inline void dec_ff_path(const dec_model *m, const hyp *h, const hyp *prev, float *sc)
{
#define X(n, op, es, ex, pa, st)                                                                   \
    DEC_FF_IF_##pa(if (ff_##n##_present(m)) ff_##n##_path(m, h, prev, sc);)
    DEC_FEATURES(X)
#undef X
}

/* The stateful features' states mixed into the hypothesis hash k. */
static inline uint64_t dec_ff_state_hash(const dec_model *m, const hyp *h, uint64_t k)
{
#define X(n, op, es, ex, pa, st)                                                                   \
    DEC_FF_IF_##st(if (ff_##n##_present(m)) k = ff_##n##_state_hash(m, h, k);)
    DEC_FEATURES(X)
#undef X
    return k;
}

/* 1 when every stateful feature's states of a and b are equal. */
static inline int dec_ff_state_equal(const dec_model *m, const hyp *a, const hyp *b)
{
#define X(n, op, es, ex, pa, st)                                                                   \
    DEC_FF_IF_##st(if (ff_##n##_present(m) && !ff_##n##_state_equal(m, a, b)) return 0;)
    DEC_FEATURES(X)
#undef X
    return 1;
}

#endif
