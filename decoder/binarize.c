/* binarize.c — dec_binarize: the text models a moses.ini names made binary, and a new ini naming
 * them (what fastsmt-binarize does; decoder.h documents it). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dec_internal.h"
#include "moses_ini.h"
#include "smt_file.h"
#include "smt_io.h"
#include "smt_lines.h"
#include "smt_sniff.h"

/* 1 when path is a fastsmt binary already (kept as it is), else 0 (text, or unreadable: the
 * build that follows says why). */
static int is_fsmt(const char *path)
{
    return smt_file_kind(path, NULL, NULL) == SMT_KIND_FASTSMT;
}

/* An LM that is already binary (a .glm or a KenLM binary): referenced, not rebuilt. */
static int is_binary_lm(const char *path)
{
    int kind = smt_file_kind(path, NULL, NULL);
    return kind == SMT_KIND_FASTSMT || kind == SMT_KIND_KENLM;
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

/* The inputs, to refuse an output that would replace one of them. */
typedef struct {
    const char *name[DEC_MAX_TABLES + DEC_MAX_LMS + 2];
    int n;
} input_set;

static void add_input(input_set *s, const char *path)
{
    if (path && s->n < DEC_MAX_TABLES + DEC_MAX_LMS + 2)
        s->name[s->n++] = path;
}

/* 0, or SMT_ERR_ARG when writing path would replace an input. */
static int check_output(const input_set *s, const char *path, smt_err *err)
{
    for (int i = 0; i < s->n; i++)
        if (smt_same_file(path, s->name[i]))
            return smt_err_set(err, SMT_ERR_ARG,
                               "%s is the input %s: refusing to overwrite it (choose another "
                               "OUTDIR)", path, s->name[i]);
    return 0;
}

/* The name the new ini gives an existing file: relative to base (the new ini's folder, absolute)
 * when the file lies under it, else its absolute path; base NULL: always absolute. */
static int ini_name(const char *path, const char *base, char **out, smt_err *err)
{
    char *abs = realpath(path, NULL);
    if (!abs)
        return smt_err_errno(err, SMT_ERR_IO, errno, "%s", path);
    size_t n = base ? strlen(base) : 0;
    if (base && !strncmp(abs, base, n) && abs[n] == '/' && abs[n + 1]) {
        *out = strdup(abs + n + 1);
        free(abs);
        return *out ? 0 : smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
    }
    *out = abs;
    return 0;
}

/* The real path of the folder holding path (malloc'ed). */
static int dirname_real(const char *path, char **out, smt_err *err)
{
    char *dir = strdup(path), *slash = dir ? strrchr(dir, '/') : NULL;
    if (!dir)
        return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
    if (slash)
        slash[slash == dir ? 1 : 0] = '\0';
    *out = realpath(slash ? dir : ".", NULL);
    int rc = *out ? 0 : smt_err_errno(err, SMT_ERR_IO, errno, "%s", dir);
    free(dir);
    return rc;
}

/* The shortest decimal form of d that reads back as d. */
static void print_exact(FILE *out, double d)
{
    char b[64];
    for (int p = 6; p <= 17; p++) {
        snprintf(b, sizeof b, "%.*g", p, d);
        if (strtod(b, NULL) == d)
            break;
    }
    fprintf(out, " %s", b);
}

/* The sections that name a file the decoder reads ([input-file], [weight-file]), which the new ini
 * names as it names its other files (file_sections_resolve). */
#define N_FILE_SECTIONS 2
static const char *const file_sections[N_FILE_SECTIONS] = {"input-file", "weight-file"};

/* For each of them: the file as the decoder finds it from the old ini, named for the new ini
 * (ini_name), and the line of the name; a file not found now (an input written later), or named
 * by an absolute path outside base, keeps its line (name NULL). */
static void file_sections_resolve(const dec_ini *ini, const char *base, char **name,
                                  unsigned *line)
{
    for (int j = 0; j < N_FILE_SECTIONS; j++) {
        name[j] = NULL;
        line[j] = 0;
        const char *v = dec_ini_param(ini, file_sections[j]);
        if (!v)
            continue;
        unsigned l = dec_ini_param_line(ini, file_sections[j], 0);
        char *found = NULL;
        smt_err fe;
        if (dec_ini_find(ini, v, l, NULL, 0, &found, &fe) == 0 &&
            ini_name(found, base, &name[j], &fe) == 0) {
            if (v[0] == '/' && name[j][0] == '/') { /* absolute and outside base: kept as given */
                free(name[j]);
                name[j] = NULL;
            } else {
                line[j] = l;
            }
        }
        free(found);
    }
}

/* 1 when line lineno of the old ini is its [relative-paths] header or value (the new ini has its
 * own). */
static int is_relative_paths_line(const dec_ini *ini, uint64_t lineno)
{
    char *const *v;
    size_t n = dec_ini_param_values(ini, "relative-paths", &v);
    for (size_t i = 0; i <= n; i++)
        if (dec_ini_param_line(ini, "relative-paths", i) == lineno)
            return 1;
    return 0;
}

/* An old-format ini written in the new format: its other sections, then the [feature] lines Moses's
 * conversion makes (new_lines[k] where a feature was rewritten) and their [weight] lines. */
static int write_converted(const dec_ini *ini, const char *const *new_lines,
                           char *const *file_name, FILE *out)
{
    fprintf(out, "# (converted from the old format, before 2013, as Moses converts it)\n");
    for (size_t i = 0; i < ini->n_sections; i++) {
        if (!strcmp(ini->sections[i].name, "relative-paths"))
            continue;
        fprintf(out, "\n[%s]\n", ini->sections[i].name);
        const char *subst = NULL;
        for (int j = 0; j < N_FILE_SECTIONS; j++)
            if (!strcmp(ini->sections[i].name, file_sections[j]))
                subst = file_name[j];
        for (size_t k = 0; k < ini->sections[i].n; k++)
            fprintf(out, "%s\n", k == 0 && subst ? subst : ini->sections[i].values[k]);
    }
    fprintf(out, "\n[feature]\n");
    for (size_t k = 0; k < ini->n_features; k++) {
        const dec_ini_feature *f = &ini->features[k];
        char *own = new_lines[k] ? NULL : rewrite(f, NULL, dec_ini_feature_arg(f, "path"), NULL);
        if (!new_lines[k] && !own)
            return SMT_ERR_NOMEM;
        /* the name Moses's conversion gives it, kept when the type changes (ProbingPT) */
        fprintf(out, "%s%s%s\n", new_lines[k] ? new_lines[k] : own,
                dec_ini_feature_arg(f, "name") ? "" : " name=",
                dec_ini_feature_arg(f, "name") ? "" : f->name);
        free(own);
    }
    fprintf(out, "\n[weight]\n");
    for (size_t k = 0; k < ini->n_weights; k++) {
        fprintf(out, "%s=", ini->weights[k].name);
        for (size_t j = 0; j < ini->weights[k].n; j++)
            print_exact(out, ini->weights[k].values[j]);
        fputc('\n', out);
    }
    return 0;
}

static int nomem(smt_err *err)
{
    return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
}

/* The binary an ARPA LM feature becomes: OUTDIR/<name>.glm, or OUTDIR/<name>.probing. */
static int lm_out_path(char **out, const char *out_dir, const char *name, int probing)
{
    if (asprintf(out, "%s/%s.%s", out_dir, name, probing ? "probing" : "glm") < 0) {
        *out = NULL;
        return -1;
    }
    return 0;
}

int dec_binarize(const char *ini_path, const char *out_dir, const dec_binarize_options *opt,
                 FILE *report, smt_err *err)
{
    int lm_probing = opt && opt->lm_probing;
    dec_ini *ini;
    int rc = dec_ini_load(&ini, ini_path, err);
    if (rc)
        return rc;
    /* every phrase table (in ini order: the index [mapping] names), each binarized with the
     * reordering table integrated (an option of any table gets its pair's reordering scores) */
    const dec_ini_feature *pts[DEC_MAX_TABLES], *lr = NULL;
    size_t n_pt = 0;
    for (size_t i = 0; i < ini->n_features; i++) {
        const char *t = ini->features[i].type;
        if (!strcmp(t, "PhraseDictionaryMemory") || !strcmp(t, "ProbingPT")) {
            if (n_pt == DEC_MAX_TABLES) {
                dec_ini_free(ini);
                return smt_err_set(err, SMT_ERR_UNSUPPORTED, "%s: more than %d phrase tables",
                                   ini_path, DEC_MAX_TABLES);
            }
            pts[n_pt++] = &ini->features[i];
        } else if (!strcmp(t, "LexicalReordering")) {
            lr = &ini->features[i];
        }
    }
    int no_path = !n_pt;
    for (size_t k = 0; k < n_pt; k++)
        no_path |= !dec_ini_feature_arg(pts[k], "path");
    if (no_path) {
        dec_ini_free(ini);
        return smt_err_set(err, SMT_ERR_FORMAT, "%s names no phrase table", ini_path);
    }
    if (mkdir(out_dir, 0777) != 0 && errno != EEXIST) {
        rc = smt_err_errno(err, SMT_ERR_IO, errno, "%s", out_dir);
        dec_ini_free(ini);
        return rc;
    }
    char **new_lines = calloc(ini->n_features, sizeof *new_lines);
    char **lm_paths = calloc(ini->n_features, sizeof *lm_paths);
    char *pt_path[DEC_MAX_TABLES] = {0}, *ppt_out[DEC_MAX_TABLES] = {0};
    char *pt_ref[DEC_MAX_TABLES] = {0}, *reo_path = NULL, *abs_out = NULL, *base = NULL;
    char *ini_out = NULL, *ini_target = NULL, *ini_tmp = NULL;
    char *file_name[N_FILE_SECTIONS] = {0};
    unsigned file_line[N_FILE_SECTIONS];
    smt_lines *in = NULL;
    FILE *out = NULL;
    if (!new_lines || !lm_paths || asprintf(&ini_out, "%s/moses.ini", out_dir) < 0) {
        rc = nomem(err);
        goto done;
    }
    /* the first table is OUTDIR/phrase-table.ppt, table k after it OUTDIR/phrase-table.k.ppt */
    for (size_t k = 0; k < n_pt; k++)
        if ((k ? asprintf(&ppt_out[k], "%s/phrase-table.%zu.ppt", out_dir, k)
               : asprintf(&ppt_out[k], "%s/phrase-table.ppt", out_dir)) < 0) {
            ppt_out[k] = NULL;
            rc = nomem(err);
            goto done;
        }
    /* the files as the decoder finds them (the working directory first, then beside the ini) */
    for (size_t k = 0; k < n_pt; k++)
        if ((rc = dec_ini_find(ini, dec_ini_feature_arg(pts[k], "path"), pts[k]->line, stderr, 0,
                               &pt_path[k], err)))
            goto done;
    if ((lr && dec_ini_feature_arg(lr, "path") &&
         (rc = dec_ini_find(ini, dec_ini_feature_arg(lr, "path"), lr->line, stderr, 0, &reo_path,
                            err))))
        goto done;
    if (!(abs_out = realpath(out_dir, NULL))) {
        rc = smt_err_errno(err, SMT_ERR_IO, errno, "%s", out_dir);
        goto done;
    }
    /* every input, and every output checked against them before anything is written */
    input_set inputs = {.n = 0};
    add_input(&inputs, ini_path);
    for (size_t k = 0; k < n_pt; k++)
        add_input(&inputs, pt_path[k]);
    add_input(&inputs, reo_path);
    for (size_t i = 0; i < ini->n_features; i++) {
        const dec_ini_feature *f = &ini->features[i];
        if ((!strcmp(f->type, "KENLM") || !strcmp(f->type, "SRILM") ||
             !strcmp(f->type, "IRSTLM")) && dec_ini_feature_arg(f, "path")) {
            if ((rc = dec_ini_find(ini, dec_ini_feature_arg(f, "path"), f->line, stderr, 0,
                                   &lm_paths[i], err)))
                goto done;
            add_input(&inputs, lm_paths[i]);
        }
    }
    if ((rc = check_output(&inputs, ini_out, err)) != 0)
        goto done;
    for (size_t k = 0; k < n_pt; k++)
        if (!is_fsmt(pt_path[k]) && (rc = check_output(&inputs, ppt_out[k], err)) != 0)
            goto done;
    /* the new ini goes where the common writer puts a file: through a symbolic link at ini_out to
     * its target, never over anything that is not a regular file; under a temporary name there
     * until it has loaded */
    if ((rc = smt_file_target(ini_out, &ini_target, err)) != 0)
        goto done;
    if (asprintf(&ini_tmp, "%s.tmp-%ld", ini_target, (long)getpid()) < 0) {
        ini_tmp = NULL;
        rc = nomem(err);
        goto done;
    }
    /* the new ini names the files under OUTDIR relative to OUTDIR, which it says is read beside
     * the ini only ([relative-paths] ini), so that OUTDIR can be moved or copied; unless
     * OUTDIR/moses.ini is a link to a file in another folder (read from either place, the names
     * must then be absolute) */
    if ((rc = dirname_real(ini_target, &base, err)) != 0)
        goto done;
    if (strcmp(base, abs_out)) {
        free(base);
        base = NULL;
    }
    file_sections_resolve(ini, base, file_name, file_line);
    for (size_t i = 0; i < ini->n_features; i++) {
        char *glm_out = NULL;
        if (lm_paths[i] && !is_binary_lm(lm_paths[i])) {
            if (lm_out_path(&glm_out, out_dir, ini->features[i].name, lm_probing) < 0) {
                rc = nomem(err);
                goto done;
            }
            rc = check_output(&inputs, glm_out, err);
            free(glm_out);
            if (rc)
                goto done;
        }
    }
    for (size_t k = 0; k < n_pt; k++) {
        if (is_fsmt(pt_path[k])) {
            if ((rc = ini_name(pt_path[k], base, &pt_ref[k], err)) != 0)
                goto done;
            continue;
        }
        if (report)
            fprintf(report, "fastsmt-binarize: %s + %s -> %s\n", pt_path[k],
                    reo_path ? reo_path : "-", ppt_out[k]);
        if ((rc = dec_ppt_build(pt_path[k], reo_path, ppt_out[k], err)) != 0 ||
            (rc = ini_name(ppt_out[k], base, &pt_ref[k], err)) != 0)
            goto done;
    }
    for (size_t i = 0; i < ini->n_features; i++) {
        const dec_ini_feature *f = &ini->features[i];
        size_t k = 0;
        while (k < n_pt && pts[k] != f)
            k++;
        if (k < n_pt) {
            new_lines[i] = rewrite(f, "ProbingPT", pt_ref[k], NULL);
        } else if (f == lr) {
            new_lines[i] = rewrite(f, NULL, NULL,
                                   dec_ini_feature_arg(f, "property-index") ? NULL
                                                                            : "property-index=0");
        } else if (lm_paths[i]) {
            char *ref = NULL;
            if (is_binary_lm(lm_paths[i])) {
                if ((rc = ini_name(lm_paths[i], base, &ref, err)) != 0)
                    goto done;
            } else {
                char *glm_out = NULL;
                if (lm_out_path(&glm_out, out_dir, f->name, lm_probing) < 0) {
                    rc = nomem(err);
                    goto done;
                }
                if (report)
                    fprintf(report, "fastsmt-binarize: %s -> %s\n", lm_paths[i], glm_out);
                rc = dec_glm_build(lm_paths[i], glm_out, lm_probing, err);
                if (!rc)
                    rc = ini_name(glm_out, base, &ref, err);
                free(glm_out);
                if (rc)
                    goto done;
            }
            new_lines[i] = rewrite(f, NULL, ref, NULL);
            free(ref);
        } else {
            continue;
        }
        if (!new_lines[i]) {
            rc = nomem(err);
            goto done;
        }
    }
    /* copy the ini line by line (numbered as dec_ini_load numbers them), replacing the rewritten
     * feature lines, under a temporary name */
    if (!ini->old_format && (rc = smt_lines_open(&in, ini_path, 0, err)) != 0)
        goto done;
    /* O_EXCL: a leftover temporary name (or a link planted there) is never followed */
    unlink(ini_tmp);
    int fd = open(ini_tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 || !(out = fdopen(fd, "w"))) {
        rc = smt_err_errno(err, SMT_ERR_IO, errno, "%s", ini_tmp);
        if (fd >= 0)
            close(fd);
        goto done;
    }
    fprintf(out, "# Written by fastsmt-binarize from %s\n", ini_path);
    if (base)
        fprintf(out, "# Relative paths in this file are relative to its folder, never to the "
                     "working directory\n# ([relative-paths] ini, a fastsmt section): the folder "
                     "can be moved or copied as a whole.\n");
    else
        fprintf(out, "# Its files are named by absolute path (it was written through a link to "
                     "another folder).\n");
    fprintf(out, "\n[relative-paths]\nini\n\n");
    if (ini->old_format && /* written in the new format, as Moses converts the old one */
        (rc = write_converted(ini, (const char *const *)new_lines, file_name, out)) != 0) {
        rc = nomem(err);
        goto done;
    }
    char *line;
    size_t len;
    while (in && (rc = smt_lines_next(in, &line, &len, err)) == 1) {
        uint64_t lineno = smt_lines_lineno(in);
        size_t k = 0;
        while (k < ini->n_features && !(ini->features[k].line == lineno && new_lines[k]))
            k++;
        int j = 0;
        while (j < N_FILE_SECTIONS && !(file_line[j] == lineno && file_name[j]))
            j++;
        if (k < ini->n_features)
            fprintf(out, "%s\n", new_lines[k]);
        else if (j < N_FILE_SECTIONS) /* [input-file] / [weight-file], named for the new ini */
            fprintf(out, "%s\n", file_name[j]);
        else if (is_relative_paths_line(ini, lineno))
            continue;
        else
            fprintf(out, "%s\n", line);
    }
    smt_lines_close(in);
    in = NULL;
    if (rc < 0)
        goto done;
    rc = smt_flush_output(out, ini_tmp, err);
    if (!rc && fsync(fileno(out)) != 0)
        rc = smt_err_errno(err, SMT_ERR_IO, errno, "%s: cannot sync", ini_tmp);
    int close_rc = smt_close_output(out, ini_tmp, rc ? NULL : err);
    out = NULL;
    if (rc || (rc = close_rc) != 0)
        goto done;
    /* the binarized model must load before it is presented as the result */
    dec_model *m = NULL;
    smt_err le;
    if ((rc = dec_model_load(&m, ini_tmp, NULL, &le)) != 0) {
        smt_err_set(err, rc, "the binarized model does not load: %s", smt_err_text(&le, rc));
        goto done;
    }
    dec_model_free(m);
    /* the output path may have become something else meanwhile: checked again, as the writer does */
    char *target_now = NULL;
    rc = smt_file_target(ini_out, &target_now, err);
    free(target_now);
    if (!rc && rename(ini_tmp, ini_target) != 0)
        rc = smt_err_errno(err, SMT_ERR_IO, errno, "%s: cannot rename %s into place", ini_out,
                           ini_tmp);
    if (!rc)
        rc = smt_file_sync_dir(ini_target, err); /* the rename itself reaches the disk */
done:
    smt_lines_close(in);
    if (out)
        fclose(out);
    if (rc && ini_tmp)
        unlink(ini_tmp);
    for (size_t i = 0; new_lines && i < ini->n_features; i++)
        free(new_lines[i]);
    for (size_t i = 0; lm_paths && i < ini->n_features; i++)
        free(lm_paths[i]);
    free(new_lines), free(lm_paths);
    for (size_t k = 0; k < n_pt; k++)
        free(pt_path[k]), free(ppt_out[k]), free(pt_ref[k]);
    free(ini_out), free(ini_target), free(ini_tmp);
    free(reo_path), free(abs_out), free(base);
    for (int j = 0; j < N_FILE_SECTIONS; j++)
        free(file_name[j]);
    dec_ini_free(ini);
    return rc;
}
