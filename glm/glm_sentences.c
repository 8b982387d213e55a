/* glm_sentences.c — many sentences scored at once (glm_score_lines, the Python binding's
 * score_batch): lines are cut into chunks, and each chunk is tokenized and looked up with glm
 * query's tokenizer (glm_block_add_line), scored by the fast lanes (glm_score_sentences) and summed
 * per line with KenLM's float arithmetic. With threads, every worker does all three steps for its
 * own chunks, so the tokenizing is spread over the threads too. */
#include <stdlib.h>
#include <string.h>

#include "glm_internal.h"
#include "smt_threads.h"
#include "smt_words.h"

#define CHUNK_LINES 2048 /* lines per task: ~40k tokens of prose, a block that stays in cache */
/* tokens of a block on the stack for one line of at most 2 * (SMALL_TOKENS - 2) bytes: the
 * block's reservation (a token per two bytes, and </s>) then never grows its arrays */
#define SMALL_TOKENS 512

typedef struct lines_job {
    const glm_model *m;
    const char *const *lines;
    const size_t *lens;
    size_t n;
    int bos, eos;
    float *total;
    uint32_t *words, *oovs;
    glm_block *blocks; /* one per worker */
    int *failed;       /* one per worker: 1 after an allocation failed */
    const glm_lines_options *opt; /* the per-token outputs */
    const uint64_t *tok0; /* with per-token outputs: task t's first token */
} lines_job;

/* Copies the tokens of block b, scored, to the per-token outputs from token t0 on. */
static void tokens_out(const glm_lines_options *o, const glm_block *b, uint64_t t0)
{
    if (o->token_prob)
        memcpy(o->token_prob + t0, b->prob, b->ntok * sizeof *b->prob);
    if (o->token_len)
        memcpy(o->token_len + t0, b->len, b->ntok * sizeof *b->len);
    if (o->token_word)
        memcpy(o->token_word + t0, b->ids, b->ntok * sizeof *b->ids);
}

static void lines_chunk(void *ctx, size_t task, unsigned worker)
{
    lines_job *j = ctx;
    glm_block *b = &j->blocks[worker];
    size_t l0 = task * CHUNK_LINES, l1 = l0 + CHUNK_LINES < j->n ? l0 + CHUNK_LINES : j->n;
    b->ntok = b->nlines = b->ntxt = 0;
    for (size_t i = l0; i < l1; i++)
        if (glm_block_add_line(b, j->m, j->lines[i], j->lens[i], j->eos)) {
            j->failed[worker] = 1;
            return;
        }
    glm_score_sentences(j->m, b->ids, b->sstart, 0, b->nlines, !j->bos, 1, b->prob, b->len);
    if (j->tok0)
        tokens_out(j->opt, b, j->tok0[task]);
    for (size_t s = 0; s < b->nlines; s++) {
        float sum = 0.0f;
        uint32_t unk = 0;
        for (uint64_t t = b->sstart[s]; t < b->sstart[s + 1]; t++) {
            sum += b->prob[t];
            unk += b->ids[t] == GLM_UNK;
        }
        j->total[l0 + s] = sum;
        if (j->words)
            j->words[l0 + s] = b->nwords[s];
        if (j->oovs)
            j->oovs[l0 + s] = unk;
    }
}

