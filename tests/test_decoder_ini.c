#define _GNU_SOURCE
/* Moses's path and ini semantics (issue 11, item 1): relative paths found in the working directory
 * first, then beside the ini (-v 2 says which; both tried paths named when neither exists; a
 * warning when both exist and differ), [relative-paths] ini (beside the ini only) and the binarized
 * inis that use it to name their files relative to their folder,
 * old-format inis (before 2013) converted as Moses's Parameter converts them and decoding as their
 * new-format equivalent, SRILM/IRSTLM features read as ARPA, and KENLM oov-feature=1. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "decoder.h"
#include "moses_ini.h"
#include "testutil.h"

static char *tmp, *tiny, *fastsmt;

static void setup(void)
{
    tmp = tu_tmpdir();
    tiny = tu_data_path("decoder/tiny");
    fastsmt = tu_bin_path("fastsmt");
    cr_assert_not_null(tmp);
}

static void teardown(void)
{
    tu_rmtree(tmp);
    free(tmp);
    free(tiny);
    free(fastsmt);
}

TestSuite(ini, .init = setup, .fini = teardown, .timeout = 120);

/* Copies the tiny model's files (moses.ini and its tables) into dir (created). */
static void copy_tiny(const char *dir)
{
    char *cmd = NULL;
    cr_assert(asprintf(&cmd, "mkdir -p '%s' && cp '%s'/* '%s'/", dir, tiny, dir) > 0);
    cr_assert_eq(tu_run(cmd, NULL, NULL), 0);
    free(cmd);
}

static void write_in(const char *dir, const char *name, const char *text)
{
    char *p = tu_join(dir, name);
    cr_assert_eq(tu_write_file(p, text, strlen(text)), 0);
    free(p);
}

/* Runs fastsmt in cwd with args on the input text; *out, *err receive stdout and stderr. */
static int run_in(const char *cwd, const char *args, const char *input, char **out, char **err)
{
    char *in = tu_join(tmp, "input.txt");
    cr_assert_eq(tu_write_file(in, input, strlen(input)), 0);
    int rc = tu_runf(out, err, "cd '%s' && '%s' %s < '%s'", cwd, fastsmt, args, in);
    free(in);
    return rc;
}

/* A relative path is found in the working directory first (Moses), then beside the ini; -v 2 says
 * which, and two different files of the same name give a warning. */
Test(ini, paths_working_directory_first)
{
    char *model = tu_join(tmp, "model"), *other = tu_join(tmp, "other"), *empty = tu_join(tmp, "e");
    copy_tiny(model);
    copy_tiny(other);
    cr_assert_eq(tu_runf(NULL, NULL, "mkdir -p '%s'", empty), 0);
    /* the working directory's table translates "a" as Z */
    write_in(other, "phrase-table", "a ||| Z ||| 0.5 ||| 0-0 ||| 1 1 1\n");
    char *out, *err, *args = NULL;
    cr_assert(asprintf(&args, "-f '%s/moses.ini' -v 2", model) > 0);
    /* from an empty folder: beside the ini */
    cr_assert_eq(run_in(empty, args, "a b\n", &out, &err), 0, "%s", err);
    cr_assert_str_eq(out, "A B \n");
    cr_assert(strstr(err, "phrase-table: found beside the ini ("), "%s", err);
    cr_assert(strstr(err, "lm.arpa: found beside the ini ("), "%s", err);
    cr_assert(!strstr(err, "warning"), "%s", err);
    free(out), free(err);
    /* from the ini's own folder: the same files, no warning */
    cr_assert_eq(run_in(model, args, "a b\n", &out, &err), 0, "%s", err);
    cr_assert_str_eq(out, "A B \n");
    cr_assert(strstr(err, "phrase-table: found in the working directory ("), "%s", err);
    cr_assert(!strstr(err, "warning"), "%s", err);
    free(out), free(err);
    /* from a folder holding another phrase-table: that one, as Moses, and a warning naming both */
    cr_assert_eq(run_in(other, args, "a b\n", &out, &err), 0, "%s", err);
    cr_assert_str_eq(out, "Z b \n");
    cr_assert(strstr(err, "warning:") && strstr(err, "moses.ini:6: phrase-table is both in the "
                                                     "working directory ("),
              "%s", err);
    cr_assert(strstr(err, "different files: the working directory's is used"), "%s", err);
    free(out), free(err);
    /* -v 0: the warning still, the path reports not */
    cr_assert_eq(run_in(other, "-f ../model/moses.ini -v 0", "a\n", &out, &err), 0, "%s", err);
    cr_assert(strstr(err, "warning:") && !strstr(err, "found beside"), "%s", err);
    free(out), free(err);
    free(args), free(model), free(other), free(empty);
}

/* Neither exists: the error names the ini line and both tried paths. */
Test(ini, paths_neither_names_both)
{
    char *model = tu_join(tmp, "model"), *cwd = tu_join(tmp, "cwd");
    copy_tiny(model);
    cr_assert_eq(tu_runf(NULL, NULL, "mkdir -p '%s' && rm '%s/lm.arpa'", cwd, model), 0);
    char *out, *err, *args = NULL, *want = NULL;
    cr_assert(asprintf(&args, "-f '%s/moses.ini'", model) > 0);
    cr_assert_eq(run_in(cwd, args, "a\n", &out, &err), 1);
    cr_assert(asprintf(&want,
                       "moses.ini:9: lm.arpa: not found in the working directory (%s/lm.arpa) "
                       "nor beside the ini (%s/lm.arpa)",
                       cwd, model) > 0);
    cr_assert(strstr(err, want), "'%s' lacks '%s'", err, want);
    free(out), free(err), free(args), free(want), free(model), free(cwd);
}

/* [input-file] follows the same rule; a missing one names both paths. */
Test(ini, input_file_rule)
{
    char *model = tu_join(tmp, "model"), *cwd = tu_join(tmp, "cwd");
    copy_tiny(model);
    cr_assert_eq(tu_runf(NULL, NULL, "mkdir -p '%s'", cwd), 0);
    char *ini = tu_join(model, "moses.ini"), *text = tu_read_file(ini, NULL), *more = NULL;
    cr_assert(asprintf(&more, "%s\n[input-file]\nsrc.txt\n", text) > 0);
    cr_assert_eq(tu_write_file(ini, more, strlen(more)), 0);
    write_in(model, "src.txt", "a\n");
    char *out, *err;
    cr_assert_eq(tu_runf(&out, &err, "cd '%s' && '%s' -f '%s' -v 0", cwd, fastsmt, ini), 0, "%s",
                 err);
    cr_assert_str_eq(out, "A \n");
    free(out), free(err);
    write_in(cwd, "src.txt", "b\n"); /* the working directory's wins (with a warning) */
    cr_assert_eq(tu_runf(&out, &err, "cd '%s' && '%s' -f '%s' -v 0", cwd, fastsmt, ini), 0, "%s",
                 err);
    cr_assert_str_eq(out, "B \n");
    cr_assert(strstr(err, "src.txt is both in the working directory"), "%s", err);
    free(out), free(err);
    cr_assert_eq(tu_runf(NULL, NULL, "rm '%s/src.txt' '%s/src.txt'", cwd, model), 0);
    cr_assert_eq(tu_runf(&out, &err, "cd '%s' && '%s' -f '%s' -v 0", cwd, fastsmt, ini), 2);
    cr_assert(strstr(err, "src.txt: not found in the working directory (") &&
                  strstr(err, "nor beside the ini ("),
              "%s", err);
    free(out), free(err), free(ini), free(text), free(more), free(model), free(cwd);
}

