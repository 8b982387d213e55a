/* proto.c — requests read from their parameters, answers built from translations (srv_proto.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "smt_buf.h"
#include "smt_words.h"
#include "srv_proto.h"

static const struct {
    const char *name;
    unsigned status;
    int fault;
} kinds[SRV_N_KINDS] = {
    [SRV_OK] = {"ok", 200, 0},
    [SRV_E_MALFORMED] = {"malformed", 400, XMLRPC_PARSE_ERROR},
    [SRV_E_TYPE] = {"type", 400, XMLRPC_TYPE_ERROR},
    [SRV_E_MISSING] = {"missing_text", 400, XMLRPC_PARSE_ERROR},
    [SRV_E_UTF8] = {"utf8", 400, XMLRPC_PARSE_ERROR},
    [SRV_E_EMPTY] = {"empty", 400, XMLRPC_PARSE_ERROR},
    [SRV_E_KEY] = {"unsupported_key", 400, XMLRPC_NO_SUCH_METHOD_ERROR},
    [SRV_E_TOO_BIG] = {"too_big", 413, XMLRPC_LIMIT_EXCEEDED_ERROR},
    [SRV_E_TOO_LONG] = {"too_long", 413, XMLRPC_LIMIT_EXCEEDED_ERROR},
    [SRV_E_NBEST] = {"nbest_limit", 400, XMLRPC_LIMIT_EXCEEDED_ERROR},
    [SRV_E_BUSY] = {"busy", 503, XMLRPC_LIMIT_EXCEEDED_ERROR},
    [SRV_E_DRAINING] = {"draining", 503, XMLRPC_LIMIT_EXCEEDED_ERROR},
    [SRV_E_LOADING] = {"loading", 503, XMLRPC_LIMIT_EXCEEDED_ERROR},
    [SRV_E_TIMEOUT] = {"timeout", 504, XMLRPC_LIMIT_EXCEEDED_ERROR},
    [SRV_E_NOT_FOUND] = {"not_found", 404, XMLRPC_NO_SUCH_METHOD_ERROR},
    [SRV_E_INTERNAL] = {"internal", 500, XMLRPC_INTERNAL_ERROR},
};

const char *srv_kind_name(srv_kind k) { return kinds[k].name; }
unsigned srv_kind_status(srv_kind k) { return kinds[k].status; }
int srv_kind_fault(srv_kind k) { return kinds[k].fault; }

/* Moses's boolean parameters: a boolean, 0/1, or the strings Moses reads as true (true, True,
 * TRUE, 1) and false; 1, 0, or -1 for any other value. */
static int read_bool(const json_t *v)
{
    if (json_is_boolean(v))
        return json_is_true(v);
    if (json_is_integer(v) && (json_integer_value(v) == 0 || json_integer_value(v) == 1))
        return (int)json_integer_value(v);
    if (json_is_string(v)) {
        static const char *const t[] = {"true", "True", "TRUE", "1"};
        static const char *const f[] = {"false", "False", "FALSE", "0", ""};
        const char *s = json_string_value(v);
        for (size_t i = 0; i < sizeof t / sizeof *t; i++)
            if (!strcmp(s, t[i]))
                return 1;
        for (size_t i = 0; i < sizeof f / sizeof *f; i++)
            if (!strcmp(s, f[i]))
                return 0;
    }
    return -1;
}