int glm_score_lines(const glm_model *m, const char *const *lines, const size_t *lens, size_t n,
                    const glm_lines_options *opt, float *total, uint32_t *words, uint32_t *oovs,
                    smt_err *err)
{
    glm_lines_options def = {.bos = 1, .eos = 1, .threads = 1};
    if (!opt)
        opt = &def;
    if (n == 0)
        return 0;
    if (!m || !lines || !lens || !total)
        return smt_err_set(err, SMT_ERR_ARG, "glm_score_lines: NULL model, lines or totals");
    for (size_t i = 0; i < n; i++) {
        if (!lines[i] && lens[i])
            return smt_err_set(err, SMT_ERR_ARG, "glm_score_lines: line %zu is NULL", i);
        if (lens[i] >= UINT32_MAX)
            return smt_err_set(err, SMT_ERR_LIMIT,
                               "glm_score_lines: line %zu has %zu bytes (at most 4 GiB - 2)", i,
                               lens[i]);
    }
    int per_token = opt->token_prob || opt->token_len || opt->token_word;
    size_t tasks = (n + CHUNK_LINES - 1) / CHUNK_LINES;
    uint64_t tok0_one[2] = {0, 0}, *tok0 = NULL;
    uint64_t most = 0; /* the tokens there can be: a word and a separator per two bytes */
    for (size_t i = 0; per_token && tasks == 1 && i < n; i++)
        most += (lens[i] + 1) / 2 + (opt->eos ? 1 : 0);
    if (per_token && tasks == 1 && most <= opt->token_cap) {
        tok0 = tok0_one; /* one task from token 0, within the cap: nothing to count */
    } else if (per_token) { /* each task's first token, the tokens' total checked against the cap */
        tok0 = tasks > 1 ? malloc((tasks + 1) * sizeof *tok0) : tok0_one;
        if (!tok0)
            return smt_err_set(err, SMT_ERR_NOMEM, "out of memory scoring %zu lines", n);
        uint64_t t = 0;
        for (size_t i = 0; i < n; i++) {
            if (i % CHUNK_LINES == 0)
                tok0[i / CHUNK_LINES] = t;
            t += smt_words_count(lines[i], lens[i], SMT_WS_SPACE) + (opt->eos ? 1 : 0);
        }
        tok0[tasks] = t;
        if (t > opt->token_cap) {
            if (tok0 != tok0_one)
                free(tok0);
            return smt_err_set(err, SMT_ERR_ARG,
                               "glm_score_lines: %llu tokens, room for %zu", (unsigned long long)t,
                               opt->token_cap);
        }
    }
    if (n == 1 && lens[0] / 2 + 2 <= SMALL_TOKENS) { /* one short line: a block on the stack */
        glm_word ids[SMALL_TOKENS];
        uint32_t woff[SMALL_TOKENS], nwords[2];
        float prob[SMALL_TOKENS];
        uint8_t len[SMALL_TOKENS];
        uint64_t sstart[2];
        glm_block b = {.ids = ids, .woff = woff, .sstart = sstart, .nwords = nwords,
                       .prob = prob, .len = len, .captok = SMALL_TOKENS, .caplines = 2,
                       .wc = opt->word_cache};
        int failed = 0;
        lines_job j = {.m = m, .lines = lines, .lens = lens, .n = n, .bos = opt->bos,
                       .eos = opt->eos, .total = total, .words = words, .oovs = oovs,
                       .blocks = &b, .failed = &failed, .opt = opt, .tok0 = tok0};
        lines_chunk(&j, 0, 0);
        return 0;
    }
    smt_pool *pool = NULL;
    unsigned workers = 1;
    if (opt->threads != 1 && tasks > 1) {
        int rc = smt_pool_create(&pool, opt->threads, err);
        if (rc) {
            if (tok0 != tok0_one)
                free(tok0);
            return rc;
        }
        workers = smt_pool_size(pool);
    }
    lines_job j = {.m = m, .lines = lines, .lens = lens, .n = n, .bos = opt->bos,
                   .eos = opt->eos, .total = total, .words = words, .oovs = oovs,
                   .blocks = calloc(workers, sizeof(glm_block)),
                   .failed = calloc(workers, sizeof(int)), .opt = opt, .tok0 = tok0};
    int rc = 0;
    if (!j.blocks || !j.failed) {
        rc = smt_err_set(err, SMT_ERR_NOMEM, "out of memory scoring %zu lines", n);
    } else if (pool) {
        smt_pool_run(pool, tasks, lines_chunk, &j);
    } else {
        j.blocks[0].wc = opt->word_cache; /* the caller's (or none): used here, never freed */
        for (size_t t = 0; t < tasks && !j.failed[0]; t++)
            lines_chunk(&j, t, 0);
        if (opt->word_cache)
            j.blocks[0].wc = NULL;
    }
    for (unsigned w = 0; j.blocks && j.failed && w < workers; w++) {
        if (j.failed[w] && !rc)
            rc = smt_err_set(err, SMT_ERR_NOMEM, "out of memory scoring %zu lines", n);
        glm_block_free(&j.blocks[w]);
    }
    free(j.blocks);
    free(j.failed);
    if (tok0 != tok0_one)
        free(tok0);
    smt_pool_destroy(pool);
    return rc;
}
