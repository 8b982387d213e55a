/* fastsmt — translate tokenized text with a Moses model (moses.ini), Moses's flags and formats.
 *
 *   fastsmt -f moses.ini [-threads N] [-n-best-list FILE N [distinct]] [-s STACK]
 *           [-cube-pruning-pop-limit P] [-dl D] [-weight-overwrite "Name= v ..."]
 *           [-t] [-include-segmentation-in-n-best] [-print-alignment-info]
 *           [-print-alignment-info-in-n-best] [-input-file FILE] < input > output
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "decoder.h"
#include "smt_num.h"

#define MAX_THREADS 1024
#define MAX_NBEST 1000000
#define MAX_VERBOSE 10

static void usage(FILE *f)
{
    fprintf(f,
            "usage: fastsmt -f moses.ini [-threads N|all] [-n-best-list FILE N [distinct]]\n"
            "               [-s STACK] [-cube-pruning-pop-limit P] [-dl D]\n"
            "               [-weight-overwrite \"Name= v ...\"] [-input-file FILE]\n"
            "               [-t | -report-segmentation] [-include-segmentation-in-n-best]\n"
            "               [-print-alignment-info] [-print-alignment-info-in-n-best]\n"
            "               [-alignment-output-file FILE]\n"
            "               [-b BEAM] [-max-phrase-length N] [-ttable-limit N] [-mark-unknown]\n"
            "               [-unknown-word-prefix P] [-unknown-word-suffix S] [-v N]\n"
            "               [-search-algorithm 1] [-inputtype 0] [-show-weights] [-h|--help]\n"
            "               [--verify | -verify-models]\n"
            "Reads tokenized sentences (one per line) and writes one translation per line, in\n"
            "input order. FILE '-' writes the n-best list to standard output. -t reports the\n"
            "source span of each phrase, \"|start-end| \", after its words (Moses's format).\n"
            "Ranges: -threads 0..%d (0 or all: every CPU), -s 1..%d, -cube-pruning-pop-limit\n"
            "1..%d, -dl -1..%d (-1: unlimited, 0: monotone), -b 0..1, -max-phrase-length 1..%d,\n"
            "-ttable-limit 0..%d (0: all), -n-best-list N 0..%d, -v 0..%d.\n"
            "-input-file may be compressed (.gz, .xz, .bz2, .zst). --verify checks every checksum of\n"
            "the binary models at load. On a terminal, progress (lines/s, words/s) shows unless -v 0.\n",
            MAX_THREADS, DEC_MAX_STACK, DEC_MAX_POP_LIMIT, DEC_MAX_SENTENCE, DEC_MAX_SENTENCE,
            DEC_MAX_TABLE_LIMIT, MAX_NBEST, MAX_VERBOSE);
}

/* A flag's integer value, strictly (whole token, in [lo, hi]); a message naming the flag. */
static int int_flag(const char *flag, const char *v, int lo, int hi, int *out)
{
    smt_err e;
    if (smt_parse_int_arg(flag, v, lo, hi, out, &e)) {
        fprintf(stderr, "fastsmt: %s\n", e.msg);
        return -1;
    }
    return 0;
}

/* The ini's [n-best-list]: FILE N [distinct], on one line or several. 0 with *path malloc'ed
 * (left NULL when the section is absent or empty), -1 when it is malformed (a message naming
 * ini:line printed). */
static int ini_nbest_list(const dec_model *m, const char *ini, char **path, int *n, int *distinct)
{
    char *const *v;
    size_t nv = dec_model_param_values(m, "n-best-list", &v), len = 1;
    *path = NULL;
    for (size_t i = 0; i < nv; i++)
        len += strlen(v[i]) + 1;
    char *all = malloc(len), *save = NULL;
    if (!all)
        return -1;
    all[0] = '\0';
    for (size_t i = 0; i < nv; i++)
        strcat(strcat(all, v[i]), " ");
    char *file = strtok_r(all, " \t", &save), *num = file ? strtok_r(NULL, " \t", &save) : NULL;
    char *d = num ? strtok_r(NULL, " \t", &save) : NULL;
    char *extra = d ? strtok_r(NULL, " \t", &save) : NULL;
    char what[600];
    snprintf(what, sizeof what, "%s:%u: [n-best-list] N", ini,
             dec_model_param_line(m, "n-best-list", nv > 1 ? 1 : 0));
    int ok = !file || (num && !extra && (!d || !strcmp(d, "distinct")) &&
                       !int_flag(what, num, 0, MAX_NBEST, n));
    if (!ok && (!num || extra || (d && strcmp(d, "distinct"))))
        fprintf(stderr, "fastsmt: %s:%u: [n-best-list] wants FILE N [distinct]\n", ini,
                dec_model_param_line(m, "n-best-list", 0));
    if (ok && file) {
        *distinct = d != NULL;
        ok = (*path = strdup(file)) != NULL;
    }
    free(all);
    return ok ? 0 : -1;
}

