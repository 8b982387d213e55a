/* smt_io.h — the checks every tool makes on its output streams and paths, reading a whole file (a
 * document such as a JSON config or a binary header; text read line by line goes through
 * smt_lines.h), and the temporary files a load builds into.
 *
 * A write that failed (a full disk, a closed pipe) must never read as success: an output stream is
 * finished with smt_flush_output (a stream that stays open, such as standard output inside a
 * library) or smt_close_output (at the end of a tool, standard output included), which report
 * "NAME: write error: <reason>". An output that is one of the inputs would be truncated before the
 * input is read: smt_same_file tells. Thread-safety: reentrant. */
#ifndef SMT_IO_H
#define SMT_IO_H

#include <stddef.h>
#include <stdio.h>

#include "smt_error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Flushes f and checks its error flag (an earlier write that failed). Returns 0, or SMT_ERR_IO with
 * "NAME: write error: <strerror>" in err (EIO's text when the failed write left no errno). */
int smt_flush_output(FILE *f, const char *name, smt_err *err);

/* smt_flush_output, then fclose(f) (f is closed whatever the outcome; a failed close is a write
 * error too). Returns 0 or SMT_ERR_IO as smt_flush_output. */
int smt_close_output(FILE *f, const char *name, smt_err *err);

/* 1 when paths a and b name the same existing file (same device and inode, after symbolic links),
 * else 0. NULL and "-" (standard input or output) are never a file. */
int smt_same_file(const char *a, const char *b);

/* Reads the whole file at path, byte for byte, into *data (malloc'ed, NUL-terminated after its
 * *len bytes; the caller frees it). Returns 0, SMT_ERR_IO ("PATH: <reason>" when it cannot be
 * opened, "PATH: read error: <reason>", also for a directory) or SMT_ERR_NOMEM. */
int smt_read_file(const char *path, char **data, size_t *len, smt_err *err);

/* Writes n bytes at data to file descriptor fd, in pieces of at most 1 GiB, retrying after EINTR
 * and short writes. Returns 0, or the errno of the failed write (ENOSPC when a write took
 * nothing). */
int smt_write_fd(int fd, const void *data, size_t n);

/* Creates an empty temporary file <folder>/<prefix>XXXXXX (mkstemp) in the first folder that
 * takes one: $TMPDIR when set, then /tmp, /var/tmp and /dev/shm (memory), so that a missing or
 * read-only $TMPDIR does not stop a load. Its name goes to path (cap bytes); the caller removes it.
 * Returns 0, or SMT_ERR_IO naming each folder tried and why it failed. */
int smt_temp_file(const char *prefix, char *path, size_t cap, smt_err *err);

#ifdef __cplusplus
}
#endif
#endif
