/* fastsmt-binarize — binarizes the text models a moses.ini names, for fast loading.
 *
 *   fastsmt-binarize [--lm glm|probing] moses.ini OUTDIR
 *
 * Argument parsing around dec_binarize (decoder.h), which documents what is written. Exit status:
 * 0 success, 1 bad input or failure, 2 usage error. */
#include <stdio.h>
#include <string.h>

#include "decoder.h"
#include "smt_io.h"
#include "smt_progress.h"

static const char usage_text[] =
    "usage: fastsmt-binarize [--lm glm|probing] moses.ini OUTDIR\n"
    "Binarizes the phrase table (with its lexicalized reordering table) into OUTDIR/phrase-table.ppt\n"
    "and every KENLM ARPA file into OUTDIR/<name>.glm, and writes OUTDIR/moses.ini naming them.\n"
    "--lm probing writes each ARPA file as KenLM's probing binary instead (OUTDIR/<name>.probing,\n"
    "the bytes of KenLM's build_binary probing): decoding takes about a sixth fewer instructions,\n"
    "the file is about 1.7 times the .glm's, has no checksums (KenLM's format has none) and is\n"
    "scored on the CPU only (-lm-batch gpu needs the .glm). --lm glm is the default.\n"
    "Tables and LMs that are already binary are referenced, not rebuilt. The new moses.ini names the files\n"
    "in OUTDIR relative to OUTDIR and says so ([relative-paths] ini: never looked up in the working\n"
    "directory), so OUTDIR can be moved or copied; files outside OUTDIR keep absolute paths.\n"
    "The new moses.ini is loaded before the program reports success; no input file is ever\n"
    "overwritten.\n";

int main(int argc, char **argv)
{
    if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        fputs(usage_text, stdout);
        return smt_close_output(stdout, "standard output", NULL) ? 1 : 0;
    }
    dec_binarize_options opt = {.lm_probing = 0};
    int a = 1;
    if (argc > a && !strcmp(argv[a], "--lm")) {
        if (argc <= a + 1 || (strcmp(argv[a + 1], "glm") && strcmp(argv[a + 1], "probing"))) {
            fprintf(stderr, "fastsmt-binarize: --lm takes glm or probing\n");
            fputs(usage_text, stderr);
            return 2;
        }
        opt.lm_probing = !strcmp(argv[a + 1], "probing");
        a += 2;
    }
    if (argc - a != 2) {
        fputs(usage_text, stderr);
        return 2;
    }
    double t0 = smt_now();
    smt_err err;
    smt_err_clear(&err);
    int rc = dec_binarize(argv[a], argv[a + 1], &opt, stderr, &err);
    if (rc) {
        fprintf(stderr, "fastsmt-binarize: %s\n", smt_err_text(&err, rc));
        return 1;
    }
    fprintf(stderr, "fastsmt-binarize: wrote %s/moses.ini in %.1f s\n", argv[a + 1], smt_now() - t0);
    return 0;
}
