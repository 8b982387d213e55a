/* run_options.c — the run settings (dec_run_options) resolved once: a flag, else the ini, else the
 * default. The fastsmt tool and any library caller of dec_run get the same decisions. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "dec_internal.h"
#include "dec_xml.h"
#include "smt_num.h"
#include "smt_words.h"

/* -lm-batch when not given: the fastest measured (docs/decoder.md, "Batched LM scoring"). */
#define DEC_LM_BATCH_DEFAULT DEC_LM_BATCH_OFF

void dec_run_options_default(dec_run_options *o)
{
    memset(o, 0, sizeof *o);
    o->threads = -1;
    o->verbose = -1;
    o->show_weights = -1;
    o->n_best = -1;
    o->report_segmentation = o->nbest_segmentation = -1;
    o->print_alignment = o->nbest_alignment = -1;
    o->mark_unknown = -1;
    o->drop_unknown = o->output_hypo_score = o->nbest_factor = -1;
    o->monotone_at_punct = -1;
    o->lm_batch = o->lm_batch_width = -1;
}

void dec_run_options_release(dec_run_options *o)
{
    if (!o)
        return;
    for (size_t i = 0; i < sizeof o->owned_ / sizeof *o->owned_; i++) {
        free(o->owned_[i]);
        o->owned_[i] = NULL;
    }
}

/* The ini's [n-best-list]: FILE N [distinct], on one line or several. */
static int ini_nbest_list(const dec_model *m, dec_run_options *o, smt_err *err)
{
    char *const *v;
    size_t nv = dec_model_param_values(m, "n-best-list", &v), len = 1;
    if (nv == 0)
        return 0;
    for (size_t i = 0; i < nv; i++)
        len += strlen(v[i]) + 1;
    char *all = malloc(len);
    if (!all)
        return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
    all[0] = '\0';
    for (size_t i = 0; i < nv; i++)
        strcat(strcat(all, v[i]), " ");
    const char *w[4];
    size_t wl[4], nw = smt_words_split(all, strlen(all), SMT_WS_BLANK, w, wl, 4);
    char *f[4] = {NULL, NULL, NULL, NULL};
    for (size_t i = 0; i < nw && i < 4; i++) {
        f[i] = all + (w[i] - all);
        f[i][wl[i]] = '\0'; /* each word is followed by a separator */
    }
    char *file = f[0], *num = f[1], *d = f[2], *extra = f[3];
    int rc = 0;
    if (!file) {
        free(all);
        return 0;
    }
    if (!num || extra || (d && strcmp(d, "distinct"))) {
        rc = smt_err_set(err, SMT_ERR_PARSE, "%s:%u: [n-best-list] wants FILE N [distinct]",
                         m->ini->path, dec_model_param_line(m, "n-best-list", 0));
    } else {
        char what[600];
        snprintf(what, sizeof what, "%s:%u: [n-best-list] N", m->ini->path,
                 dec_model_param_line(m, "n-best-list", nv > 1 ? 1 : 0));
        rc = smt_parse_int_arg(what, num, 0, DEC_MAX_NBEST, &o->n_best, err);
        if (rc)
            rc = SMT_ERR_PARSE;
    }
    if (!rc) {
        o->distinct = d != NULL;
        if (!(o->owned_[0] = strdup(file)))
            rc = smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
        o->nbest_path = o->owned_[0];
    }
    free(all);
    return rc;
}