/* Decodes "a b\nc\nb a c x y\n" with the model of ini from cwd (stderr must stay empty): the 1-best,
 * and the 10-best list read back into *nbest. */
static char *decode_from(const char *cwd, const char *ini, char **nbest)
{
    char *nb = tu_join(tmp, "from.nbest"), *args = NULL, *out, *err;
    cr_assert(asprintf(&args, "-f '%s' -v 0 -n-best-list '%s' 10", ini, nb) > 0);
    cr_assert_eq(run_in(cwd, args, "a b\nc\nb a c x y\n", &out, &err), 0, "%s: %s", ini, err);
    cr_assert_str_eq(err, "", "%s from %s", ini, cwd);
    *nbest = tu_read_file(nb, NULL);
    cr_assert(*nbest && strlen(*nbest) > 0);
    free(nb), free(args), free(err);
    return out;
}

/* fastsmt-binarize names what it built relative to OUTDIR and writes [relative-paths] ini, with a
 * header saying so: the folder, moved (mv) or copied (cp -r) elsewhere, decodes byte-identically,
 * and files of the same names in the working directory (another binarized model's) are never
 * read, not even with a warning. */
Test(ini, binarized_paths_relative)
{
    char *bin = tu_bin_path("fastsmt-binarize"), *out_dir = tu_join(tmp, "bin");
    char *cwd = tu_join(tmp, "cwd"), *decoy = tu_join(tmp, "decoy"), *out, *err;
    cr_assert_eq(tu_runf(&out, &err, "cd '%s' && '%s' moses.ini '%s'", tiny, bin, out_dir), 0,
                 "%s", err);
    free(out), free(err);
    char *ini = tu_join(out_dir, "moses.ini"), *text = tu_read_file(ini, NULL);
    cr_assert(strstr(text, "\n[relative-paths]\nini\n") && strstr(text, "moved or copied"), "%s",
              text);
    cr_assert(strstr(text, " path=phrase-table.ppt ") && strstr(text, " path=LM0.glm "), "%s",
              text);
    cr_assert(!strstr(text, "path=/") && !strstr(text, out_dir), "%s", text);
    /* the decoys: another binarized model in the working directory, whose "a" is Z */
    copy_tiny(decoy);
    write_in(decoy, "phrase-table", "a ||| Z ||| 0.5 ||| 0-0 ||| 1 1 1\n");
    cr_assert_eq(tu_runf(&out, &err, "'%s' '%s/moses.ini' '%s'", bin, decoy, cwd), 0, "%s", err);
    free(out), free(err);
    char *decoy_ini = tu_join(cwd, "moses.ini"), *dnb, *d1 = decode_from(tmp, decoy_ini, &dnb);
    cr_assert(!strncmp(d1, "Z ", 2), "the decoy must translate otherwise: %s", d1);
    char *nb, *one = decode_from(tmp, ini, &nb);
    cr_assert(!strncmp(one, "A B \nY X \n", 10), "%s", one);
    /* moved, then copied (the moved one removed): from the decoys' folder, and by a relative -f */
    char *moved = tu_join(tmp, "elsewhere/deeper/bin"), *copy = tu_join(tmp, "copy/b");
    cr_assert_eq(tu_runf(NULL, NULL, "mkdir -p '%s/elsewhere/deeper' '%s/copy' && mv '%s' '%s'",
                         tmp, tmp, out_dir, moved), 0);
    for (int k = 0; k < 3; k++) {
        if (k == 1)
            cr_assert_eq(tu_runf(NULL, NULL, "cp -r '%s' '%s' && rm -r '%s/elsewhere'", moved,
                                 copy, tmp), 0);
        char *at = tu_join(k ? copy : moved, "moses.ini"), *nb2, *one2;
        one2 = k == 2 ? decode_from(tmp, "copy/b/moses.ini", &nb2) : decode_from(cwd, at, &nb2);
        cr_assert_str_eq(one2, one, "%d", k);
        cr_assert_str_eq(nb2, nb, "%d", k);
        free(at), free(nb2), free(one2);
    }
    free(bin), free(out_dir), free(cwd), free(decoy), free(ini), free(text), free(decoy_ini);
    free(dnb), free(d1), free(nb), free(one), free(moved), free(copy);
}

/* Binarizing again, a binarized model into another folder: its binaries, already binary, are
 * not rebuilt and lie outside the new folder, so they are named by absolute path; its
 * [relative-paths] is replaced, not given twice; a [weight-file] inside the new folder is named
 * relative to it, one outside by absolute path. */
Test(ini, binarized_again_names_outside_files_absolutely)
{
    char *bin = tu_bin_path("fastsmt-binarize"), *first = tu_join(tmp, "first");
    char *second = tu_join(tmp, "second"), *out, *err;
    cr_assert_eq(tu_runf(&out, &err, "'%s' '%s/moses.ini' '%s'", bin, tiny, first), 0, "%s", err);
    free(out), free(err);
    char *ini1 = tu_join(first, "moses.ini"), *text1 = tu_read_file(ini1, NULL), *with = NULL;
    cr_assert(asprintf(&with, "%s[weight-file]\n../second/w.txt\n", text1) > 0);
    cr_assert_eq(tu_write_file(ini1, with, strlen(with)), 0);
    cr_assert_eq(tu_runf(NULL, NULL, "mkdir -p '%s'", second), 0);
    write_in(second, "w.txt", "# no sparse weights\n");
    cr_assert_eq(tu_runf(&out, &err, "'%s' '%s' '%s'", bin, ini1, second), 0, "%s", err);
    free(out), free(err);
    char *ini2 = tu_join(second, "moses.ini"), *text2 = tu_read_file(ini2, NULL), *want = NULL;
    char *real1 = realpath(first, NULL);
    cr_assert(asprintf(&want, " path=%s/phrase-table.ppt ", real1) > 0);
    cr_assert(strstr(text2, want), "%s", text2);
    free(want);
    cr_assert(asprintf(&want, " path=%s/LM0.glm ", real1) > 0);
    cr_assert(strstr(text2, want), "%s", text2);
    free(want);
    const char *sec = strstr(text2, "\n[relative-paths]\n");
    cr_assert(sec && !strstr(sec + 1, "\n[relative-paths]\n"), "%s", text2);
    cr_assert(strstr(text2, "\n[weight-file]\nw.txt\n"), "%s", text2);
    char *nb1, *nb2, *o1 = decode_from(tmp, ini1, &nb1), *o2 = decode_from(tmp, ini2, &nb2);
    cr_assert_str_eq(o1, o2);
    cr_assert_str_eq(nb1, nb2);
    free(o1), free(o2), free(nb1), free(nb2);
    /* the [weight-file] outside the new folder: absolute */
    char *third = tu_join(tmp, "third"), *ini3 = tu_join(third, "moses.ini"), *real2 = NULL;
    cr_assert_eq(tu_runf(&out, &err, "'%s' '%s' '%s'", bin, ini1, third), 0, "%s", err);
    free(out), free(err);
    char *text3 = tu_read_file(ini3, NULL);
    real2 = realpath(second, NULL);
    cr_assert(asprintf(&want, "\n[weight-file]\n%s/w.txt\n", real2) > 0);
    cr_assert(strstr(text3, want), "%s", text3);
    free(want), free(real2), free(text3), free(ini3), free(third);
    free(bin), free(first), free(second), free(ini1), free(text1), free(with), free(ini2);
    free(text2), free(real1);
}

