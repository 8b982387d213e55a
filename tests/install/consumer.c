/* consumer.c — a program outside the tree using the installed fastsmt library (tests/install/
 * install_test.sh builds it with pkg-config and with find_package, against a scratch prefix).
 * It calls each component through its public header and prints what the build tree's tools print
 * for the same input, which the test compares:
 *   glm: the total log10 score of "A B X" (with <s> and </s>) under tests/data/decoder/tiny/lm.arpa,
 *        summed word by word with glm_score: `glm query -v sentence` prints "Total: x OOV: n"
 *   probingpt: tests/data/probingpt/small.pt built into WORKDIR, the targets of "casa" as
 *        `probingpt query` writes them (and the empty line ending its answer)
 *   decoder: the 1-best of "a b c" with tests/data/decoder/tiny/moses.ini, as `fastsmt` prints it
 *   nmt: ln p(target | source) of the first lines of tests/data/nmt/fixture.{src,ref} under
 *        tests/data/nmt/tiny, as `nmt score` prints it
 * usage: consumer TESTDATA WORKDIR   (exit 0, or 1 with the library's message on stderr) */
#include <fastsmt/decoder.h>
#include <fastsmt/glm.h>
#include <fastsmt/nmt.h>
#include <fastsmt/probingpt.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(const char *what, const smt_err *err, int rc)
{
    fprintf(stderr, "consumer: %s: %s\n", what, smt_err_text(err, rc));
    return 1;
}

static int path_join(char *buf, size_t cap, const char *dir, const char *name)
{
    int n = snprintf(buf, cap, "%s/%s", dir, name);
    if (n < 0 || (size_t)n >= cap) {
        fprintf(stderr, "consumer: path too long: %s/%s\n", dir, name);
        return -1;
    }
    return 0;
}

static int use_glm(const char *data)
{
    char path[4096];
    smt_err err = {0};
    glm_model *m = NULL;
    if (path_join(path, sizeof path, data, "decoder/tiny/lm.arpa"))
        return 1;
    int rc = glm_load(&m, path, 0, NULL, &err);
    if (rc)
        return fail("glm_load", &err, rc);
    const char *words[] = {"A", "B", "X"};
    glm_state st, next;
    glm_state_begin(m, &st);
    float total = 0.0f;
    unsigned oov = 0;
    for (size_t i = 0; i <= sizeof words / sizeof words[0]; i++) {
        glm_word w = i < sizeof words / sizeof words[0] ? glm_index(m, words[i], strlen(words[i]))
                                                        : glm_eos(m);
        oov += w == GLM_UNK;
        total += glm_score(m, &st, w, &next, NULL);
        st = next;
    }
    char num[64];
    glm_format_float(num, total);
    printf("glm order %u Total: %s OOV: %u\n", glm_order(m), num, oov);
    glm_close(m);
    return 0;
}

static int use_probingpt(const char *data, const char *work)
{
    char pt[4096], out[4096];
    smt_err err = {0};
    if (path_join(pt, sizeof pt, data, "probingpt/small.pt") ||
        path_join(out, sizeof out, work, "small.ppt"))
        return 1;
    ppt_build_options opt = {0};
    opt.phrase_table = pt;
    opt.out = out;
    opt.progress = -1;
    int rc = ppt_build(&opt, NULL, &err);
    if (rc)
        return fail("ppt_build", &err, rc);
    ppt_table *t = NULL;
    rc = ppt_open(&t, out, 0, &err);
    if (rc)
        return fail("ppt_open", &err, rc);
    ppt_targets it;
    ppt_target x;
    rc = ppt_lookup(t, "casa", 4, &it);
    if (rc) {
        ppt_close(t);
        return fail("ppt_lookup casa", NULL, rc);
    }
    while (ppt_targets_next(&it, &x)) {
        if (ppt_write_line(stdout, t, &it, &x)) {
            ppt_close(t);
            return fail("ppt_write_line", NULL, SMT_ERR_IO);
        }
    }
    ppt_close(t);
    if (it.error)
        return fail("ppt_targets_next", NULL, it.error);
    putchar('\n'); /* an empty line ends each answer of `probingpt query` */
    return 0;
}

