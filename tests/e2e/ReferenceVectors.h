// Reference vectors (losses and gradients computed by independent
// implementations) and the check that evoc reproduces them: the ELDiR sets
// (VectorsTest.cpp), the 3D and terrain sets (Vectors3dTest.cpp).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "app/Driver.h"
#include "core/Train.h"

namespace evoc::test {

/// A set of reference vectors: its folder, the robots' dimension and files,
/// the expected files' prefix, and the evoc program of each model.
struct Reference {
  std::string dir;
  int dim;
  std::string robots, params;
  std::string expected; ///< the result files' prefix: PREFIX<model>_T<steps>.json
  std::function<app::CommonOptions(const std::string &model, int steps)> program;
  double lossTol = 1e-8; ///< relative
  double gradTol = 1e-6; ///< of the robot's largest gradient entry
};

/// The program dir/file at `steps`, with world.physics = `physics` unless
/// empty.
app::CommonOptions programFile(const std::string &dir, const std::string &file, int steps,
                               const std::string &physics);

/// Losses and gradients of the robots `which` (ascending; all when empty) of `ref` with
/// `backend`.
runtime::SimResult simulateReference(const Reference &ref, const std::string &backend,
                                     const std::string &model, int steps,
                                     const std::vector<size_t> &which);

/// Checks `backend` against PREFIX<model>_T<steps>.json: every loss to
/// ref.lossTol relative, every gradient entry to ref.gradTol of the robot's
/// largest entry.
void checkReference(const Reference &ref, const std::string &backend, const std::string &model,
                    int steps, const std::vector<size_t> &which = {});

} // namespace evoc::test
