/* fastsmt — translate tokenized text with a Moses model (moses.ini), Moses's flags and formats.
 *
 *   fastsmt -f moses.ini [-threads N] [-n-best-list FILE N [distinct]] [-s STACK]
 *           [-cube-pruning-pop-limit P] [-dl D] [-weight-overwrite "Name= v ..."]
 *           [-weight-file FILE] [-early-distortion-cost]
 *           [-t] [-include-segmentation-in-n-best] [-print-alignment-info]
 *           [-print-alignment-info-in-n-best] [-input-file FILE] < input > output
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decoder.h"
#include "dist.h"
#include "smt_buf.h"
#include "smt_io.h"
#include "smt_num.h"
#ifdef FASTSMT_HAVE_SERVER
#include "server.h"
#endif

#define MAX_THREADS DEC_MAX_THREADS
#define MAX_NBEST DEC_MAX_NBEST
#define MAX_VERBOSE DEC_MAX_VERBOSE

static void usage(FILE *f)
{
    fprintf(f,
            "usage: fastsmt -f moses.ini [-threads N|all] [-n-best-list FILE N [distinct]]\n"
            "               [-s STACK] [-cube-pruning-pop-limit P] [-dl D]\n"
            "               [-weight-overwrite \"Name= v ...\"] [-weight-file FILE]\n"
            "               [-early-distortion-cost] [-input-file FILE]\n"
            "               [-feature-overwrite \"Name key=value ...\"]...\n"
            "               [-t | -report-segmentation] [-include-segmentation-in-n-best]\n"
            "               [-print-alignment-info] [-print-alignment-info-in-n-best]\n"
            "               [-alignment-output-file FILE] [-output-unknowns FILE]\n"
            "               [-drop-unknown|-du] [-output-hypo-score] [-n-best-factor F]\n"
            "               [-xml-input exclusive|inclusive|constraint|ignore|pass-through]\n"
            "               [-xml-brackets \"LB RB\"] [-monotone-at-punctuation|-mp]\n"
            "               [-b BEAM] [-max-phrase-length N] [-ttable-limit N] [-mark-unknown]\n"
            "               [-unknown-word-prefix P] [-unknown-word-suffix S] [-v N]\n"
            "               [-search-algorithm 1] [-inputtype 0] [-show-weights] [-h|--help]\n"
            "               [--verify | -verify-models] [-lm-batch cpu|gpu|off] [-lm-batch-width W]\n"
            "               [-model-cache DIR|off]\n"
            "               [-resume] [-parts-dir DIR] [-chunk-bytes N]   (under mpirun/srun)\n"
            "       fastsmt -f moses.ini --server [--server-port P] [--server-host ADDR]\n"
            "               [--server-log FILE] [--server-queue N] [--server-max-body BYTES]\n"
            "               [--server-max-words N] [--server-max-nbest N]\n"
            "               [--server-max-connections N] [--server-request-timeout S]\n"
            "               [--server-idle-timeout S] [--server-drain-timeout S] [decoder flags]\n"
            "Reads tokenized sentences (one per line) and writes one translation per line, in\n"
            "input order. FILE '-' writes the n-best list to standard output. -t reports the\n"
            "source span of each phrase, \"|start-end| \", after its words (Moses's format);\n"
            "-include-segmentation-in-n-best adds Moses's field \" ||| s-e=t-u ...\" to n-best lines.\n"
            "Ranges: -threads 0..%d (0 or all: every CPU), -s 1..%d, -cube-pruning-pop-limit\n"
            "1..%d, -dl -1..%d (-1: unlimited, 0: monotone), -b 0..1, -max-phrase-length 1..%d,\n"
            "-ttable-limit 0..%d (0: all), -n-best-list N 0..%d, -v 0..%d.\n"
            "-input-file may be compressed (.gz, .xz, .bz2, .zst). --verify checks every checksum of\n"
            "the binary models at load. On a terminal, progress (lines/s, words/s) shows unless -v 0.\n"
            "-lm-batch: the LM queries of W sentences per thread decoded in lock-step (-lm-batch-width,\n"
            "default 16) are scored together on the CPU (cpu) or the GPU (gpu); off (the default)\n"
            "asks one query at a time. The output is the same with each.\n"
            "Text phrase tables and ARPA LMs are binarized at load and kept in -model-cache DIR\n"
            "(default: the folder fastsmt in $XDG_CACHE_HOME, else in ~/.cache), so that the next\n"
            "load maps them at once; -model-cache off (or FASTSMT_CACHE=0) keeps no copy: each load\n"
            "binarizes them into a temporary file in $TMPDIR.\n"
            "Started by mpirun or srun with N ranks (a build with MPI), the input is cut into chunks\n"
            "that the ranks translate, each with -threads threads; the outputs are those of one\n"
            "process. A plain -input-file is read by each rank in parts, written as part files in\n"
            "-parts-dir (default ./INPUT.fastsmt-parts, on a file system every rank sees) with a\n"
            "manifest, so that -resume redoes only the chunks a failed job left; -chunk-bytes sets\n"
            "their size. Standard input is read by rank 0 and handed out (docs/scale.md).\n"
            "--server serves translations over HTTP instead (docs/server.md): Moses's XML-RPC\n"
            "protocol (POST /RPC2, method translate), JSON (POST /translate), GET /health, GET\n"
            "/metrics and a page at GET /, with -threads workers (the flags may also be spelled\n"
            "with one dash). --server-port (default 8080; 0: any free port) and --server-host\n"
            "(default: every interface) say where it listens; --server-log appends a line per\n"
            "request to FILE. Limits: --server-queue requests waiting for a worker (default 64;\n"
            "past it a request is refused at once, HTTP 503 or a fault), --server-max-body bytes\n"
            "(default 1048576), --server-max-words a sentence (default 200, at most %d),\n"
            "--server-max-nbest (default 100), --server-max-connections open at once (default\n"
            "256), --server-request-timeout seconds a request, queue and translation (default\n"
            "60), --server-idle-timeout seconds before a silent connection is closed (default\n"
            "30). SIGTERM or SIGINT: stops accepting, answers every accepted request (waiting\n"
            "--server-drain-timeout seconds at most, default 120) and exits 0.\n",
            MAX_THREADS, DEC_MAX_STACK, DEC_MAX_POP_LIMIT, DEC_MAX_SENTENCE, DEC_MAX_SENTENCE,
            DEC_MAX_TABLE_LIMIT, MAX_NBEST, MAX_VERBOSE, DEC_MAX_SENTENCE);
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

/* Flushes and closes an output stream; 0, or -1 with a message naming it. */
static int close_output(FILE *f, const char *name)
{
    smt_err e;
    int rc = smt_close_output(f, name, &e);
    if (rc)
        fprintf(stderr, "fastsmt: %s\n", smt_err_text(&e, rc));
    return rc ? -1 : 0;
}

