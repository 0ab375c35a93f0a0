// Test support: a whole rollout (forward states, loss) and its adjoint on the
// interpreter, following the runtime protocol of docs/architecture.md.
#pragma once

#include "GradCheck.h"

namespace evoc::test {

/// Runs `steps` states (steps - 1 updates of kernel "step") from the state in
/// `d` (point.x, point.v), then kernel "loss" on the first and last states.
/// Returns the loss; the trajectory is kept in xs / vs when non-null.
double rolloutLoss(const ir::Module &m, Data &d, int steps,
                   std::vector<std::vector<double>> *xs = nullptr,
                   std::vector<std::vector<double>> *vs = nullptr);

/// Forward + reverse sweep: returns the loss and leaves d(loss)/d(param) in
/// the Param adjoint buffers of `d` and d(loss)/d(initial x, v) in
/// point.x.adj / point.v.adj. The module must be differentiated.
double rolloutGradient(const ir::Module &m, Data &d, int steps);

} // namespace evoc::test