/* Flushes and closes an output stream; 0, or -1 with a message naming it. */
static int close_output(FILE *f, const char *name)
{
    int bad = fflush(f) != 0 || ferror(f);
    int e = errno;
    if (fclose(f) != 0 && !bad) {
        bad = 1;
        e = errno;
    }
    if (bad)
        fprintf(stderr, "fastsmt: %s: write error: %s\n", name, strerror(e ? e : EIO));
    return bad ? -1 : 0;
}

int main(int argc, char **argv)
{
    const char *ini = NULL, *nbest_path = NULL, *input = NULL, *align_path = NULL;
    int threads = -1, n_best = 0, distinct = 0, verbose = -1, show_weights = 0;
    dec_options opt;
    dec_options_default(&opt);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-f") || !strcmp(a, "-config")) {
            if (!v) {
                fprintf(stderr, "fastsmt: %s needs a file\n", a);
                return 2;
            }
            ini = v, i++;
        } else if (!strcmp(a, "-threads") || !strcmp(a, "-th")) {
            if (v && !strcmp(v, "all"))
                threads = 0;
            else if (int_flag(a, v, 0, MAX_THREADS, &threads))
                return 2;
            i++;
        } else if (!strcmp(a, "-n-best-list")) {
            if (i + 2 >= argc) {
                fprintf(stderr, "fastsmt: -n-best-list needs FILE N [distinct]\n");
                return 2;
            }
            if (int_flag("-n-best-list N", argv[i + 2], 0, MAX_NBEST, &n_best))
                return 2;
            nbest_path = argv[i + 1];
            i += 2;
            if (i + 1 < argc && !strcmp(argv[i + 1], "distinct"))
                distinct = 1, i++;
        } else if (!strcmp(a, "-s") || !strcmp(a, "-stack")) {
            if (int_flag(a, v, 1, DEC_MAX_STACK, &opt.stack_size))
                return 2;
            i++;
        } else if (!strcmp(a, "-cube-pruning-pop-limit") || !strcmp(a, "-cbp")) {
            if (int_flag(a, v, 1, DEC_MAX_POP_LIMIT, &opt.pop_limit))
                return 2;
            i++;
        } else if (!strcmp(a, "-dl") || !strcmp(a, "-distortion-limit")) {
            if (int_flag(a, v, -1, DEC_MAX_SENTENCE, &opt.distortion_limit))
                return 2;
            opt.distortion_limit_set = 1;
            i++;
        } else if (!strcmp(a, "-weight-overwrite")) {
            if (!v) {
                fprintf(stderr, "fastsmt: -weight-overwrite needs a string\n");
                return 2;
            }
            opt.weight_overwrite = v, i++;
        } else if (!strcmp(a, "-t") || !strcmp(a, "-report-segmentation")) {
            opt.report_segmentation = 1;
        } else if (!strcmp(a, "-include-segmentation-in-n-best")) {
            opt.nbest_segmentation = 1;
        } else if (!strcmp(a, "-b") || !strcmp(a, "-beam-threshold")) {
            smt_err e;
            if (smt_parse_double_arg(a, v, 0, 1, &opt.beam_threshold, &e)) {
                fprintf(stderr, "fastsmt: %s\n", e.msg);
                return 2;
            }
            i++;
        } else if (!strcmp(a, "-max-phrase-length")) {
            if (int_flag(a, v, 1, DEC_MAX_SENTENCE, &opt.max_phrase_len))
                return 2;
            i++;
        } else if (!strcmp(a, "-ttable-limit")) {
            if (int_flag(a, v, 0, DEC_MAX_TABLE_LIMIT, &opt.table_limit))
                return 2;
            i++;
        } else if (!strcmp(a, "-show-weights")) {
            show_weights = 1;
        } else if (!strcmp(a, "-mark-unknown") || !strcmp(a, "-mu")) {
            opt.mark_unknown = 1;
        } else if (!strcmp(a, "-unknown-word-prefix") || !strcmp(a, "-unknown-word-suffix")) {
            if (!v) {
                fprintf(stderr, "fastsmt: %s needs a string\n", a);
                return 2;
            }
            *(a[14] == 'p' ? &opt.unknown_prefix : &opt.unknown_suffix) = v, i++;
        } else if (!strcmp(a, "-v") || !strcmp(a, "-verbose")) {
            if (int_flag(a, v, 0, MAX_VERBOSE, &verbose))
                return 2;
            i++;
        } else if (!strcmp(a, "-search-algorithm")) {
            int sa;
            if (int_flag(a, v, 0, 9, &sa))
                return 2;
            if (sa != 1) {
                fprintf(stderr,
                        "fastsmt: -search-algorithm %d: only cube pruning (1) is implemented\n", sa);
                return 2;
            }
            i++;
        } else if (!strcmp(a, "-inputtype")) {
            int it;
            if (int_flag(a, v, 0, 3, &it))
                return 2;
            if (it != 0) {
                fprintf(stderr, "fastsmt: -inputtype %d: only plain text (0) is read\n", it);
                return 2;
            }
            i++;
        } else if (!strcmp(a, "-print-alignment-info")) {
            opt.print_alignment = 1;
        } else if (!strcmp(a, "-alignment-output-file")) {
            if (!v) {
                fprintf(stderr, "fastsmt: -alignment-output-file needs a file\n");
                return 2;
            }
            align_path = v, i++;
        } else if (!strcmp(a, "-print-alignment-info-in-n-best")) {
            opt.nbest_alignment = 1;
        } else if (!strcmp(a, "-input-file") || !strcmp(a, "-i")) {
            if (!v) {
                fprintf(stderr, "fastsmt: %s needs a file\n", a);
                return 2;
            }
            input = v, i++;
        } else if (!strcmp(a, "--verify") || !strcmp(a, "-verify-models")) {
            opt.verify = 1;
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help") || !strcmp(a, "-help")) {
            usage(stdout);
            return close_output(stdout, "<stdout>") ? 1 : 0;
        } else {
            fprintf(stderr, "fastsmt: unknown argument '%s'\n", a);
            usage(stderr);
            return 2;
        }
    }
    if (!ini) {
        usage(stderr);
        return 2;
    }
    if (align_path && !(opt.alignment_file = fopen(align_path, "w"))) {
        perror(align_path);
        return 1;
    }
    smt_err err;
    smt_err_clear(&err);
    dec_model *m;
    char *ini_nbest_path = NULL, *ini_input = NULL;
    FILE *nb = NULL;
    int rc = dec_model_load(&m, ini, &opt, &err);
    if (rc) {
        fprintf(stderr, "fastsmt: %s\n", smt_err_text(&err, rc));
        if (opt.alignment_file)
            fclose(opt.alignment_file);
        return 1;
    }
    /* the ini's forms of the flags this tool reads itself ([threads], [verbose], [show-weights],
     * [input-file], [n-best-list]); a flag wins */
    long long x;
    int ini_rc = 0, sw = 0;
    if (!show_weights && (ini_rc = dec_model_param_bool(m, "show-weights", &sw, &err)) > 0)
        show_weights = sw;
    if (ini_rc >= 0 && verbose < 0 &&
        (ini_rc = dec_model_param_ll(m, "verbose", 0, MAX_VERBOSE, &x, &err)) > 0)
        verbose = (int)x;
    if (ini_rc >= 0 && threads < 0) { /* the ini's [threads], else 1 */
        const char *t = dec_model_param(m, "threads");
        threads = 1;
        if (t && !strcmp(t, "all"))
            threads = 0;
        else if ((ini_rc = dec_model_param_ll(m, "threads", 0, MAX_THREADS, &x, &err)) > 0)
            threads = (int)x;
    }
    if (ini_rc >= 0 && !input && dec_model_param(m, "input-file"))
        input = ini_input = dec_model_param_path(m, "input-file");
    if (ini_rc < 0) {
        fprintf(stderr, "fastsmt: %s\n", smt_err_text(&err, ini_rc));
        rc = 2;
        goto done;
    }
    if (verbose < 0)
        verbose = 1;
    if (show_weights) { /* Moses's tuning scripts ask for the features this way */
        rc = dec_model_show_weights(m, stdout) || close_output(stdout, "<stdout>") ? 1 : 0;
        goto done;
    }
    if (!nbest_path) {
        if (ini_nbest_list(m, ini, &ini_nbest_path, &n_best, &distinct)) {
            rc = 2;
            goto done;
        }
        nbest_path = ini_nbest_path;
    }
    if (input && strcmp(input, "-") && access(input, R_OK) != 0) { /* before any output */
        perror(input);
        rc = 1;
        goto done;
    }
    if (nbest_path && n_best > 0) {
        nb = strcmp(nbest_path, "-") ? fopen(nbest_path, "w") : stdout;
        if (!nb) {
            perror(nbest_path);
            rc = 1;
            goto done;
        }
    }
    dec_run_stats st;
    rc = dec_run_input(m, input, stdout, nb, (size_t)n_best, distinct, (unsigned)threads,
                       verbose > 0, stderr, &st, &err);
    if (rc)
        fprintf(stderr, "fastsmt: %s\n", smt_err_text(&err, rc));
    else if (verbose > 0)
        fprintf(stderr, "fastsmt: %llu lines, %llu words in %.2f s (load %.2f s)\n",
                (unsigned long long)st.lines, (unsigned long long)st.tokens, st.seconds,
                dec_model_load_seconds(m));
    if (nb && nb != stdout && close_output(nb, nbest_path))
        rc = 1;
    if (close_output(stdout, "<stdout>"))
        rc = 1;
    rc = rc ? 1 : 0;
done:
    if (opt.alignment_file && close_output(opt.alignment_file, align_path))
        rc = 1;
    dec_model_free(m);
    free(ini_nbest_path);
    free(ini_input);
    return rc;
}