/* [relative-paths] ini: a relative path is looked up beside the ini only, never in the working
 * directory (no warning, the working directory's file not read) — the load, the [input-file],
 * dec_model_files (what -resume fingerprints) alike; not found names the one path tried.
 * cwd-first is Moses's rule, as without the section (paths_working_directory_first). */
Test(ini, relative_paths_ini_beside_only)
{
    char *model = tu_join(tmp, "model"), *other = tu_join(tmp, "other");
    copy_tiny(model);
    copy_tiny(other);
    write_in(other, "phrase-table", "a ||| Z ||| 0.5 ||| 0-0 ||| 1 1 1\n");
    write_in(model, "src.txt", "a b\n");
    write_in(other, "src.txt", "a\n");
    char *ini = tu_join(model, "moses.ini"), *text = tu_read_file(ini, NULL), *with = NULL;
    for (int beside = 0; beside <= 1; beside++) {
        free(with);
        cr_assert(asprintf(&with, "[relative-paths]\n%s\n%s[input-file]\nsrc.txt\n",
                           beside ? "ini" : "cwd-first", text) > 0);
        cr_assert_eq(tu_write_file(ini, with, strlen(with)), 0);
        char *out, *err;
        cr_assert_eq(tu_runf(&out, &err, "cd '%s' && '%s' -f '%s' -v 2", other, fastsmt, ini), 0,
                     "%s", err);
        cr_assert_str_eq(out, beside ? "A B \n" : "Z \n", "%s", err);
        cr_assert(beside ? !strstr(err, "warning") && strstr(err, "src.txt: found beside the ini")
                         : strstr(err, "phrase-table is both in the working directory") != NULL,
                  "%s", err);
        free(out), free(err);
    }
    /* dec_model_files, from the other folder: the files beside the ini */
    char *here = getcwd(NULL, 0);
    cr_assert_eq(chdir(other), 0);
    dec_model *m;
    smt_err e;
    dec_options opt;
    dec_options_default(&opt);
    opt.warn = fopen("/dev/null", "w");
    cr_assert_eq(dec_model_load(&m, ini, &opt, &e), 0, "%s", e.msg);
    char **files;
    size_t n;
    cr_assert_eq(dec_model_files(m, &files, &n, &e), 0, "%s", e.msg);
    char *pt = tu_join(model, "phrase-table");
    int listed = 0;
    for (size_t i = 0; i < n; i++) {
        cr_assert(strncmp(files[i], model, strlen(model)) == 0, "%s", files[i]);
        listed |= !strcmp(files[i], pt);
    }
    cr_assert(listed, "%s not listed", pt);
    free(files);
    dec_model_free(m);
    fclose(opt.warn);
    cr_assert_eq(chdir(here), 0);
    /* not beside the ini, though in the working directory: not found, one path named */
    cr_assert_eq(tu_runf(NULL, NULL, "rm '%s/lm.arpa'", model), 0);
    char *out, *err, *want = NULL;
    cr_assert_eq(tu_runf(&out, &err, "cd '%s' && '%s' -f '%s'", other, fastsmt, ini), 1);
    cr_assert(asprintf(&want, "moses.ini:11: lm.arpa: not found beside the ini (%s/lm.arpa; "
                              "[relative-paths] ini: the working directory is not searched)",
                       model) > 0);
    cr_assert(strstr(err, want), "'%s' lacks '%s'", err, want);
    free(out), free(err), free(want), free(here), free(pt);
    free(model), free(other), free(ini), free(text), free(with);
}

/* The fields of an n-best line: words and total, and its scores sorted (names dropped). */
static void nbest_key(const char *line, char *buf, size_t size, double *total)
{
    char *copy = strdup(line), *f[4] = {0}, *p = copy;
    for (int i = 0; i < 4 && p; i++) {
        f[i] = p;
        p = strstr(p, " ||| ");
        if (p) {
            *p = '\0';
            p += 5;
        }
    }
    cr_assert(f[3], "not an n-best line: %s", line);
    double v[64];
    int n = 0;
    for (char *t = strtok(f[2], " "); t; t = strtok(NULL, " "))
        if (!strchr(t, '=') && n < 64)
            v[n++] = atof(t);
    for (int i = 1; i < n; i++) /* insertion sort */
        for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
            double x = v[j];
            v[j] = v[j - 1];
            v[j - 1] = x;
        }
    *total = atof(f[3]);
    size_t used = (size_t)snprintf(buf, size, "%s|%s|", f[0], f[1]);
    for (int i = 0; i < n && used < size; i++)
        used += (size_t)snprintf(buf + used, size - used, "%.6g,", v[i]);
    free(copy);
}

/* Decodes input with ini_a and ini_b (1-best and 20-best distinct): the 1-best byte-identical,
 * the n-best lists with the same lines up to feature names and order (same_nbest: byte-identical). */
