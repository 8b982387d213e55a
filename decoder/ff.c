/* ff.c — the table of the decoder's features (dec_ff.h). Adding a feature: its file ff_NAME.c
 * with its dec_ff, and one entry here, at the place its evaluation belongs. */
#include "dec_ff.h"

static const dec_ff *const features[] = {
    &dec_ff_tm,     &dec_ff_word_penalty, &dec_ff_phrase_penalty, &dec_ff_unknown,
    &dec_ff_lm,     &dec_ff_distortion,   &dec_ff_reordering,
};

_Static_assert(sizeof features / sizeof *features <= DEC_MAX_FF, "raise DEC_MAX_FF");

void dec_ff_select(dec_model *m)
{
    m->n_ff_option = m->n_ff_estimate = m->n_ff_expand = m->n_ff_path = 0;
    for (size_t i = 0; i < sizeof features / sizeof *features; i++) {
        const dec_ff *f = features[i];
        if (!f->present(m))
            continue;
        if (f->option)
            m->ff_option[m->n_ff_option++] = f;
        if (f->estimate)
            m->ff_estimate[m->n_ff_estimate++] = f;
        if (f->expand)
            m->ff_expand[m->n_ff_expand++] = f;
        if (f->path)
            m->ff_path[m->n_ff_path++] = f;
    }
}
