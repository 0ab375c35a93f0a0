// Per-robot buffers of the test module and a rollout driver that runs the
// same kernels through any back end (interpreter, emulated CUDA, real GPU);
// the skip of a [gpu] case on a machine without one.
#pragma once

#include <functional>
#include <vector>

#include "MassSpring.h"

namespace evoc::test {

/// Runs kernel k for one robot (the Executable::run signature).
using RunFn = std::function<void(int k, void *const *bufs, const int64_t *sizes, int64_t t)>;

/// Every buffer of the module for one robot, in the module's precision.
struct RobotBuffers {
  std::vector<std::vector<char>> data; // one byte vector per buffer
  std::vector<int64_t> sizes;
  std::vector<void *> ptrs; // ptrs[b] = data[b].data()
  bool f64 = true;

  double get(int b, size_t i) const;
  void set(int b, size_t i, double v);
  size_t length(int b) const;
  void zero(int b);
};

/// Allocates and fills the buffers of robot `r` (state at t = 0, body, params,
/// and deterministic pseudo-random adjoint seeds).
RobotBuffers makeBuffers(const ir::Module &m, const MassSpringIds &d, const MassSpringRobot &r);

/// Runs steps 0 .. T-2 (state swapped after each), then the loss and the
/// adjoint-shapes kernel; every kernel call goes through `run`.
void rollout(const ir::Module &m, const MassSpringIds &d, RobotBuffers &rb, int64_t T,
             const RunFn &run);

/// Several robots at once: the same schedule, one batched call per kernel.
using BatchFn =
    std::function<void(int k, int n, void *const *const *bufs, const int64_t *sizes, int64_t t)>;
void rolloutBatch(const ir::Module &m, const MassSpringIds &d, std::vector<RobotBuffers> &rbs,
                  int64_t T, const BatchFn &run);

/// Loss, final positions and parameter gradients of one robot's rollout.
struct Reference {
  double loss = 0;
  std::vector<std::vector<char>> grads; // per buffer of `params`
  std::vector<char> lastX;
};

/// Forward over T states, the loss, its adjoint and T-1 step adjoints with
/// every state and state adjoint kept (docs/architecture.md's protocol), each
/// kernel through `run`. `params`: the Param adjoint buffers to report. The
/// module must be differentiated (autodiff).
Reference referenceRollout(const ir::Module &m, const MassSpringIds &d, RobotBuffers rb, int64_t T,
                           const std::vector<int> &params, const RunFn &run);

/// RunFn of the IR interpreter.
RunFn interpreter(const ir::Module &m);

/// Largest relative difference of buffer b between two robots' buffers,
/// relative to the largest magnitude in `ref` (or 1e-300).
double maxRelDiff(const RobotBuffers &ref, const RobotBuffers &got, int b);

/// Whether this machine can run the CUDA back end; without a GPU, warns
/// "skipped, no GPU: <why>" so that a [gpu] case can return early.
bool gpuOrSkip();

} // namespace evoc::test
