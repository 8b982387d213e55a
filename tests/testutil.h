/* testutil.h — helpers shared by the Criterion tests. */
#ifndef TESTUTIL_H
#define TESTUTIL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Exit status of a test program that tested nothing (every test skipped); ctest shows it as
 * "Skipped" (SKIP_RETURN_CODE, set by fastsmt_add_test). Criterion programs get it from tests/tu_main.c,
 * threaded ones from th_skip in tests/tharness.h. */
#ifndef TU_SKIP_CODE
#define TU_SKIP_CODE 77
#endif

/* Path of a file under the shared data folder, or NULL when it is absent (tests then skip with
 * cr_skip_test). The folder is $FASTSMT_SHARED when set at test time (even empty: no shared data),
 * else the configured FASTSMT_SHARED_DIR ($FASTSMT_SHARED_DEFAULT, set by ctest).
 * With FASTSMT_REQUIRE_SHARED=1 (CI sets it when ../shared is there) an absent file is not a skip:
 * the test program aborts naming the file, so the run fails. Returned string is malloc'ed. */
char *tu_shared_path(const char *rel);

/* A GPU test calls this when it finds no usable device, just before skipping: with
 * FASTSMT_REQUIRE_GPU=1 (set on the GPU machine) the program aborts naming the test, so a missing
 * device fails the run instead of passing as skipped. TU_SKIP_GPU does both for Criterion tests. */
void tu_gpu_absent(const char *why);
#define TU_SKIP_GPU(why)                                                                           \
    do {                                                                                           \
        tu_gpu_absent(why);                                                                        \
        cr_skip_test("%s", why);                                                                   \
    } while (0)

/* Path of a fixture under tests/data ($FASTSMT_TESTDATA). Malloc'ed. */
char *tu_data_path(const char *rel);

/* Path of a built program ($FASTSMT_BIN/name). Malloc'ed. */
char *tu_bin_path(const char *name);

/* A fresh private directory under $TMPDIR (or /tmp); malloc'ed; removed by tu_rmtree. */
char *tu_tmpdir(void);
void tu_rmtree(const char *dir);

/* dir + "/" + name, malloc'ed. */
char *tu_join(const char *dir, const char *name);

/* Writes text to path (returns 0 on success). */
int tu_write_file(const char *path, const char *text, size_t len);

/* Reads a whole file into a malloc'ed NUL-terminated buffer (size in *len). NULL on failure. */
char *tu_read_file(const char *path, size_t *len);

/* Copies src to dst. */
int tu_copy_file(const char *src, const char *dst);

/* Truncates path to size bytes. */
int tu_truncate(const char *path, uint64_t size);

/* Flips bit `bit` of the byte at offset. */
int tu_flip_bit(const char *path, uint64_t offset, int bit);

/* Size of a file, or -1. */
long long tu_file_size(const char *path);

/* Runs a shell command, capturing stdout and stderr into malloc'ed strings (either may be NULL).
 * Returns the exit status (or -1). */
int tu_run(const char *cmd, char **out, char **err);

/* tu_run on a printf-formatted command line; *out and *err (when not NULL) are never NULL (empty
 * when nothing could be read). */
int tu_runf(char **out, char **err, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* A program talked to through pipes, line by line, as an interactive user or a driving program
 * does: its standard input and output are pipes, its standard error is the test's. */
typedef struct tu_proc {
    pid_t pid;
    int to, from; /* the write end of its input, the read end of its output */
} tu_proc;

/* Starts the program argv[0] (a path) with the arguments argv (NULL-terminated). 0 or -1. */
int tu_proc_start(tu_proc *p, char *const argv[]);

/* Writes line (which ends with a newline) to the program, then reads its answer until a newline
 * has arrived, within timeout_ms while the input stays open. The answer, NUL-terminated, is in
 * buf (size bytes). 0, or -1 when no complete answer came (timeout, end of output, error). */
int tu_proc_ask(tu_proc *p, const char *line, char *buf, size_t size, int timeout_ms);

/* Closes the program's input, waits for it to end and closes its output: its exit status, or -1
 * when it did not exit normally. */
int tu_proc_finish(tu_proc *p);

/* text[0..len) compressed in memory with a library's own API: ext "gz", "xz", "bz2" or "zst" (with
 * a checksum). Malloc'ed, its size in *out_len; NULL on failure. No command-line tool is needed. */
char *tu_compress(const char *ext, const void *text, size_t len, size_t *out_len);

/* Replaces the file src by src.EXT holding it compressed (as `gzip`/`xz`/`bzip2`/`zstd --rm`
 * would). Returns 0 on success. */
int tu_compress_file(const char *src, const char *ext);

#endif
