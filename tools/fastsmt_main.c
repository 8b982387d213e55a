/* fastsmt — translate tokenized text with a Moses model (moses.ini), Moses's flags and formats.
 *
 *   fastsmt -f moses.ini [-threads N] [-n-best-list FILE N [distinct]] [-s STACK]
 *           [-cube-pruning-pop-limit P] [-dl D] [-weight-overwrite "Name= v ..."]
 *           [-t] [-include-segmentation-in-n-best] [-print-alignment-info]
 *           [-print-alignment-info-in-n-best] [-input-file FILE] < input > output
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "decoder.h"

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
            "               [-search-algorithm 1] [-inputtype 0] [-show-weights]\n"
            "               [--verify | -verify-models]\n"
            "Reads tokenized sentences (one per line) and writes one translation per line, in\n"
            "input order. FILE '-' writes the n-best list to standard output. -t reports the\n"
            "source span of each phrase, \"|start-end| \", after its words (Moses's format).\n"
            "-input-file may be compressed (.gz). --verify checks every checksum of the binary\n"
            "models at load. On a terminal, progress (lines/s, words/s) shows unless -v 0.\n");
}

static int parse_int(const char *flag, const char *v, int *out)
{
    char *end;
    long x = v ? strtol(v, &end, 10) : 0;
    if (!v || *end || end == v) {
        fprintf(stderr, "fastsmt: %s needs an integer\n", flag);
        return -1;
    }
    *out = (int)x;
    return 0;
}

/* The ini's [n-best-list]: FILE N [distinct], on one line or several. 0 with *path malloc'ed
 * (left NULL when the section is absent or empty), -1 when it is malformed. */
static int ini_nbest_list(const dec_model *m, char **path, int *n, int *distinct)
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
    int ok = !file || (num && !extra && (!d || !strcmp(d, "distinct")) &&
                       !parse_int("[n-best-list]", num, n));
    if (ok && file) {
        *distinct = d != NULL;
        ok = (*path = strdup(file)) != NULL;
    }
    free(all);
    return ok ? 0 : -1;
}

int main(int argc, char **argv)
{
    const char *ini = NULL, *nbest_path = NULL, *input = NULL, *align_path = NULL;
    int threads = -1, n_best = 0, distinct = 0, verbose = 1, show_weights = 0;
    dec_options opt;
    dec_options_default(&opt);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-f") || !strcmp(a, "-config")) {
            ini = v, i++;
        } else if (!strcmp(a, "-threads") || !strcmp(a, "-th")) {
            if (v && !strcmp(v, "all"))
                threads = 0;
            else if (parse_int(a, v, &threads) || threads < 0)
                return 2;
            i++;
        } else if (!strcmp(a, "-n-best-list")) {
            if (i + 2 >= argc || parse_int(a, argv[i + 2], &n_best) || n_best < 0) {
                fprintf(stderr, "fastsmt: -n-best-list needs FILE N [distinct]\n");
                return 2;
            }
            nbest_path = argv[i + 1];
            i += 2;
            if (i + 1 < argc && !strcmp(argv[i + 1], "distinct"))
                distinct = 1, i++;
        } else if (!strcmp(a, "-s") || !strcmp(a, "-stack")) {
            if (parse_int(a, v, &opt.stack_size))
                return 2;
            i++;
        } else if (!strcmp(a, "-cube-pruning-pop-limit") || !strcmp(a, "-cbp")) {
            if (parse_int(a, v, &opt.pop_limit))
                return 2;
            i++;
        } else if (!strcmp(a, "-dl") || !strcmp(a, "-distortion-limit")) {
            if (parse_int(a, v, &opt.distortion_limit))
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
            char *end;
            opt.beam_threshold = v ? strtod(v, &end) : -1;
            if (!v || *end || end == v || opt.beam_threshold < 0) {
                fprintf(stderr, "fastsmt: %s needs a number >= 0\n", a);
                return 2;
            }
            i++;
        } else if (!strcmp(a, "-max-phrase-length")) {
            if (parse_int(a, v, &opt.max_phrase_len) || opt.max_phrase_len < 1)
                return 2;
            i++;
        } else if (!strcmp(a, "-ttable-limit")) {
            if (parse_int(a, v, &opt.table_limit) || opt.table_limit < 0)
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
            if (parse_int(a, v, &verbose))
                return 2;
            i++;
        } else if (!strcmp(a, "-search-algorithm")) {
            int sa;
            if (parse_int(a, v, &sa))
                return 2;
            if (sa != 1) {
                fprintf(stderr,
                        "fastsmt: -search-algorithm %d: only cube pruning (1) is implemented\n", sa);
                return 2;
            }
            i++;
        } else if (!strcmp(a, "-inputtype")) {
            int it;
            if (parse_int(a, v, &it))
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
            input = v, i++;
        } else if (!strcmp(a, "--verify") || !strcmp(a, "-verify-models")) {
            opt.verify = 1;
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
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
    FILE *nb = NULL;
    if (input && strcmp(input, "-") && access(input, R_OK) != 0) { /* before a long load */
        perror(input);
        return 1;
    }
    if (align_path && !(opt.alignment_file = fopen(align_path, "w"))) {
        perror(align_path);
        return 1;
    }
    smt_err err;
    smt_err_clear(&err);
    dec_model *m;
    int rc = dec_model_load(&m, ini, &opt, &err);
    if (rc) {
        fprintf(stderr, "fastsmt: %s\n", smt_err_text(&err, rc));
        return 1;
    }
    if (show_weights) { /* Moses's tuning scripts ask for the features this way */
        rc = dec_model_show_weights(m, stdout);
        dec_model_free(m);
        return rc ? 1 : 0;
    }
    char *ini_nbest_path = NULL;
    if (!nbest_path) {
        if (ini_nbest_list(m, &ini_nbest_path, &n_best, &distinct)) {
            fprintf(stderr, "fastsmt: [n-best-list] in %s wants FILE N [distinct]\n", ini);
            dec_model_free(m);
            return 2;
        }
        nbest_path = ini_nbest_path;
    }
    if (nbest_path && n_best > 0) {
        nb = strcmp(nbest_path, "-") ? fopen(nbest_path, "w") : stdout;
        if (!nb) {
            perror(nbest_path);
            dec_model_free(m);
            return 1;
        }
    }
    if (threads < 0) { /* the ini's [threads], else 1 */
        const char *t = dec_model_param(m, "threads");
        threads = t ? (strcmp(t, "all") ? atoi(t) : 0) : 1;
        if (threads < 0)
            threads = 1;
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
    if (nb && nb != stdout && fclose(nb) != 0) {
        perror(nbest_path);
        rc = 1;
    }
    if (opt.alignment_file && fclose(opt.alignment_file) != 0) {
        perror(align_path);
        rc = 1;
    }
    dec_model_free(m);
    free(ini_nbest_path);
    return rc ? 1 : 0;
}
