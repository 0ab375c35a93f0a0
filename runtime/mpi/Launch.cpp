// What an MPI launcher tells a process through its environment (Ranks.h).
#include "mpi/Ranks.h"

#include <algorithm>
#include <cstdlib>
#include <string>

namespace evoc::mpi {

namespace {

int envInt(const char *name) {
  const char *v = std::getenv(name);
  if (!v || !*v)
    return 0;
  char *end = nullptr;
  long n = std::strtol(v, &end, 10);
  return *end == '\0' && n > 0 && n < (1 << 30) ? int(n) : 0;
}

} // namespace

int launcherSize() {
  if (int n = envInt("OMPI_COMM_WORLD_SIZE")) // Open MPI's mpirun
    return n;
  if (int n = envInt("PMI_SIZE")) // MPICH's, srun --mpi=pmi2
    return n;
  if (std::getenv("PMIX_RANK")) // srun --mpi=pmix
    return std::max(1, envInt("SLURM_STEP_NUM_TASKS"));
  return 0;
}

} // namespace evoc::mpi
