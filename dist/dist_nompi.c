/* dist_nompi.c — the job runner of a build without MPI (dist.h): a start by a launcher with several
 * ranks is refused, and so is a run. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "dist.h"
#include "smt_num.h"

/* the launchers' environment: Open MPI's mpirun, PMIx (srun --mpi=pmix), PMI-2 (srun --mpi=pmi2) */
static int launched_size(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_SIZE", "PMI_SIZE"};
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) {
        const char *v = getenv(vars[i]);
        long long n;
        if (v && smt_parse_ll(v, strlen(v), 2, INT_MAX, &n) == 0)
            return (int)n;
    }
    return 1;
}

int dist_start(int *argc, char ***argv, int *rank, int *size, smt_err *err)
{
    (void)argc, (void)argv;
    *rank = 0;
    *size = 1;
    int n = launched_size();
    if (n > 1)
        return smt_err_set(err, SMT_ERR_UNSUPPORTED,
                           "started as %d processes (mpirun or srun), but this build has no MPI: "
                           "install libopenmpi-dev and openmpi-bin and build again (docs/scale.md)",
                           n);
    return 0;
}

int dist_available(void) { return 0; }

int dist_run(const dist_job *job, smt_err *err)
{
    (void)job;
    return smt_err_set(err, SMT_ERR_UNSUPPORTED, "this build has no MPI (docs/scale.md)");
}

void dist_end(int exit_code) { (void)exit_code; }
