/* smt_progress.h — a progress meter for long jobs, on stderr.
 * Shown only when stderr is a terminal or when forced (a tool's --progress flag); redraws at most
 * a few times a second, so calling smt_progress_update per line costs one clock read per 64k calls.
 * Thread-safety: one meter per thread. */
#ifndef SMT_PROGRESS_H
#define SMT_PROGRESS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct smt_progress {
    const char *label;
    uint64_t total;  /* 0: unknown */
    int enabled;
    unsigned calls;
    double start, last;
} smt_progress;

/* Monotonic wall-clock seconds. */
double smt_now(void);

/* force: 1 shows the meter even when stderr is not a terminal, 0 shows it only on a terminal,
 * -1 never shows it. total: bytes (or units) expected, 0 when unknown. */
void smt_progress_init(smt_progress *p, const char *label, uint64_t total, int force);
void smt_progress_update(smt_progress *p, uint64_t done);
/* Prints the final line (when enabled) and a newline. */
void smt_progress_finish(smt_progress *p, uint64_t done);

#ifdef __cplusplus
}
#endif
#endif
