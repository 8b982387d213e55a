#define _GNU_SOURCE
/* The decoder gives the same 1-best and n-best output with 1 and 2 threads (workers share the
 * model and fill its phrase cache concurrently), and with -lm-batch cpu (threads each decoding
 * sentences in lock-step, 3 lanes) the same as one query at a time. A plain program so that it
 * runs under TSan. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decoder.h"
#include "tharness.h"
#include "testutil.h"

/* Decodes input with `threads` threads on a fresh model; returns 1-best and n-best text. */
static int decode(const char *ini, const char *input, unsigned threads, int lm_batch, char **out,
                  char **nb)
{
    smt_err e;
    dec_model *m;
    int rc = dec_model_load(&m, ini, NULL, &e);
    if (rc) {
        fprintf(stderr, "%s\n", e.msg);
        return rc;
    }
    size_t ol = 0, nl = 0;
    FILE *in = fmemopen((void *)input, strlen(input), "r");
    FILE *o = open_memstream(out, &ol), *n = open_memstream(nb, &nl);
    dec_run_options ro;
    dec_run_options_default(&ro);
    ro.nbest = n;
    ro.n_best = 20;
    ro.distinct = 1;
    ro.threads = (int)threads;
    ro.lm_batch = lm_batch;
    ro.lm_batch_width = 3;
    rc = dec_run(m, in, o, &ro, NULL, &e);
    fclose(in);
    fclose(o);
    fclose(n);
    dec_model_free(m);
    return rc;
}

static void compare(const char *what, const char *ini, const char *input)
{
    char *o1 = NULL, *n1 = NULL, *o2 = NULL, *n2 = NULL, *o3 = NULL, *n3 = NULL;
    TH_CHECK(decode(ini, input, 1, DEC_LM_BATCH_OFF, &o1, &n1) == 0, "%s: 1 thread", what);
    TH_CHECK(decode(ini, input, 2, DEC_LM_BATCH_OFF, &o2, &n2) == 0, "%s: 2 threads", what);
    TH_CHECK(o1 && o2 && strcmp(o1, o2) == 0, "%s: 1-best differs between 1 and 2 threads", what);
    TH_CHECK(n1 && n2 && strcmp(n1, n2) == 0, "%s: n-best differs between 1 and 2 threads", what);
    TH_CHECK(decode(ini, input, 2, DEC_LM_BATCH_CPU, &o3, &n3) == 0, "%s: -lm-batch cpu", what);
    TH_CHECK(o3 && strcmp(o1, o3) == 0, "%s: 1-best differs with -lm-batch cpu", what);
    TH_CHECK(n3 && strcmp(n1, n3) == 0, "%s: n-best differs with -lm-batch cpu", what);
    free(o3), free(n3);
    size_t lines = 0, want = 0;
    for (const char *p = o2; p && *p; p++)
        lines += *p == '\n';
    for (const char *p = input; *p; p++)
        want += *p == '\n';
    TH_CHECK(lines == want, "%s: %zu output lines for %zu input lines", what, lines, want);
    free(o1), free(n1), free(o2), free(n2);
}

int main(void)
{
    /* the tiny model, many short random sentences (with empty lines and unknown words) */
    static const char *const words[] = {"a", "b", "c", "x", "y", "q", "a b"};
    size_t cap = 1 << 16, len = 0;
    char *input = calloc(cap, 1);
    unsigned seed = 12345;
    for (int s = 0; s < 400; s++) {
        int n = (int)((seed = seed * 1103515245u + 12345u) >> 16) % 9;
        for (int i = 0; i < n; i++) {
            seed = seed * 1103515245u + 12345u;
            len += (size_t)snprintf(input + len, cap - len, "%s ", words[(seed >> 16) % 7]);
        }
        len += (size_t)snprintf(input + len, cap - len, "\n");
    }
    char *tiny = tu_data_path("decoder/tiny/moses.ini");
    compare("tiny", tiny, input);
    free(tiny);
    free(input);
    /* the sample model shipped in examples/ (real phrase tables, a 3-gram LM) */
    char *ini = tu_data_path("../../examples/sample/moses.ini");
    char *sample = tu_data_path("../../examples/sample/sample.es");
    size_t sl;
    char *text = tu_read_file(sample, &sl);
    if (text)
        compare("sample", ini, text);
    else
        TH_CHECK(0, "cannot read %s", sample);
    free(text);
    free(sample);
    free(ini);
    return th_summary("threaded_decoder");
}
