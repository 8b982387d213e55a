/* test_nmt_tool.c — the `nmt` program: rescoring a small Moses n-best fixture (features, totals,
 * ranking, 1-best lines including a sentence missing from the list), BLEU against a value computed
 * by an independent Python implementation, the weight search, errors with file:line, and the
 * trainer end to end (skipped when /usr/bin/python3 cannot import torch). */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nmt.h"
#include "testutil.h"

#include <unistd.h>

static char *cmd_for(const char *fmt, const char *a, const char *b, const char *c, const char *d)
{
    char *nmt = tu_bin_path("nmt");
    char *cmd = malloc(8192);
    int n = snprintf(cmd, 8192, "%s ", nmt);
    snprintf(cmd + n, (size_t)(8192 - n), fmt, a, b, c, d);
    free(nmt);
    return cmd;
}

Test(nmt_tool, rescore_fixture)
{
    char *model = tu_data_path("nmt/tiny"), *src = tu_data_path("nmt/fixture.src"),
         *nbest = tu_data_path("nmt/fixture.nbest"), *dir = tu_tmpdir(),
         *out = tu_join(dir, "rescored.nbest");
    char *cmd = cmd_for("rescore --model %s --source %s --nbest %s --weight 0.5 --nbest-out %s",
                        model, src, nbest, out);
    char *so = NULL, *se = NULL;
    cr_assert_eq(tu_run(cmd, &so, &se), 0, "%s", se);
    /* one 1-best line per source sentence; sentence 1 has no hypotheses */
    cr_expect_str_eq(so, "and god said the light .\n\nnoah lived after the ark .\n");
    size_t len;
    char *text = tu_read_file(out, &len);
    cr_assert_not_null(text);

    /* the NMT0 values are the model's log-probabilities */
    nmt_model *m;
    nmt_ctx *ctx;
    smt_err err;
    cr_assert_eq(nmt_model_open(&m, model, &err), 0, "%s", err.msg);
    cr_assert_eq(nmt_ctx_create(&ctx, m, NULL, &err), 0, "%s", err.msg);
    const char *srcs[3] = {"y dijo dios : sea la luz .", "la tierra de abram .",
                           "y vivió noé después del arca ."};
    int lines = 0;
    long last_id = -1;
    double last_total = INFINITY;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        nmt_nbest_line nb;
        cr_assert_eq(nmt_nbest_parse(line, &nb), 0, "%s", line);
        double f, lm;
        cr_assert_eq(nmt_nbest_feature(nb.feats, "NMT0", &f), 1, "no NMT0 in %s", nb.feats);
        cr_assert_eq(nmt_nbest_feature(nb.feats, "LM0", &lm), 1);
        cr_expect(lm <= -16 && lm >= -25 && 2 * lm == floor(2 * lm), "LM0 kept as written: %g", lm);
        int32_t s[32], t[32];
        nmt_sentence ss = {s, (int)nmt_model_tokenize(m, 0, srcs[nb.id], s, 32)};
        nmt_sentence ts = {t, (int)nmt_model_tokenize(m, 1, nb.words, t, 32)};
        float lp;
        cr_assert_eq(nmt_score(ctx, 1, &ss, &ts, &lp, &err), 0, "%s", err.msg);
        cr_expect(fabs(f - lp) < 1e-3 + 1e-5 * fabs(lp), "NMT0 %g vs %g", f, lp);
        if (nb.id == last_id)
            cr_expect(nb.total <= last_total, "re-ranked best first");
        last_id = nb.id;
        last_total = nb.total;
        if (nb.id == 2 && strstr(nb.words, "noah lived after the ark .") == nb.words) {
            cr_expect(fabs(nb.total - (-9.5 + 0.5 * f)) < 1e-3, "total recomputed");
            cr_expect_str_eq(nb.rest, "0-0", "extra fields kept");
        }
        lines++;
    }
    cr_expect_eq(lines, 6);
    nmt_ctx_free(ctx);
    nmt_model_free(m);
    free(text), free(so), free(se), free(cmd);

    /* weight 0 keeps Moses's order, ties included (a stable sort) */
    cmd = cmd_for("rescore --model %s --source %s --nbest %s --weight 0 --nbest-out %s", model, src,
                  nbest, out);
    cr_assert_eq(tu_run(cmd, &so, &se), 0, "%s", se);
    cr_expect_str_eq(so, "and god said , let there be light .\n\nand noah lived after the ark .\n");
    free(so), free(se), free(cmd);

    /* a large length bonus (a re-tuned word penalty) picks the longest hypotheses */
    cmd = cmd_for("rescore --model %s --source %s --nbest %s --weight 0 --length-bonus 100%s", model,
                  src, nbest, "");
    cr_assert_eq(tu_run(cmd, &so, &se), 0, "%s", se);
    cr_expect_str_eq(so, "god said , \" let there be light . \"\n\nand noah was after the ark of the "
                         "years .\n");
    free(so), free(se), free(cmd);

    /* the weight search reads the rescored list */
    char *ref = tu_data_path("nmt/fixture.ref");
    cmd = cmd_for("tune --nbest %s --ref %s --range 0:1:0.25 --len-range -1:1:0.5 --folds 2%s", out,
                  ref, "", "");
    cr_assert_eq(tu_run(cmd, &so, &se), 0, "%s", se);
    cr_expect(strstr(so, "best weight") && strstr(so, "cross-validated BLEU"), "%s", so);
    free(so), free(se), free(cmd), free(ref);
    tu_rmtree(dir);
    free(model), free(src), free(nbest), free(dir), free(out);
}

/* A list written with -include-segmentation-in-n-best ("|s-e|" after each phrase): the markers
 * are not words, so NMT0, the totals and the 1-best are those of the plain list; the list keeps
 * its words as written. */
