/* nmt_run.h — the transformer passes shared by scoring and search (private). */
#ifndef NMT_RUN_H
#define NMT_RUN_H

#include "nmt_internal.h"

/* An encoded batch: encoder output (N,d) of packed sentences and each decoder layer's cross keys
 * and values (N,d), in backend memory; sentence i occupies rows [start[i], start[i+1]). */
typedef struct nmt_enc {
    int n, N;
    int *start;
    float *out;
    float **ck, **cv;
} nmt_enc;

/* Decoder work buffers for up to cap rows (backend memory) and the host key descriptors. */
typedef struct nmt_dec_scratch {
    int cap;
    float *h, *q, *k, *v, *a, *f;
    int64_t *koff, *ckoff;
    int *klen, *cklen;
} nmt_dec_scratch;

/* Backend buffers; a failure sets c->failed and the message. */
float *nmt_buf(nmt_ctx *c, size_t floats);
void nmt_buf_free(nmt_ctx *c, void *p);

/* Encodes n sentences (</s> appended). Returns c->failed. */
int nmt_encode(nmt_ctx *c, int n, const nmt_sentence *src, nmt_enc *e);
void nmt_enc_free(nmt_ctx *c, nmt_enc *e);

int nmt_dec_scratch_init(nmt_ctx *c, nmt_dec_scratch *s, int R);
void nmt_dec_scratch_free(nmt_ctx *c, nmt_dec_scratch *s);

/* Rows of the self-attention caches copied after each layer's new rows are written (prefix
 * sharing in scoring): cache row at dst_off[i] (a float offset) = cache row src_row[i], through
 * tmp (n rows of d floats, backend memory). */
typedef struct nmt_row_copy {
    int n;
    const int *src_row;
    const int64_t *dst_off;
    float *tmp;
} nmt_row_copy;

/* The decoder stack over R rows of embeddings y (R,d); see nmt_run.c. cp may be NULL. */
void nmt_decode_rows(nmt_ctx *c, const nmt_enc *e, float *y, int R, nmt_dec_scratch *s,
                     float **kcache, float **vcache, const int64_t *cache_off,
                     const nmt_row_copy *cp);

#endif