static void compare(const char *ini_a, const char *ini_b, const char *input, int same_nbest)
{
    char *na = tu_join(tmp, "a.nbest"), *nb = tu_join(tmp, "b.nbest"), *oa, *ob, *ea, *eb;
    cr_assert_eq(tu_runf(&oa, &ea, "'%s' -f '%s' -v 0 -n-best-list '%s' 20 distinct < '%s'",
                         fastsmt, ini_a, na, input), 0, "%s", ea);
    cr_assert_eq(tu_runf(&ob, &eb, "'%s' -f '%s' -v 0 -n-best-list '%s' 20 distinct < '%s'",
                         fastsmt, ini_b, nb, input), 0, "%s", eb);
    cr_assert(strlen(oa) > 0);
    cr_assert_str_eq(oa, ob);
    char *ta = tu_read_file(na, NULL), *tb = tu_read_file(nb, NULL);
    cr_assert(ta && tb && strlen(ta) > 0);
    if (same_nbest) {
        cr_assert_str_eq(ta, tb);
    } else {
        char *sa = NULL, *sb = NULL, ka[4096], kb[4096];
        int lines = 0;
        for (char *la = strtok_r(ta, "\n", &sa), *lb = strtok_r(tb, "\n", &sb); la || lb;
             la = strtok_r(NULL, "\n", &sa), lb = strtok_r(NULL, "\n", &sb), lines++) {
            cr_assert(la && lb, "n-best lists of different lengths");
            double ta_, tb_;
            nbest_key(la, ka, sizeof ka, &ta_);
            nbest_key(lb, kb, sizeof kb, &tb_);
            cr_assert_str_eq(ka, kb);
            /* the total: summed in another feature order, its float sum may differ in the 6th
             * digit printed (as Moses's would) */
            cr_assert(fabs(ta_ - tb_) <= 2e-4 * fmax(1, fabs(ta_)), "%s\n%s", la, lb);
        }
        cr_assert(lines > 3);
    }
    free(na), free(nb), free(oa), free(ob), free(ea), free(eb), free(ta), free(tb);
}

/* The tiny model's ini in the old format: the 1-best as moses.ini's, the n-best byte-identical to
 * its conversion written out by hand (moses-converted.ini: Moses's names and order), and the same
 * paths, scores and totals as moses.ini's. */
Test(ini, old_format_tiny)
{
    char *old = tu_join(tiny, "moses-old.ini"), *conv = tu_join(tiny, "moses-converted.ini");
    char *neu = tu_join(tiny, "moses.ini"), *in = tu_join(tmp, "in.txt");
    const char *text = "a b c\nc x y\nb a z c\nx y a b\n";
    cr_assert_eq(tu_write_file(in, text, strlen(text)), 0);
    compare(old, conv, in, 1);
    compare(old, neu, in, 0);
    /* -show-weights: Moses's names, in Moses's order */
    char *out, *err;
    cr_assert_eq(tu_runf(&out, &err, "'%s' -f '%s' -show-weights", fastsmt, old), 0, "%s", err);
    cr_assert(strstr(out, "KENLM0= 1.000000\nDistortion0= 0.300000\nLexicalReordering0= 0.100000 "
                          "0.100000 0.100000 0.100000 0.100000 0.100000\nPhrasePenalty0= 0.200000\n"
                          "WordPenalty0= 0.500000\nUnknownWordPenalty0 UNTUNEABLE\n"
                          "PhraseDictionaryMemory0= 1.000000\n"),
              "%s", out);
    free(out), free(err), free(old), free(conv), free(neu), free(in);
}

/* examples/sample's ini in the old format decodes the sample as the new-format ini does. */
Test(ini, old_format_sample)
{
    char *old = tu_data_path("decoder/sample-old.ini");
    char *neu = tu_data_path("../../examples/sample/moses.ini");
    char *in = tu_data_path("../../examples/sample/sample.es");
    compare(old, neu, in, 0);
    free(old), free(neu), free(in);
}

/* fastsmt-binarize of an old-format ini writes a new-format ini that decodes identically. */
Test(ini, old_format_binarized)
{
    char *bin = tu_bin_path("fastsmt-binarize"), *out_dir = tu_join(tmp, "bin"), *out, *err;
    char *old = tu_join(tiny, "moses-old.ini"), *in = tu_join(tmp, "in.txt");
    cr_assert_eq(tu_runf(&out, &err, "'%s' '%s' '%s'", bin, old, out_dir), 0, "%s", err);
    free(out), free(err);
    char *ini = tu_join(out_dir, "moses.ini"), *text = tu_read_file(ini, NULL);
    cr_assert(strstr(text, "[feature]\nKENLM ") && strstr(text, "ProbingPT ") &&
                  strstr(text, " name=PhraseDictionaryMemory0\n") &&
                  !strstr(text, "[weight-t]") && !strstr(text, "[ttable-file]"),
              "%s", text);
    cr_assert(strstr(text, "\n[relative-paths]\nini\n") &&
                  strstr(text, " path=phrase-table.ppt ") && !strstr(text, "path=/"),
              "%s", text);
    const char *src = "a b c\nc x y\nb a z c\n";
    cr_assert_eq(tu_write_file(in, src, strlen(src)), 0);
    compare(old, ini, in, 1);
    /* an old-format ini with its own [relative-paths]: the new ini has one, ini */
    char *dir = tu_join(tmp, "old-rp"), *old_rp = tu_join(dir, "moses-old.ini"), *with = NULL;
    copy_tiny(dir);
    char *old_text = tu_read_file(old_rp, NULL);
    cr_assert(asprintf(&with, "[relative-paths]\ncwd-first\n%s", old_text) > 0);
    cr_assert_eq(tu_write_file(old_rp, with, strlen(with)), 0);
    cr_assert_eq(tu_runf(&out, &err, "'%s' '%s' '%s/bin2'", bin, old_rp, tmp), 0, "%s", err);
    free(out), free(err), free(text);
    free(ini);
    ini = tu_join(tmp, "bin2/moses.ini");
    text = tu_read_file(ini, NULL);
    const char *sec = strstr(text, "\n[relative-paths]\nini\n");
    cr_assert(sec && !strstr(sec + 1, "\n[relative-paths]\n"), "%s", text);
    compare(old, ini, in, 1);
    free(dir), free(old_rp), free(with), free(old_text);
    free(bin), free(out_dir), free(old), free(in), free(ini), free(text);
}

static char *write_ini(const char *name, const char *text)
{
    char *p = tu_join(tmp, name);
    cr_assert_eq(tu_write_file(p, text, strlen(text)), 0);
    return p;
}

/* The load of ini fails with every fragment in the message. */
static void expect_error(const char *text, const char *frag1, const char *frag2)
{
    char *ini = write_ini("bad.ini", text);
    dec_model *m = NULL;
    smt_err e;
    smt_err_clear(&e);
    dec_options opt;
    dec_options_default(&opt);
    opt.warn = fopen("/dev/null", "w");
    int rc = dec_model_load(&m, ini, &opt, &e);
    fclose(opt.warn);
    cr_assert(rc < 0 && !m, "loaded: %s", text);
    cr_assert(strstr(e.msg, frag1) && (!frag2 || strstr(e.msg, frag2)), "'%s' lacks '%s'/'%s'",
              e.msg, frag1, frag2 ? frag2 : "");
    free(ini);
}

