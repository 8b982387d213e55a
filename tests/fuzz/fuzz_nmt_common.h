/* fuzz_nmt_common.h — what the NMT harnesses do with every model they open. */
#ifndef FUZZ_NMT_COMMON_H
#define FUZZ_NMT_COMMON_H

#include "nmt.h"

/* Copies the tiny model of tests/data/nmt/tiny into the harness's directory, except `except`
 * (the file the harness writes itself). */
void fz_nmt_copy_tiny(const char *except);

/* On one CPU thread: scores a sentence pair and translates it (beam 2 and greedy). */
void fz_nmt_exercise(const nmt_model *m);

#endif
