/* test_nmt_tool.c — the `nmt` program: rescoring a small Moses n-best fixture (features, totals,
 * ranking, 1-best lines including a sentence missing from the list), BLEU against a value computed
 * by an independent Python implementation, the weight search, errors with file:line, and the
 * trainer end to end (skipped when /usr/bin/python3 cannot import torch). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nmt.h"
#include "nmt_rescore.h"
#include "testutil.h"

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
        int found;
        double f = nmt_nbest_feature(nb.feats, "NMT0", &found);
        cr_assert(found, "no NMT0 in %s", nb.feats);
        double lm = nmt_nbest_feature(nb.feats, "LM0", &found);
        cr_assert(found);
        (void)lm;
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
