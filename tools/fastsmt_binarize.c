/* fastsmt-binarize — binarizes the text models a moses.ini names, for fast loading.
 *
 *   fastsmt-binarize moses.ini OUTDIR
 *
 * The phrase table and its lexicalized reordering table become one probingpt file
 * (OUTDIR/phrase-table.ppt, reordering integrated), every KENLM ARPA file a glm file
 * (OUTDIR/<name>.glm), and OUTDIR/moses.ini is the input ini with those feature lines pointing at
 * the binaries (relative to OUTDIR) and every other line kept as it was. Files that are already
 * binary are referenced, not rebuilt. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "dec_internal.h"
#include "moses_ini.h"
#include "smt_progress.h"

static int is_fsmt(const char *path)
{
    FILE *f = fopen(path, "rb");
    char magic[4] = {0};
    int yes = f && fread(magic, 1, 4, f) == 4 && memcmp(magic, "FSMT", 4) == 0;
    if (f)
        fclose(f);
    return yes;
}

/* The feature line rewritten: type replaced (when new_type), path= replaced or dropped
 * (new_path NULL), extra appended. */
static char *rewrite(const dec_ini_feature *f, const char *new_type, const char *new_path,
                     const char *extra)
{
    size_t cap = 4096, len = 0;
    char *s = malloc(cap);
    if (!s)
        return NULL;
    len += (size_t)snprintf(s + len, cap - len, "%s", new_type ? new_type : f->type);
    for (size_t i = 0; i < f->n_args && len < cap; i++) {
        if (!strcmp(f->keys[i], "path")) {
            if (new_path)
                len += (size_t)snprintf(s + len, cap - len, " path=%s", new_path);
            continue;
        }
        len += (size_t)snprintf(s + len, cap - len, " %s=%s", f->keys[i], f->values[i]);
    }
    if (extra && len < cap)
        snprintf(s + len, cap - len, " %s", extra);
    return s;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: fastsmt-binarize moses.ini OUTDIR\n");
        return 2;
    }
    const char *out_dir = argv[2];
    smt_err err;
    smt_err_clear(&err);
    dec_ini *ini;
    int rc = dec_ini_load(&ini, argv[1], &err);
    if (rc) {
        fprintf(stderr, "fastsmt-binarize: %s\n", smt_err_text(&err, rc));
        return 1;
    }
    if (mkdir(out_dir, 0777) != 0 && errno != EEXIST) {
        perror(out_dir);
        return 1;
    }
    char **new_lines = calloc(ini->n_features, sizeof *new_lines);
    const dec_ini_feature *pt = NULL, *lr = NULL;
    for (size_t i = 0; i < ini->n_features; i++) {
        const char *t = ini->features[i].type;
        if (!strcmp(t, "PhraseDictionaryMemory") || !strcmp(t, "ProbingPT"))
            pt = &ini->features[i];
        else if (!strcmp(t, "LexicalReordering"))
            lr = &ini->features[i];
    }
    if (!pt || !dec_ini_feature_arg(pt, "path")) {
        fprintf(stderr, "fastsmt-binarize: %s names no phrase table\n", argv[1]);
        return 1;
    }
    double t0 = smt_now();
    char *pt_path = dec_ini_resolve(ini, dec_ini_feature_arg(pt, "path"));
    char *reo_path = lr && dec_ini_feature_arg(lr, "path")
                         ? dec_ini_resolve(ini, dec_ini_feature_arg(lr, "path"))
                         : NULL;
    char *ppt_out = NULL;
    const char *pt_ref;
    if (is_fsmt(pt_path)) {
        pt_ref = pt_path;
    } else {
        if (asprintf(&ppt_out, "%s/phrase-table.ppt", out_dir) < 0)
            return 1;
        fprintf(stderr, "fastsmt-binarize: %s + %s -> %s\n", pt_path, reo_path ? reo_path : "-",
                ppt_out);
        if ((rc = dec_ppt_build(pt_path, reo_path, ppt_out, &err)) != 0) {
            fprintf(stderr, "fastsmt-binarize: %s\n", smt_err_text(&err, rc));
            return 1;
        }
        pt_ref = "phrase-table.ppt";
    }
    for (size_t i = 0; i < ini->n_features; i++) {
        const dec_ini_feature *f = &ini->features[i];
        if (f == pt) {
            new_lines[i] = rewrite(f, "ProbingPT", pt_ref, NULL);
        } else if (f == lr) {
            new_lines[i] = rewrite(f, NULL, NULL,
                                   dec_ini_feature_arg(f, "property-index") ? NULL
                                                                            : "property-index=0");
        } else if (!strcmp(f->type, "KENLM") && dec_ini_feature_arg(f, "path")) {
            char *lm_path = dec_ini_resolve(ini, dec_ini_feature_arg(f, "path"));
            if (is_fsmt(lm_path)) {
                new_lines[i] = rewrite(f, NULL, lm_path, NULL);
            } else {
                char *glm_out = NULL, *ref = NULL;
                if (asprintf(&glm_out, "%s/%s.glm", out_dir, f->name) < 0 ||
                    asprintf(&ref, "%s.glm", f->name) < 0)
                    return 1;
                fprintf(stderr, "fastsmt-binarize: %s -> %s\n", lm_path, glm_out);
                if ((rc = dec_glm_build(lm_path, glm_out, &err)) != 0) {
                    fprintf(stderr, "fastsmt-binarize: %s\n", smt_err_text(&err, rc));
                    return 1;
                }
                new_lines[i] = rewrite(f, NULL, ref, NULL);
                free(glm_out);
                free(ref);
            }
            free(lm_path);
        }
    }
    /* copy the ini line by line, replacing the rewritten feature lines */
    FILE *in = fopen(argv[1], "r");
    char *ini_out = NULL;
    if (!in || asprintf(&ini_out, "%s/moses.ini", out_dir) < 0) {
        perror(argv[1]);
        return 1;
    }
    FILE *out = fopen(ini_out, "w");
    if (!out) {
        perror(ini_out);
        return 1;
    }
    fprintf(out, "# Written by fastsmt-binarize from %s\n", argv[1]);
    char *line = NULL;
    size_t cap = 0;
    unsigned lineno = 0;
    while (getline(&line, &cap, in) >= 0) {
        lineno++;
        size_t k = 0;
        while (k < ini->n_features && !(ini->features[k].line == lineno && new_lines[k]))
            k++;
        if (k < ini->n_features)
            fprintf(out, "%s\n", new_lines[k]);
        else
            fputs(line, out);
    }
    free(line);
    fclose(in);
    if (fclose(out) != 0) {
        perror(ini_out);
        return 1;
    }
    fprintf(stderr, "fastsmt-binarize: wrote %s in %.1f s\n", ini_out, smt_now() - t0);
    for (size_t i = 0; i < ini->n_features; i++)
        free(new_lines[i]);
    free(new_lines);
    free(ini_out);
    free(ppt_out);
    free(pt_path);
    free(reo_path);
    dec_ini_free(ini);
    return 0;
}
