// The one hand-built ELDiR-style IR fixture of the back-end tests and the
// benchmarks: the mass-spring step with its MLP controller, the loss, and
// for the CUDA tests a kernel of adjoint shapes (owned and shared
// scatter-adds, reductions); random lattice bodies; a rollout on any back end.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "codegen/Executable.h"
#include "ir/IR.h"

namespace evoc::test {

/// Indices of the buffers, sets and kernels of makeMassSpringModule (those
/// of the adjoint-shapes kernel -1 unless it was asked for).
struct MassSpringIds {
  int point, spring, unit, input, wave;
  int x, v, x1, v1, xFirst, xLast; // states
  int sa, sb, rest, stiff, actu;   // body
  int w1, b1, w2, b2;              // params
  int in, hid, act, vinc;          // temps
  int loss;                        // output
  int hidAdj = -1, b1Adj = -1, w1Adj = -1, inAdj = -1, cAdj = -1, stats = -1,
      chain = -1;                  // adjoint-shape kernel
  int hidSaved = -1, inSaved = -1; // the forward's hidden and inputs, as the adjoint sees them
  int step, lossK, adj = -1;       // kernels
};

/// ELDiR's reference experiment (docs/evolution.md; 2D, noslip ground, 32 tanh units)
/// built with ir::Builder, with source locations in two .evo files: kernel
/// "step" (state t-1 -> t) and kernel "loss"; with `adjointShapes`, kernel
/// "adjoint_shapes" (a StepAdj of step) and its buffers too.
ir::Module makeMassSpringModule(MassSpringIds &ids, ir::Precision p = ir::Precision::F64,
                                bool adjointShapes = false);

/// A robot's body and parameters (f64), packed per buffer.
struct MassSpringRobot {
  int64_t nPoints = 0, nSprings = 0;
  std::vector<double> x0, v0;
  std::vector<int32_t> a, b;
  std::vector<double> rest, stiff, actu;
  std::vector<double> w1, b1, w2, b2;
};

/// ELDiR's controller initialisation of r's weights (32 hidden units,
/// 12 + 4 * points inputs): Xavier-normal w1 (gain 2) then w2 (gain 3),
/// drawn with `gauss` from `rng`; the biases are left as they are.
void xavierWeights(MassSpringRobot &r, std::mt19937_64 &rng,
                   std::normal_distribution<double> &gauss);

/// A random body on a rows x cols grid of points (triangulated lattice,
/// each spring kept with probability `keep`) with random weights.
MassSpringRobot makeRandomRobot(std::mt19937_64 &rng, int rows, int cols, double keep = 0.85);

/// Runs T-1 steps and the loss of one robot with any back end; returns the
/// loss and (optionally) the final positions.
double rollout(const ir::Module &m, const MassSpringIds &ids, const codegen::Executable &exe,
               const MassSpringRobot &r, int64_t T, std::vector<double> *finalX = nullptr);

} // namespace evoc::test