Test(nmt_tool, rescore_ignores_segmentation_markers)
{
    char *model = tu_data_path("nmt/tiny"), *src = tu_data_path("nmt/fixture.src"),
         *nbest = tu_data_path("nmt/fixture.nbest"), *dir = tu_tmpdir();
    char *marked = tu_join(dir, "marked.nbest"), *o1 = tu_join(dir, "o1"), *o2 = tu_join(dir, "o2");
    size_t len;
    char *text = tu_read_file(nbest, &len);
    cr_assert_not_null(text);
    /* a marker after every second word of the words field */
    char *m = malloc(len * 4 + 64), *q = m;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        char *w = strstr(line, " ||| ") + 5, *end = strstr(w, " ||| ");
        q += sprintf(q, "%.*s", (int)(w - line), line);
        int k = 0;
        for (char *p = w; p < end;) {
            char *sp = strchr(p, ' ');
            if (!sp || sp > end)
                sp = end;
            if (sp > p) {
                q += sprintf(q, "%.*s ", (int)(sp - p), p);
                if (++k % 2 == 0)
                    q += sprintf(q, "|%d-%d| ", k - 2, k - 1);
            }
            p = sp + 1;
        }
        q += sprintf(q, "%s\n", end);
    }
    cr_assert_eq(tu_write_file(marked, m, (size_t)(q - m)), 0);
    char *so1 = NULL, *so2 = NULL, *se = NULL;
    char *cmd = cmd_for("rescore --model %s --source %s --nbest %s --weight 0.5 --nbest-out %s",
                        model, src, nbest, o1);
    cr_assert_eq(tu_run(cmd, &so1, &se), 0, "%s", se);
    free(cmd), free(se);
    cmd = cmd_for("rescore --model %s --source %s --nbest %s --weight 0.5 --nbest-out %s", model,
                  src, marked, o2);
    cr_assert_eq(tu_run(cmd, &so2, &se), 0, "%s", se);
    cr_assert_str_eq(so2, so1);
    char *t1 = tu_read_file(o1, &len), *t2 = tu_read_file(o2, &len);
    cr_assert(strstr(t2, "|0-1| ") != NULL, "markers kept in the list: %s", t2);
    /* without the markers the rescored lists are the same */
    char *a = t1, *b = t2;
    while (*a || *b) {
        if (*b == '|' && b[1] >= '0' && b[1] <= '9') { /* skip "|s-e| " in the marked list */
            b = strchr(b + 1, '|') + 2;
            continue;
        }
        cr_assert_eq(*a, *b, "lists differ at %.40s / %.40s", a, b);
        a++, b++;
    }
    free(t1), free(t2), free(so1), free(so2), free(se), free(cmd), free(m), free(text);
    tu_rmtree(dir);
    free(model), free(src), free(nbest), free(dir), free(marked), free(o1), free(o2);
}

Test(nmt_tool, bad_nbest_line_names_file_and_line)
{
    char *model = tu_data_path("nmt/tiny"), *src = tu_data_path("nmt/fixture.src"),
         *dir = tu_tmpdir(), *bad = tu_join(dir, "bad.nbest");
    const char *text = "0 ||| the earth . ||| LM0= -3 ||| -3\n0 ||| no total here\n";
    cr_assert_eq(tu_write_file(bad, text, strlen(text)), 0);
    char *cmd = cmd_for("rescore --model %s --source %s --nbest %s%s", model, src, bad, "");
    char *so = NULL, *se = NULL;
    cr_expect_neq(tu_run(cmd, &so, &se), 0);
    cr_expect(strstr(se, "bad.nbest:2") != NULL, "message: %s", se);
    free(so), free(se), free(cmd);
    tu_rmtree(dir);
    free(model), free(src), free(dir), free(bad);
}

Test(nmt_tool, trainer_end_to_end, .timeout = 300)
{
    if (tu_run("/usr/bin/python3 -c 'import torch' >/dev/null 2>&1", NULL, NULL) != 0)
        cr_skip_test("/usr/bin/python3 cannot import torch (apt-get install python3-torch)");
    char *src = tu_data_path("nmt/fixture.src"), *ref = tu_data_path("nmt/fixture.ref"),
         *dir = tu_tmpdir(), *out = tu_join(dir, "model");
    char *script = tu_data_path("../../tools/nmt-train.py");
    char cmd[8192];
    snprintf(cmd, sizeof cmd,
             "/usr/bin/python3 %s --source %s --target %s --out %s --d-model 8 --heads 2 "
             "--d-ff 16 --enc-layers 1 --dec-layers 1 --min-count 1 --steps 3 --threads 1 "
             "--shared-vocab --tie-output",
             script, src, ref, out);
    char *so = NULL, *se = NULL;
    cr_assert_eq(tu_run(cmd, &so, &se), 0, "%s", se);
    nmt_model *m;
    smt_err err;
    cr_assert_eq(nmt_model_open(&m, out, &err), 0, "%s", err.msg);
    cr_expect(nmt_model_config(m)->shared_vocab);
    nmt_model_free(m);
    free(so), free(se);
    tu_rmtree(dir);
    free(src), free(ref), free(dir), free(out), free(script);
}

/* ---- the tool's contract: every command tested, strict flags, --help, no silent loss ---- */

/* Runs `nmt` + the formatted arguments (a shell command line); returns the exit status. */
static int nmt_run(char **so, char **se, const char *fmt, ...)
{
    char args[8192], *nmt = tu_bin_path("nmt"), *cmd = NULL;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    cmd = malloc(strlen(nmt) + strlen(args) + 2);
    sprintf(cmd, "%s %s", nmt, args);
    int rc = tu_run(cmd, so, se);
    free(cmd), free(nmt);
    return rc;
}

typedef struct fx {
    char *model, *src, *ref, *nbest, *dir;
} fx;

static fx fx_open(void)
{
    fx f = {tu_data_path("nmt/tiny"), tu_data_path("nmt/fixture.src"),
            tu_data_path("nmt/fixture.ref"), tu_data_path("nmt/fixture.nbest"), tu_tmpdir()};
    cr_assert_not_null(f.dir);
    return f;
}

static void fx_close(fx *f)
{
    tu_rmtree(f->dir);
    free(f->model), free(f->src), free(f->ref), free(f->nbest), free(f->dir);
}

static char *fx_write(const fx *f, const char *name, const char *text)
{
    char *p = tu_join(f->dir, name);
    cr_assert_eq(tu_write_file(p, text, strlen(text)), 0);
    return p;
}

