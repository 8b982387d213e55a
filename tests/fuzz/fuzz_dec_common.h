/* fuzz_dec_common.h — what the decoder harnesses do with every model they load. */
#ifndef FUZZ_DEC_COMMON_H
#define FUZZ_DEC_COMMON_H

#include <stddef.h>

#include "decoder.h"

/* Loads the moses.ini at ini_path (warnings to /dev/null); returns the model or NULL. */
dec_model *fz_dec_load(const char *ini_path);

/* A worker for m; NULL when the ini has a malformed run section ([threads], [n-best-list]...),
 * which dec_worker_create refuses by design (SMT_ERR_PARSE naming moses.ini:LINE). */
dec_worker *fz_dec_worker(dec_model *m);

/* Translates line (n-best 5) with worker w; the 1-best must be exactly one line, else fz_fail.
 * Returns dec_translate's result. */
int fz_dec_translate(dec_worker *w, const char *line, size_t len, int distinct);

/* One translation of a fixed sentence with a fresh worker of m. */
void fz_dec_translate_once(dec_model *m);

#endif