/* A run over MPI ranks (dist.h): what each chunk is translated with. */
typedef struct fs_dist {
    dec_model *m;
    const dec_run_options *run;
    int k_nbest, k_align, k_unk; /* their output's index, or -1: standard output (or none) */
} fs_dist;

static int fs_process(void *ctx, smt_lines *in, FILE **outs, uint64_t *words, int *complete,
                      smt_err *err)
{
    fs_dist *d = ctx;
    dec_run_options o = *d->run;
    o.nbest = o.n_best > 0 ? outs[d->k_nbest >= 0 ? d->k_nbest : 0] : NULL;
    o.alignment = o.alignment_path ? outs[d->k_align >= 0 ? d->k_align : 0] : NULL;
    o.unknowns = o.unknowns_path ? outs[d->k_unk >= 0 ? d->k_unk : 0] : NULL;
    dec_run_stats st;
    int rc = dec_run_lines(d->m, in, outs[0], &o, &st, err);
    *words = st.tokens;
    /* refused lines (too long, a damaged table group) still give their empty lines */
    *complete = rc == SMT_ERR_LIMIT || rc == SMT_ERR_CORRUPT;
    return rc;
}

/* The outputs of a run over ranks: standard output, then the named files. */
static int fs_dist_run(dec_model *m, const dec_run_options *run, int argc, char **argv,
                       const char *weight_file, const char *parts, long long chunk, int resume,
                       smt_err *err)
{
    fs_dist d = {m, run, -1, -1, -1};
    dist_job job;
    memset(&job, 0, sizeof job);
    job.tool = "fastsmt";
    job.input = run->input;
    job.out_kind[job.n_out++] = DIST_OUT_STDOUT;
    const char *paths[3] = {run->n_best > 0 ? run->nbest_path : NULL, run->alignment_path,
                            run->unknowns_path};
    int *ks[3] = {&d.k_nbest, &d.k_align, &d.k_unk};
    for (int i = 0; i < 3; i++)
        if (paths[i] && strcmp(paths[i], "-")) {
            *ks[i] = job.n_out;
            job.out_path[job.n_out] = paths[i];
            job.out_kind[job.n_out++] = DIST_OUT_FILE;
        }
    /* what the output depends on: every argument but those that do not change it */
    smt_buf fp = {0};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-threads") || !strcmp(a, "-th") || !strcmp(a, "-parts-dir") ||
            !strcmp(a, "-chunk-bytes") || !strcmp(a, "-v") || !strcmp(a, "-verbose") ||
            !strcmp(a, "-lm-batch") || !strcmp(a, "-lm-batch-width") ||
            !strcmp(a, "-model-cache")) {
            i++;
            continue;
        }
        if (!strcmp(a, "-resume"))
            continue;
        if (smt_buf_puts(&fp, a) || smt_buf_putc(&fp, '\n')) {
            smt_buf_free(&fp);
            return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
        }
    }
    job.fingerprint = fp.data ? fp.data : "";
    /* the files the model was read from, and -weight-file's */
    char **files = NULL;
    size_t n_files = 0;
    int rc = dec_model_files(m, &files, &n_files, err);
    const char **all = rc ? NULL : malloc((n_files + 1) * sizeof *all);
    if (!rc && !all)
        rc = smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
    if (rc) {
        free(files);
        smt_buf_free(&fp);
        return rc;
    }
    memcpy(all, files, n_files * sizeof *all);
    if (weight_file)
        all[n_files++] = weight_file;
    job.files = all;
    job.n_files = n_files;
    job.parts_dir = parts;
    job.resume = resume;
    job.chunk_bytes = (uint64_t)chunk;
    job.stream_chunk_bytes = 16u << 10; /* sentences take long: small chunks balance */
    job.report = run->verbose > 0;
    job.process = fs_process;
    job.ctx = &d;
    rc = dist_run(&job, err);
    free(all);
    free(files);
    smt_buf_free(&fp);
    return rc;
}

