/* fastsmt-binarize — binarizes the text models a moses.ini names, for fast loading.
 *
 *   fastsmt-binarize moses.ini OUTDIR
 *
 * Argument parsing around dec_binarize (decoder.h), which documents what is written. Exit status:
 * 0 success, 1 bad input or failure, 2 usage error. */
#include <stdio.h>
#include <string.h>

#include "decoder.h"
#include "smt_io.h"
#include "smt_progress.h"

static const char usage_text[] =
    "usage: fastsmt-binarize moses.ini OUTDIR\n"
    "Binarizes the phrase table (with its lexicalized reordering table) into OUTDIR/phrase-table.ppt\n"
    "and every KENLM ARPA file into OUTDIR/<name>.glm, and writes OUTDIR/moses.ini naming them.\n"
    "Tables that are already binary are referenced, not rebuilt. The new moses.ini names the files\n"
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
    if (argc != 3) {
        fputs(usage_text, stderr);
        return 2;
    }
    double t0 = smt_now();
    smt_err err;
    smt_err_clear(&err);
    int rc = dec_binarize(argv[1], argv[2], stderr, &err);
    if (rc) {
        fprintf(stderr, "fastsmt-binarize: %s\n", smt_err_text(&err, rc));
        return 1;
    }
    fprintf(stderr, "fastsmt-binarize: wrote %s/moses.ini in %.1f s\n", argv[2], smt_now() - t0);
    return 0;
}