/* What the old format cannot say here is refused by name; what Moses would drop is an error. */
Test(ini, old_format_errors)
{
    char *t = NULL;
    const char *rest = "[lmodel-file]\n8 0 2 %s/lm.arpa\n[weight-l]\n1\n[weight-w]\n0.5\n%s";
    /* mixed with the new format */
    cr_assert(asprintf(&t, "[ttable-file]\n0 0 0 1 %s/phrase-table\n[weight-t]\n1\n[feature]\n"
                           "WordPenalty\n", tiny) > 0);
    expect_error(t, "do not mix the old and the new format", "[ttable-file]");
    free(t);
    static const char *const cases[][3] = {
        {"[ttable-file]\n12 0 0 1 %s/phrase-table\n[weight-t]\n1\n", "implementation 12",
         "CompactPT"},
        {"[ttable-file]\n2 0 0 1 %s/phrase-table\n[weight-t]\n1\n", "OnDisk", NULL},
        {"[ttable-file]\n0 0 1 %s/phrase-table\n[weight-t]\n1\n", "4-field format", NULL},
        {"[ttable-file]\n0 0 0 2 %s/phrase-table\n[weight-t]\n1\n", "[weight-t] has 1 weights",
         "too few"},
        {"[ttable-file]\n0 0 0 1 %s/phrase-table\n[weight-t]\n1\n2\n", "[weight-t] has 2 weights",
         "take 1"},
        {"[ttable-file]\n0 0 0 1 %s/phrase-table\n[weight-t]\n1 2\n",
         "one weight a line", NULL},
        {"[ttable-file]\n0 0 0 1 %s/phrase-table\n[weight-t]\n1\n[weight-generation]\n1\n",
         "[weight-generation]", "factored"},
        {"[ttable-file]\n0 0 0 1 %s/phrase-table\n[weight-t]\n1\n[weight-i]\n1\n", "[weight-i]",
         "confusion"},
        {"[ttable-file]\n0 0 0 1 %s/phrase-table\n[weight-t]\n1\n[distortion-file]\n0-0 msd 3 x\n",
         "[distortion-file] without [weight-d]", NULL}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *head = NULL;
        cr_assert(asprintf(&head, cases[i][0], tiny) > 0);
        cr_assert(asprintf(&t, rest, tiny, head) > 0);
        expect_error(t, cases[i][1], cases[i][2]);
        free(head), free(t);
    }
    cr_assert(asprintf(&t, "[ttable-file]\n0 0 0 1 %s/phrase-table\n[weight-t]\n1\n"
                           "[lmodel-file]\n3 0 2 %s/lm.arpa\n[weight-l]\n1\n[weight-w]\n0.5\n",
                       tiny, tiny) > 0);
    expect_error(t, "LM type 3 is not supported", NULL);
    free(t);
}

/* Old weights pass through a float printed with 6 significant digits, as Moses's conversion. */
Test(ini, old_format_weights_as_moses)
{
    char *t = NULL, *out, *err;
    cr_assert(asprintf(&t, "[ttable-file]\n0 0 0 1 %s/phrase-table\n[weight-t]\n0.123456789\n"
                           "[lmodel-file]\n8 0 2 %s/lm.arpa\n[weight-l]\n1\n[weight-w]\n0.5\n",
                       tiny, tiny) > 0);
    char *ini = write_ini("w.ini", t);
    cr_assert_eq(tu_runf(&out, &err, "'%s' -f '%s' -show-weights", fastsmt, ini), 0, "%s", err);
    cr_assert(strstr(out, "PhraseDictionaryMemory0= 0.123457\n"), "%s", out);
    cr_assert(strstr(out, "KENLM0= 1.000000\n") && strstr(out, "WordPenalty0= 0.500000\n"), "%s",
              out);
    free(t), free(ini), free(out), free(err);
}

/* The tiny ini with the LM line's type and extra keys, and the LM weights given. */
static char *tiny_lm_ini(const char *name, const char *lm_type, const char *lm_path,
                         const char *lm_extra, const char *lm_weights, const char *pt)
{
    char *t = NULL;
    cr_assert(asprintf(&t,
                       "[feature]\nUnknownWordPenalty\nWordPenalty\nPhrasePenalty\n"
                       "PhraseDictionaryMemory name=TranslationModel0 num-features=1 path=%s\n"
                       "Distortion\n%s name=LM0 factor=0 path=%s order=2%s\n"
                       "[weight]\nDistortion0= 0.3\nLM0= %s\nWordPenalty0= 0.5\n"
                       "PhrasePenalty0= 0.2\nTranslationModel0= 1\nUnknownWordPenalty0= 1\n",
                       pt, lm_type, lm_path, lm_extra, lm_weights) > 0);
    char *p = write_ini(name, t);
    free(t);
    return p;
}

/* SRILM and IRSTLM features naming an ARPA file decode as KENLM (a note, once); a non-ARPA file
 * there is an error naming the type. */
Test(ini, srilm_irstlm_arpa)
{
    char *pt = tu_join(tiny, "phrase-table"), *lm = tu_join(tiny, "lm.arpa");
    char *ken = tiny_lm_ini("ken.ini", "KENLM", lm, "", "1", pt);
    char *in = write_ini("in.txt", "a b c\nc x y\n"), *o1, *o2, *e1, *e2;
    cr_assert_eq(tu_runf(&o1, &e1, "'%s' -f '%s' -v 0 < '%s'", fastsmt, ken, in), 0, "%s", e1);
    static const char *const types[] = {"IRSTLM", "SRILM"};
    for (int i = 0; i < 2; i++) {
        char *ini = tiny_lm_ini("x.ini", types[i], lm, "", "1", pt);
        cr_assert_eq(tu_runf(&o2, &e2, "'%s' -f '%s' -v 0 < '%s'", fastsmt, ini, in), 0, "%s",
                     e2);
        cr_assert_str_eq(o1, o2);
        cr_assert(strstr(e2, "LM0 is a ") && strstr(e2, types[i]) &&
                      strstr(e2, "naming an ARPA file: read as ARPA"),
                  "%s", e2);
        free(o2), free(e2), free(ini);
        ini = tiny_lm_ini("x.ini", types[i], pt, "", "1", pt); /* a phrase table is no ARPA */
        cr_assert_eq(tu_runf(&o2, &e2, "'%s' -f '%s' -v 0 < '%s'", fastsmt, ini, in), 1);
        cr_assert(strstr(e2, "is not an ARPA file") && strstr(e2, types[i]), "%s", e2);
        free(o2), free(e2), free(ini);
    }
    free(o1), free(e1), free(pt), free(lm), free(ken), free(in);
}

/* Parses an n-best line's LM0 scores, its words and total. */
static int lm_scores(const char *line, double *lm, double *oov, char *words, size_t size,
                     double *total)
{
    const char *w = strstr(line, " ||| "), *f = w ? strstr(w + 5, " ||| ") : NULL;
    const char *t = f ? strstr(f + 5, " ||| ") : NULL, *l = f ? strstr(f, "LM0= ") : NULL;
    if (!t || !l)
        return -1;
    snprintf(words, size, "%.*s", (int)(f - w - 5), w + 5);
    *total = atof(t + 5);
    return sscanf(l, "LM0= %lf %lf", lm, oov);
}

/* oov-feature=1: the LM's second score is the number of target words the LM does not know (every
 * phrase's, unknown source words passed through included), weighted by the second LM weight. */