/* --server's flags, as given (-1 / NULL: the server's default). */
typedef struct fs_server_flags {
    int on, port, queue, max_words, max_nbest, max_connections, request_s, idle_s, drain_s;
    long long max_body;
    const char *host, *log;
} fs_server_flags;

/* a is the flag --NAME or -NAME (Moses spells the server's flags with two dashes). */
static int is_server_flag(const char *a, const char *name)
{
    if (a[0] != '-')
        return 0;
    a += a[1] == '-' ? 2 : 1;
    return !strcmp(a, name);
}

/* Parses one of --server's flags at argv[*i]: 1 when it was one (*i past its value), 0 when not,
 * -1 on a bad value (said on stderr). */
static int server_flag(int argc, char **argv, int *i, fs_server_flags *f)
{
    const char *a = argv[*i], *v = *i + 1 < argc ? argv[*i + 1] : NULL;
    static const struct {
        const char *name;
        int lo, hi;
        size_t off;
    } ints[] = {
        {"server-port", 0, 65535, offsetof(fs_server_flags, port)},
        {"server-queue", 1, 100000, offsetof(fs_server_flags, queue)},
        {"server-max-words", 1, DEC_MAX_SENTENCE, offsetof(fs_server_flags, max_words)},
        {"server-max-nbest", 0, DEC_MAX_NBEST, offsetof(fs_server_flags, max_nbest)},
        {"server-max-connections", 1, 100000, offsetof(fs_server_flags, max_connections)},
        {"server-request-timeout", 1, 86400, offsetof(fs_server_flags, request_s)},
        {"server-idle-timeout", 1, 86400, offsetof(fs_server_flags, idle_s)},
        {"server-drain-timeout", 0, 86400, offsetof(fs_server_flags, drain_s)},
    };
    if (is_server_flag(a, "server")) {
        f->on = 1;
        return 1;
    }
    for (size_t k = 0; k < sizeof ints / sizeof *ints; k++)
        if (is_server_flag(a, ints[k].name)) {
            if (int_flag(a, v, ints[k].lo, ints[k].hi, (int *)((char *)f + ints[k].off)))
                return -1;
            (*i)++;
            return 1;
        }
    if (is_server_flag(a, "server-max-body")) {
        smt_err e;
        if (smt_parse_ll_arg(a, v, 1, 1ll << 30, &f->max_body, &e)) {
            fprintf(stderr, "fastsmt: %s\n", e.msg);
            return -1;
        }
        (*i)++;
        return 1;
    }
    if (is_server_flag(a, "server-host") || is_server_flag(a, "server-log")) {
        if (!v || !*v) {
            fprintf(stderr, "fastsmt: %s needs a value\n", a);
            return -1;
        }
        *(is_server_flag(a, "server-host") ? &f->host : &f->log) = v;
        (*i)++;
        return 1;
    }
    return 0;
}

