// Test support: random smooth kernels (gathers, scatter-adds, temps, nested
// reductions, values used across loop levels) built with the Builder.
#pragma once

#include <random>
#include <vector>

#include "GradCheck.h"
#include "ir/Builder.h"

namespace evoc::test {

/// Builds kernel "step" over sets point / spring with buffers x (state),
/// a, b (endpoints), p (param), t, u (temps), out (next), loss (output);
/// each seed gives a different random structure of smooth expressions.
class RandomKernel {
public:
  explicit RandomKernel(uint32_t seed) : rng_(seed) {}

  ir::Module build();
  /// Data for a built module (or its derivatives): 4 points, 5 springs in a
  /// fixed ring, states and parameters uniform in [-1, 1] from `rng`.
  static Data data(const ir::Module &m, std::mt19937 &rng);

private:
  ir::ValueId pick();
  ir::ValueId expr(int depth);

  std::mt19937 rng_;
  ir::Builder *b_ = nullptr;
  std::vector<ir::ValueId> pool_;
};

} // namespace evoc::test