Test(ini, lm_oov_feature)
{
    /* a table where "b" also becomes Q, a word the LM does not know */
    char *pt = write_ini("pt", "a ||| A ||| 0.5 ||| 0-0 ||| 1 1 1\nb ||| B ||| 0.25 ||| 0-0 ||| "
                               "1 1 1\nb ||| Q ||| 0.5 ||| 0-0 ||| 1 1 1\n");
    char *lm = tu_join(tiny, "lm.arpa"), *in = write_ini("in.txt", "a b w\n");
    char *plain = tiny_lm_ini("plain.ini", "KENLM", lm, "", "1", pt);
    char *oov0 = tiny_lm_ini("oov0.ini", "KENLM", lm, " oov-feature=1", "1 0", pt);
    char *oovn = tiny_lm_ini("oovn.ini", "KENLM", lm, " oov-feature=1 num-features=2", "1 -10", pt);
    char *oovp = tiny_lm_ini("oovp.ini", "KENLM", lm, " oov-feature=1", "1 10", pt);
    char *nb = tu_join(tmp, "nb"), *o1, *o2, *e;
    cr_assert_eq(tu_runf(&o1, &e, "'%s' -f '%s' -v 0 < '%s'", fastsmt, plain, in), 0, "%s", e);
    free(e);
    /* weight 0: the same translation, and each n-best line's second LM score is its OOV count */
    cr_assert_eq(tu_runf(&o2, &e, "'%s' -f '%s' -v 0 -n-best-list '%s' 10 < '%s'", fastsmt, oov0,
                         nb, in), 0, "%s", e);
    cr_assert_str_eq(o1, o2);
    cr_assert_str_eq(o1, "A B w \n"); /* B: the LM's say beats the table's 0.5 for Q */
    free(o2), free(e);
    char *text = tu_read_file(nb, NULL), *save = NULL;
    int n = 0;
    for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save), n++) {
        double s, c, total;
        char words[256];
        cr_assert_eq(lm_scores(l, &s, &c, words, sizeof words, &total), 2, "%s", l);
        /* by hand: w is passed through (unknown to the LM), Q unknown to the LM, A and B known */
        double want = (strstr(words, "Q") ? 1 : 0) + (strstr(words, "w") ? 1 : 0);
        cr_assert_eq(c, want, "%s", l);
    }
    cr_assert(n >= 2); /* A B w and A Q w, each segmented in several ways */
    free(text);
    /* weight +10: each OOV gains 10; Q now wins */
    cr_assert_eq(tu_runf(&o2, &e, "'%s' -f '%s' -v 0 < '%s'", fastsmt, oovp, in), 0, "%s", e);
    cr_assert_str_eq(o2, "A Q w \n");
    free(o2), free(e);
    /* weight -10: each OOV costs 10; the total by hand */
    cr_assert_eq(tu_runf(&o2, &e, "'%s' -f '%s' -v 0 -n-best-list '%s' 10 < '%s'", fastsmt, oovn,
                         nb, in), 0, "%s", e);
    cr_assert_str_eq(o2, "A B w \n");
    free(o2), free(e);
    text = tu_read_file(nb, NULL);
    double s, c, total;
    char words[256];
    cr_assert_eq(lm_scores(text, &s, &c, words, sizeof words, &total), 2, "%s", text);
    cr_assert_str_eq(words, "A B w ");
    cr_assert_eq(c, 1);
    /* by hand: total = LM + 0.5 WP + 0.2 PP + TM + 0.3 D + UWP - 10 * OOV; A B w: WP -3, PP 3,
     * TM ln 0.5 + ln 0.25, D 0, UWP -100 (w unknown), LM from the n-best line */
    double want = s + 0.5 * -3 + 0.2 * 3 + log(0.5) + log(0.25) - 100 - 10 * 1;
    cr_assert(fabs(total - want) < 1e-3, "total %f, by hand %f: %s", total, want, text);
    free(text);
    /* -show-weights: two LM weights */
    cr_assert_eq(tu_runf(&o2, &e, "'%s' -f '%s' -show-weights", fastsmt, oovn), 0, "%s", e);
    cr_assert(strstr(o2, "LM0= 1.000000 -10.000000\n"), "%s", o2);
    free(o2), free(e);
    /* num-features must agree with oov-feature */
    char *bad = tiny_lm_ini("bad.ini", "KENLM", lm, " oov-feature=1 num-features=1", "1", pt);
    cr_assert_eq(tu_runf(&o2, &e, "'%s' -f '%s' < '%s'", fastsmt, bad, in), 1);
    cr_assert(strstr(e, "LM0 has 2 scores (oov-feature=1), not 1"), "%s", e);
    free(o2), free(e), free(bad);
    /* the old format's [lmodel-oov-feature] */
    char *t = NULL;
    cr_assert(asprintf(&t, "[ttable-file]\n0 0 0 1 %s\n[weight-t]\n1\n[lmodel-file]\n8 0 2 %s\n"
                           "[lmodel-oov-feature]\n1\n[weight-l]\n1\n-10\n[weight-w]\n0.5\n"
                           "[weight-p]\n0.2\n[weight-d]\n0.3\n[weight-u]\n1\n",
                       pt, lm) > 0);
    char *old = write_ini("old.ini", t);
    cr_assert_eq(tu_runf(&o2, &e, "'%s' -f '%s' -v 0 -n-best-list '%s' 1 < '%s'", fastsmt, old,
                         nb, in), 0, "%s", e);
    cr_assert_str_eq(o2, "A B w \n");
    text = tu_read_file(nb, NULL);
    cr_assert(strstr(text, "KENLM0= ") && strstr(text, " 1 Distortion0= 0 "), "%s", text);
    free(text), free(o2), free(e), free(t), free(old);
    free(pt), free(lm), free(in), free(plain), free(oov0), free(oovn), free(oovp), free(nb), free(o1);
}

/* The shared model's ini converted to the old format: the first 50 lines of test-a as with the
 * new-format ini. */
