/* smt_threads.h — a small persistent thread pool with a parallel-for.
 *
 * smt_pool_run(pool, n_tasks, fn, ctx) calls fn(ctx, task, worker) for every task in [0, n_tasks),
 * spread dynamically over the pool's workers (the calling thread is worker 0), and returns when all
 * are done. Tasks must be independent. worker < smt_pool_size(pool) lets fn use per-worker scratch.
 * Thread-safety: one smt_pool_run at a time per pool. */
#ifndef SMT_THREADS_H
#define SMT_THREADS_H

#include <stddef.h>
#include <stdint.h>

#include "smt_error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct smt_pool smt_pool;
typedef void (*smt_task_fn)(void *ctx, size_t task, unsigned worker);

/* n_threads: total threads including the caller (1 = run inline, 0 = number of online CPUs). */
int smt_pool_create(smt_pool **out, unsigned n_threads, smt_err *err);
unsigned smt_pool_size(const smt_pool *pool);
void smt_pool_run(smt_pool *pool, size_t n_tasks, smt_task_fn fn, void *ctx);
/* Stops and joins the workers. Accepts NULL. */
void smt_pool_destroy(smt_pool *pool);

/* Number of online CPUs (at least 1). */
unsigned smt_cpu_count(void);
/* Bytes of physical memory, or 0 when the system does not say. */
uint64_t smt_phys_memory(void);

#ifdef __cplusplus
}
#endif
#endif
