// Test support: per-robot buffer storage, kernel runs on the interpreter, and
// a finite-difference check of an adjoint kernel.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "ir/IR.h"

namespace evoc::test {

/// Storage for every buffer of a module, for one robot (f64 modules).
struct Data {
  const ir::Module *m = nullptr;
  std::vector<int64_t> sizes;
  std::vector<std::vector<double>> f;
  std::vector<std::vector<int32_t>> i;

  /// Sizes body sets from `bodySizes` (by set name), derives the others and
  /// allocates zeroed buffers.
  Data(const ir::Module &mod, const std::vector<std::pair<std::string, int64_t>> &bodySizes);
  std::vector<double> &F(const std::string &buffer);
  std::vector<int32_t> &I(const std::string &buffer);
  /// Runs kernel `k` on the interpreter.
  void run(int k, int64_t t = 0);
  /// Zeroes every buffer of role `r` (and, for Adjoint, only those whose
  /// primal has role `primalRole` unless it is Role::Adjoint).
  void zero(ir::Role r);
  void zeroAdjointsOf(ir::Role primalRole);
  /// Fills every float buffer of role `r` with uniform values in [lo, hi].
  void randomize(ir::Role r, double lo, double hi, std::mt19937 &rng);
};

/// Result of a gradient check: the worst relative error and where.
struct GradReport {
  double maxRelErr = 0;
  /// Normwise: max |ad - fd| / max(largest |fd|, noise floor).
  double normErr = 0;
  std::string where;
  int checked = 0;
  bool finite = true;
};

/// Checks the adjoint of forward kernel `k` (its adjoint must exist) at the
/// data `d`: J = sum of random weights * every NextState/Output it writes;
/// the adjoint kernel's accumulated input adjoints are compared against
/// fourth-order central differences of J at steps 1e-4, 2e-5, 4e-6 (times
/// 1 + |x|), taking per entry the estimate closer to the adjoint. Relative
/// error of an entry: |ad - fd| / max(|ad|, |fd|, 1e-3 * largest |fd| of its
/// buffer, 1e-5 * largest |fd| overall, 1e-5 * sum |terms of J|) (the floors
/// absorb rounding noise, about 3e-12 * sum |terms| / h, on entries whose
/// derivative is zero or tiny). Only buffers in `only` are checked when it
/// is not empty.
GradReport gradCheck(const ir::Module &m, int k, const Data &d, int64_t t, uint32_t seed,
                     const std::vector<std::string> &only = {});

} // namespace evoc::test
