/* smt_lines.h — a fast line reader for plain, gzip, xz, bzip2 or zstd text, from a file or stdin.
 *
 * The compression is told by the input's first bytes (its magic), never by its name; concatenated
 * members/streams/frames are read as one text. UTF-8 byte-order marks at the start of the input are
 * dropped (one, or several in a row). Lines are returned without their terminator ("\n" or "\r\n"), NUL-terminated, in a buffer
 * the caller may modify in place (parsers tokenize destructively); the pointer is valid until the
 * next call.
 * With SMT_LINES_THREADED a second thread decompresses ahead while the caller parses, so reading a
 * compressed file costs the parser almost nothing on a two-core machine.
 * Reading from a pipe or a terminal, each line is returned as soon as it has arrived (the reader
 * never waits to fill a buffer), so a tool can answer line by line.
 * Every read or decompression error (an I/O error, a directory, corrupt or truncated compressed
 * data, trailing garbage) is an error naming file:line, never an early end of input.
 * Thread-safety: one reader is used by one thread (its helper thread is internal). */
#ifndef SMT_LINES_H
#define SMT_LINES_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "smt_error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct smt_lines smt_lines;

/* SMT_LINES_SMALL: 64 KiB chunks of text instead of 4 MiB (a reader whose memory counts; not
 * with SMT_LINES_THREADED). */
enum { SMT_LINES_THREADED = 1u << 0, SMT_LINES_SMALL = 1u << 1 };

/* Opens path ("-" reads standard input). Returns 0, SMT_ERR_IO (also for a directory) or
 * SMT_ERR_NOMEM. */
int smt_lines_open(smt_lines **out, const char *path, unsigned flags, smt_err *err);

/* Opens the bytes [start, end) of the plain (uncompressed) regular file at path, start being a
 * line start, as the lines that follow line first_lineno of the whole file: they are numbered from
 * first_lineno + 1 (errors name the file's line) and byte-order marks are dropped only when
 * first_lineno is 0. How a job split over processes reads its own part of a file. Returns 0,
 * SMT_ERR_IO (not a regular file, shorter than end, a seek error) or SMT_ERR_NOMEM. */
int smt_lines_open_range(smt_lines **out, const char *path, uint64_t start, uint64_t end,
                         uint64_t first_lineno, smt_err *err);

/* Reads the stream f (from where it stands) as smt_lines_open reads a file: the same formats, the
 * same lines and errors, named `name` in messages. Each read waits until a chunk is full or the
 * stream ends (smt_lines_ready is always 1), so a pipe is not answered line by line: for a
 * stream the caller already has (fmemopen, a FILE handed over by an API). f is not closed by
 * smt_lines_close and must not be used by the caller until then. Returns 0 or SMT_ERR_NOMEM. */
int smt_lines_open_stream(smt_lines **out, FILE *f, const char *name, smt_err *err);

/* Reads the len bytes at data as lines split at "\n" only, verbatim (nothing else is dropped: no
 * "\r", no byte-order mark), numbered from first_lineno + 1: lines another reader returned, joined
 * with "\n", come back unchanged. data is modified in place (each "\n" becomes a NUL) and must
 * outlive the reader; name names it in messages. Returns 0 or SMT_ERR_NOMEM. */
int smt_lines_open_mem(smt_lines **out, const char *name, char *data, size_t len,
                       uint64_t first_lineno, smt_err *err);

/* Reads the next line. Returns 1 and sets *line and *len, 0 at end of input, or a negative error
 * (SMT_ERR_IO for a read or decompression error, e.g. a truncated .gz, naming file:line: the line
 * being read when the error was met, after every line decoded before it). */
int smt_lines_next(smt_lines *r, char **line, size_t *len, smt_err *err);

/* 1 when the next smt_lines_next will not wait for input: a line is buffered, the input is a
 * regular file or at its end, or bytes are waiting on the pipe or terminal (they may not complete a
 * line yet). 0 when it would wait. For readers that batch lines but must answer an interactive user
 * at once. */
int smt_lines_ready(smt_lines *r);

/* The 1-based number of the line last returned (0 before the first). */
uint64_t smt_lines_lineno(const smt_lines *r);

/* 1 when the line last returned ended with a newline, 0 when it was an unterminated last line. */
int smt_lines_had_newline(const smt_lines *r);

/* Bytes of the underlying file consumed so far (compressed bytes when compressed), for progress
 * meters. */
uint64_t smt_lines_bytes_read(const smt_lines *r);

/* Size of the underlying file, or 0 when unknown (a pipe). */
uint64_t smt_lines_total_bytes(const smt_lines *r);

/* The path given to smt_lines_open ("-" shows as "<stdin>"). */
const char *smt_lines_path(const smt_lines *r);

/* Closes and frees (stops the helper thread). Accepts NULL. */
void smt_lines_close(smt_lines *r);

#ifdef __cplusplus
}
#endif
#endif
