/* model_files.c — the files a loaded model read (decoder.h: dec_model_files). */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "dec_internal.h"
#include "decoder.h"
#include "moses_ini.h"

int dec_model_files(const dec_model *m, char ***files, size_t *n, smt_err *err)
{
    *files = NULL;
    *n = 0;
    const dec_ini *ini = m->ini;
    size_t cap = ini->n_features + 2, k = 0, bytes = cap * sizeof(char *);
    char **found = calloc(cap, sizeof *found);
    int rc = found ? 0 : smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
    if (!rc && !(found[k++] = strdup(ini->path)))
        rc = smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < ini->n_features && !rc; i++) {
        const dec_ini_feature *f = &ini->features[i];
        const char *p = dec_ini_feature_arg(f, "path");
        if (p && !(rc = dec_ini_find(ini, p, f->line, NULL, 0, &found[k], err)))
            k++;
    }
    char *const *v; /* [weight-file]: read unless -weight-file replaced it (then maybe absent) */
    if (!rc && dec_ini_param_values(ini, "weight-file", &v) == 1) {
        smt_err ignored;
        if (!dec_ini_find(ini, v[0], 0, NULL, 0, &found[k], &ignored))
            k++;
    }
    for (size_t i = 0; i < k && !rc; i++)
        bytes += strlen(found[i]) + 1;
    char **out = rc ? NULL : malloc(bytes);
    if (!rc && !out)
        rc = smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
    if (!rc) { /* one block: the pointers, then the strings */
        char *s = (char *)(out + k);
        for (size_t i = 0; i < k; i++) {
            size_t len = strlen(found[i]) + 1;
            out[i] = memcpy(s, found[i], len);
            s += len;
        }
        *files = out;
        *n = k;
    }
    for (size_t i = 0; found && i < k; i++)
        free(found[i]);
    free(found);
    return rc;
}
