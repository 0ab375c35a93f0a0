// A hand-built ELDiR-style module (mass-spring step + MLP controller + loss)
// and random lattice bodies, shared by the LLVM tests and the CPU benchmark.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "codegen/Executable.h"
#include "ir/IR.h"

namespace evoc::testing {

/// Indices of the buffers and sets of the module built by makeMassSpringModule.
struct MassSpringIds {
  int point, spring, unit, input, wave;
  int x, v, x1, v1, xFirst, xLast; // states
  int sa, sb, rest, stiff, actu;   // body
  int w1, b1, w2, b2;              // params
  int in, hid, act, vinc;          // temps
  int loss;                        // output
  int step, lossK;                 // kernels
};

/// The reference experiment of SCIENCE.md (2D, noslip ground, 32 tanh units)
/// built with ir::Builder: kernel "step" (state t-1 -> t) and kernel "loss".
ir::Module makeMassSpringModule(MassSpringIds &ids, ir::Precision p = ir::Precision::F64);

/// A robot's body and parameters (f64), packed per buffer.
struct MassSpringRobot {
  int64_t nPoints = 0, nSprings = 0;
  std::vector<double> x0, v0; // initial state
  std::vector<int32_t> a, b;  // spring endpoints
  std::vector<double> rest, stiff, actu;
  std::vector<double> w1, b1, w2, b2;
};

/// A random connected body on a rows x cols grid of points with the
/// triangulated lattice's springs (each kept with probability `keep`), and
/// Xavier-like random weights.
MassSpringRobot makeRandomRobot(std::mt19937_64 &rng, int rows, int cols, double keep = 0.85);

/// Runs T-1 steps and the loss of one robot with any back end; returns the
/// loss and (optionally) the final positions.
double rollout(const ir::Module &m, const MassSpringIds &ids, const codegen::Executable &exe,
               const MassSpringRobot &r, int64_t T, std::vector<double> *finalX = nullptr);

} // namespace evoc::testing
