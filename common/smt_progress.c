/* The progress meter and the monotonic clock of smt_progress.h. */
#define _POSIX_C_SOURCE 200809L
#include "smt_progress.h"

#include <stdio.h>
#include <time.h>
#include <unistd.h>

double smt_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void smt_progress_init(smt_progress *p, const char *label, uint64_t total, int force)
{
    p->label = label;
    p->total = total;
    p->enabled = force > 0 || (force == 0 && isatty(2));
    p->calls = 0;
    p->start = p->last = smt_now();
}

static void draw(smt_progress *p, uint64_t done, double now, int final)
{
    double secs = now - p->start;
    double rate = secs > 0 ? (double)done / secs / 1e6 : 0.0;
    if (p->total)
        fprintf(stderr, "\r%s: %.1f / %.1f MB (%5.1f%%) %.1f MB/s %.1f s%s", p->label,
                (double)done / 1e6, (double)p->total / 1e6, 100.0 * (double)done / (double)p->total,
                rate, secs, final ? "\n" : "  ");
    else
        fprintf(stderr, "\r%s: %.1f M %.1f M/s %.1f s%s", p->label, (double)done / 1e6, rate, secs,
                final ? "\n" : "  ");
    fflush(stderr);
}

void smt_progress_update(smt_progress *p, uint64_t done)
{
    if (!p->enabled || (++p->calls & 0xffff) != 0)
        return;
    double now = smt_now();
    if (now - p->last < 0.25)
        return;
    p->last = now;
    draw(p, done, now, 0);
}

void smt_progress_finish(smt_progress *p, uint64_t done)
{
    if (p->enabled)
        draw(p, done, smt_now(), 1);
}