Test(ini, old_format_shared, .timeout = 600)
{
    char *src = tu_shared_path("models/bible-es-en/moses.ini");
    char *test = tu_shared_path("data/bible/test-a.es");
    if (!src || !test)
        cr_skip_test("shared data absent (FASTSMT_SHARED): the shared model in the old format "
                     "not tested");
    char *dir = tu_shared_path("models/bible-es-en"), *text = tu_read_file(src, NULL);
    cr_assert_not_null(text);
    /* the weights of the new-format ini, one a line, in the old sections' order */
    static const char *const names[] = {"LexicalReordering0=", "Distortion0=", "LM0=",
                                        "WordPenalty0=", "PhrasePenalty0=", "TranslationModel0=",
                                        "UnknownWordPenalty0="};
    char *w[7] = {0};
    for (int i = 0; i < 7; i++) {
        char *p = strstr(text, names[i]);
        cr_assert(p, "%s lacks %s", src, names[i]);
        p += strlen(names[i]);
        size_t len = strcspn(p, "\n");
        w[i] = strndup(p, len);
        for (char *q = w[i]; *q; q++) /* one weight a line */
            if (*q == ' ')
                *q = '\n';
    }
    char *old = NULL;
    cr_assert(asprintf(&old,
                       "[input-factors]\n0\n[mapping]\n0 T 0\n[ttable-file]\n0 0 0 4 "
                       "%s/phrase-table.gz\n[lmodel-file]\n8 0 5 %s/lm.5.arpa.gz\n"
                       "[distortion-file]\n0-0 wbe-msd-bidirectional-fe-allff 6 "
                       "%s/reordering-table.wbe-msd-bidirectional-fe.gz\n"
                       "[cube-pruning-pop-limit]\n400\n[distortion-limit]\n6\n[s]\n100\n"
                       "[search-algorithm]\n1\n[weight-d]\n%s\n%s\n[weight-l]\n%s\n"
                       "[weight-w]\n%s\n[weight-p]\n%s\n[weight-t]\n%s\n[weight-u]\n%s\n",
                       dir, dir, dir, w[1], w[0], w[2], w[3], w[4], w[5], w[6]) > 0);
    char *old_ini = write_ini("old.ini", old), *in = tu_join(tmp, "in.txt");
    cr_assert_eq(tu_runf(NULL, NULL, "head -50 '%s' > '%s'", test, in), 0);
    compare(old_ini, src, in, 0);
    for (int i = 0; i < 7; i++)
        free(w[i]);
    free(src), free(test), free(dir), free(text), free(old), free(old_ini), free(in);
}

/* Loads ini with opt.verbose = verbose and returns what went to the warning stream. */
static char *load_messages(const char *ini, int verbose)
{
    char *text = NULL;
    size_t len = 0;
    FILE *w = open_memstream(&text, &len);
    cr_assert_not_null(w);
    dec_options opt;
    dec_options_default(&opt);
    opt.warn = w;
    opt.verbose = verbose;
    dec_model *m = NULL;
    smt_err e;
    cr_assert_eq(dec_model_load(&m, ini, &opt, &e), 0, "%s", e.msg);
    dec_model_free(m);
    cr_assert_eq(fclose(w), 0);
    return text;
}

/* The library: dec_options.verbose 2 reports where each file was found; -1 (the default) takes
 * the ini's [verbose]; 1 and 0 report nothing. */
Test(ini, load_verbosity)
{
    char *model = tu_join(tmp, "model");
    copy_tiny(model);
    char *ini = tu_join(model, "moses.ini"), *msg;
    msg = load_messages(ini, 2);
    cr_assert(strstr(msg, "moses.ini:6: phrase-table: found ") &&
                  strstr(msg, "moses.ini:7: reordering-table: found ") &&
                  strstr(msg, "moses.ini:9: lm.arpa: found "),
              "%s", msg);
    free(msg);
    msg = load_messages(ini, 1);
    cr_assert_str_eq(msg, "");
    free(msg);
    msg = load_messages(ini, -1);
    cr_assert_str_eq(msg, "");
    free(msg);
    char *text = tu_read_file(ini, NULL), *more = NULL;
    cr_assert(asprintf(&more, "%s\n[verbose]\n2\n", text) > 0);
    cr_assert_eq(tu_write_file(ini, more, strlen(more)), 0);
    msg = load_messages(ini, -1);
    cr_assert(strstr(msg, "lm.arpa: found "), "%s", msg);
    free(msg);
    msg = load_messages(ini, 0); /* the flag wins */
    cr_assert_str_eq(msg, "");
    free(msg), free(text), free(more), free(ini), free(model);
}

/* An ini given by a relative path: the messages still name both tried paths absolutely. */
Test(ini, paths_absolute_in_messages)
{
    char *model = tu_join(tmp, "model"), *out, *err, *want = NULL;
    copy_tiny(model);
    cr_assert_eq(tu_runf(NULL, NULL, "rm '%s/lm.arpa'", model), 0);
    cr_assert_eq(run_in(tmp, "-f model/moses.ini", "a\n", &out, &err), 1);
    cr_assert(asprintf(&want, "model/moses.ini:9: lm.arpa: not found in the working directory "
                              "(%s/lm.arpa) nor beside the ini (%s/model/lm.arpa)",
                       tmp, tmp) > 0);
    cr_assert(strstr(err, want), "'%s' lacks '%s'", err, want);
    free(out), free(err), free(want), free(model);
}

/* The conversion itself, on Moses's own old-format regression ini
 * (moses-regression-tests, tests/phrase.show-weights.lex-reorder.oldformat/moses.ini, its
 * ${MODEL_PATH} made /m): the features and weights Moses's Parameter::ConvertWeightArgs makes of
 * it, in its order, with its default names; [ttable-limit]'s first value goes to the table. */
Test(ini, old_format_moses_regression_ini)
{
    const char *text =
        "[input-factors]\n0\n[mapping]\nT 0\n[ttable-file]\n0 0 0 5 "
        "/m/lexicalized-reordering/phrase-table.0-0.gz\n[lmodel-file]\n8 0 5 "
        "/m/lexicalized-reordering/europarl.lm\n[ttable-limit]\n20\n0\n[distortion-file]\n"
        "0-0 msd-bidirectional-fe 6 "
        "/m/lexicalized-reordering/reordering-table.msd-bidirectional-fe.0.5.0-0.gz\n"
        "[weight-d]\n0.5\n0.3\n0.3\n0.3\n0.3\n0.3\n0.3\n[weight-l]\n0.5000\n[weight-t]\n0.2\n"
        "0.2\n0.2\n0.2\n0.2\n[weight-w]\n-1\n[distortion-limit]\n6\n[show-weights]\n1\n";
    char *path = write_ini("reg.ini", text);
    dec_ini *ini = NULL;
    smt_err e;
    cr_assert_eq(dec_ini_load(&ini, path, &e), 0, "%s", e.msg);
    cr_assert(ini->old_format);
    static const char *const want[][2] = {
        {"KENLM0", "KENLM factor=0 order=5 num-features=1 lazyken=0 "
                   "path=/m/lexicalized-reordering/europarl.lm"},
        {"Distortion0", "Distortion"},
        {"LexicalReordering0",
         "LexicalReordering type=msd-bidirectional-fe input-factor=0 output-factor=0 "
         "num-features=6 path=/m/lexicalized-reordering/"
         "reordering-table.msd-bidirectional-fe.0.5.0-0.gz"},
        {"WordPenalty0", "WordPenalty"},
        {"UnknownWordPenalty0", "UnknownWordPenalty"},
        {"PhraseDictionaryMemory0",
         "PhraseDictionaryMemory input-factor=0 output-factor=0 "
         "path=/m/lexicalized-reordering/phrase-table.0-0.gz num-features=5 table-limit=20"}};
    cr_assert_eq(ini->n_features, 6);
    for (size_t i = 0; i < 6; i++) {
        const dec_ini_feature *f = &ini->features[i];
        char line[1024];
        size_t used = (size_t)snprintf(line, sizeof line, "%s", f->type);
        for (size_t k = 0; k < f->n_args; k++)
            used += (size_t)snprintf(line + used, sizeof line - used, " %s=%s", f->keys[k],
                                     f->values[k]);
        cr_assert_str_eq(f->name, want[i][0]);
        cr_assert_str_eq(line, want[i][1]);
    }
    static const struct {
        const char *name;
        size_t n;
        double v;
    } w[] = {{"WordPenalty0", 1, -1},          {"KENLM0", 1, 0.5},
             {"Distortion0", 1, 0.5},          {"LexicalReordering0", 6, 0.3},
             {"PhraseDictionaryMemory0", 5, 0.2}};
    cr_assert_eq(ini->n_weights, 5);
    for (size_t i = 0; i < 5; i++) {
        const dec_ini_weight *g = dec_ini_weight_named(ini, w[i].name);
        cr_assert(g, "no weights for %s", w[i].name);
        cr_assert_eq(g->n, w[i].n, "%s", w[i].name);
        for (size_t k = 0; k < g->n; k++)
            cr_assert_eq(g->values[k], w[i].v, "%s", w[i].name);
    }
    /* the old sections are gone; the others stay */
    char *const *v;
    cr_assert_eq(dec_ini_param_values(ini, "ttable-limit", &v), 0);
    cr_assert_eq(dec_ini_param_values(ini, "weight-d", &v), 0);
    cr_assert_str_eq(dec_ini_param(ini, "distortion-limit"), "6");
    cr_assert_str_eq(dec_ini_param(ini, "mapping"), "T 0");
    cr_assert_eq(dec_ini_check_sections(ini, NULL, &e), 0, "%s", e.msg);
    dec_ini_free(ini);
    free(path);
}