/* fastsmt --server: listens, then loads the model, serves until SIGTERM or SIGINT, then drains.
 * Returns the exit status. */
static int run_server(const char *ini, const dec_options *opt, const dec_run_options *ro,
                      const fs_server_flags *f)
{
#ifdef FASTSMT_HAVE_SERVER
    srv_options so;
    srv_options_default(&so);
    so.host = f->host;
    so.port = f->port >= 0 ? f->port : 8080;
    int *dst[] = {&so.queue, &so.max_words, &so.max_nbest, &so.max_connections,
                  &so.request_seconds, &so.idle_seconds, &so.drain_seconds};
    const int src[] = {f->queue, f->max_words, f->max_nbest, f->max_connections,
                       f->request_s, f->idle_s, f->drain_s};
    for (size_t k = 0; k < sizeof src / sizeof *src; k++)
        if (src[k] >= 0)
            *dst[k] = src[k];
    if (f->max_body > 0)
        so.max_body = (size_t)f->max_body;
    if (f->log && !(so.log = fopen(f->log, "a"))) {
        fprintf(stderr, "fastsmt: --server-log %s: %s\n", f->log, strerror(errno));
        return 1;
    }
    /* SIGTERM and SIGINT are taken by sigwait below: blocked in every thread the server starts */
    sigset_t sigs;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGTERM);
    sigaddset(&sigs, SIGINT);
    pthread_sigmask(SIG_BLOCK, &sigs, NULL);
    signal(SIGPIPE, SIG_IGN);
    smt_err err;
    smt_err_clear(&err);
    srv *s;
    int rc = srv_start(&s, &so, &err);
    if (rc) {
        fprintf(stderr, "fastsmt: %s\n", smt_err_text(&err, rc));
        if (so.log)
            fclose(so.log);
        return 1;
    }
    fprintf(stderr, "fastsmt: server listening on port %d\n", srv_port(s));
    dec_model *m = NULL;
    dec_run_options run;
    int have_run = 0;
    rc = dec_model_load(&m, ini, opt, &err);
    if (!rc && !(rc = dec_run_options_resolve(m, ro, &run, &err)))
        have_run = 1;
    if (!rc)
        rc = srv_serve(s, m, &run, run.threads, &err);
    int status = 0;
    if (rc) {
        fprintf(stderr, "fastsmt: %s\n", smt_err_text(&err, rc));
        status = 1;
    } else {
        fprintf(stderr, "fastsmt: server ready\n");
        int sig = 0;
        sigwait(&sigs, &sig);
        fprintf(stderr, "fastsmt: server: %s, stopping\n", sig == SIGINT ? "SIGINT" : "SIGTERM");
        if ((rc = srv_drain(s, &err)) != 0) {
            fprintf(stderr, "fastsmt: %s\n", smt_err_text(&err, rc));
            status = 1;
        }
    }
    srv_free(s);
    if (have_run)
        dec_run_options_release(&run);
    dec_model_free(m);
    if (so.log && fclose(so.log)) {
        fprintf(stderr, "fastsmt: --server-log %s: %s\n", f->log, strerror(errno));
        status = 1;
    }
    if (!status)
        fprintf(stderr, "fastsmt: server stopped\n");
    return status;