int dec_run_options_resolve(const dec_model *m, const dec_run_options *given,
                            dec_run_options *out, smt_err *err)
{
    if (given)
        *out = *given;
    else
        dec_run_options_default(out);
    out->owned_[0] = out->owned_[1] = NULL;
    out->resolved = 0;
    long long x;
    int rc = 0, b = 0;
    static const char *const shows[] = {"report-segmentation", "include-segmentation-in-n-best",
                                        "print-alignment-info", "print-alignment-info-in-n-best",
                                        "mark-unknown", "drop-unknown", "output-hypo-score",
                                        "monotone-at-punctuation"};
    int *show[] = {&out->report_segmentation, &out->nbest_segmentation, &out->print_alignment,
                   &out->nbest_alignment, &out->mark_unknown, &out->drop_unknown,
                   &out->output_hypo_score, &out->monotone_at_punct};
    if (!out->unknown_prefix) {
        const char *v = dec_model_param(m, "unknown-word-prefix");
        out->unknown_prefix = v ? v : "UNK";
    }
    if (!out->unknown_suffix) {
        const char *v = dec_model_param(m, "unknown-word-suffix");
        out->unknown_suffix = v ? v : "";
    }
    for (size_t i = 0; i < sizeof shows / sizeof *shows && rc >= 0; i++)
        if (*show[i] < 0) {
            *show[i] = 0;
            if ((rc = dec_model_param_bool(m, shows[i], &b, err)) > 0)
                *show[i] = b;
        }
    if (out->show_weights < 0) {
        out->show_weights = 0;
        if ((rc = dec_model_param_bool(m, "show-weights", &b, err)) > 0)
            out->show_weights = b;
    }
    if (rc >= 0 && out->verbose < 0) {
        out->verbose = 1;
        if ((rc = dec_model_param_ll(m, "verbose", 0, DEC_MAX_VERBOSE, &x, err)) > 0)
            out->verbose = (int)x;
    }
    if (rc >= 0 && out->threads < 0) { /* the ini's [threads] ("all" or N), else 1 */
        const char *t = dec_model_param(m, "threads");
        out->threads = 1;
        if (t && !strcmp(t, "all"))
            out->threads = 0;
        else if ((rc = dec_model_param_ll(m, "threads", 0, DEC_MAX_THREADS, &x, err)) > 0)
            out->threads = (int)x;
    }
    if (rc >= 0 && !out->input && dec_model_param(m, "input-file")) {
        rc = dec_model_param_file(m, "input-file", out->warn ? out->warn : stderr,
                                  &out->owned_[1], err);
        out->input = out->owned_[1];
    }
    if (rc >= 0 && out->n_best < 0 && !out->nbest_path && !out->nbest) {
        out->n_best = 0;
        out->distinct = 0;
        rc = ini_nbest_list(m, out, err);
    }
    if (rc >= 0 && out->n_best < 0)
        out->n_best = 0;
    if (rc >= 0 && out->nbest_factor < 0) {
        out->nbest_factor = 20; /* Moses's default */
        if ((rc = dec_model_param_ll(m, "n-best-factor", 0, DEC_MAX_NBEST_FACTOR, &x, err)) > 0)
            out->nbest_factor = (int)x;
    }
    if (rc >= 0 && !out->xml_input) {
        const char *v = dec_model_param(m, "xml-input");
        out->xml_input = v ? v : "pass-through";
    }
    if (rc >= 0 && !out->xml_brackets) {
        const char *v = dec_model_param(m, "xml-brackets");
        out->xml_brackets = v ? v : "< >";
    }
    if (rc >= 0 && dec_xml_mode(out->xml_input) < 0)
        rc = smt_err_set(err, SMT_ERR_UNSUPPORTED, "-xml-input %s: unknown mode (pass-through, "
                         "ignore, exclusive, inclusive, constraint)", out->xml_input);
    if (rc >= 0 && smt_words_count(out->xml_brackets, strlen(out->xml_brackets), SMT_WS_BLANK) != 2)
        rc = smt_err_set(err, SMT_ERR_ARG, "-xml-brackets '%s': want two brackets, e.g. \"{{ }}\"",
                         out->xml_brackets);
    if (rc >= 0 && !out->unknowns_path && !out->unknowns)
        out->unknowns_path = dec_model_param(m, "output-unknowns"); /* as [n-best-list]'s FILE */
    if (rc >= 0 && out->lm_batch < 0)
        out->lm_batch = DEC_LM_BATCH_DEFAULT;
    if (rc >= 0 && out->lm_batch_width < 0)
        out->lm_batch_width = 16;
    if (rc >= 0 && (out->lm_batch > DEC_LM_BATCH_GPU || out->lm_batch_width < 1 ||
                    out->lm_batch_width > DEC_MAX_LM_BATCH_WIDTH))
        rc = smt_err_set(err, SMT_ERR_ARG, "-lm-batch %d / -lm-batch-width %d: out of range (0..2, "
                         "1..%d)", out->lm_batch, out->lm_batch_width, DEC_MAX_LM_BATCH_WIDTH);
    if (rc >= 0 && (out->threads > DEC_MAX_THREADS || out->verbose > DEC_MAX_VERBOSE ||
                    out->n_best > DEC_MAX_NBEST || out->nbest_factor > DEC_MAX_NBEST_FACTOR))
        rc = smt_err_set(err, SMT_ERR_ARG, "a run setting is out of range (threads %d, "
                         "verbose %d, n-best %d, n-best-factor %d)", out->threads, out->verbose,
                         out->n_best, out->nbest_factor);
    if (rc < 0) {
        dec_run_options_release(out);
        return rc;
    }
    out->resolved = 1;
    return 0;
}
