// Ranks without MPI (Ranks.h): this process alone; an MPI launch of this
// build is refused before anything is written.
#include "mpi/Ranks.h"

#include "support/Error.h"

#include <fmt/format.h>

namespace evoc::mpi {

struct Ranks::Impl {};

bool available() { return false; }

Ranks::Ranks() {
  if (int n = launcherSize(); n > 1)
    throw Error(fmt::format(
        "this evoc was built without MPI, but it was started as one of {} MPI ranks (by "
        "mpirun or srun); each would write the same run directory. Rebuild it with Open MPI "
        "(apt-get install libopenmpi-dev openmpi-bin, then configure again: the build says "
        "'evoc: MPI ON'), or run it without mpirun",
        n));
}

Ranks::~Ranks() = default;

int Ranks::rank() const { return 0; }
int Ranks::size() const { return 1; }
int Ranks::localRank() const { return 0; }
int Ranks::localSize() const { return 1; }
int Ranks::threads(int requested) const { return requested; }
std::string Ranks::pickGpu() { return ""; }
void Ranks::setResumeHint(std::string) {}
bool Ranks::agree(bool ok, const std::string &) { return ok; }
evolve::EvaluateFn Ranks::spread(evolve::EvaluateFn local) { return local; }

int Ranks::serve(const evolve::EvaluateFn &) {
  throw Error("internal error: only rank 0 exists without MPI");
}

void Ranks::finish(bool) {}
std::string Ranks::statsLine() const { return ""; }

} // namespace evoc::mpi
