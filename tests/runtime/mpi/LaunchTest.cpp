// What an MPI launcher's environment says (mpi::launcherSize): Open MPI's,
// PMI's (MPICH, srun --mpi=pmi2) and PMIx's (srun --mpi=pmix) variables;
// nothing, or a malformed value, is no launcher.
#include <catch2/catch.hpp>

#include "mpi/Ranks.h"

#include <cstdlib>

namespace {

void clearLauncher() {
  for (const char *v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "SLURM_STEP_NUM_TASKS"})
    unsetenv(v);
}

} // namespace

TEST_CASE("launcherSize: the launchers' variables", "[mpi]") {
  clearLauncher();
  CHECK(evoc::mpi::launcherSize() == 0);
  setenv("OMPI_COMM_WORLD_SIZE", "3", 1);
  CHECK(evoc::mpi::launcherSize() == 3);
  setenv("OMPI_COMM_WORLD_SIZE", "3x", 1); // malformed: not a launch
  CHECK(evoc::mpi::launcherSize() == 0);
  clearLauncher();
  setenv("PMI_SIZE", "16", 1);
  CHECK(evoc::mpi::launcherSize() == 16);
  clearLauncher();
  setenv("PMIX_RANK", "0", 1);
  CHECK(evoc::mpi::launcherSize() == 1); // launched, size unknown
  setenv("SLURM_STEP_NUM_TASKS", "8", 1);
  CHECK(evoc::mpi::launcherSize() == 8);
  clearLauncher();
}