#else
    (void)ini, (void)opt, (void)ro, (void)f;
    fprintf(stderr, "fastsmt: --server: this build has no server (it needs libmicrohttpd-dev, "
                    "libxmlrpc-core-c3-dev and libjansson-dev; docs/server.md)\n");
    return 2;
#endif
}

/* The tool; size: the MPI ranks (1: one process); *collective: dist_run was reached (every rank
 * ends on its own then). */
static int tool_main(int argc, char **argv, int rank, int size, int *collective)
{
    int resume = 0;
    const char *parts = NULL;
    long long chunk = 0;
    const char *ini = NULL, *cache_flag = NULL;
    dec_options opt;
    dec_options_default(&opt);
    static smt_buf fo; /* the -feature-overwrite specs, one per line (static: lives to the end) */
    dec_run_options ro; /* what the flags give; the library fills the rest from the ini */
    dec_run_options_default(&ro);
    fs_server_flags sf = {0, -1, -1, -1, -1, -1, -1, -1, -1, -1, NULL, NULL};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        int sv = server_flag(argc, argv, &i, &sf);
        if (sv < 0)
            return 2;
        if (sv > 0)
            continue;
        if (!strcmp(a, "-f") || !strcmp(a, "-config")) {
            if (!v) {
                fprintf(stderr, "fastsmt: %s needs a file\n", a);
                return 2;
            }
            ini = v, i++;
        } else if (!strcmp(a, "-threads") || !strcmp(a, "-th")) {
            if (v && !strcmp(v, "all"))
                ro.threads = 0;
            else if (int_flag(a, v, 0, MAX_THREADS, &ro.threads))
                return 2;
            i++;
        } else if (!strcmp(a, "-n-best-list")) {
            if (i + 2 >= argc) {
                fprintf(stderr, "fastsmt: -n-best-list needs FILE N [distinct]\n");
                return 2;
            }
            if (int_flag("-n-best-list N", argv[i + 2], 0, MAX_NBEST, &ro.n_best))
                return 2;
            ro.nbest_path = argv[i + 1];
            i += 2;
            if (i + 1 < argc && !strcmp(argv[i + 1], "distinct"))
                ro.distinct = 1, i++;
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
        } else if (!strcmp(a, "-weight-file") || !strcmp(a, "-wf")) {
            if (!v) {
                fprintf(stderr, "fastsmt: %s needs a file\n", a);
                return 2;
            }
            opt.weight_file = v, i++;
        } else if (!strcmp(a, "-early-distortion-cost") || !strcmp(a, "-edc")) {
            opt.early_distortion_cost = 1;
        } else if (!strcmp(a, "-feature-overwrite")) {
            if (!v) {
                fprintf(stderr, "fastsmt: -feature-overwrite needs \"Name key=value ...\"\n");
                return 2;
            }
            /* given again: one more spec, on its own line */
            if ((fo.len && smt_buf_putc(&fo, '\n')) || smt_buf_puts(&fo, v)) {
                fprintf(stderr, "fastsmt: out of memory\n");
                return 1;
            }
            opt.feature_overwrite = fo.data;
            i++;
        } else if (!strcmp(a, "-t") || !strcmp(a, "-report-segmentation")) {
            ro.report_segmentation = 1;
        } else if (!strcmp(a, "-include-segmentation-in-n-best")) {
            ro.nbest_segmentation = 1;
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
            ro.show_weights = 1;
        } else if (!strcmp(a, "-mark-unknown") || !strcmp(a, "-mu")) {
            ro.mark_unknown = 1;
        } else if (!strcmp(a, "-unknown-word-prefix") || !strcmp(a, "-unknown-word-suffix")) {
            if (!v) {
                fprintf(stderr, "fastsmt: %s needs a string\n", a);
                return 2;
            }
            *(a[14] == 'p' ? &ro.unknown_prefix : &ro.unknown_suffix) = v, i++;
        } else if (!strcmp(a, "-v") || !strcmp(a, "-verbose")) {
            if (int_flag(a, v, 0, MAX_VERBOSE, &ro.verbose))
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
            ro.print_alignment = 1;
        } else if (!strcmp(a, "-alignment-output-file")) {
            if (!v) {
                fprintf(stderr, "fastsmt: -alignment-output-file needs a file\n");
                return 2;
            }
            ro.alignment_path = v, i++;
        } else if (!strcmp(a, "-print-alignment-info-in-n-best")) {
            ro.nbest_alignment = 1;
        } else if (!strcmp(a, "-drop-unknown") || !strcmp(a, "-du")) {
            ro.drop_unknown = 1;
        } else if (!strcmp(a, "-output-hypo-score")) {
            ro.output_hypo_score = 1;
        } else if (!strcmp(a, "-n-best-factor")) {
            if (int_flag(a, v, 0, DEC_MAX_NBEST_FACTOR, &ro.nbest_factor))
                return 2;
            i++;
        } else if (!strcmp(a, "-xml-input") || !strcmp(a, "-xi")) {
            if (!v) {
                fprintf(stderr, "fastsmt: %s needs exclusive, inclusive, constraint, ignore or "
                                "pass-through\n",
                        a);
                return 2;
            }
            ro.xml_input = v, i++;
        } else if (!strcmp(a, "-lm-batch")) {
            if (v && !strcmp(v, "off"))
                ro.lm_batch = DEC_LM_BATCH_OFF;
            else if (v && !strcmp(v, "cpu"))
                ro.lm_batch = DEC_LM_BATCH_CPU;
            else if (v && !strcmp(v, "gpu"))
                ro.lm_batch = DEC_LM_BATCH_GPU;
            else {
                fprintf(stderr, "fastsmt: -lm-batch needs cpu, gpu or off%s%s%s\n",
                        v ? " (not '" : "", v ? v : "", v ? "')" : "");
                return 2;
            }
            i++;
        } else if (!strcmp(a, "-lm-batch-width")) {
            if (int_flag(a, v, 1, DEC_MAX_LM_BATCH_WIDTH, &ro.lm_batch_width))
                return 2;
            i++;
        } else if (!strcmp(a, "-monotone-at-punctuation") || !strcmp(a, "-mp")) {
            ro.monotone_at_punct = 1;
        } else if (!strcmp(a, "-xml-brackets") || !strcmp(a, "-xb")) {
            if (!v) {
                fprintf(stderr, "fastsmt: %s needs \"LB RB\", e.g. \"{{ }}\"\n", a);
                return 2;
            }
            ro.xml_brackets = v, i++;
        } else if (!strcmp(a, "-output-unknowns")) {
            if (!v) {
                fprintf(stderr, "fastsmt: -output-unknowns needs a file\n");
                return 2;
            }
            ro.unknowns_path = v, i++;
        } else if (!strcmp(a, "-input-file") || !strcmp(a, "-i")) {
            if (!v) {
                fprintf(stderr, "fastsmt: %s needs a file\n", a);
                return 2;
            }
            ro.input = v, i++;
        } else if (!strcmp(a, "-resume")) {
            resume = 1;
        } else if (!strcmp(a, "-parts-dir")) {
            if (!v) {
                fprintf(stderr, "fastsmt: -parts-dir needs a folder\n");
                return 2;
            }
            parts = v, i++;
        } else if (!strcmp(a, "-chunk-bytes")) {
            smt_err e;
            if (smt_parse_ll_arg(a, v, 1, 1ll << 40, &chunk, &e)) {
                fprintf(stderr, "fastsmt: %s\n", e.msg);
                return 2;
            }
            i++;
        } else if (!strcmp(a, "--verify") || !strcmp(a, "-verify-models")) {
            opt.verify = 1;
        } else if (!strcmp(a, "-model-cache")) {
            if (!v || !*v) {
                fprintf(stderr, "fastsmt: -model-cache needs a folder or off\n");
                return 2;
            }
            cache_flag = v, i++;
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
    smt_err err;
    smt_err_clear(&err);
    dec_model *m;
    opt.verbose = ro.verbose; /* -v 2: the load says where it found each file */
    /* the model cache: the flag, else the environment's folder */
    char *cache = NULL;
    if (!cache_flag)
        cache = dec_model_cache_dir(getenv("FASTSMT_CACHE"), getenv("XDG_CACHE_HOME"),
                                    getenv("HOME"));
    opt.model_cache = cache_flag ? (strcmp(cache_flag, "off") ? cache_flag : NULL) : cache;
    if (sf.on) {
        int st = size > 1 ? 2 : run_server(ini, &opt, &ro, &sf);
        if (size > 1)
            fprintf(stderr, "fastsmt: --server runs in one process, not under mpirun/srun\n");
        free(cache);
        return st;
    }
    int rc = dec_model_load(&m, ini, &opt, &err);
    free(cache);
    if (rc) {
        fprintf(stderr, "fastsmt: %s\n", smt_err_text(&err, rc));
        return 1;
    }
    /* the ini's forms of the run flags ([threads], [verbose], [show-weights], [input-file],
     * [n-best-list]): a flag wins */
    dec_run_options run;
    if ((rc = dec_run_options_resolve(m, &ro, &run, &err)) != 0) {
        fprintf(stderr, "fastsmt: %s\n", smt_err_text(&err, rc));
        dec_model_free(m);
        return 2;
    }
    if (run.show_weights) { /* Moses's tuning scripts ask for the features this way */
        rc = (rank == 0 && dec_model_show_weights(m, stdout)) || close_output(stdout, "<stdout>")
                 ? 1 : 0; /* under MPI: rank 0's */
    } else if (size > 1 || resume) {
        if (!dist_available()) {
            fprintf(stderr, "fastsmt: -resume: this build has no MPI (docs/scale.md)\n");
            rc = 2;
        } else {
            *collective = 1;
            rc = fs_dist_run(m, &run, argc, argv, opt.weight_file, parts, chunk, resume, &err);
            if (rc && rank == 0) /* rank 0 says what failed, once */
                fprintf(stderr, "fastsmt: %s\n", smt_err_text(&err, rc));
            if (close_output(stdout, "<stdout>"))
                rc = 1;
            rc = rc ? 1 : 0;
        }
    } else {
        if (parts || chunk) {
            fprintf(stderr, "fastsmt: %s: only for a run over MPI ranks (mpirun, srun)\n",
                    parts ? "-parts-dir" : "-chunk-bytes");
            dec_run_options_release(&run);
            dec_model_free(m);
            return 2;
        }
        dec_run_stats st;
        rc = dec_run_input(m, stdout, &run, &st, &err);
        if (rc)
            fprintf(stderr, "fastsmt: %s\n", smt_err_text(&err, rc));
        else if (run.verbose > 0)
            fprintf(stderr, "fastsmt: %llu lines, %llu words in %.2f s (load %.2f s)\n",
                    (unsigned long long)st.lines, (unsigned long long)st.tokens, st.seconds,
                    dec_model_load_seconds(m));
        if (close_output(stdout, "<stdout>"))
            rc = 1;
        rc = rc ? 1 : 0;
    }
    dec_run_options_release(&run);
    dec_model_free(m);
    return rc;
}

int main(int argc, char **argv)
{
    int rank, size, collective = 0;
    smt_err err;
    if (dist_start(&argc, &argv, &rank, &size, &err)) {
        fprintf(stderr, "fastsmt: %s\n", err.msg);
        return 2;
    }
    int rc = tool_main(argc, argv, rank, size, &collective);
    dist_end(collective ? 0 : rc); /* an error before the ranks met ends them all */
    return rc;
}
