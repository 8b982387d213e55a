/* What the decoder harnesses do with every model they load: see fuzz_dec_common.h. */
#include "fuzz_dec_common.h"

#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"

dec_model *fz_dec_load(const char *ini_path)
{
    /* no model cache (the default): text models are built afresh each run */
    dec_options opt;
    dec_options_default(&opt);
    FILE *warn = fz_devnull();
    opt.warn = warn;
    dec_model *m = NULL;
    smt_err err;
    if (dec_model_load(&m, ini_path, &opt, &err) != 0)
        m = NULL;
    fclose(warn);
    return m;
}

dec_worker *fz_dec_worker(dec_model *m)
{
    dec_worker *w = NULL;
    smt_err err;
    int rc = dec_worker_create(&w, m, &err);
    if (rc == SMT_ERR_PARSE && strstr(err.msg, "moses.ini:"))
        return NULL; /* documented: a malformed run section ([threads] ...) fails the worker */
    if (rc != 0)
        fz_fail("dec_worker_create: %s", err.msg);
    return w;
}

void fz_dec_translate_once(dec_model *m)
{
    static const char line[] = "a b c x y z";
    dec_worker *w = fz_dec_worker(m);
    if (!w)
        return;
    fz_dec_translate(w, line, sizeof line - 1, 0);
    dec_worker_free(w);
}

int fz_dec_translate(dec_worker *w, const char *line, size_t len, int distinct)
{
    smt_err err;
    smt_buf best = {0}, nbest = {0};
    double score = 0;
    int rc = dec_translate(w, line, len, 0, &best, &nbest, 5, distinct, &score, &err);
    if (rc == 0 || rc == SMT_ERR_LIMIT) {
        const char *nl = best.len ? memchr(best.data, '\n', best.len) : NULL;
        if (!nl || (size_t)(nl - best.data) != best.len - 1)
            fz_fail("decoder: the 1-best of one input line is not one line (%zu bytes)", best.len);
    }
    smt_buf_free(&best);
    smt_buf_free(&nbest);
    return rc;
}
