// Differentiability measures of a body, read off its learning: how much and
// how steadily learning improved it, and how even its gradients were. They
// are reported beside fitness (population.json, log.jsonl); they never
// influence selection.
#pragma once

#include <nlohmann/json.hpp>

#include <vector>

namespace evoc::evolve {

/// Measures of one learning run; NaN where the inputs do not define one.
struct LearningMetrics {
  double gain = 0;       ///< loss[0] - min(loss): what learning bought
  double monotone = 0;   ///< fraction of iterations whose loss fell
  double gradNormCv = 0; ///< std / mean of the gradient norms (lower: smoother)
};

/// Measures from a learning curve and (optionally, may be empty) the
/// gradient norm of every iteration.
LearningMetrics learningMetrics(const std::vector<double> &losses,
                                const std::vector<double> &gradNorms);

/// {"learning_gain", "monotonicity", "grad_norm_cv"}; NaN as null.
nlohmann::json metricsJson(const LearningMetrics &m);

} // namespace evoc::evolve
