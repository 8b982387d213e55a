/* nmt_json.h — a minimal JSON reader for the model config and the safetensors header (private).
 * Parses a whole document into a tree; strings are unescaped (\uXXXX to UTF-8). Not a validator of
 * every corner of RFC 8259, but it never reads past the buffer and reports the byte offset of errors.
 * Numbers are parsed strictly (common/smt_num.h): JSON syntax, finite, within a double's range. */
#ifndef NMT_JSON_H
#define NMT_JSON_H

#include <stddef.h>

typedef enum nj_type { NJ_NULL, NJ_BOOL, NJ_NUM, NJ_STR, NJ_ARR, NJ_OBJ } nj_type;

typedef struct nj_value {
    nj_type type;
    double num;              /* NJ_NUM, NJ_BOOL (0/1) */
    int integral;            /* NJ_NUM written as an integer (no '.', no exponent) */
    char *str;               /* NJ_STR */
    size_t n;                /* items of NJ_ARR / NJ_OBJ */
    struct nj_value *items;  /* n values */
    char **keys;             /* NJ_OBJ: n keys */
} nj_value;

/* Parses text[0..len). Returns 0 and fills *root, or -1 with a message in msg (msg_size bytes). */
int nj_parse(const char *text, size_t len, nj_value *root, char *msg, size_t msg_size);

/* Frees the tree under v (not v itself). */
void nj_free(nj_value *v);

/* The member key of object obj, or NULL (also when obj is not an object). */
const nj_value *nj_get(const nj_value *obj, const char *key);

#endif
