/* srv_proto.h — the server's requests and answers as data: a request's parameters (a JSON object,
 * or an XML-RPC struct converted to one) read into srv_req, a translation built into the answer
 * (a JSON object, converted to an XML-RPC struct for /RPC2), and the kinds of error. */
#ifndef SRV_PROTO_H
#define SRV_PROTO_H

#include <jansson.h>
#include <stddef.h>
#include <xmlrpc-c/base.h>

#include "decoder.h"

/* What went wrong with a request (the metrics' error kinds). */
typedef enum srv_kind {
    SRV_OK = 0,
    SRV_E_MALFORMED,   /* the body is not XML-RPC / JSON */
    SRV_E_TYPE,        /* a parameter of the wrong type */
    SRV_E_MISSING,     /* no "text" */
    SRV_E_UTF8,        /* invalid UTF-8 */
    SRV_E_EMPTY,       /* a text without words */
    SRV_E_KEY,         /* a parameter this server does not implement */
    SRV_E_TOO_BIG,     /* the body is over the limit */
    SRV_E_TOO_LONG,    /* more words than the limit */
    SRV_E_NBEST,       /* an n-best size over the limit */
    SRV_E_BUSY,        /* the queue is full */
    SRV_E_DRAINING,    /* the server is stopping */
    SRV_E_LOADING,     /* the model is not loaded yet */
    SRV_E_TIMEOUT,     /* the request's time ran out */
    SRV_E_NOT_FOUND,   /* no such path or method */
    SRV_E_INTERNAL,    /* out of memory, a refused sentence */
    SRV_N_KINDS
} srv_kind;

/* The kind's name in metrics and logs ("malformed", "type", ...). */
const char *srv_kind_name(srv_kind k);
/* The HTTP status of a JSON answer of kind k (400, 413, 503, ...). */
unsigned srv_kind_status(srv_kind k);
/* The XML-RPC fault code of kind k (xmlrpc-c's XMLRPC_*_ERROR codes, as Moses's server). */
int srv_kind_fault(srv_kind k);

/* A translation request: text (pointing into the parsed parameters) and Moses's flags. */
typedef struct srv_req {
    const char *text;
    size_t len;
    size_t words;
    int align, word_align, nbest, distinct, breakdown, no_segmentation;
} srv_req;

/* Reads the parameter object p into r (every key checked: an unknown one is SRV_E_KEY naming it);
 * max_words, max_nbest: the limits. Returns SRV_OK or the kind with a message in msg. */
srv_kind srv_req_parse(const json_t *p, int max_words, int max_nbest, srv_req *r, char *msg,
                       size_t cap);

/* An XML-RPC value as JSON (struct: object, array: array, int/i8: integer, double: real,
 * boolean, string, nil: null); any other type, or a string that is not UTF-8, is NULL with the
 * kind in *kind and a message naming where. */
json_t *srv_xmlrpc_to_json(xmlrpc_env *env, xmlrpc_value *v, srv_kind *kind, char *msg,
                           size_t cap);
/* A JSON value as XML-RPC (the reverse; NULL with env faulted when memory ran out). */
xmlrpc_value *srv_json_to_xmlrpc(xmlrpc_env *env, const json_t *j);

/* What a translation shows by default: the decoder's -t (segmentation in the text and the
 * phrase alignment always given) and -print-alignment-info (the word alignment always given). */
typedef struct srv_show {
    int segmentation, word_align;
} srv_show;

/* The answer to r: best (its 1-best) and nb (its n-best list when r asked for one) as Moses's
 * server gives them: "text", "align", "word-align", "nbest" [{"hyp", "totalScore", "fvals",
 * "scores", "align", "word-align"}]. NULL when memory ran out. */
json_t *srv_result(const dec_model *m, const srv_show *show, const srv_req *r,
                   const dec_translation *best, const dec_nbest *nb);

/* The length of the longest prefix of s[0, n) that is valid UTF-8 (n: all of it; no overlong
 * forms, surrogates or code points past U+10FFFF). */
size_t srv_utf8_valid(const char *s, size_t n);

#endif
