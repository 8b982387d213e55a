/* fuzz_ppt_common.h — what the probingpt harnesses do with every table they open. */
#ifndef FUZZ_PPT_COMMON_H
#define FUZZ_PPT_COMMON_H

#include "probingpt.h"

/* Walks every group (ppt_foreach), iterates its targets, writes their lines to /dev/null and looks
 * each source up again (ppt_lookup_ids, and ppt_lookup on its text when the words are printable);
 * then ppt_verify and ppt_dump. strict (a table ppt_build just wrote): every step must succeed and
 * every lookup find its own group, else fz_fail. Returns ppt_verify's result. */
int fz_ppt_exercise(const ppt_table *t, int strict);

#endif
