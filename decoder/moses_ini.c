/* moses.ini reader: see moses_ini.h. */
#define _GNU_SOURCE
#include "moses_ini.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Sections this decoder understands (besides [feature] and [weight]). */
static const char *const known_sections[] = {
    "input-factors", "mapping", "distortion-limit", "s", "stack", "cube-pruning-pop-limit",
    "threads", "n-best-list", "search-algorithm", "max-phrase-length", "beam-threshold", NULL};

static int is_known(const char *name)
{
    for (const char *const *k = known_sections; *k; k++)
        if (strcmp(*k, name) == 0)
            return 1;
    return 0;
}

static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    char *e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1]))
        *--e = '\0';
    return s;
}

/* Grows an array of elem bytes to hold n+1 elements. */
static int push(void **arr, size_t n, size_t elem)
{
    void *p = realloc(*arr, (n + 1) * elem);
    if (!p)
        return SMT_ERR_NOMEM;
    *arr = p;
    memset((char *)p + n * elem, 0, elem);
    return 0;
}

static char *next_token(char **cursor)
{
    char *s = *cursor;
    while (isspace((unsigned char)*s))
        s++;
    if (!*s)
        return NULL;
    char *t = s;
    while (*s && !isspace((unsigned char)*s))
        s++;
    if (*s)
        *s++ = '\0';
    *cursor = s;
    return t;
}

static int parse_feature(dec_ini *ini, char *text, unsigned line, smt_err *err)
{
    if (push((void **)&ini->features, ini->n_features, sizeof *ini->features))
        return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
    dec_ini_feature *f = &ini->features[ini->n_features++];
    f->line = line;
    char *cur = text;
    f->type = strdup(next_token(&cur));
    if (!f->type)
        return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
    for (char *tok; (tok = next_token(&cur));) {
        char *eq = strchr(tok, '=');
        if (!eq || eq == tok)
            return smt_err_set(err, SMT_ERR_PARSE, "%s:%u: feature argument '%s' is not key=value",
                               ini->path, line, tok);
        *eq = '\0';
        if (push((void **)&f->keys, f->n_args, sizeof *f->keys) ||
            push((void **)&f->values, f->n_args, sizeof *f->values))
            return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
        f->keys[f->n_args] = strdup(tok);
        f->values[f->n_args] = strdup(eq + 1);
        if (!f->keys[f->n_args] || !f->values[f->n_args])
            return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
        f->n_args++;
    }
    const char *name = dec_ini_feature_arg(f, "name");
    if (name) {
        f->name = strdup(name);
    } else {
        /* Moses's default: the type and a per-type counter */
        unsigned index = 0;
        for (size_t i = 0; i + 1 < ini->n_features; i++)
            if (strcmp(ini->features[i].type, f->type) == 0)
                index++;
        if (asprintf(&f->name, "%s%u", f->type, index) < 0)
            f->name = NULL;
    }
    if (!f->name)
        return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i + 1 < ini->n_features; i++)
        if (strcmp(ini->features[i].name, f->name) == 0)
            return smt_err_set(err, SMT_ERR_PARSE, "%s:%u: feature name '%s' already used at line %u",
                               ini->path, line, f->name, ini->features[i].line);
    return 0;
}

/* Parses "Name= v1 v2 ..." (also "Name=v1 v2"). */
static int parse_weight(dec_ini *ini, char *text, unsigned line, const char *what, smt_err *err)
{
    char *cur = text;
    char *tok = next_token(&cur);
    char *eq = tok ? strchr(tok, '=') : NULL;
    if (!eq || eq == tok)
        return smt_err_set(err, SMT_ERR_PARSE, "%s:%u: weight line must start with 'Name=': '%s'",
                           what, line, text);
    *eq = '\0';
    dec_ini_weight *w = NULL;
    for (size_t i = 0; i < ini->n_weights; i++)
        if (strcmp(ini->weights[i].name, tok) == 0)
            w = &ini->weights[i];
    if (w && line) /* a duplicate in the ini itself; -weight-overwrite (line 0) replaces */
        return smt_err_set(err, SMT_ERR_PARSE, "%s:%u: weights for '%s' already given at line %u",
                           what, line, tok, w->line);
    if (!w) {
        if (push((void **)&ini->weights, ini->n_weights, sizeof *ini->weights))
            return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
        w = &ini->weights[ini->n_weights++];
        if (!(w->name = strdup(tok)))
            return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
    }
    w->line = line;
    w->n = 0;
    char *rest = eq + 1;
    for (;;) {
        char *v = *rest ? rest : next_token(&cur);
        rest = "";
        if (!v)
            break;
        char *end;
        errno = 0;
        double d = strtod(v, &end);
        if (*end || end == v || errno == ERANGE || !isfinite(d))
            return smt_err_set(err, SMT_ERR_PARSE, "%s:%u: weight '%s' of '%s' is not a number",
                               what, line, v, w->name);
        if (push((void **)&w->values, w->n, sizeof *w->values))
            return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
        w->values[w->n++] = d;
    }
    if (w->n == 0)
        return smt_err_set(err, SMT_ERR_PARSE, "%s:%u: no weights for '%s'", what, line, w->name);
    return 0;
}

