/* ff_unknown.c — Moses's UnknownWordPenalty: a source word the table lacks is passed through,
 * scored ln 0 floored (-100); every other option scores 0. */
#include "dec_ff.h"

static int present(const dec_model *m) { return m->has_uwp; }

static void option(const dec_model *m, const dec_option *o, float *score)
{
    if (!o->scores)
        *score += m->w_uwp * DEC_LOWEST_SCORE;
}

static void path(const dec_model *m, const hyp *h, const hyp *prev, float *sc)
{
    (void)prev;
    if (!h->cand->tm)
        sc[m->off_uwp] += DEC_LOWEST_SCORE;
}

const dec_ff dec_ff_unknown = {"UnknownWordPenalty", present, option, NULL, NULL, path};
