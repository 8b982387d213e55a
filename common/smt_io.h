/* smt_io.h — the checks every tool makes on its output streams and paths.
 *
 * A write that failed (a full disk, a closed pipe) must never read as success: an output stream is
 * finished with smt_flush_output (a stream that stays open, such as standard output inside a
 * library) or smt_close_output (at the end of a tool, standard output included), which report
 * "NAME: write error: <reason>". An output that is one of the inputs would be truncated before the
 * input is read: smt_same_file tells. Thread-safety: reentrant. */
#ifndef SMT_IO_H
#define SMT_IO_H

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

#ifdef __cplusplus
}
#endif
#endif