srv_kind srv_req_parse(const json_t *p, int max_words, int max_nbest, srv_req *r, char *msg,
                       size_t cap)
{
    static const char *const bools[] = {"align", "word-align", "nbest-distinct",
                                        "add-score-breakdown", "report-all-factors",
                                        "no-ReportSegmentation"};
    memset(r, 0, sizeof *r);
    if (!json_is_object(p)) {
        snprintf(msg, cap, "the parameters must be a struct (an object) with \"text\"");
        return SRV_E_TYPE;
    }
    int have_text = 0;
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)p, key, v) {
        if (!strcmp(key, "text")) {
            if (!json_is_string(v)) {
                snprintf(msg, cap, "'text' must be a string");
                return SRV_E_TYPE;
            }
            r->text = json_string_value(v);
            r->len = json_string_length(v);
            have_text = 1;
            continue;
        }
        if (!strcmp(key, "nbest")) {
            if (!json_is_integer(v) || json_integer_value(v) < 0) {
                snprintf(msg, cap, "'nbest' must be an integer >= 0");
                return SRV_E_TYPE;
            }
            if (json_integer_value(v) > max_nbest) {
                snprintf(msg, cap, "'nbest' %lld is over this server's limit (%d)",
                         (long long)json_integer_value(v), max_nbest);
                return SRV_E_NBEST;
            }
            r->nbest = (int)json_integer_value(v);
            continue;
        }
        size_t i = 0;
        while (i < sizeof bools / sizeof *bools && strcmp(key, bools[i]))
            i++;
        if (i == sizeof bools / sizeof *bools) {
            snprintf(msg, cap,
                     "unsupported key '%.100s' (this server implements text, align, word-align, "
                     "nbest, nbest-distinct, add-score-breakdown, report-all-factors, "
                     "no-ReportSegmentation)",
                     key);
            return SRV_E_KEY;
        }
        int b = read_bool(v);
        if (b < 0) {
            snprintf(msg, cap, "'%s' must be a boolean (true/false, 1/0, \"true\"/\"false\")",
                     key);
            return SRV_E_TYPE;
        }
        int *dst[] = {&r->align, &r->word_align, &r->distinct, &r->breakdown, NULL,
                      &r->no_segmentation};
        if (dst[i])
            *dst[i] = b; /* report-all-factors: one factor, nothing more to report */
    }
    if (!have_text) {
        snprintf(msg, cap, "Missing source text");
        return SRV_E_MISSING;
    }
    r->words = smt_words_count(r->text, r->len, SMT_WS_LINE);
    if (!r->words) {
        snprintf(msg, cap, "the text is empty (no words)");
        return SRV_E_EMPTY;
    }
    if (r->words > (size_t)max_words) {
        snprintf(msg, cap, "the text has %zu words, over this server's limit (%d)", r->words,
                 max_words);
        return SRV_E_TOO_LONG;
    }
    return SRV_OK;
}

json_t *srv_xmlrpc_to_json(xmlrpc_env *env, xmlrpc_value *v, srv_kind *kind, char *msg,
                           size_t cap)
{
    json_t *j = NULL;
    *kind = SRV_E_INTERNAL;
    switch (xmlrpc_value_type(v)) {
    case XMLRPC_TYPE_INT: {
        int x;
        xmlrpc_read_int(env, v, &x);
        j = env->fault_occurred ? NULL : json_integer(x);
        break;
    }
    case XMLRPC_TYPE_I8: {
        xmlrpc_int64 x;
        xmlrpc_read_i8(env, v, &x);
        j = env->fault_occurred ? NULL : json_integer(x);
        break;
    }
    case XMLRPC_TYPE_BOOL: {
        xmlrpc_bool x;
        xmlrpc_read_bool(env, v, &x);
        j = env->fault_occurred ? NULL : json_boolean(x);
        break;
    }
    case XMLRPC_TYPE_DOUBLE: {
        double x;
        xmlrpc_read_double(env, v, &x);
        j = env->fault_occurred ? NULL : json_real(x);
        break;
    }
    case XMLRPC_TYPE_NIL:
        j = json_null();
        break;
    case XMLRPC_TYPE_STRING: {
        size_t len;
        const char *s;
        xmlrpc_read_string_lp(env, v, &len, &s);
        if (env->fault_occurred)
            break;
        j = json_stringn(s, len);
        free((void *)s);
        if (!j) {
            *kind = SRV_E_UTF8;
            snprintf(msg, cap, "a string is not valid UTF-8");
        }
        break;
    }
    case XMLRPC_TYPE_ARRAY: {
        int n = xmlrpc_array_size(env, v);
        j = env->fault_occurred ? NULL : json_array();
        for (int i = 0; j && i < n; i++) {
            xmlrpc_value *item;
            xmlrpc_array_read_item(env, v, i, &item);
            json_t *ji = env->fault_occurred ? NULL : srv_xmlrpc_to_json(env, item, kind, msg, cap);
            if (!env->fault_occurred)
                xmlrpc_DECREF(item);
            if (!ji || json_array_append_new(j, ji)) {
                json_decref(j);
                return NULL;
            }
        }
        break;
    }
    case XMLRPC_TYPE_STRUCT: {
        int n = xmlrpc_struct_size(env, v);
        j = env->fault_occurred ? NULL : json_object();
        for (int i = 0; j && i < n; i++) {
            xmlrpc_value *k, *item;
            xmlrpc_struct_read_member(env, v, (unsigned)i, &k, &item);
            if (env->fault_occurred) {
                json_decref(j);
                return NULL;
            }
            size_t klen;
            const char *ks = NULL;
            xmlrpc_read_string_lp(env, k, &klen, &ks);
            json_t *ji = env->fault_occurred ? NULL : srv_xmlrpc_to_json(env, item, kind, msg, cap);
            xmlrpc_DECREF(k);
            xmlrpc_DECREF(item);
            if (!ji || !ks) {
                if (!ks)
                    *kind = SRV_E_MALFORMED, snprintf(msg, cap, "a member name is unreadable");
                json_decref(ji);
                free((void *)ks);
                json_decref(j);
                return NULL;
            }
            /* jansson takes ji even when it refuses the name (not UTF-8, or a NUL in it) */
            int bad = 1;
            if (memchr(ks, 0, klen))
                json_decref(ji);
            else
                bad = json_object_set_new(j, ks, ji) != 0;
            free((void *)ks);
            if (bad) {
                *kind = SRV_E_UTF8;
                snprintf(msg, cap, "a member name is not valid UTF-8");
                json_decref(j);
                return NULL;
            }
        }
        break;
    }
    default:
        *kind = SRV_E_TYPE;
        snprintf(msg, cap, "a value of an unsupported XML-RPC type (base64, dateTime.iso8601)");
        return NULL;
    }
    if (env->fault_occurred) {
        *kind = SRV_E_MALFORMED;
        snprintf(msg, cap, "%.200s", env->fault_string);
        json_decref(j);
        return NULL;
    }
    if (!j && *kind == SRV_E_INTERNAL)
        snprintf(msg, cap, "out of memory");
    return j;
}

