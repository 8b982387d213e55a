/* dist_mpi.c — one job over many MPI ranks (dist.h), built with MPI. Rank 0's main thread
 * coordinates: it hands chunks out, collects what the ranks report, keeps the manifest and the
 * order, while a second thread of rank 0 processes chunks as every other rank does, talking to the
 * main thread through MPI as they do (MPI_THREAD_MULTIPLE). The plan, the manifest and the parts
 * are dist_plan.c, dist_manifest.c and dist_parts.c. */
#define _GNU_SOURCE
#include "dist.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <fcntl.h>
#include <mpi.h>
#include <pthread.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dist_core.h"
#include "smt_buf.h"
#include "smt_hash.h"
#include "smt_io.h"
#include "smt_progress.h"
#include "smt_sniff.h"

static int g_mpi, g_rank, g_size, g_multiple; /* g_multiple: MPI_THREAD_MULTIPLE provided */

int dist_available(void) { return 1; }

int dist_start(int *argc, char ***argv, int *rank, int *size, smt_err *err)
{
    (void)err;
    *rank = 0;
    *size = 1;
    static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK",
                                       "PMI_SIZE"};
    int launched = 0;
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++)
        launched |= getenv(vars[i]) != NULL;
    if (!launched)
        return 0; /* not started by a launcher: one process, MPI never started */
    /* Open MPI's waiting calls poll: a waiting rank yields its core to the working threads
     * (unless the user chose otherwise) */
    setenv("OMPI_MCA_mpi_yield_when_idle", "1", 0);
    int provided;
    MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
    g_multiple = provided >= MPI_THREAD_MULTIPLE;
    g_mpi = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    *rank = g_rank;
    *size = g_size;
    return 0;
}

void dist_end(int exit_code)
{
    if (!g_mpi)
        return;
    if (exit_code != 0 && g_size > 1) {
        fflush(stdout);
        fflush(stderr);
        MPI_Abort(MPI_COMM_WORLD, exit_code);
    }
    MPI_Finalize();
    g_mpi = 0;
}

/* ---------------------------------------------------------------- chunks and their results */

enum { TAG_RESULT = 1, TAG_RESULT_DATA, TAG_WORK, TAG_WORK_DATA };

typedef struct work {
    int64_t id; /* -1: stop */
    uint64_t start, end, first_line, nlines, len; /* len: stream mode's bytes that follow */
    char *data;
} work;

typedef struct result {
    int64_t id; /* -1: no chunk yet (the first request) */
    int32_t rc, complete;
    uint64_t lines, words;
    double seconds;
    uint64_t size[DIST_MAX_OUT], hash[DIST_MAX_OUT];
    char msg[DIST_MSG_MAX];
    char *data[DIST_MAX_OUT]; /* stream mode */
} result;