/* [lmodel-oov-feature] in a new-format ini (as Moses's regression test phrase.basic-lm-oov has
 * it: "KENLM ... num-features=2" and the section) switches the OOV feature on for every LM: the
 * same n-best list as oov-feature=1 on the line. */
Test(ini, lm_oov_global_section)
{
    char *pt = write_ini("pt", "a ||| A ||| 0.5 ||| 0-0 ||| 1 1 1\nb ||| Q ||| 0.5 ||| 0-0 ||| "
                               "1 1 1\n");
    char *lm = tu_join(tiny, "lm.arpa"), *in = write_ini("in.txt", "a b w\n");
    char *key = tiny_lm_ini("key.ini", "KENLM", lm, " oov-feature=1", "1 0.1", pt);
    char *t = NULL, *sec = NULL;
    char *base = tiny_lm_ini("sec.ini", "KENLM", lm, " num-features=2", "1 0.1", pt);
    t = tu_read_file(base, NULL);
    cr_assert(asprintf(&sec, "[lmodel-oov-feature]\n1\n%s", t) > 0);
    cr_assert_eq(tu_write_file(base, sec, strlen(sec)), 0);
    char *na = tu_join(tmp, "na"), *nb = tu_join(tmp, "nb"), *o, *e;
    cr_assert_eq(tu_runf(&o, &e, "'%s' -f '%s' -v 0 -n-best-list '%s' 5 < '%s'", fastsmt, key, na,
                         in), 0, "%s", e);
    free(o), free(e);
    cr_assert_eq(tu_runf(&o, &e, "'%s' -f '%s' -v 0 -n-best-list '%s' 5 < '%s'", fastsmt, base,
                         nb, in), 0, "%s", e);
    free(o), free(e);
    char *ta = tu_read_file(na, NULL), *tb = tu_read_file(nb, NULL);
    cr_assert_str_eq(ta, tb);
    cr_assert(strstr(ta, "LM0= ") && strstr(ta, " 2 WordPenalty0="), "%s", ta); /* Q and w */
    free(ta), free(tb), free(na), free(nb), free(t), free(sec), free(base), free(key);
    free(pt), free(lm), free(in);
}

/* dec_model_files: what -resume fingerprints. The ini, each table and LM it names (found as the load
 * found them, beside the ini), and its [weight-file]; in the old format too. */
Test(ini, model_files_list_every_file_the_ini_names)
{
    char *dir = tu_join(tmp, "m");
    copy_tiny(dir);
    write_in(dir, "weights.txt", "# no sparse weights\n");
    char *ini = tu_join(dir, "moses.ini"), *text = tu_read_file(ini, NULL);
    cr_assert_not_null(text);
    char *with = NULL;
    cr_assert(asprintf(&with, "%s\n[weight-file]\nweights.txt\n", text) > 0);
    cr_assert_eq(tu_write_file(ini, with, strlen(with)), 0);
    const char *expect[] = {"moses.ini", "phrase-table", "reordering-table", "lm.arpa",
                            "weights.txt"};
    for (int old = 0; old <= 1; old++) {
        char *path = old ? tu_join(dir, "moses-old.ini") : tu_join(dir, "moses.ini");
        dec_options opt;
        dec_options_default(&opt);
        dec_model *m;
        smt_err e;
        cr_assert_eq(dec_model_load(&m, path, &opt, &e), 0, "%s", e.msg);
        char **files;
        size_t n;
        cr_assert_eq(dec_model_files(m, &files, &n, &e), 0, "%s", e.msg);
        cr_assert_eq(n, old ? 4 : 5, "old %d", old);
        for (size_t i = 0; i < n; i++) {
            const char *want = i == 0 && old ? "moses-old.ini" : expect[i];
            char *full = tu_join(dir, want);
            int found = 0;
            for (size_t j = 0; j < n; j++)
                found |= !strcmp(files[j], full);
            cr_assert(found, "old %d: %s not listed (first %s)", old, full, files[0]);
            free(full);
        }
        free(files);
        dec_model_free(m);
        free(path);
    }
    free(with), free(text), free(ini), free(dir);
}

/* [relative-paths] takes one value, cwd-first or ini, read strictly (file:line). */
Test(ini, relative_paths_value_strict)
{
    expect_error("[feature]\nWordPenalty\n[relative-paths]\nbeside\n",
                 "bad.ini:4: [relative-paths] 'beside' is neither cwd-first nor ini", NULL);
    expect_error("[relative-paths]\nINI\n", "bad.ini:2: [relative-paths] 'INI' is neither", NULL);
    expect_error("[relative-paths]\n[feature]\nWordPenalty\n", "bad.ini:1: [relative-paths] has "
                 "no value", NULL);
    expect_error("[relative-paths]\nini\ncwd-first\n", "bad.ini:3: [relative-paths] has 2 values, "
                 "expected one", NULL);
    expect_error("[relative-paths]\nini\n[relative-paths]\nini\n", "bad.ini:3: section "
                 "[relative-paths] already given at line 1", NULL);
}