static int add_section(dec_ini *ini, const char *name, unsigned line, smt_err *err)
{
    const char *canon = strcmp(name, "stack") == 0 ? "s" : name;
    for (size_t i = 0; i < ini->n_sections; i++)
        if (strcmp(ini->sections[i].name, canon) == 0)
            return smt_err_set(err, SMT_ERR_PARSE, "%s:%u: section [%s] already given at line %u",
                               ini->path, line, name, ini->sections[i].line);
    if (push((void **)&ini->sections, ini->n_sections, sizeof *ini->sections))
        return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
    dec_ini_section *s = &ini->sections[ini->n_sections++];
    s->line = line;
    s->known = is_known(canon);
    if (!(s->name = strdup(canon)))
        return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
    return 0;
}

static int parse(dec_ini *ini, FILE *f, smt_err *err)
{
    char *buf = NULL;
    size_t cap = 0;
    ssize_t got;
    unsigned line = 0;
    enum { NONE, FEATURE, WEIGHT, OTHER } mode = NONE;
    int rc = 0;
    while (!rc && (got = getline(&buf, &cap, f)) >= 0) {
        line++;
        if ((size_t)got != strlen(buf)) {
            rc = smt_err_set(err, SMT_ERR_PARSE, "%s:%u: NUL byte in line", ini->path, line);
            break;
        }
        char *s = trim(buf);
        if (!*s || *s == '#')
            continue;
        if (*s == '[') {
            char *close = strchr(s, ']');
            if (!close || close[1] != '\0' || close == s + 1) {
                rc = smt_err_set(err, SMT_ERR_PARSE, "%s:%u: malformed section header '%s'",
                                 ini->path, line, s);
                break;
            }
            *close = '\0';
            const char *name = s + 1;
            if (strcmp(name, "feature") == 0)
                mode = FEATURE;
            else if (strcmp(name, "weight") == 0)
                mode = WEIGHT;
            else {
                mode = OTHER;
                rc = add_section(ini, name, line, err);
            }
            continue;
        }
        switch (mode) {
        case NONE:
            rc = smt_err_set(err, SMT_ERR_PARSE, "%s:%u: '%s' outside any [section]", ini->path,
                             line, s);
            break;
        case FEATURE: rc = parse_feature(ini, s, line, err); break;
        case WEIGHT: rc = parse_weight(ini, s, line, ini->path, err); break;
        case OTHER: {
            dec_ini_section *sec = &ini->sections[ini->n_sections - 1];
            if (push((void **)&sec->values, sec->n, sizeof *sec->values) ||
                !(sec->values[sec->n] = strdup(s)))
                rc = smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
            else
                sec->n++;
            break;
        }
        }
    }
    if (!rc && ferror(f))
        rc = smt_err_errno(err, SMT_ERR_IO, errno, "%s: read error", ini->path);
    free(buf);
    return rc;
}

int dec_ini_load(dec_ini **out, const char *path, smt_err *err)
{
    *out = NULL;
    dec_ini *ini = calloc(1, sizeof *ini);
    if (!ini || !(ini->path = strdup(path)) || !(ini->dir = strdup(path))) {
        dec_ini_free(ini);
        return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
    }
    char *slash = strrchr(ini->dir, '/');
    if (slash)
        slash[slash == ini->dir ? 1 : 0] = '\0';
    else
        strcpy(ini->dir, ".");
    FILE *f = fopen(path, "r");
    if (!f) {
        int rc = smt_err_errno(err, SMT_ERR_IO, errno, "%s: cannot open", path);
        dec_ini_free(ini);
        return rc;
    }
    int rc = parse(ini, f, err);
    fclose(f);
    if (rc) {
        dec_ini_free(ini);
        return rc;
    }
    *out = ini;
    return 0;
}

