// Hand-built IR modules for the CUDA back-end tests: the ELDiR step, its loss
// and a kernel of adjoint shapes (owned and shared scatter-adds, reductions).
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "ir/IR.h"

namespace evoc::cudatest {

/// Indices of the buffers, sets and kernels of makeMassSpringModule.
struct MassSpringIds {
  int point, spring, unit, input, wave;
  int x, v, x1, v1, xFirst, xLast;                     // states
  int sa, sb, rest, stiff, actu;                       // body
  int w1, b1, w2, b2;                                  // params
  int in, hid, act, vinc;                              // temps
  int loss;                                            // output
  int hidAdj, b1Adj, w1Adj, inAdj, cAdj, stats, chain; // adjoint-shape kernel
  int hidSaved, inSaved; // the forward's hidden and inputs, as the adjoint sees them
  int step, lossK, adj;  // kernels
};

/// The reference experiment of SCIENCE.md (2D, noslip ground, 32 tanh units)
/// with source locations in two .evo files, plus kernel "adjoint_shapes".
ir::Module makeMassSpringModule(MassSpringIds &ids, ir::Precision p = ir::Precision::F64);

/// A robot's body and parameters (f64), packed per buffer.
struct MassSpringRobot {
  int64_t nPoints = 0, nSprings = 0;
  std::vector<double> x0, v0;
  std::vector<int32_t> a, b;
  std::vector<double> rest, stiff, actu;
  std::vector<double> w1, b1, w2, b2;
};

/// A random body on a rows x cols grid of points (triangulated lattice,
/// each spring kept with probability `keep`) with random weights.
MassSpringRobot makeRandomRobot(std::mt19937_64 &rng, int rows, int cols, double keep = 0.85);

} // namespace evoc::cudatest
