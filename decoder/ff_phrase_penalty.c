/* ff_phrase_penalty.c — Moses's PhrasePenalty: 1 per phrase. */
#include "dec_ff.h"

static int present(const dec_model *m) { return m->has_pp; }

static void option(const dec_model *m, const dec_option *o, float *score)
{
    (void)o;
    *score += (float)m->weights[m->off_pp];
}

static void path(const dec_model *m, const hyp *h, const hyp *prev, float *sc)
{
    (void)h;
    (void)prev;
    sc[m->off_pp] += 1;
}

const dec_ff dec_ff_phrase_penalty = {"PhrasePenalty", present, option, NULL, NULL, path};
