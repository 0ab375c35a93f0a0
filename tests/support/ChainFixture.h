// Hand-built test modules and robots for the runtime tests: a 2D spring
// ladder with a linear tanh controller, built with ir::Builder.
#pragma once

#include <memory>

#include "codegen/Executable.h"
#include "core/Robot.h"
#include "ir/IR.h"

namespace evoc::test {

/// Knobs of the fixture module.
struct ChainOptions {
  bool lossStep = false;     // add a per-step loss kernel (1e-3 * sum v^2)
  int64_t lossStepBegin = 0; // its window (inclusive; end = last)
  bool carryField = false;   // add a state field the step never writes
  int64_t fixedTime = -1;    // >= 0: the loss adds 0.5 * mean y of x[fixedTime]
  double dt = 0.01;
  double gravity = 0.0;
  ir::Precision precision = ir::Precision::F64;
};

/// Forward kernels only: "step" (controller + springs + integration),
/// "loss" (-mean of (1 + i) * x-displacement of point i, First/Last
/// states), optional "loss.step".
/// Params: "w" [spring, input] (xavier_normal, gain 1.5), "b" [spring]
/// (zeros). Sets: point, spring (body), input = 2 + 2 * point.
ir::Module chainModule(const ChainOptions &o = {});

/// chainModule plus adjoint kernels from compiler/autodiff.
ir::Module chainModuleWithAdjoints(const ChainOptions &o = {});

/// A ladder of `cols` columns of two points (dim 2), springs along the
/// rails, rungs and diagonals, rest lengths 0.9x the initial distances.
runtime::Robot ladderRobot(int cols, double stiffness = 100.0, double yOffset = 0.0);

/// The interpreter back end (through the codegen factory).
std::unique_ptr<codegen::Executable> interp(const ir::Module &m);

} // namespace evoc::test
