/* ff_tm.h — the phrase tables' scores: ln of the table's probabilities, floored at -100
 * (dec_floor_ln), Moses's PhraseDictionary. Each table has its own feature (TranslationModel<k>):
 * an option carries the scores of the table that gave it, and the other tables' features are 0
 * for it (Moses's ScoreComponentCollection: a feature never assigned stays 0). An unknown word has
 * none (see ff_unknown.h). */
#ifndef DEC_FF_TM_H
#define DEC_FF_TM_H

/* included by dec_ff.h only */

static inline int ff_tm_present(const dec_model *m)
{
    (void)m;
    return 1; /* a model has at least one phrase table */
}

static inline void ff_tm_option(const dec_model *m, const dec_option *o, float *score)
{
    const dec_table *t = &m->tables[o->table];
    const double *w = m->weights + t->off_tm;
    if (o->tm_ln) { /* an XML option: ln(prob) / n_scores in each score (Moses's SetXMLScore) */
        for (unsigned k = 0; k < t->n_scores; k++)
            *score += (float)w[k] * o->tm_ln[k];
        return;
    }
    if (!o->scores)
        return;
    for (unsigned k = 0; k < t->n_scores; k++)
        *score += (float)w[k] * dec_floor_ln(o->scores[k]);
}

static inline void ff_tm_path(const dec_model *m, const hyp *h, const hyp *prev, float *sc)
{
    (void)prev;
    const dec_cand *c = h->cand;
    if (c->tm) {
        const dec_table *t = &m->tables[c->table];
        for (unsigned k = 0; k < t->n_scores; k++)
            sc[t->off_tm + k] += c->tm[k];
    }
}

/* Its ini line: path= (the table, opened by model.c), table-limit= (read with the search
 * settings), input-factor=, output-factor=; num-features= is required. */
static inline int ff_tm_configure(dec_model *m, const dec_ff_line *l, smt_err *err)
{
    const dec_ini_feature *f = l->f;
    if (m->n_tables == DEC_MAX_TABLES)
        return smt_err_set(err, SMT_ERR_UNSUPPORTED, "%s:%u: more than %d phrase tables",
                           l->ini->path, f->line, DEC_MAX_TABLES);
    l->pt_f[m->n_tables] = f;
    unsigned n;
    int rc = dec_ff_num_features(l, 0, &n, err);
    if (rc)
        return rc;
    if (n == 0 || n > DEC_MAX_TM_SCORES)
        return smt_err_set(err, SMT_ERR_PARSE, "%s:%u: %s needs num-features= between 1 and %d",
                           l->ini->path, f->line, f->name, DEC_MAX_TM_SCORES);
    m->tables[m->n_tables].off_tm = m->n_scores;
    m->tables[m->n_tables++].n_scores = n;
    return dec_ff_add(m, l, n, 1, err);
}

static inline const dec_ff_def *ff_tm_def(void)
{
    static const char *const types[] = {"PhraseDictionaryMemory", "ProbingPT", NULL};
    static const dec_ff_key keys[] = {{"path", DEC_KEY_TEXT},
                                      {"table-limit", DEC_KEY_TEXT},
                                      {"input-factor", DEC_KEY_FACTOR},
                                      {"output-factor", DEC_KEY_FACTOR},
                                      {NULL, DEC_KEY_TEXT}};
    static const dec_ff_def def = {types, 0, keys, ff_tm_configure};
    return &def;
}

#endif
