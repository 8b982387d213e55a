/* nmt_st.h — reading safetensors files (private; the tests read golden values with it too). */
#ifndef NMT_ST_H
#define NMT_ST_H

#include <stddef.h>
#include <stdint.h>

#include "nmt_json.h"
#include "smt_error.h"

typedef enum nmt_st_dtype { NMT_ST_F32, NMT_ST_F16, NMT_ST_I32 } nmt_st_dtype;

typedef struct nmt_st {
    const char *path;
    char *file;
    size_t size;
    nj_value header;
    const char *data; /* start of the data section */
    size_t data_size;
} nmt_st;

typedef struct nmt_st_tensor {
    nmt_st_dtype dtype;
    int ndim;
    int64_t shape[4];
    size_t numel;
    const char *raw; /* little-endian elements, possibly unaligned */
} nmt_st_tensor;

/* Reads the whole file and parses its header (path must outlive st). */
int nmt_st_open(nmt_st *st, const char *path, smt_err *err);
void nmt_st_close(nmt_st *st);
/* Finds a tensor; checks its dtype is known and its offsets lie inside the data section. */
int nmt_st_find(const nmt_st *st, const char *name, nmt_st_tensor *t, smt_err *err);
/* Converts the tensor's elements to float (numel of them). */
void nmt_st_to_float(const nmt_st_tensor *t, float *dst);

#endif