xmlrpc_value *srv_json_to_xmlrpc(xmlrpc_env *env, const json_t *j)
{
    switch (json_typeof(j)) {
    case JSON_OBJECT: {
        xmlrpc_value *s = xmlrpc_struct_new(env);
        const char *key;
        json_t *v;
        json_object_foreach((json_t *)j, key, v) {
            if (env->fault_occurred)
                break;
            xmlrpc_value *x = srv_json_to_xmlrpc(env, v);
            if (!env->fault_occurred) {
                xmlrpc_struct_set_value(env, s, key, x);
                xmlrpc_DECREF(x);
            }
        }
        if (env->fault_occurred && s) {
            xmlrpc_DECREF(s);
            return NULL;
        }
        return s;
    }
    case JSON_ARRAY: {
        xmlrpc_value *a = xmlrpc_array_new(env);
        for (size_t i = 0; i < json_array_size(j) && !env->fault_occurred; i++) {
            xmlrpc_value *x = srv_json_to_xmlrpc(env, json_array_get(j, i));
            if (!env->fault_occurred) {
                xmlrpc_array_append_item(env, a, x);
                xmlrpc_DECREF(x);
            }
        }
        if (env->fault_occurred && a) {
            xmlrpc_DECREF(a);
            return NULL;
        }
        return a;
    }
    case JSON_STRING:
        return xmlrpc_string_new_lp(env, json_string_length(j), json_string_value(j));
    case JSON_INTEGER: {
        json_int_t x = json_integer_value(j);
        return x >= -2147483647 - 1 && x <= 2147483647 ? xmlrpc_int_new(env, (int)x)
                                                        : xmlrpc_i8_new(env, x);
    }
    case JSON_REAL:
        return xmlrpc_double_new(env, json_real_value(j));
    case JSON_TRUE:
    case JSON_FALSE:
        return xmlrpc_bool_new(env, json_is_true(j));
    default:
        return xmlrpc_nil_new(env);
    }
}

/* Moses's words of t with segmentation seg, as a JSON string (trailing space included). */
static json_t *words_json(const dec_translation *t, int seg)
{
    smt_buf b = {0};
    json_t *j = dec_translation_format(t, seg, &b) ? NULL : json_stringn(b.data ? b.data : "", b.len);
    smt_buf_free(&b);
    return j;
}

