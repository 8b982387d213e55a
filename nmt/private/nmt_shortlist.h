/* nmt_shortlist.h — the set of target ids a batch's output layer considers (private). */
#ifndef NMT_SHORTLIST_H
#define NMT_SHORTLIST_H

#include "nmt.h"

/* The sorted target ids allowed for a batch of n sentences (malloc'ed in *ids); returns their
 * number, or -1 when out of memory. */
int nmt_shortlist_ids(const nmt_shortlist *s, const nmt_model *m, const nmt_sentence *src, int n,
                      int32_t **ids);

#endif