/* The lines of s (modified in place) into v; returns the count. */
static int split_lines(char *s, char **v, int max)
{
    int n = 0;
    for (char *p = s; *p && n < max;) {
        char *nl = strchr(p, '\n');
        cr_assert_not_null(nl, "unterminated line: %s", p);
        *nl = 0;
        v[n++] = p;
        p = nl + 1;
    }
    return n;
}

Test(nmt_tool, help_to_stdout_exit_0)
{
    const char *cmds[] = {"", "score ", "rescore ", "translate ", "tune ", "bleu "};
    for (int i = 0; i < 6; i++) {
        char *so = NULL, *se = NULL;
        cr_expect_eq(nmt_run(&so, &se, "%s--help", cmds[i]), 0, "'%s--help': %s", cmds[i], se);
        cr_expect(strstr(so, "usage:") && strstr(so, i ? cmds[i] : "nmt bleu"), "%s", so);
        cr_expect_str_empty(se);
        free(so), free(se);
    }
    char *so = NULL, *se = NULL;
    cr_expect_eq(nmt_run(&so, &se, "-h"), 0);
    cr_expect(strstr(so, "usage:"));
    free(so), free(se);
    cr_expect_eq(nmt_run(&so, &se, "%s", ""), 2, "no command: usage on stderr, exit 2");
    cr_expect(strstr(se, "usage:") && !*so);
    free(so), free(se);
    cr_expect_eq(nmt_run(&so, &se, "scroe --model x"), 2);
    cr_expect(strstr(se, "unknown command 'scroe'"), "%s", se);
    free(so), free(se);
}

/* Every number on the command line is strict and range-checked: exit 2 and a message naming the
 * flag, before any work (nmt --beam 0 used to say nothing at all). */