/* Moses's pack_hypothesis: the words under key, and the phrase and word alignments asked for. */
static int pack(json_t *dest, const char *key, const dec_translation *t, int seg, int align,
                int word_align)
{
    if (json_object_set_new(dest, key, words_json(t, seg)))
        return -1;
    if (align) {
        json_t *a = json_array();
        if (json_object_set_new(dest, "align", a))
            return -1;
        for (size_t i = 0; i < t->n_phrases; i++) {
            const dec_phrase *p = &t->phrases[i];
            json_t *o = json_pack("{s:I,s:I,s:I,s:I}", "tgt-start", (json_int_t)p->tgt_start,
                                  "tgt-end", (json_int_t)p->tgt_start + (json_int_t)p->n_tgt - 1,
                                  "src-start", (json_int_t)p->src_start, "src-end",
                                  (json_int_t)p->src_end);
            if (json_array_append_new(a, o))
                return -1;
        }
    }
    if (word_align) {
        json_t *a = json_array();
        if (json_object_set_new(dest, "word-align", a))
            return -1;
        for (size_t i = 0; i < t->n_align; i++) {
            json_t *o = json_pack("{s:I,s:I}", "source-word", (json_int_t)t->align[2 * i],
                                  "target-word", (json_int_t)t->align[2 * i + 1]);
            if (json_array_append_new(a, o))
                return -1;
        }
    }
    return 0;
}

/* Moses's PackScores: {"Feature": [[tuneable values], {sparse: none here}]}. */
static json_t *scores_json(const dec_model *m, const double *sc)
{
    json_t *o = json_object();
    size_t n = dec_model_num_features(m);
    for (size_t f = 0; o && f < n; f++) {
        dec_feature_info fi;
        dec_model_feature(m, f, &fi);
        if (!fi.tuneable)
            continue;
        json_t *dense = json_array();
        for (size_t k = 0; dense && k < fi.n_values; k++)
            if (json_array_append_new(dense, json_real((double)(float)sc[fi.offset + k]))) {
                json_decref(dense);
                dense = NULL;
            }
        if (json_object_set_new(o, fi.name, json_pack("[o,{}]", dense))) {
            json_decref(o);
            return NULL;
        }
    }
    return o;
}

json_t *srv_result(const dec_model *m, const srv_show *show, const srv_req *r,
                   const dec_translation *best, const dec_nbest *nb)
{
    int seg = show->segmentation || (r->align && !r->no_segmentation);
    int align = show->segmentation || r->align;
    int word_align = show->word_align || r->word_align;
    json_t *res = json_object();
    if (!res || pack(res, "text", best, seg, align, word_align))
        goto fail;
    if (r->nbest > 0 && nb) {
        json_t *list = json_array();
        if (json_object_set_new(res, "nbest", list))
            goto fail;
        for (size_t i = 0; i < nb->n; i++) {
            const dec_nbest_entry *e = &nb->entries[i];
            json_t *item = json_object();
            if (json_array_append_new(list, item) || pack(item, "hyp", &e->t, seg, align, word_align))
                goto fail;
            if (r->breakdown) {
                smt_buf b = {0};
                int rc = dec_format_scores(m, e->scores, &b);
                json_t *fv = rc ? NULL : json_stringn(b.data ? b.data : "", b.len);
                smt_buf_free(&b);
                if (json_object_set_new(item, "fvals", fv) ||
                    json_object_set_new(item, "scores", scores_json(m, e->scores)))
                    goto fail;
            }
            if (json_object_set_new(item, "totalScore", json_real((double)(float)e->total)))
                goto fail;
        }
    }
    return res;
fail:
    json_decref(res);
    return NULL;
}

size_t srv_utf8_valid(const char *str, size_t n)
{
    const unsigned char *s = (const unsigned char *)str;
    size_t i = 0;
    while (i < n) {
        unsigned c = s[i];
        size_t k;
        unsigned lo = 0x80, hi = 0xBF; /* the second byte's range */
        if (c < 0x80) {
            i++;
            continue;
        } else if (c >= 0xC2 && c <= 0xDF) {
            k = 1;
        } else if (c >= 0xE0 && c <= 0xEF) {
            k = 2;
            lo = c == 0xE0 ? 0xA0 : 0x80;
            hi = c == 0xED ? 0x9F : 0xBF;
        } else if (c >= 0xF0 && c <= 0xF4) {
            k = 3;
            lo = c == 0xF0 ? 0x90 : 0x80;
            hi = c == 0xF4 ? 0x8F : 0xBF;
        } else {
            return i;
        }
        if (n - i <= k || s[i + 1] < lo || s[i + 1] > hi)
            return i;
        for (size_t j = 2; j <= k; j++)
            if ((s[i + j] & 0xC0) != 0x80)
                return i;
        i += k + 1;
    }
    return n;
}
