/* fastsmt-binarize — binarizes the text models a moses.ini names, for fast loading.
 *
 *   fastsmt-binarize moses.ini OUTDIR
 *
 * The phrase table and its lexicalized reordering table become one probingpt file
 * (OUTDIR/phrase-table.ppt, reordering integrated), every KENLM ARPA file a glm file
 * (OUTDIR/<name>.glm), and OUTDIR/moses.ini is the input ini with those feature lines pointing at
 * the binaries (relative to OUTDIR) and every other line kept as it was. Files that are already
 * binary are referenced by their absolute path, not rebuilt. No input is ever overwritten (OUTDIR
 * may not be the model's own folder when that would replace its moses.ini or a table), and the new
 * moses.ini is loaded (dec_model_load) before it takes its name: success means the binarized
 * model works. Exit status: 0 success, 1 bad input or failure, 2 usage error. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

static const char usage_text[] =
    "usage: fastsmt-binarize moses.ini OUTDIR\n"
    "Binarizes the phrase table (with its lexicalized reordering table) into OUTDIR/phrase-table.ppt\n"
    "and every KENLM ARPA file into OUTDIR/<name>.glm, and writes OUTDIR/moses.ini naming them.\n"
    "Tables that are already binary are referenced, not rebuilt. The new moses.ini is loaded\n"
    "before the program reports success; no input file is ever overwritten.\n";

/* The inputs, to refuse an output that would replace one of them. */
typedef struct {
    dev_t dev[64];
    ino_t ino[64];
    const char *name[64];
    int n;
} input_set;

static void add_input(input_set *s, const char *path)
{
    struct stat st;
    if (path && s->n < 64 && stat(path, &st) == 0) {
        s->dev[s->n] = st.st_dev;
        s->ino[s->n] = st.st_ino;
        s->name[s->n++] = path;
    }
}

/* 0, or -1 with a message when writing path would replace an input. */
static int check_output(const input_set *s, const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return 0;
    for (int i = 0; i < s->n; i++)
        if (s->dev[i] == st.st_dev && s->ino[i] == st.st_ino) {
            fprintf(stderr,
                    "fastsmt-binarize: %s is the input %s: refusing to overwrite it (choose another "
                    "OUTDIR)\n", path, s->name[i]);
            return -1;
        }
    return 0;
}

/* The absolute path of an existing file (what the new ini names, so that it works from OUTDIR). */
static char *absolute(const char *path)
{
    char *r = realpath(path, NULL);
    if (!r)
        fprintf(stderr, "fastsmt-binarize: %s: %s\n", path, strerror(errno));
    return r;
}

static int fail(const char *what, smt_err *err, int rc)
{
    fprintf(stderr, "fastsmt-binarize: %s%s\n", what, smt_err_text(err, rc));
    return 1;
}

