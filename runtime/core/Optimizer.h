// Per-robot optimisers over a robot's contiguous parameter vector:
// the paper's normalised step, Adam, and plain gradient descent.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "support/Optimizers.h"

namespace evoc::runtime {

/// The optimisers (support/Optimizers.h: one list for the CPU and the CUDA
/// training kernels).
using evoc::OptimizerKind;

/// Which optimiser and its settings.
struct OptimizerConfig {
  OptimizerKind kind = OptimizerKind::NormalizedStep;
  double step = 0.2;                             // NormalizedStep
  double lr = 1e-3;                              // Adam, Sgd
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8; // Adam
};

/// Parses "normalized_sgd" / "normalized_step", "adam", "sgd"; throws
/// evoc::Error naming the known ones otherwise.
OptimizerKind parseOptimizerKind(const std::string &name);

/// The optimiser state of one robot (Adam moments, step count).
class Optimizer {
public:
  Optimizer(const OptimizerConfig &cfg, int64_t n);
  /// One update of params[0..n) from grad[0..n). `f32`: the arrays are
  /// float, else double. Deterministic: sums run in index order, and no
  /// libm function other than sqrt is used.
  void update(void *params, const void *grad, bool f32);
  int64_t steps() const { return t_; }
  /// The whole state as numbers (step count, bias-correction powers, moments),
  /// for a resumable run; load() takes what save() gave (throws evoc::Error
  /// when the size does not fit this optimiser).
  std::vector<double> save() const;
  void load(const std::vector<double> &state);

private:
  template <class T> void apply(T *p, const T *g);
  OptimizerConfig cfg_;
  int64_t n_;
  int64_t t_ = 0;
  double b1t_ = 1, b2t_ = 1;
  std::vector<double> m_, v_;
};

} // namespace evoc::runtime