/* Processes one chunk into r (this rank's share of the job). */
static void do_chunk(dist *d, work *w, result *r)
{
    const dist_job *job = d->job;
    memset(r, 0, sizeof *r);
    r->id = w->id;
    smt_err e;
    smt_err_clear(&e);
    double t0 = smt_now();
    smt_lines *in = NULL;
    FILE *outs[DIST_MAX_OUT] = {0};
    char *mem[DIST_MAX_OUT] = {0};
    size_t memlen[DIST_MAX_OUT] = {0};
    char tmp[DIST_MAX_OUT][DIST_PATH_MAX + 64];
    int rc = d->mode == DIST_MODE_FILE
                 ? smt_lines_open_range(&in, job->input, w->start, w->end, w->first_line, &e)
                 : smt_lines_open_mem(&in, job->input ? job->input : "<stdin>", w->data, w->len,
                                      w->first_line, &e);
    for (int k = 0; k < job->n_out && !rc; k++) {
        if (d->mode == DIST_MODE_FILE) {
            dist_part_name(d, tmp[k], sizeof tmp[k], (size_t)w->id, k, 1);
            if (!(outs[k] = fopen(tmp[k], "w")))
                rc = smt_err_errno(&e, SMT_ERR_IO, errno, "%s: cannot open for writing", tmp[k]);
        } else if (!(outs[k] = open_memstream(&mem[k], &memlen[k]))) {
            rc = smt_err_set(&e, SMT_ERR_NOMEM, "out of memory");
        }
    }
    int complete = 0;
    uint64_t words = 0;
    if (!rc) {
        rc = job->process(job->ctx, in, outs, &words, &complete, &e);
        if (!rc)
            complete = 1;
        r->lines = smt_lines_lineno(in) - w->first_line;
    }
    if (rc)
        snprintf(r->msg, sizeof r->msg, "%s", smt_err_text(&e, rc));
    for (int k = 0; k < job->n_out; k++) {
        if (!outs[k])
            continue;
        smt_err ce;
        int c = d->mode == DIST_MODE_FILE ? smt_close_output(outs[k], tmp[k], &ce)
                                     : (fclose(outs[k]) ? SMT_ERR_NOMEM : 0);
        if (c && complete) {
            complete = 0;
            rc = c;
            snprintf(r->msg, sizeof r->msg, "%s", d->mode == DIST_MODE_FILE ? ce.msg : "out of memory");
        }
    }
    for (int k = 0; k < job->n_out && complete; k++) {
        if (d->mode == DIST_MODE_STREAM) {
            r->data[k] = mem[k];
            mem[k] = NULL;
            r->size[k] = memlen[k];
            r->hash[k] = smt_hash_bytes(r->data[k], memlen[k]);
            continue;
        }
        char final[DIST_PATH_MAX + 64];
        dist_part_name(d, final, sizeof final, (size_t)w->id, k, 0);
        int c = dist_hash_file(tmp[k], &r->size[k], &r->hash[k], &e);
        if (!c && rename(tmp[k], final))
            c = smt_err_errno(&e, SMT_ERR_IO, errno, "%s: cannot rename to %s", tmp[k], final);
        if (c) {
            complete = 0;
            rc = c;
            snprintf(r->msg, sizeof r->msg, "%s", smt_err_text(&e, c));
        }
    }
    for (int k = 0; k < job->n_out; k++) {
        free(mem[k]);
        if (!complete && d->mode == DIST_MODE_FILE && outs[k])
            unlink(tmp[k]);
    }
    smt_lines_close(in);
    r->rc = rc;
    r->complete = complete;
    r->words = words;
    r->seconds = smt_now() - t0;
    d->lines += r->lines;
    d->words += words;
    d->busy += r->seconds;
    d->done++;
}

/* ---------------------------------------------------------------- messages */

static void send_result(const dist *d, const result *r)
{
    MPI_Send(r, (int)offsetof(result, data), MPI_BYTE, 0, TAG_RESULT, MPI_COMM_WORLD);
    if (d->mode == DIST_MODE_STREAM && r->id >= 0 && r->complete)
        for (int k = 0; k < d->job->n_out; k++)
            MPI_Send(r->data[k] ? r->data[k] : "", (int)r->size[k], MPI_BYTE, 0, TAG_RESULT_DATA,
                     MPI_COMM_WORLD);
}

