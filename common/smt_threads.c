/* The thread pool of smt_threads.h. */
#define _POSIX_C_SOURCE 200809L
#include "smt_threads.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

struct smt_pool {
    unsigned n;
    pthread_t *threads;
    pthread_mutex_t mu;
    pthread_cond_t work_cv, done_cv;
    /* the current job */
    smt_task_fn fn;
    void *ctx;
    size_t n_tasks;
    _Atomic size_t next;
    unsigned generation;
    unsigned busy; /* workers (other than the caller) still in the current job */
    int stop;
};

typedef struct {
    smt_pool *pool;
    unsigned id;
} worker_arg;

static void drain(smt_pool *p, smt_task_fn fn, void *ctx, size_t n_tasks, unsigned id)
{
    for (;;) {
        size_t t = atomic_fetch_add(&p->next, 1);
        if (t >= n_tasks)
            break;
        fn(ctx, t, id);
    }
}

static void *worker_main(void *arg)
{
    worker_arg *wa = arg;
    smt_pool *p = wa->pool;
    unsigned id = wa->id;
    free(wa);
    unsigned seen = 0;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->stop && p->generation == seen)
            pthread_cond_wait(&p->work_cv, &p->mu);
        if (p->stop)
            break;
        seen = p->generation;
        smt_task_fn fn = p->fn;
        void *ctx = p->ctx;
        size_t n_tasks = p->n_tasks;
        pthread_mutex_unlock(&p->mu);
        drain(p, fn, ctx, n_tasks, id);
        pthread_mutex_lock(&p->mu);
        if (--p->busy == 0)
            pthread_cond_signal(&p->done_cv);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

unsigned smt_cpu_count(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (unsigned)n : 1u;
}

uint64_t smt_phys_memory(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
    return pages > 0 && psize > 0 ? (uint64_t)pages * (uint64_t)psize : 0;
}

int smt_pool_create(smt_pool **out, unsigned n_threads, smt_err *err)
{
    *out = NULL;
    if (n_threads == 0)
        n_threads = smt_cpu_count();
    smt_pool *p = calloc(1, sizeof *p);
    if (!p || !(p->threads = calloc(n_threads, sizeof *p->threads))) {
        free(p);
        return smt_err_set(err, SMT_ERR_NOMEM, "thread pool: out of memory");
    }
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->work_cv, NULL);
    pthread_cond_init(&p->done_cv, NULL);
    p->n = 1;
    for (unsigned i = 1; i < n_threads; i++) {
        worker_arg *wa = malloc(sizeof *wa);
        if (!wa)
            break;
        wa->pool = p;
        wa->id = i;
        if (pthread_create(&p->threads[i], NULL, worker_main, wa) != 0) {
            free(wa);
            break;
        }
        p->n++;
    }
    if (p->n < n_threads) {
        smt_pool_destroy(p);
        return smt_err_set(err, SMT_ERR_NOMEM, "thread pool: cannot start %u threads", n_threads);
    }
    *out = p;
    return 0;
}

unsigned smt_pool_size(const smt_pool *pool) { return pool->n; }

void smt_pool_run(smt_pool *p, size_t n_tasks, smt_task_fn fn, void *ctx)
{
    if (p->n == 1 || n_tasks <= 1) {
        for (size_t t = 0; t < n_tasks; t++)
            fn(ctx, t, 0);
        return;
    }
    pthread_mutex_lock(&p->mu);
    p->fn = fn;
    p->ctx = ctx;
    p->n_tasks = n_tasks;
    atomic_store(&p->next, 0);
    p->busy = p->n - 1;
    p->generation++;
    pthread_cond_broadcast(&p->work_cv);
    pthread_mutex_unlock(&p->mu);
    drain(p, fn, ctx, n_tasks, 0);
    pthread_mutex_lock(&p->mu);
    while (p->busy > 0)
        pthread_cond_wait(&p->done_cv, &p->mu);
    pthread_mutex_unlock(&p->mu);
}

void smt_pool_destroy(smt_pool *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    p->stop = 1;
    pthread_cond_broadcast(&p->work_cv);
    pthread_mutex_unlock(&p->mu);
    for (unsigned i = 1; i < p->n; i++)
        pthread_join(p->threads[i], NULL);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->work_cv);
    pthread_cond_destroy(&p->done_cv);
    free(p->threads);
    free(p);
}