int main(int argc, char **argv)
{
    if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        fputs(usage_text, stdout);
        return fflush(stdout) == 0 && !ferror(stdout) ? 0 : 1;
    }
    if (argc != 3) {
        fputs(usage_text, stderr);
        return 2;
    }
    const char *out_dir = argv[2];
    smt_err err;
    smt_err_clear(&err);
    dec_ini *ini;
    int rc = dec_ini_load(&ini, argv[1], &err);
    if (rc)
        return fail("", &err, rc);
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
        dec_ini_free(ini);
        return 1;
    }
    if (mkdir(out_dir, 0777) != 0 && errno != EEXIST) {
        perror(out_dir);
        dec_ini_free(ini);
        return 1;
    }
    double t0 = smt_now();
    int status = 1;
    char **new_lines = calloc(ini->n_features, sizeof *new_lines);
    char **lm_paths = calloc(ini->n_features, sizeof *lm_paths);
    char *pt_path = dec_ini_resolve(ini, dec_ini_feature_arg(pt, "path"));
    char *reo_path = lr && dec_ini_feature_arg(lr, "path")
                         ? dec_ini_resolve(ini, dec_ini_feature_arg(lr, "path"))
                         : NULL;
    char *ppt_out = NULL, *pt_ref = NULL, *ini_out = NULL, *ini_tmp = NULL;
    FILE *in = NULL, *out = NULL;
    if (!new_lines || !lm_paths || !pt_path || asprintf(&ini_out, "%s/moses.ini", out_dir) < 0 ||
        asprintf(&ini_tmp, "%s/.moses.ini.tmp.%ld", out_dir, (long)getpid()) < 0 ||
        asprintf(&ppt_out, "%s/phrase-table.ppt", out_dir) < 0) {
        fprintf(stderr, "fastsmt-binarize: out of memory\n");
        goto done;
    }
    /* every input, and every output checked against them before anything is written */
    input_set inputs = {.n = 0};
    add_input(&inputs, argv[1]);
    add_input(&inputs, pt_path);
    add_input(&inputs, reo_path);
    for (size_t i = 0; i < ini->n_features; i++) {
        const dec_ini_feature *f = &ini->features[i];
        if (!strcmp(f->type, "KENLM") && dec_ini_feature_arg(f, "path")) {
            if (!(lm_paths[i] = dec_ini_resolve(ini, dec_ini_feature_arg(f, "path"))))
                goto done;
            add_input(&inputs, lm_paths[i]);
        }
    }
    int pt_binary = is_fsmt(pt_path);
    if (check_output(&inputs, ini_out) || (!pt_binary && check_output(&inputs, ppt_out)))
        goto done;
    for (size_t i = 0; i < ini->n_features; i++) {
        char *glm_out = NULL;
        if (lm_paths[i] && !is_fsmt(lm_paths[i])) {
            if (asprintf(&glm_out, "%s/%s.glm", out_dir, ini->features[i].name) < 0)
                goto done;
            int bad = check_output(&inputs, glm_out);
            free(glm_out);
            if (bad)
                goto done;
        }
    }
    if (pt_binary) {
        if (!(pt_ref = absolute(pt_path)))
            goto done;
    } else {
        fprintf(stderr, "fastsmt-binarize: %s + %s -> %s\n", pt_path, reo_path ? reo_path : "-",
                ppt_out);
        if ((rc = dec_ppt_build(pt_path, reo_path, ppt_out, &err)) != 0) {
            fail("", &err, rc);
            goto done;
        }
        if (!(pt_ref = strdup("phrase-table.ppt")))
            goto done;
    }
    for (size_t i = 0; i < ini->n_features; i++) {
        const dec_ini_feature *f = &ini->features[i];
        if (f == pt) {
            new_lines[i] = rewrite(f, "ProbingPT", pt_ref, NULL);
        } else if (f == lr) {
            new_lines[i] = rewrite(f, NULL, NULL,
                                   dec_ini_feature_arg(f, "property-index") ? NULL
                                                                            : "property-index=0");
        } else if (lm_paths[i]) {
            char *ref = NULL;
            if (is_fsmt(lm_paths[i])) {
                ref = absolute(lm_paths[i]);
            } else {
                char *glm_out = NULL;
                if (asprintf(&glm_out, "%s/%s.glm", out_dir, f->name) < 0 ||
                    asprintf(&ref, "%s.glm", f->name) < 0)
                    goto done;
                fprintf(stderr, "fastsmt-binarize: %s -> %s\n", lm_paths[i], glm_out);
                rc = dec_glm_build(lm_paths[i], glm_out, &err);
                free(glm_out);
                if (rc) {
                    free(ref);
                    fail("", &err, rc);
                    goto done;
                }
            }
            if (!ref)
                goto done;
            new_lines[i] = rewrite(f, NULL, ref, NULL);
            free(ref);
        } else {
            continue;
        }
        if (!new_lines[i])
            goto done;
    }
    /* copy the ini line by line, replacing the rewritten feature lines, under a temporary name */
    if (!(in = fopen(argv[1], "r"))) {
        perror(argv[1]);
        goto done;
    }
    if (!(out = fopen(ini_tmp, "w"))) {
        perror(ini_tmp);
        goto done;
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
    int read_failed = ferror(in);
    fclose(in);
    in = NULL;
    if (read_failed) {
        fprintf(stderr, "fastsmt-binarize: %s: read error\n", argv[1]);
        goto done;
    }
    int write_failed = ferror(out) | fflush(out) | fsync(fileno(out));
    if (fclose(out) != 0 || write_failed) {
        out = NULL;
        fprintf(stderr, "fastsmt-binarize: %s: write error: %s\n", ini_tmp, strerror(errno));
        goto done;
    }
    out = NULL;
    /* the binarized model must load before it is presented as the result */
    dec_model *m = NULL;
    dec_options opt;
    dec_options_default(&opt);
    if ((rc = dec_model_load(&m, ini_tmp, &opt, &err)) != 0) {
        fail("the binarized model does not load: ", &err, rc);
        goto done;
    }
    dec_model_free(m);
    if (rename(ini_tmp, ini_out) != 0) {
        fprintf(stderr, "fastsmt-binarize: %s: %s\n", ini_out, strerror(errno));
        goto done;
    }
    fprintf(stderr, "fastsmt-binarize: wrote %s in %.1f s\n", ini_out, smt_now() - t0);
    status = 0;
done:
    if (in)
        fclose(in);
    if (out)
        fclose(out);
    if (status && ini_tmp)
        unlink(ini_tmp);
    for (size_t i = 0; new_lines && i < ini->n_features; i++)
        free(new_lines[i]);
    for (size_t i = 0; lm_paths && i < ini->n_features; i++)
        free(lm_paths[i]);
    free(new_lines), free(lm_paths);
    free(ini_out), free(ini_tmp), free(ppt_out), free(pt_ref), free(pt_path), free(reo_path);
    dec_ini_free(ini);
    return status;
}
