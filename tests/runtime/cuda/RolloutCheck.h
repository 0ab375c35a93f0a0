// Shared by the CUDA rollout tests: a differentiated ELDiR module and a check
// of CudaRollout against per-robot reference rollouts (any back end).
#pragma once

#include <vector>

#include "Harness.h"
#include "codegen/cuda/CudaBackend.h"

namespace evoc::test {

/// makeMassSpringModule's step and loss with their adjoints, after the
/// passes, with its buffer ids.
struct DifferentiatedModule {
  MassSpringIds d;
  std::vector<int> params; ///< the Param adjoint buffers (w1, b1, w2, b2)
  ir::Module m;
};
DifferentiatedModule differentiatedModule(ir::Precision p = ir::Precision::F64);

/// CudaRollout of `robots` on `exe` (twice, to check resets) against
/// referenceRollout through `ref`: loss and last state to `tol` relative,
/// gradients to 100 * tol of their largest entry (f64 modules).
void checkRollout(const codegen::cuda::CudaExecutable &exe, const ir::Module &m,
                  const MassSpringIds &d, const std::vector<int> &params,
                  const std::vector<MassSpringRobot> &robots, int64_t T, const RunFn &ref,
                  double tol);

} // namespace evoc::test