Test(nmt_tool, flags_strict_and_range_checked)
{
    fx f = fx_open();
    static const struct { const char *args, *flag; } bad[] = {
        {"translate --model %s --source %s --beam 0", "--beam"},
        {"translate --model %s --source %s --beam 3x", "--beam"},
        {"translate --model %s --source %s --beam 33", "--beam"},
        {"translate --model %s --source %s --alpha -1", "--alpha"},
        {"translate --model %s --source %s --max-ratio abc", "--max-ratio"},
        {"translate --model %s --source %s --batch 0", "--batch"},
        {"translate --model %s --source %s --shortlist-words 0", "--shortlist-words"},
        {"translate --model %s --source %s --threads -1", "--threads"},
        {"translate --model %s --source %s --device ' 1'", "--device"},
        {"rescore --model %s --source %s --nbest x --weight nan", "--weight"},
        {"rescore --model %s --source %s --nbest x --weight 1e999", "--weight"},
        {"rescore --model %s --source %s --nbest x --length-bonus 0.5.1", "--length-bonus"},
        {"tune --nbest %s --ref %s --range 0:1", "--range"},
        {"tune --nbest %s --ref %s --range 0:1:0", "--range"},
        {"tune --nbest %s --ref %s --range 1:0:0.1", "--range"},
        {"tune --nbest %s --ref %s --len-range a:1:0.5", "--len-range"},
        {"tune --nbest %s --ref %s --range 0:1e9:1e-9", "--range"},
        {"tune --nbest %s --ref %s --folds 0", "--folds"},
        {"tune --nbest %s --ref %s --used-weight ''", "--used-weight"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char *so = NULL, *se = NULL;
        int rc = nmt_run(&so, &se, bad[i].args, f.model, f.src);
        cr_expect_eq(rc, 2, "%s: exit %d: %s", bad[i].args, rc, se);
        cr_expect(strstr(se, bad[i].flag) != NULL, "%s: message: %s", bad[i].args, se);
        cr_expect_str_empty(so, "%s", bad[i].args);
        free(so), free(se);
    }
    /* a flag without its value, an unknown flag, an extra argument */
    const char *usage_errs[] = {"translate --model", "translate --model %s --beem 3",
                                "score --model %s --source %s --target x y", "bleu a b c"};
    for (int i = 0; i < 4; i++) {
        char *so = NULL, *se = NULL;
        cr_expect_eq(nmt_run(&so, &se, usage_errs[i], f.model, f.src), 2, "%s", usage_errs[i]);
        cr_expect(strstr(se, "usage:"), "%s", se);
        free(so), free(se);
    }
    /* a flag of another command is not ignored in silence (tune takes --used-weight, not the
     * --weight of rescore; score has no beam) */
    static const struct { const char *args, *msg; } misplaced[] = {
        {"tune --nbest %s --ref %s --weight 0.3", "--weight does not apply"},
        {"score --model %s --source %s --target x --beam 3", "--beam does not apply"},
        {"bleu %s %s --gpu", "--gpu does not apply"},
        {"translate --model %s --source %s --shortlist-words 5", "need --shortlist"}};
    for (int i = 0; i < 4; i++) {
        char *so = NULL, *se = NULL;
        cr_expect_eq(nmt_run(&so, &se, misplaced[i].args, f.model, f.src), 2, "%s",
                     misplaced[i].args);
        cr_expect(strstr(se, misplaced[i].msg), "%s: %s", misplaced[i].args, se);
        free(so), free(se);
    }
    fx_close(&f);
}

/* `nmt score` prints the model's log-probability of each pair, one line per input line. */
Test(nmt_tool, score_matches_the_api)
{
    fx f = fx_open();
    char *so = NULL, *se = NULL;
    cr_assert_eq(nmt_run(&so, &se, "score --model %s --source %s --target %s", f.model, f.src,
                         f.ref), 0, "%s", se);
    nmt_model *m;
    nmt_ctx *ctx;
    smt_err err;
    cr_assert_eq(nmt_model_open(&m, f.model, &err), 0, "%s", err.msg);
    cr_assert_eq(nmt_ctx_create(&ctx, m, NULL, &err), 0, "%s", err.msg);
    size_t len;
    char *src = tu_read_file(f.src, &len), *ref = tu_read_file(f.ref, &len), *sl[8], *tl[8], *ol[8];
    int ns = split_lines(src, sl, 8), nt = split_lines(ref, tl, 8), no = split_lines(so, ol, 8);
    cr_assert_eq(ns, 3);
    cr_assert_eq(nt, ns);
    cr_assert_eq(no, ns, "one score per line");
    for (int i = 0; i < ns; i++) {
        int32_t s[64], t[64];
        nmt_sentence ss = {s, (int)nmt_model_tokenize(m, 0, sl[i], s, 64)};
        nmt_sentence ts = {t, (int)nmt_model_tokenize(m, 1, tl[i], t, 64)};
        float lp;
        cr_assert_eq(nmt_score(ctx, 1, &ss, &ts, &lp, &err), 0, "%s", err.msg);
        char want[32];
        snprintf(want, sizeof want, "%.6f", lp);
        cr_expect_str_eq(ol[i], want, "line %d", i + 1);
        cr_expect(lp < -1, "a real log-probability: %g", lp);
    }
    /* the targets swapped: other scores (the tool reads --target, not the source twice) */
    char *so2 = NULL;
    free(se);
    cr_assert_eq(nmt_run(&so2, &se, "score --model %s --source %s --target %s", f.model, f.src,
                         f.src), 0, "%s", se);
    cr_expect(strncmp(so2, ol[0], strlen(ol[0])) != 0, "%s", so2);
    /* line counts must agree */
    free(se);
    char *two = fx_write(&f, "two.txt", "a\nb\n");
    cr_expect_eq(nmt_run(NULL, &se, "score --model %s --source %s --target %s", f.model, f.src,
                         two), 1);
    cr_expect(strstr(se, "3 lines") && strstr(se, "2"), "%s", se);
    free(se), free(so), free(so2), free(src), free(ref), free(two);
    nmt_ctx_free(ctx);
    nmt_model_free(m);
    fx_close(&f);
}

/* `nmt translate` prints nmt_translate's best hypothesis for each line (beam and greedy), from a
 * file or from standard input. */
Test(nmt_tool, translate_matches_the_api)
{
    fx f = fx_open();
    nmt_model *m;
    nmt_ctx *ctx;
    smt_err err;
    cr_assert_eq(nmt_model_open(&m, f.model, &err), 0, "%s", err.msg);
    cr_assert_eq(nmt_ctx_create(&ctx, m, NULL, &err), 0, "%s", err.msg);
    size_t len;
    char *src = tu_read_file(f.src, &len), *sl[8];
    int ns = split_lines(src, sl, 8);
    for (int beam = 1; beam <= 4; beam += 3) {
        char *so = NULL, *se = NULL, *ol[8];
        cr_assert_eq(nmt_run(&so, &se, "translate --model %s --beam %d --alpha 0.6 < %s", f.model,
                             beam, f.src), 0, "%s", se);
        cr_assert_eq(split_lines(so, ol, 8), ns, "one line per input line");
        nmt_sentence s[8];
        int32_t ids[8][64];
        for (int i = 0; i < ns; i++)
            s[i] = (nmt_sentence){ids[i], (int)nmt_model_tokenize(m, 0, sl[i], ids[i], 64)};
        nmt_hyp h[8];
        nmt_search_options so_ = {beam, 2.0f, 10, 0.6f, NULL};
        cr_assert_eq(nmt_translate(ctx, (size_t)ns, s, &so_, h, &err), 0, "%s", err.msg);
        for (int i = 0; i < ns; i++) {
            char want[1024] = "";
            for (int j = 0; j < h[i].len; j++) {
                if (j)
                    strcat(want, " ");
                strcat(want, nmt_model_tgt_word(m, h[i].ids[j]));
            }
            cr_expect_str_eq(ol[i], want, "beam %d line %d", beam, i + 1);
            cr_expect(h[i].len > 0);
        }
        nmt_hyps_free(h, (size_t)ns);
        free(so), free(se);
    }
    free(src);
    nmt_ctx_free(ctx);
    nmt_model_free(m);
    fx_close(&f);
}

/* `nmt bleu` against values from an independent implementation of multi-bleu.perl (Python:
 * clipped counts, brevity penalty against the closest reference length). */
Test(nmt_tool, bleu_values)
{
    fx f = fx_open();
    char *hyp = fx_write(&f, "hyp", "the cat sat on the mat today\n"
                                    "a quick brown fox jumps over the dog\n");
    char *r1 = fx_write(&f, "r1", "the cat sat on a mat today\n"
                                  "the quick brown fox jumps over the lazy dog\n");
    char *r2 = fx_write(&f, "r2", "there the cat sat on the mat\na fast brown fox jumps over a dog\n");
    char *so = NULL, *se = NULL;
    cr_expect_eq(nmt_run(&so, &se, "bleu %s %s", hyp, r1), 0, "%s", se);
    cr_expect_str_eq(so, "BLEU = 57.77\n");
    free(so), free(se);
    cr_expect_eq(nmt_run(&so, &se, "bleu %s %s,%s", hyp, r1, r2), 0, "%s", se);
    cr_expect_str_eq(so, "BLEU = 80.03\n");
    free(so), free(se);
    cr_expect_eq(nmt_run(&so, &se, "bleu - %s < %s", r2, hyp), 0, "%s", se);
    cr_expect_str_eq(so, "BLEU = 58.78\n");
    free(so), free(se);
    cr_expect_eq(nmt_run(&so, &se, "bleu %s %s", r1, r1), 0, "%s", se);
    cr_expect_str_eq(so, "BLEU = 100.00\n");
    free(so), free(se);
    /* line counts differ; an empty hypothesis file; a missing file */
    char *one = fx_write(&f, "one", "the cat\n"), *empty = fx_write(&f, "empty", "");
    cr_expect_eq(nmt_run(&so, &se, "bleu %s %s", one, r1), 1);
    cr_expect(strstr(se, "1 lines, the references 2"), "%s", se);
    cr_expect_str_empty(so);
    free(so), free(se);
    cr_expect_eq(nmt_run(&so, &se, "bleu %s %s", empty, empty), 1);
    cr_expect(strstr(se, "empty"), "%s", se);
    free(so), free(se);
    cr_expect_eq(nmt_run(&so, &se, "bleu %s %s,%s/nope", hyp, r1, f.dir), 1);
    cr_expect(strstr(se, "nope"), "%s", se);
    free(so), free(se);
    free(hyp), free(r1), free(r2), free(one), free(empty);
    fx_close(&f);
}

/* Cross-validation chooses each fold's weight on the other folds. Two sentences, two folds, built
 * so that sentence 0 wants an NMT weight above 0.25 and sentence 1 wants 0: fold 0 (held out:
 * sentence 0) must get weight 0 and fold 1 weight 0.3, and the cross-validated BLEU is then 0 (each
 * sentence gets the weight of the other). Scoring on the held-out fold would swap them (BLEU 100). */
Test(nmt_tool, tune_chooses_each_fold_on_the_other_folds)
{
    fx f = fx_open();
    char *ref = fx_write(&f, "ref", "a b c d\ne f g h\n");
    char *nb = fx_write(&f, "nb", "0 ||| x y z w ||| LM0= -1 NMT0= -10 ||| -10\n"
                                  "0 ||| a b c d ||| LM0= -1 NMT0= -2 ||| -12\n"
                                  "1 ||| e f g h ||| LM0= -1 NMT0= -10 ||| -10\n"
                                  "1 ||| q r s t ||| LM0= -1 NMT0= -2 ||| -12\n");
    char *best = tu_join(f.dir, "best");
    char *so = NULL, *se = NULL;
    cr_assert_eq(nmt_run(&so, &se, "tune --nbest %s --ref %s --range 0:2:0.1 --folds 2 "
                                   "--best-out %s", nb, ref, best), 0, "%s", se);
    cr_expect(strstr(so, "baseline BLEU 50.00\n"), "%s", so);
    cr_expect(strstr(so, "best weight 0 length bonus 0 BLEU 50.00"), "%s", so);
    cr_expect(strstr(so, "fold 0: weight 0 length bonus 0 (train BLEU 100.00)"), "%s", so);
    cr_expect(strstr(so, "fold 1: weight 0.3 length bonus 0 (train BLEU 100.00)"), "%s", so);
    cr_expect(strstr(so, "cross-validated BLEU 0.00 (baseline 50.00)"), "%s", so);
    size_t len;
    char *text = tu_read_file(best, &len);
    cr_expect_str_eq(text, "x y z w\nq r s t\n", "each sentence with its fold's weight");
    free(text), free(so), free(se);
    /* without folds the weight is chosen on everything; --best-out - puts the 1-best lines on
     * standard output and the report on standard error */
    cr_assert_eq(nmt_run(&so, &se, "tune --nbest %s --ref %s --range 0:2:0.1 --best-out -", nb,
                         ref), 0, "%s", se);
    cr_expect_str_eq(so, "x y z w\ne f g h\n");
    cr_expect(strstr(se, "best weight 0 "), "%s", se);
    free(so), free(se);
    /* a length bonus grid: picks among equal BLEU the smallest change */
    cr_assert_eq(nmt_run(&so, &se, "tune --nbest %s --ref %s --range 0:0:1 --len-range -1:1:0.5",
                         nb, ref), 0, "%s", se);
    cr_expect(strstr(so, "best weight 0 length bonus 0 BLEU 50.00"), "%s", so);
    free(so), free(se);
    free(ref), free(nb), free(best);
    fx_close(&f);
}

/* An empty, unreadable or malformed n-best list is an error naming the file (and line): never an
 * empty line per sentence with exit 0. Numbers in the list are strict. */
Test(nmt_tool, nbest_empty_or_malformed_is_an_error)
{
    fx f = fx_open();
    char *empty = fx_write(&f, "empty.nbest", "");
    char *so = NULL, *se = NULL;
    cr_expect_eq(nmt_run(&so, &se, "rescore --model %s --source %s --nbest %s", f.model, f.src,
                         empty), 1);
    cr_expect(strstr(se, "empty.nbest: no n-best lines"), "%s", se);
    cr_expect_str_empty(so);
    free(so), free(se);
    cr_expect_eq(nmt_run(&so, &se, "rescore --model %s --source %s --nbest %s/missing", f.model,
                         f.src, f.dir), 1);
    cr_expect(strstr(se, "missing"), "%s", se);
    cr_expect_str_empty(so);
    free(so), free(se);
    cr_expect_eq(nmt_run(&so, &se, "rescore --model %s --source %s --nbest %s", f.model, f.src,
                         f.dir), 1, "a directory");
    cr_expect_str_empty(so);
    free(so), free(se);
    cr_expect_eq(nmt_run(&so, &se, "tune --nbest %s --ref %s", empty, f.ref), 1);
    cr_expect(strstr(se, "empty.nbest: no n-best lines"), "%s", se);
    free(so), free(se);
    static const char *const bad[] = {
        "0 ||| a ||| LM0= -1 ||| -3abc\n", "0 ||| a ||| LM0= -1 ||| nan\n",
        "0x1 ||| a ||| LM0= -1 ||| -3\n",  "-1 ||| a ||| LM0= -1 ||| -3\n",
        "1.0 ||| a ||| LM0= -1 ||| -3\n",  "0 ||| a ||| LM0= -1 ||| \n",
        "99999999999999999999 ||| a ||| LM0= -1 ||| -3\n"};
    for (int i = 0; i < 7; i++) {
        char text[256];
        snprintf(text, sizeof text, "0 ||| the earth . ||| LM0= -3 ||| -3\n%s", bad[i]);
        char *p = fx_write(&f, "bad.nbest", text);
        cr_expect_eq(nmt_run(&so, &se, "rescore --model %s --source %s --nbest %s", f.model, f.src,
                             p), 1, "%s", bad[i]);
        cr_expect(strstr(se, "bad.nbest:2: not a Moses n-best line"), "%s: %s", bad[i], se);
        cr_expect_str_empty(so, "%s", bad[i]);
        free(so), free(se);
        free(p);
    }
    /* a failed rescoring leaves no rescored list behind to be taken for a result */
    char *broken = fx_write(&f, "broken.nbest",
                            "0 ||| a ||| LM0= -1 ||| -3\n0 ||| b ||| LM0= -1 ||| x\n");
    char *out = tu_join(f.dir, "rescored.nbest");
    cr_expect_eq(nmt_run(&so, &se, "rescore --model %s --source %s --nbest %s --nbest-out %s",
                         f.model, f.src, broken, out), 1);
    cr_expect_eq(tu_file_size(out), -1, "a partial list was left at %s", out);
    free(so), free(se), free(broken), free(out);
    /* blanks around the numbers are separators; infinities are numbers */
    char *ok = fx_write(&f, "ok.nbest", "0 ||| the earth . ||| LM0= -3 |||  -3 \n"
                                        "2 ||| noah . ||| LM0= -inf ||| -inf ||| 0-0\n");
    cr_expect_eq(nmt_run(&so, &se, "rescore --model %s --source %s --nbest %s", f.model, f.src,
                         ok), 0, "%s", se);
    cr_expect_str_eq(so, "the earth .\n\nnoah .\n");
    free(so), free(se);
    /* tune: the NMT feature's score must be a number */
    char *badf = fx_write(&f, "badf.nbest", "0 ||| a ||| NMT0= -1 ||| -3\n"
                                            "0 ||| b ||| NMT0= -1x ||| -3\n");
    cr_expect_eq(nmt_run(&so, &se, "tune --nbest %s --ref %s", badf, f.ref), 1);
    cr_expect(strstr(se, "badf.nbest:2: the NMT0= score is not a number"), "%s", se);
    free(so), free(se);
    free(empty), free(ok), free(badf);
    fx_close(&f);
}

/* A write error on any output (a full disk: /dev/full) is an error with a message, for every
 * command; "-" as an output path is standard output, never a file named "-". */
Test(nmt_tool, write_errors_and_dash)
{
    if (access("/dev/full", W_OK) != 0)
        cr_skip_test("no writable /dev/full on this machine");
    fx f = fx_open();
    char *nb2 = tu_join(f.dir, "rescored.nbest");
    char *so = NULL, *se = NULL;
    cr_assert_eq(nmt_run(&so, &se, "rescore --model %s --source %s --nbest %s --weight 0.5 "
                                   "--nbest-out %s", f.model, f.src, f.nbest, nb2), 0, "%s", se);
    free(so), free(se);
    const char *cmds[] = {
        "score --model %1$s --source %2$s --target %3$s > /dev/full",
        "translate --model %1$s --source %2$s > /dev/full",
        "rescore --model %1$s --source %2$s --nbest %4$s > /dev/full",
        "rescore --model %1$s --source %2$s --nbest %4$s --nbest-out /dev/full",
        "rescore --model %1$s --source %2$s --nbest %4$s --nbest-out - > /dev/full",
        "bleu %3$s %3$s > /dev/full",
        "tune --nbest %5$s --ref %3$s > /dev/full",
        "tune --nbest %5$s --ref %3$s --best-out /dev/full",
        "tune --nbest %5$s --ref %3$s --best-out - > /dev/full",
        "--help > /dev/full",
        "score --help > /dev/full"};
    for (int i = 0; i < 11; i++) {
        char *nmt = tu_bin_path("nmt"), cmd[8192];
        int n = snprintf(cmd, sizeof cmd, "%s ", nmt);
        snprintf(cmd + n, sizeof cmd - (size_t)n, cmds[i], f.model, f.src, f.ref, f.nbest, nb2);
        free(nmt);
        int rc = tu_run(cmd, &so, &se);
        cr_expect_eq(rc, 1, "%s: exit %d", cmds[i], rc);
        cr_expect(strstr(se, "write error"), "%s: %s", cmds[i], se);
        free(so), free(se);
    }
    /* --nbest-out -: the rescored list on standard output (the 1-best lines are not printed) */
    char *nmt = tu_bin_path("nmt"), cmd[8192];
    snprintf(cmd, sizeof cmd, "cd %s && %s rescore --model %s --source %s --nbest %s --weight 0.5 "
             "--nbest-out -", f.dir, nmt, f.model, f.src, f.nbest);
    cr_assert_eq(tu_run(cmd, &so, &se), 0, "%s", se);
    size_t len;
    char *want = tu_read_file(nb2, &len), *dash = tu_join(f.dir, "-");
    cr_expect_str_eq(so, want);
    cr_expect_eq(tu_file_size(dash), -1, "a file named '-' was created");
    free(so), free(se), free(want), free(dash), free(nmt), free(nb2);
    fx_close(&f);
}

/* bench_nmt: --help to stdout with exit 0, strict flags, a malformed n-best list named. */
Test(nmt_tool, bench_help_and_flags)
{
    fx f = fx_open();
    char *bench = tu_bin_path("bench_nmt"), cmd[8192], *so = NULL, *se = NULL;
    snprintf(cmd, sizeof cmd, "%s --help", bench);
    cr_expect_eq(tu_run(cmd, &so, &se), 0, "%s", se);
    cr_expect(strstr(so, "usage: bench_nmt"), "%s", so);
    free(so), free(se);
    const char *bad[] = {"--beam 0", "--n 1x", "--threads -1", "--beam"};
    for (int i = 0; i < 4; i++) {
        snprintf(cmd, sizeof cmd, "%s --no-cpu-outlayer %s", bench, bad[i]);
        cr_expect_eq(tu_run(cmd, &so, &se), 2, "%s", bad[i]);
        char flag[16];
        sscanf(bad[i], "%15s", flag);
        cr_expect(strstr(se, flag), "%s: %s", bad[i], se);
        cr_expect_str_empty(so, "%s: nothing measured", bad[i]);
        free(so), free(se);
    }
    char *nb = fx_write(&f, "bad.nbest", "0 ||| a ||| LM0= -1 ||| -1\n0 ||| b ||| LM0= -1 ||| x\n");
    snprintf(cmd, sizeof cmd, "%s --no-cpu-outlayer --model %s --source %s --nbest %s", bench,
             f.model, f.src, nb);
    cr_expect_eq(tu_run(cmd, &so, &se), 1);
    cr_expect(strstr(se, "bad.nbest:2: not a Moses n-best line"), "%s", se);
    free(so), free(se), free(nb), free(bench);
    fx_close(&f);
}

/* An output that is one of the inputs is refused before it is opened (opening it for writing
 * would destroy the input: `--nbest-out` = `--nbest` used to empty the list and print nothing). */
Test(nmt_tool, output_that_is_an_input_refused)
{
    fx f = fx_open();
    char *nb = tu_join(f.dir, "list.nbest"), *ref = tu_join(f.dir, "ref"), *link = tu_join(f.dir, "l");
    cr_assert_eq(tu_copy_file(f.nbest, nb), 0);
    cr_assert_eq(tu_copy_file(f.ref, ref), 0);
    cr_assert_eq(symlink(nb, link), 0);
    long long size = tu_file_size(nb);
    char *so = NULL, *se = NULL;
    cr_expect_eq(nmt_run(&so, &se, "rescore --model %s --source %s --nbest %s --nbest-out %s",
                         f.model, f.src, nb, link), 1);
    cr_expect(strstr(se, "the output is an input"), "%s", se);
    cr_expect_eq(tu_file_size(nb), size, "the list was changed");
    cr_expect_str_empty(so);
    free(so), free(se);
    char *src = tu_join(f.dir, "src");
    cr_assert_eq(tu_copy_file(f.src, src), 0);
    cr_expect_eq(nmt_run(&so, &se, "rescore --model %s --source %s --nbest %s --nbest-out %s",
                         f.model, src, nb, src), 1);
    cr_expect_eq(tu_file_size(src), tu_file_size(f.src), "the source was changed");
    free(so), free(se);
    /* tune: the 1-best lines over the list or over any of the references */
    cr_expect_eq(nmt_run(&so, &se, "tune --nbest %s --ref %s,%s --best-out %s", nb, f.ref, ref,
                         ref), 1);
    cr_expect(strstr(se, "is an input"), "%s", se);
    cr_expect_eq(tu_file_size(ref), tu_file_size(f.ref));
    free(so), free(se);
    free(nb), free(ref), free(link), free(src);
    fx_close(&f);
}

/* The rescoring API refuses weights that would make every total NaN. */
Test(nmt_tool, rescore_api_refuses_nonfinite_weights)
{
    fx f = fx_open();
    nmt_model *m;
    nmt_ctx *ctx;
    smt_err err;
    cr_assert_eq(nmt_model_open(&m, f.model, &err), 0, "%s", err.msg);
    cr_assert_eq(nmt_ctx_create(&ctx, m, NULL, &err), 0, "%s", err.msg);
    char *out = tu_join(f.dir, "out.nbest");
    const nmt_rescore_options bad[] = {{NAN, NULL, 0}, {0.3f, NULL, INFINITY}, {-INFINITY, NULL, 0}};
    for (int i = 0; i < 3; i++) {
        cr_expect_eq(nmt_rescore_files(ctx, f.src, f.nbest, &bad[i], out, NULL, &err), SMT_ERR_ARG);
        cr_expect_eq(tu_file_size(out), -1, "nothing written");
    }
    const nmt_rescore_options ok = {0.3f, NULL, 0.5f};
    cr_expect_eq(nmt_rescore_files(ctx, f.src, f.nbest, &ok, out, NULL, &err), 0, "%s", err.msg);
    cr_expect_gt(tu_file_size(out), 0);
    free(out);
    nmt_ctx_free(ctx);
    nmt_model_free(m);
    fx_close(&f);
}

/* tune's reading of the list: --used-weight takes the weight the list was rescored with out of the
 * totals, --per-word divides the feature by the words it covers, ties go to the earlier line. */
Test(nmt_tool, tune_used_weight_per_word_and_ties)
{
    fx f = fx_open();
    char *ref = fx_write(&f, "ref", "a b c d\ne f g h\n");
    /* the fold test's list rescored with weight 0.5: total = base + 0.5 * NMT0 */
    char *nb = fx_write(&f, "nb", "0 ||| x y z w ||| NMT0= -10 ||| -15\n"
                                  "0 ||| a b c d ||| NMT0= -2 ||| -13\n"
                                  "1 ||| e f g h ||| NMT0= -10 ||| -15\n"
                                  "1 ||| q r s t ||| NMT0= -2 ||| -13\n");
    char *so = NULL, *se = NULL;
    cr_assert_eq(nmt_run(&so, &se, "tune --nbest %s --ref %s --range 0:2:0.1 --folds 2 "
                                   "--used-weight 0.5", nb, ref), 0, "%s", se);
    cr_expect(strstr(so, "baseline BLEU 50.00\n"), "%s", so);
    cr_expect(strstr(so, "fold 1: weight 0.3 "), "%s", so);
    free(so), free(se);
    /* per word: NMT0 / 5, so sentence 0 needs a weight above 1.25 */
    cr_assert_eq(nmt_run(&so, &se, "tune --nbest %s --ref %s --range 0:2:0.1 --folds 2 "
                                   "--used-weight 0.5 --per-word", nb, ref), 0, "%s", se);
    cr_expect(strstr(so, "fold 0: weight 0 "), "%s", so);
    cr_expect(strstr(so, "fold 1: weight 1.3 "), "%s", so);
    free(so), free(se);
    /* equal scores at every weight: the earlier line is the 1-best */
    char *tie = fx_write(&f, "tie", "0 ||| x y z w ||| NMT0= -3 ||| -7\n"
                                    "0 ||| a b c d ||| NMT0= -3 ||| -7\n"
                                    "1 ||| e f g h ||| NMT0= -3 ||| -7\n"
                                    "1 ||| q r s t ||| NMT0= -3 ||| -7\n");
    cr_assert_eq(nmt_run(&so, &se, "tune --nbest %s --ref %s --range 0:1:0.5 --best-out -", tie,
                         ref), 0, "%s", se);
    cr_expect_str_eq(so, "x y z w\ne f g h\n");
    free(so), free(se), free(ref), free(nb), free(tie);
    fx_close(&f);
}

/* nmt_tune, the library function behind `nmt tune`: a weight that lets the NMT feature overturn the
 * list's 1-best is found (the smallest on the grid that gains), the picks are the re-ranked 1-best
 * lines, folds report each fold, and bad lists and grids are errors naming the list and line. */
Test(nmt_tune, library_search_picks_and_errors)
{
    char l0[] = "0 ||| a dog stood up ||| LM0= -3 NMT0= -10 ||| 0";
    char l1[] = "0 ||| the cat sat on the mat ||| LM0= -4 NMT0= -1 ||| -1";
    char l2[] = "1 ||| hello big world there ||| NMT0= -2 ||| 0";
    char *nbest[] = {l0, l1, l2};
    char r0[] = "the cat sat on the mat", r1[] = "hello big world there";
    char *ref[] = {r0, r1};
    char **refs[] = {ref};
    nmt_tune_options o;
    nmt_tune_options_default(&o);
    o.lo = 0, o.hi = 1, o.step = 0.25;
    nmt_tune_result t;
    smt_err err;
    /* A wins at w = 0 (total 0 > -1); B from 0 - 10w < -1 - w, w > 1/9: 0.25 on this grid */
    cr_assert_eq(nmt_tune(nbest, 3, "list", refs, 1, 2, &o, &t, &err), 0, "%s", err.msg);
    cr_expect_float_eq(t.weight, 0.25, 1e-12);
    cr_expect_float_eq(t.length_bonus, 0, 1e-12);
    cr_expect_float_eq(t.bleu, 100.0, 1e-9);
    cr_expect_lt(t.base_bleu, 100.0);
    cr_expect_float_eq(t.cv_bleu, t.bleu, 1e-12);
    cr_expect_null(t.fold);
    cr_assert_eq(t.n_sentences, 2);
    cr_expect_str_eq(t.best[0], "the cat sat on the mat");
    cr_expect_str_eq(t.best[1], "hello big world there");
    nmt_tune_result_free(&t);

    /* a third sentence the list lacks: picked as "", and two folds reported */
    char l0b[] = "0 ||| a dog stood up ||| NMT0= -10 ||| 0";
    char l1b[] = "0 ||| the cat sat on the mat ||| NMT0= -1 ||| -1";
    char l2b[] = "1 ||| hello big world there ||| NMT0= -2 ||| 0";
    char *nb2[] = {l0b, l1b, l2b};
    char r2[] = "nothing here at all";
    char *ref3[] = {r0, r1, r2};
    char **refs3[] = {ref3};
    o.folds = 2;
    cr_assert_eq(nmt_tune(nb2, 3, "list", refs3, 1, 3, &o, &t, &err), 0, "%s", err.msg);
    cr_assert_eq(t.folds, 2);
    cr_assert_not_null(t.fold);
    cr_expect_str_eq(t.best[2], "");
    /* fold 0 (sentences 0 and 2) is chosen on fold 1 (sentence 1, one hypothesis): no gain, w 0 */
    cr_expect_float_eq(t.fold[0].weight, 0, 1e-12);
    cr_expect_str_eq(t.best[0], "a dog stood up");
    nmt_tune_result_free(&t);

    /* errors: a bad line names the list and line, a bad grid or fold count is an argument error */
    char bad0[] = "0 ||| a ||| NMT0= -1 ||| 0", bad1[] = "not an n-best line";
    char *bad[] = {bad0, bad1};
    o.folds = 1;
    cr_expect_eq(nmt_tune(bad, 2, "list", refs, 1, 2, &o, &t, &err), SMT_ERR_PARSE);
    cr_expect(strstr(err.msg, "list:2") != NULL, "%s", err.msg);
    char nf0[] = "0 ||| a ||| LM0= -1 ||| 0";
    char *nf[] = {nf0};
    cr_expect_eq(nmt_tune(nf, 1, "list", refs, 1, 2, &o, &t, &err), SMT_ERR_PARSE);
    cr_expect(strstr(err.msg, "list:1: no NMT0= feature") != NULL, "%s", err.msg);
    cr_expect_eq(nmt_tune(nbest, 0, "list", refs, 1, 2, &o, &t, &err), SMT_ERR_PARSE);
    o.step = 0;
    cr_expect_eq(nmt_tune(nbest, 3, "list", refs, 1, 2, &o, &t, &err), SMT_ERR_ARG);
    o.step = 0.25, o.hi = NAN;
    cr_expect_eq(nmt_tune(nbest, 3, "list", refs, 1, 2, &o, &t, &err), SMT_ERR_ARG);
    o.hi = 1, o.folds = 0;
    cr_expect_eq(nmt_tune(nbest, 3, "list", refs, 1, 2, &o, &t, &err), SMT_ERR_ARG);
}

/* A feature name that cannot be one (empty; a blank, '=' or '|' in it) is refused by rescore and
 * tune: tune --feature '' used to loop forever (strstr of "" never moves on; found by fuzzing), and
 * rescore would write a list no tool can read back. */
Test(nmt_tool, bad_feature_names_refused, .timeout = 60)
{
    fx f = fx_open();
    static const char *const bad[] = {"''", "'a b'", "'a='", "'|||'"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char *so = NULL, *se = NULL;
        cr_assert_neq(nmt_run(&so, &se, "tune --nbest %s --ref %s --feature %s", f.nbest, f.ref,
                              bad[i]), 0, "tune --feature %s", bad[i]);
        cr_expect(strstr(se, "cannot name an n-best feature"), "%s", se);
        free(so), free(se);
        cr_assert_neq(nmt_run(&so, &se, "rescore --model %s --source %s --nbest %s --feature %s",
                              f.model, f.src, f.nbest, bad[i]), 0, "rescore --feature %s", bad[i]);
        cr_expect(strstr(se, "cannot name an n-best feature"), "%s", se);
        cr_expect_str_eq(so, "");
        free(so), free(se);
    }
    double v = 1;
    cr_expect_eq(nmt_nbest_feature("LM0= -1 NMT0= -2", "", &v), 0);
    cr_expect_eq(v, 1);
    fx_close(&f);
}