static void free_strs(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

void dec_ini_free(dec_ini *ini)
{
    if (!ini)
        return;
    for (size_t i = 0; i < ini->n_features; i++) {
        dec_ini_feature *f = &ini->features[i];
        free(f->type);
        free(f->name);
        free_strs(f->keys, f->n_args);
        free_strs(f->values, f->n_args);
    }
    for (size_t i = 0; i < ini->n_weights; i++) {
        free(ini->weights[i].name);
        free(ini->weights[i].values);
    }
    for (size_t i = 0; i < ini->n_sections; i++) {
        free(ini->sections[i].name);
        free_strs(ini->sections[i].values, ini->sections[i].n);
    }
    free(ini->features);
    free(ini->weights);
    free(ini->sections);
    free(ini->path);
    free(ini->dir);
    free(ini);
}

const dec_ini_feature *dec_ini_feature_named(const dec_ini *ini, const char *name)
{
    for (size_t i = 0; i < ini->n_features; i++)
        if (strcmp(ini->features[i].name, name) == 0)
            return &ini->features[i];
    return NULL;
}

const char *dec_ini_feature_arg(const dec_ini_feature *f, const char *key)
{
    for (size_t i = 0; i < f->n_args; i++)
        if (strcmp(f->keys[i], key) == 0)
            return f->values[i];
    return NULL;
}

const dec_ini_weight *dec_ini_weight_named(const dec_ini *ini, const char *name)
{
    for (size_t i = 0; i < ini->n_weights; i++)
        if (strcmp(ini->weights[i].name, name) == 0)
            return &ini->weights[i];
    return NULL;
}

const char *dec_ini_param(const dec_ini *ini, const char *section)
{
    const char *canon = strcmp(section, "stack") == 0 ? "s" : section;
    for (size_t i = 0; i < ini->n_sections; i++)
        if (strcmp(ini->sections[i].name, canon) == 0)
            return ini->sections[i].n ? ini->sections[i].values[0] : NULL;
    return NULL;
}

size_t dec_ini_param_values(const dec_ini *ini, const char *section, char *const **values)
{
    for (size_t i = 0; i < ini->n_sections; i++)
        if (strcmp(ini->sections[i].name, section) == 0) {
            *values = ini->sections[i].values;
            return ini->sections[i].n;
        }
    *values = NULL;
    return 0;
}

char *dec_ini_resolve(const dec_ini *ini, const char *path)
{
    char *out = NULL;
    if (path[0] == '/')
        return strdup(path);
    if (asprintf(&out, "%s/%s", ini->dir, path) < 0)
        return NULL;
    return out;
}

int dec_ini_overwrite_weights(dec_ini *ini, const char *spec, smt_err *err)
{
    /* Split the spec before each token holding '=' (a name; values never contain one) and parse
     * each part as a weight line. */
    char *copy = strdup(spec);
    if (!copy)
        return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
    int rc = 0;
    char *cur = copy;
    while (!rc) {
        while (isspace((unsigned char)*cur))
            cur++;
        if (!*cur)
            break;
        /* find the start of the next name token after this one */
        char *end = cur;
        while (*end && !isspace((unsigned char)*end))
            end++;
        char *next = end;
        for (;;) {
            while (isspace((unsigned char)*next))
                next++;
            if (!*next)
                break;
            char *t = next;
            while (*t && !isspace((unsigned char)*t))
                t++;
            if (memchr(next, '=', (size_t)(t - next)))
                break;
            next = t;
        }
        char saved = *next;
        *next = '\0';
        rc = parse_weight(ini, cur, 0, "-weight-overwrite", err);
        *next = saved;
        cur = next;
    }
    free(copy);
    return rc;
}

size_t dec_ini_unknown(const dec_ini *ini, char *buf, size_t n)
{
    size_t count = 0, used = 0;
    if (n)
        buf[0] = '\0';
    for (size_t i = 0; i < ini->n_sections; i++) {
        if (ini->sections[i].known)
            continue;
        int w = snprintf(buf + used, used < n ? n - used : 0, "%s[%s]", count ? ", " : "",
                         ini->sections[i].name);
        if (w > 0 && used + (size_t)w < n)
            used += (size_t)w;
        count++;
    }
    return count;
}
