/* kill_rank.c — preloaded into the ranks by mpi_test.sh (LD_PRELOAD, never part of a tool): the
 * rank DIST_TEST_KILL_RANK dies by SIGKILL, as a machine that fails would, when it has put its
 * DIST_TEST_KILL_AFTER-th part of output 0 in place (rename), before it reports that chunk. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int rename(const char *from, const char *to)
{
    static int (*real)(const char *, const char *);
    static int parts;
    if (!real)
        *(void **)&real = dlsym(RTLD_NEXT, "rename");
    int rc = real(from, to);
    const char *rank = getenv("OMPI_COMM_WORLD_RANK"), *who = getenv("DIST_TEST_KILL_RANK");
    const char *after = getenv("DIST_TEST_KILL_AFTER");
    size_t n = strlen(to);
    if (rc == 0 && rank && who && after && !strcmp(rank, who) && n > 3 &&
        !strcmp(to + n - 3, ".o0") && ++parts >= strtol(after, NULL, 10)) {
        fprintf(stderr, "kill_rank: killed after %d part(s) (pid %ld)\n", parts, (long)getpid());
        fflush(stderr);
        raise(SIGKILL);
    }
    return rc;
}
