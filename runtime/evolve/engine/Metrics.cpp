// Learning-curve and gradient-norm measures of differentiability.
#include "evolve/engine/Metrics.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace evoc::evolve {

LearningMetrics learningMetrics(const std::vector<double> &losses,
                                const std::vector<double> &gradNorms) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  LearningMetrics m{nan, nan, nan};
  if (!losses.empty()) {
    m.gain = losses.front() - *std::min_element(losses.begin(), losses.end());
    if (losses.size() > 1) {
      int fell = 0;
      for (size_t i = 1; i < losses.size(); ++i)
        fell += losses[i] < losses[i - 1];
      m.monotone = double(fell) / double(losses.size() - 1);
    }
  }
  if (!gradNorms.empty()) {
    double mean = 0, var = 0;
    for (double g : gradNorms)
      mean += g / double(gradNorms.size());
    for (double g : gradNorms)
      var += (g - mean) * (g - mean) / double(gradNorms.size());
    m.gradNormCv = mean > 0 ? std::sqrt(var) / mean : nan;
  }
  return m;
}

nlohmann::json metricsJson(const LearningMetrics &m) {
  auto num = [](double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(); };
  return {{"learning_gain", num(m.gain)},
          {"monotonicity", num(m.monotone)},
          {"grad_norm_cv", num(m.gradNormCv)}};
}

} // namespace evoc::evolve