static int use_decoder(const char *data)
{
    char ini[4096];
    smt_err err = {0};
    if (path_join(ini, sizeof ini, data, "decoder/tiny/moses.ini"))
        return 1;
    dec_options opt;
    dec_options_default(&opt);
    dec_model *m = NULL;
    int rc = dec_model_load(&m, ini, &opt, &err);
    if (rc)
        return fail("dec_model_load", &err, rc);
    dec_worker *w = NULL;
    rc = dec_worker_create(&w, m, &err);
    if (rc) {
        dec_model_free(m);
        return fail("dec_worker_create", &err, rc);
    }
    smt_buf best = {0};
    const char *line = "a b c";
    rc = dec_translate(w, line, strlen(line), 0, &best, NULL, 0, 0, NULL, &err);
    if (!rc)
        printf("%.*s", (int)best.len, best.data);
    smt_buf_free(&best);
    dec_worker_free(w);
    dec_model_free(m);
    return rc ? fail("dec_translate", &err, rc) : 0;
}

/* The first line of path (without its newline) into buf: 0, or -1 when it cannot be read or does
 * not fit. */
static int first_line(const char *path, char *buf, size_t cap)
{
    FILE *f = fopen(path, "rb");
    size_t n = f ? fread(buf, 1, cap - 1, f) : 0;
    int bad = !f || ferror(f);
    if (f)
        fclose(f);
    char *nl = bad ? NULL : memchr(buf, '\n', n);
    if (!nl)
        return -1;
    *nl = '\0';
    return 0;
}

static int use_nmt(const char *data)
{
    char dir[4096], srcp[4096], tgtp[4096];
    char src_line[1024], tgt_line[1024];
    smt_err err = {0};
    if (path_join(dir, sizeof dir, data, "nmt/tiny") ||
        path_join(srcp, sizeof srcp, data, "nmt/fixture.src") ||
        path_join(tgtp, sizeof tgtp, data, "nmt/fixture.ref"))
        return 1;
    if (first_line(srcp, src_line, sizeof src_line) ||
        first_line(tgtp, tgt_line, sizeof tgt_line)) {
        fprintf(stderr, "consumer: cannot read the first line of %s and %s\n", srcp, tgtp);
        return 1;
    }
    nmt_model *m = NULL;
    int rc = nmt_model_open(&m, dir, &err);
    if (rc)
        return fail("nmt_model_open", &err, rc);
    int32_t src_ids[256], tgt_ids[256];
    size_t ns = nmt_model_tokenize(m, 0, src_line, src_ids, 256);
    size_t nt = nmt_model_tokenize(m, 1, tgt_line, tgt_ids, 256);
    if (ns > 256 || nt > 256) {
        nmt_model_free(m);
        fprintf(stderr, "consumer: fixture line longer than 256 words\n");
        return 1;
    }
    nmt_ctx_options copt = {0};
    copt.backend = NMT_BACKEND_CPU;
    copt.threads = 1;
    nmt_ctx *c = NULL;
    rc = nmt_ctx_create(&c, m, &copt, &err);
    if (rc) {
        nmt_model_free(m);
        return fail("nmt_ctx_create", &err, rc);
    }
    nmt_sentence s = {src_ids, (int)ns}, t = {tgt_ids, (int)nt};
    float lp = 0.0f;
    rc = nmt_score(c, 1, &s, &t, &lp, &err);
    if (!rc)
        printf("%.6f\n", lp);
    nmt_ctx_free(c);
    nmt_model_free(m);
    return rc ? fail("nmt_score", &err, rc) : 0;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: consumer TESTDATA WORKDIR\n");
        return 2;
    }
    if (use_glm(argv[1]) || use_probingpt(argv[1], argv[2]) || use_decoder(argv[1]) ||
        use_nmt(argv[1]))
        return 1;
    if (fflush(stdout) || ferror(stdout)) {
        perror("consumer: stdout");
        return 1;
    }
    return 0;
}