/* Receives a result whose header MPI_Probe saw from src. */
static void recv_result(const dist *d, int src, result *r)
{
    memset(r, 0, sizeof *r);
    MPI_Recv(r, (int)offsetof(result, data), MPI_BYTE, src, TAG_RESULT, MPI_COMM_WORLD,
             MPI_STATUS_IGNORE);
    if (d->mode == DIST_MODE_STREAM && r->id >= 0 && r->complete)
        for (int k = 0; k < d->job->n_out; k++) {
            r->data[k] = malloc(r->size[k] ? r->size[k] : 1);
            if (!r->data[k]) {
                fprintf(stderr, "%s: out of memory\n", d->job->tool);
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
            MPI_Recv(r->data[k], (int)r->size[k], MPI_BYTE, src, TAG_RESULT_DATA, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        }
}

static void send_work(const dist *d, int dst, const work *w)
{
    MPI_Send(w, (int)offsetof(work, data), MPI_BYTE, dst, TAG_WORK, MPI_COMM_WORLD);
    if (d->mode == DIST_MODE_STREAM && w->id >= 0)
        MPI_Send(w->data, (int)w->len, MPI_BYTE, dst, TAG_WORK_DATA, MPI_COMM_WORLD);
}

static void recv_work(const dist *d, work *w)
{
    MPI_Recv(w, (int)offsetof(work, data), MPI_BYTE, 0, TAG_WORK, MPI_COMM_WORLD,
             MPI_STATUS_IGNORE);
    w->data = NULL;
    if (d->mode == DIST_MODE_STREAM && w->id >= 0) {
        if (!(w->data = malloc(w->len ? w->len : 1))) {
            fprintf(stderr, "%s: rank %d: out of memory\n", d->job->tool, g_rank);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        MPI_Recv(w->data, (int)w->len, MPI_BYTE, 0, TAG_WORK_DATA, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    }
}

/* A worker (every rank but 0, and a thread of rank 0): ask, process, report, until told to
 * stop. */
static void worker_loop(dist *d)
{
    result r;
    memset(&r, 0, sizeof r);
    r.id = -1;
    for (;;) {
        send_result(d, &r);
        for (int k = 0; k < DIST_MAX_OUT; k++)
            free(r.data[k]), r.data[k] = NULL;
        work w;
        recv_work(d, &w);
        if (w.id < 0)
            return;
        do_chunk(d, &w, &r);
        free(w.data);
    }
}

/* ---------------------------------------------------------------- rank 0: the coordinator */

typedef struct coord {
    dist *d;
    /* file mode: the next chunk to hand out */
    size_t next;
    /* stream mode */
    smt_lines *in;
    int in_eof;
    uint64_t lines_read;
    size_t n_issued, n_written; /* chunks handed out; written in order */
    result *held;               /* results waiting for an earlier chunk, by id - n_written */
    size_t held_cap;
    FILE *files[DIST_MAX_OUT];  /* stream mode: the named outputs' temporary files */
    char tmpname[DIST_MAX_OUT][DIST_PATH_MAX + 16];
    /* the first non-fatal failure in input order, and the count */
    int64_t failed_chunk;
    uint64_t n_failed;
} coord;

static void fatal(dist *d, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", d->job->tool);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    if (d->mode == DIST_MODE_FILE)
        fprintf(stderr, "%s: the finished chunks are kept in %s (manifest %s): the same command "
                        "with %s finishes the job\n",
                d->job->tool, d->dir, d->manifest,
                strcmp(d->job->tool, "fastsmt") ? "--resume" : "-resume");
    else
        fprintf(stderr, "%s: the output is incomplete\n", d->job->tool);
    fflush(stdout);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static void write_manifest_line(dist *d, size_t i)
{
    if (dist_manifest_put_done(d->man, d, i) || fdatasync(fileno(d->man)))
        fatal(d, "%s: write error: %s\n", d->manifest, strerror(errno));
}

/* Stream mode: the next chunk of lines from rank 0's reader into w; 0: none left. */
static int stream_next(coord *c, work *w)
{
    dist *d = c->d;
    if (c->in_eof)
        return 0;
    smt_buf b = {0};
    uint64_t limit = d->job->chunk_bytes          ? d->job->chunk_bytes
                     : d->job->stream_chunk_bytes ? d->job->stream_chunk_bytes
                                                  : 64u << 10;
    uint64_t first = c->lines_read, n = 0;
    while (b.len < limit) {
        if (n > 0 && !smt_lines_ready(c->in))
            break; /* a pipe: hand out what has arrived */
        char *line;
        size_t len;
        smt_err e;
        int got = smt_lines_next(c->in, &line, &len, &e);
        if (got < 0)
            fatal(d, "%s\n", e.msg);
        if (got == 0) {
            c->in_eof = 1;
            break;
        }
        if (smt_buf_append(&b, line, len) || smt_buf_putc(&b, '\n'))
            fatal(d, "out of memory\n");
        n++;
    }
    if (n == 0) {
        smt_buf_free(&b);
        return 0;
    }
    c->lines_read += n;
    memset(w, 0, sizeof *w);
    w->id = (int64_t)c->n_issued++;
    w->first_line = first;
    w->nlines = n;
    w->len = b.len;
    w->data = b.data;
    return 1;
}

/* Stream mode: writes a result's outputs (in order). */
static void stream_write(coord *c, result *r)
{
    dist *d = c->d;
    const dist_job *job = d->job;
    for (int k = 0; k < job->n_out; k++) {
        smt_err e;
        int rc = 0;
        if (job->out_kind[k] == DIST_OUT_PRIVATE) {
            rc = job->absorb(job->ctx, k, r->data[k], r->size[k], &e);
        } else {
            FILE *f = job->out_kind[k] == DIST_OUT_STDOUT ? stdout : c->files[k];
            if (r->size[k] && fwrite(r->data[k], 1, r->size[k], f) != r->size[k])
                rc = smt_err_errno(&e, SMT_ERR_IO, errno, "%s: write error",
                                   f == stdout ? "<stdout>" : job->out_path[k]);
            if (!rc && f == stdout && fflush(stdout))
                rc = smt_err_errno(&e, SMT_ERR_IO, errno, "<stdout>: write error");
        }
        if (rc)
            fatal(d, "%s\n", e.msg);
        free(r->data[k]);
        r->data[k] = NULL;
    }
}

/* A result that came back (from a rank, or rank 0's thread): recorded, written when in order. */
static void take_result(coord *c, result *r, int src)
{
    dist *d = c->d;
    if (r->id < 0)
        return;
    if (!r->complete)
        fatal(d, "rank %d failed on chunk %lld: %s\n", src, (long long)r->id, r->msg);
    if (r->rc) {
        if (c->failed_chunk < 0 || r->id < c->failed_chunk)
            c->failed_chunk = r->id;
        c->n_failed++;
    }
    if (d->mode == DIST_MODE_FILE) {
        dist_chunk *ch = &d->chunks[r->id];
        ch->done = 1;
        ch->rc = r->rc;
        ch->complete = r->complete;
        memcpy(ch->size, r->size, sizeof ch->size);
        memcpy(ch->hash, r->hash, sizeof ch->hash);
        snprintf(ch->msg, sizeof ch->msg, "%s", r->msg);
        write_manifest_line(d, (size_t)r->id);
        return;
    }
    if (r->rc && (int64_t)c->failed_chunk == r->id) { /* keep the first failure's message */
        if (!d->chunks || d->n_chunks == 0) {
            d->chunks = calloc(1, sizeof *d->chunks);
            d->n_chunks = d->chunks ? 1 : 0;
        }
        if (d->chunks) {
            d->chunks[0].rc = r->rc;
            snprintf(d->chunks[0].msg, sizeof d->chunks[0].msg, "%s", r->msg);
        }
    }
    size_t slot = (size_t)r->id - c->n_written;
    if (slot >= c->held_cap) {
        size_t cap = c->held_cap;
        if (smt_grow(&c->held, &cap, slot + 1, sizeof *c->held, 16))
            fatal(d, "out of memory\n");
        for (size_t i = c->held_cap; i < cap; i++)
            c->held[i].id = -1;
        c->held_cap = cap;
    }
    c->held[slot] = *r;
    while (c->held_cap && c->held[0].id == (int64_t)c->n_written) {
        stream_write(c, &c->held[0]);
        memmove(c->held, c->held + 1, (c->held_cap - 1) * sizeof *c->held);
        c->held[c->held_cap - 1].id = -1;
        c->n_written++;
    }
}

/* The next chunk to hand out: 1 (w), 0 (none left), -1 (stream mode: too far ahead of the
 * writing; wait). */
static int next_work(coord *c, work *w, int n_ranks)
{
    dist *d = c->d;
    memset(w, 0, sizeof *w);
    if (d->mode == DIST_MODE_FILE) {
        while (c->next < d->n_chunks && (d->chunks[c->next].done || !d->chunks[c->next].nlines))
            c->next++;
        if (c->next == d->n_chunks)
            return 0;
        dist_chunk *ch = &d->chunks[c->next];
        w->id = (int64_t)c->next++;
        w->start = ch->start;
        w->end = ch->end;
        w->first_line = ch->first_line;
        w->nlines = ch->nlines;
        return 1;
    }
    if (c->n_issued >= c->n_written + 4 * (size_t)n_ranks && !c->in_eof)
        return -1;
    return stream_next(c, w);
}

static void *local_main(void *arg)
{
    worker_loop(arg);
    return NULL;
}

static void coordinate(dist *d, coord *c)
{
    pthread_t th;
    if (pthread_create(&th, NULL, local_main, d))
        fatal(d, "cannot start a thread\n");
    int active = g_size; /* workers not yet told to stop (rank 0's thread is rank 0) */
    /* workers waiting for work while stream mode is too far ahead */
    int *waiting = calloc((size_t)g_size, sizeof *waiting), n_waiting = 0;
    if (!waiting)
        fatal(d, "out of memory\n");
    while (active > 0) {
        MPI_Status st;
        result r;
        MPI_Probe(MPI_ANY_SOURCE, TAG_RESULT, MPI_COMM_WORLD, &st);
        recv_result(d, st.MPI_SOURCE, &r);
        take_result(c, &r, st.MPI_SOURCE);
        waiting[n_waiting++] = st.MPI_SOURCE;
        /* hand out work to every worker that waits, while there is some */
        while (n_waiting > 0) {
            work w;
            int got = next_work(c, &w, g_size);
            if (got < 0)
                break; /* the earliest unwritten chunk is being processed: its result comes */
            int dst = waiting[0];
            memmove(waiting, waiting + 1, (size_t)(n_waiting - 1) * sizeof *waiting);
            n_waiting--;
            if (got == 0) {
                w.id = -1;
                active--;
            }
            send_work(d, dst, &w);
            free(w.data);
        }
    }
    pthread_join(th, NULL);
    free(waiting);
}

/* ---------------------------------------------------------------- file mode: chunks and merge */

/* Every rank: the named output files put together from the parts. 0, or an error (rank 0 reports
 * it; every rank gets the same answer). */
static int merge_files(dist *d, smt_err *err)
{
    const dist_job *job = d->job;
    int rc = 0;
    for (int k = 0; k < job->n_out; k++) {
        if (job->out_kind[k] != DIST_OUT_FILE)
            continue;
        char tmp[DIST_PATH_MAX + 16];
        snprintf(tmp, sizeof tmp, "%s.incomplete", job->out_path[k]);
        uint64_t total = 0;
        for (size_t i = 0; i < d->n_chunks; i++)
            total += d->chunks[i].size[k];
        int ok = 1;
        if (g_rank == 0) {
            int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
            if (fd < 0 || ftruncate(fd, (off_t)total)) {
                rc = smt_err_errno(err, SMT_ERR_IO, errno, "%s: cannot create", tmp);
                ok = 0;
            }
            if (fd >= 0)
                close(fd);
        }
        MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
        if (!ok)
            return g_rank == 0 ? rc : SMT_ERR_IO;
        int fd = open(tmp, O_WRONLY | O_CLOEXEC);
        int mine = fd >= 0 ? 0 : smt_err_errno(err, SMT_ERR_IO, errno, "%s: cannot open", tmp);
        uint64_t off = 0;
        for (size_t i = 0; i < d->n_chunks; i++) {
            dist_chunk *c = &d->chunks[i];
            if (!mine && c->nlines && i % (size_t)g_size == (size_t)g_rank) {
                char part[DIST_PATH_MAX + 64];
                dist_part_name(d, part, sizeof part, i, k, 0);
                mine = dist_copy_part(part, c->size[k], c->hash[k], fd, off, NULL, NULL, err);
            }
            off += c->size[k];
        }
        if (fd >= 0 && !mine && fdatasync(fd))
            mine = smt_err_errno(err, SMT_ERR_IO, errno, "%s: write error", tmp);
        if (fd >= 0)
            close(fd);
        /* rank 0 names the first failure (its own, else the lowest failing rank's) */
        int bad = mine ? g_rank + 1 : 0, first = 0;
        int any = bad ? bad : g_size + 1;
        MPI_Allreduce(&any, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        if (first <= g_size) {
            char msg[DIST_MSG_MAX] = "";
            if (first - 1 == g_rank)
                snprintf(msg, sizeof msg, "%s", err->msg);
            MPI_Bcast(msg, sizeof msg, MPI_CHAR, first - 1, MPI_COMM_WORLD);
            if (g_rank == 0) {
                unlink(tmp);
                return smt_err_set(err, SMT_ERR_IO, "rank %d: %s", first - 1, msg);
            }
            return SMT_ERR_IO;
        }
        if (g_rank == 0 && rename(tmp, job->out_path[k])) {
            rc = smt_err_errno(err, SMT_ERR_IO, errno, "%s: cannot rename to %s", tmp,
                               job->out_path[k]);
            unlink(tmp);
        }
        MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
        if (rc)
            return rc;
    }
    return 0;
}

/* Rank 0: standard output and the private outputs, part after part. */
static int merge_stream(dist *d, smt_err *err)
{
    const dist_job *job = d->job;
    int rc = 0;
    for (size_t i = 0; i < d->n_chunks && !rc; i++) {
        dist_chunk *c = &d->chunks[i];
        if (!c->nlines)
            continue;
        for (int k = 0; k < job->n_out && !rc; k++) {
            char part[DIST_PATH_MAX + 64];
            dist_part_name(d, part, sizeof part, i, k, 0);
            if (job->out_kind[k] == DIST_OUT_STDOUT) {
                rc = dist_copy_part(part, c->size[k], c->hash[k], -1, 0, stdout, NULL, err);
            } else if (job->out_kind[k] == DIST_OUT_PRIVATE) {
                char *buf = NULL;
                rc = dist_copy_part(part, c->size[k], c->hash[k], -1, 0, NULL, &buf, err);
                if (!rc)
                    rc = job->absorb(job->ctx, k, buf, c->size[k], err);
                free(buf);
            }
        }
    }
    return rc;
}

static void report(dist *d)
{
    double mine[3] = {(double)d->lines, (double)d->words, d->busy};
    double *all = g_rank == 0 ? calloc((size_t)g_size * 3, sizeof *all) : NULL;
    MPI_Gather(mine, 3, MPI_DOUBLE, all, 3, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (g_rank == 0 && all && d->job->report) {
        for (int r = 0; r < g_size; r++)
            fprintf(stderr, "%s: rank %d: %.0f lines, %.0f words, %.2f s busy, %.1f words/s\n",
                    d->job->tool, r, all[3 * r], all[3 * r + 1], all[3 * r + 2],
                    all[3 * r + 2] > 0 ? all[3 * r + 1] / all[3 * r + 2] : 0.0);
    }
    free(all);
}

/* Every rank: the chunk table of a plain file (boundaries and line counts, each rank its share),
 * checked to cover the input exactly. */
static int chunk_table(dist *d, smt_err *err)
{
    size_t n = d->n_chunks;
    uint64_t *v = calloc(n + 1, sizeof *v), *all = calloc(n + 1, sizeof *all);
    int fd = open(d->job->input, O_RDONLY | O_CLOEXEC);
    int rc = v && all ? 0 : smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
    if (!rc && fd < 0)
        rc = smt_err_errno(err, SMT_ERR_IO, errno, "%s: cannot open", d->job->input);
    /* starts: chunk i >= 1 begins at the first line start at or after i * C */
    for (size_t i = 1; i < n && !rc; i++)
        if (i % (size_t)g_size == (size_t)g_rank)
            rc = dist_line_start_at(fd, d->job->input, i * d->C, d->in_size, &v[i], err);
    int bad = rc != 0, anybad;
    MPI_Allreduce(v, all, (int)n, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (!anybad) {
        dist_chunk_bounds(d->chunks, n, all, d->in_size);
        memset(v, 0, n * sizeof *v);
        for (size_t i = 0; i < n && !rc; i++)
            if (i % (size_t)g_size == (size_t)g_rank)
                rc = dist_count_lines(fd, d->job->input, d->chunks[i].start, d->chunks[i].end, &v[i], err);
        bad = rc != 0;
        MPI_Allreduce(v, all, (int)n, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
        MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    }
    if (anybad && !rc)
        rc = smt_err_set(err, SMT_ERR_IO, "%s: another rank could not read it", d->job->input);
    if (!rc) {
        dist_chunk_lines(d->chunks, n, all);
        rc = dist_plan_check(d->chunks, n, d->in_size, d->job->input, err);
    }
    if (fd >= 0)
        close(fd);
    free(v);
    free(all);
    return rc;
}

/* Rank 0, resuming: the manifest's job line (read) or its finished chunks (done). */
static int read_manifest(dist *d, int done, uint64_t fp, smt_err *err)
{
    smt_lines *in;
    int rc = smt_lines_open(&in, d->manifest, 0, err);
    if (rc) {
        smt_err e = *err;
        return smt_err_set(err, rc, "%s (nothing to resume)", e.msg);
    }
    dist_head h;
    rc = dist_manifest_read_head(in, &h, err);
    if (!rc && !done)
        rc = dist_manifest_check(d, &h, fp, err);
    if (!rc && done) {
        rc = dist_manifest_read_done(in, d, err);
        if (!rc)
            dist_parts_present(d);
    }
    smt_lines_close(in);
    return rc;
}

/* Rank 0's decisions, sent to every rank. */
typedef struct plan {
    int32_t mode, rc;
    uint64_t in_size, in_mtime, C, n_chunks;
    char dir[DIST_PATH_MAX];
    char msg[DIST_MSG_MAX];
} plan;

static void plan_job(dist *d, plan *p)
{
    const dist_job *job = d->job;
    memset(p, 0, sizeof *p);
    smt_err e;
    smt_err_clear(&e);
    int rc = 0;
    p->mode = DIST_MODE_STREAM;
    if (job->input && strcmp(job->input, "-")) {
        struct stat st;
        unsigned char head[64];
        int fd = open(job->input, O_RDONLY | O_CLOEXEC);
        if (fd < 0 || fstat(fd, &st))
            rc = smt_err_errno(&e, SMT_ERR_IO, errno, "%s: cannot open", job->input);
        ssize_t k = rc ? 0 : pread(fd, head, sizeof head, 0);
        if (fd >= 0)
            close(fd);
        if (!rc && S_ISREG(st.st_mode) && st.st_size > 0 && k > 0 &&
            smt_sniff(head, (size_t)k, (uint64_t)k == (uint64_t)st.st_size, NULL) !=
                SMT_KIND_GZIP &&
            smt_sniff(head, (size_t)k, 1, NULL) != SMT_KIND_XZ &&
            smt_sniff(head, (size_t)k, 1, NULL) != SMT_KIND_BZIP2 &&
            smt_sniff(head, (size_t)k, 1, NULL) != SMT_KIND_ZSTD) {
            p->mode = DIST_MODE_FILE; /* a plain file: each rank reads its own chunks */
            p->in_size = (uint64_t)st.st_size;
            p->in_mtime = (uint64_t)st.st_mtim.tv_sec * 1000000000u + (uint64_t)st.st_mtim.tv_nsec;
        }
    }
    if (!rc && job->resume && p->mode != DIST_MODE_FILE)
        rc = smt_err_set(&e, SMT_ERR_ARG, "resume needs the input as a plain file (-input-file): "
                                          "standard input and compressed files are read once, "
                                          "by rank 0, and cannot be resumed");
    if (!rc && p->mode == DIST_MODE_FILE) {
        const char *slash = strrchr(job->input, '/');
        if (job->parts_dir)
            snprintf(p->dir, sizeof p->dir, "%s", job->parts_dir);
        else
            snprintf(p->dir, sizeof p->dir, "%s.%s-parts", slash ? slash + 1 : job->input,
                     strncmp(job->tool, "glm", 3) ? "fastsmt" : "glm");
        snprintf(d->dir, sizeof d->dir, "%s", p->dir);
        snprintf(d->manifest, sizeof d->manifest, "%s/manifest", d->dir);
        d->in_size = p->in_size;
        d->in_mtime = p->in_mtime;
        uint64_t fp = 0;
        struct stat st;
        rc = dist_fingerprint(job, &fp, &e);
        if (!rc && job->resume) {
            rc = read_manifest(d, 0, fp, &e);
            if (!rc && job->chunk_bytes && job->chunk_bytes != d->C)
                rc = smt_err_set(&e, SMT_ERR_ARG, "%s: the job's chunks are %llu bytes, not %llu",
                                 d->manifest, (unsigned long long)d->C,
                                 (unsigned long long)job->chunk_bytes);
        } else if (!rc && stat(d->manifest, &st) == 0) {
            rc = smt_err_set(&e, SMT_ERR_ARG, "%s holds the manifest of an unfinished job: add "
                                              "%s to finish it, or remove %s",
                             d->dir, strcmp(job->tool, "fastsmt") ? "--resume" : "-resume",
                             d->dir);
        } else if (!rc) {
            d->C = job->chunk_bytes ? job->chunk_bytes : dist_auto_chunk(p->in_size, g_size);
            rc = dist_plan_size(d->in_size, d->C, "-chunk-bytes", &d->n_chunks, &e);
            if (!rc && mkdir(d->dir, 0777) && errno != EEXIST)
                rc = smt_err_errno(&e, SMT_ERR_IO, errno, "%s: cannot create the parts folder",
                                   d->dir);
            if (!rc)
                rc = dist_manifest_create(d, fp, &e);
        }
        p->C = d->C;
        p->n_chunks = rc ? 0 : d->n_chunks;
    }
    p->rc = rc;
    if (rc)
        snprintf(p->msg, sizeof p->msg, "%s", smt_err_text(&e, rc));
}

int dist_run(const dist_job *job, smt_err *err)
{
    if (!g_mpi)
        return smt_err_set(err, SMT_ERR_ARG, "a job over ranks (-resume) runs under mpirun or srun "
                                             "(mpirun -np 1 will do)");
    dist d;
    memset(&d, 0, sizeof d);
    d.job = job;
    d.rank = g_rank;
    if (!g_multiple)
        return smt_err_set(err, SMT_ERR_UNSUPPORTED, "this MPI library does not provide "
                                                     "MPI_THREAD_MULTIPLE (docs/scale.md)");
    plan p;
    if (g_rank == 0)
        plan_job(&d, &p);
    MPI_Bcast(&p, sizeof p, MPI_BYTE, 0, MPI_COMM_WORLD);
    if (p.rc)
        return g_rank == 0 ? smt_err_set(err, p.rc, "%s", p.msg) : p.rc;
    d.mode = p.mode;
    int rc = 0;
    coord c;
    memset(&c, 0, sizeof c);
    c.d = &d;
    c.failed_chunk = -1;
    if (d.mode == DIST_MODE_FILE) {
        snprintf(d.dir, sizeof d.dir, "%s", p.dir);
        snprintf(d.manifest, sizeof d.manifest, "%s/manifest", d.dir);
        d.in_size = p.in_size;
        d.in_mtime = p.in_mtime;
        d.C = p.C;
        d.n_chunks = p.n_chunks;
        d.chunks = calloc(d.n_chunks ? d.n_chunks : 1, sizeof *d.chunks);
        if (!d.chunks) {
            fprintf(stderr, "%s: rank %d: out of memory\n", job->tool, g_rank);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        rc = chunk_table(&d, err);
        int ok = rc == 0, all_ok;
        MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        if (!all_ok) {
            if (!rc)
                rc = smt_err_set(err, SMT_ERR_IO, "another rank could not read %s", job->input);
            free(d.chunks);
            return g_rank == 0 ? rc : SMT_ERR_IO;
        }
        if (g_rank == 0 && job->resume)
            rc = read_manifest(&d, 1, 0, err);
        if (g_rank == 0 && !rc && !(d.man = fopen(d.manifest, "a")))
            rc = smt_err_errno(err, SMT_ERR_IO, errno, "%s: cannot open for appending",
                               d.manifest);
        MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
        if (rc) {
            free(d.chunks);
            return rc;
        }
    } else if (g_rank == 0) {
        rc = smt_lines_open(&c.in, job->input ? job->input : "-", SMT_LINES_THREADED, err);
        for (int k = 0; k < job->n_out && !rc; k++)
            if (job->out_kind[k] == DIST_OUT_FILE) {
                snprintf(c.tmpname[k], sizeof c.tmpname[k], "%s.incomplete", job->out_path[k]);
                if (!(c.files[k] = fopen(c.tmpname[k], "w")))
                    rc = smt_err_errno(err, SMT_ERR_IO, errno, "%s: cannot open for writing",
                                       c.tmpname[k]);
            }
        if (rc) {
            fprintf(stderr, "%s: %s\n", job->tool, err->msg);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    if (g_rank == 0)
        coordinate(&d, &c);
    else
        worker_loop(&d);
    MPI_Barrier(MPI_COMM_WORLD); /* rank 0 may still be translating its last chunk */

    if (d.mode == DIST_MODE_FILE) {
        if (g_rank == 0 && d.man) {
            smt_err ce;
            if (smt_close_output(d.man, d.manifest, &ce))
                rc = smt_err_set(err, SMT_ERR_IO, "%s", ce.msg);
            d.man = NULL;
        }
        MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
        /* every rank learns the parts' sizes and checksums */
        for (size_t i = 0; i < d.n_chunks && !rc; i++) {
            MPI_Bcast(d.chunks[i].size, DIST_MAX_OUT, MPI_UINT64_T, 0, MPI_COMM_WORLD);
            MPI_Bcast(d.chunks[i].hash, DIST_MAX_OUT, MPI_UINT64_T, 0, MPI_COMM_WORLD);
        }
        if (!rc)
            rc = merge_files(&d, err);
        if (!rc && g_rank == 0) {
            rc = merge_stream(&d, err);
            if (!rc && job->finish)
                rc = job->finish(job->ctx, stdout, err);
            if (!rc && fflush(stdout))
                rc = smt_err_errno(err, SMT_ERR_IO, errno, "<stdout>: write error");
        }
        MPI_Barrier(MPI_COMM_WORLD); /* while rank 0 writes standard output */
        MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
        if (!rc && g_rank == 0)
            for (size_t i = 0; i < d.n_chunks; i++)
                if (d.chunks[i].rc) {
                    if (c.failed_chunk < 0)
                        c.failed_chunk = (int64_t)i;
                    if (!c.n_failed)
                        c.n_failed = 1;
                }
        if (!rc && g_rank == 0 && c.failed_chunk >= 0) {
            dist_chunk *fc = &d.chunks[c.failed_chunk];
            rc = smt_err_set(err, fc->rc, "%s (lines %llu-%llu)", fc->msg,
                             (unsigned long long)fc->first_line + 1,
                             (unsigned long long)(fc->first_line + fc->nlines));
            dist_parts_remove(&d);
        } else if (!rc && g_rank == 0) {
            dist_parts_remove(&d);
        } else if (rc && g_rank == 0) {
            fprintf(stderr, "%s: the finished chunks are kept in %s: the same command with %s "
                            "finishes the job\n",
                    job->tool, d.dir, strcmp(job->tool, "fastsmt") ? "--resume" : "-resume");
        }
    } else if (g_rank == 0) {
        smt_lines_close(c.in);
        for (int k = 0; k < job->n_out; k++)
            if (c.files[k]) {
                smt_err ce;
                int cr = smt_close_output(c.files[k], c.tmpname[k], &ce);
                if (!cr && rename(c.tmpname[k], job->out_path[k]))
                    cr = smt_err_errno(&ce, SMT_ERR_IO, errno, "%s: cannot rename", c.tmpname[k]);
                if (cr) {
                    unlink(c.tmpname[k]);
                    if (!rc)
                        rc = smt_err_set(err, cr, "%s", ce.msg);
                }
            }
        if (!rc && job->finish)
            rc = job->finish(job->ctx, stdout, err);
        if (!rc && c.failed_chunk >= 0 && d.chunks)
            rc = smt_err_set(err, d.chunks[0].rc, "%s", d.chunks[0].msg);
    }
    free(c.held);
    MPI_Barrier(MPI_COMM_WORLD);
    report(&d);
    free(d.chunks);
    return g_rank == 0 ? rc : 0;
}
