// Learning curve -> fitness, and the invalid-robot rules.
#include "evolve/engine/Fitness.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace evoc::evolve {

Verdict judge(const std::vector<double> &losses, const FitnessSpec &spec) {
  Verdict v;
  if (losses.empty()) {
    v.reason = "no learning curve";
    return v;
  }
  for (size_t i = 0; i < losses.size(); ++i)
    if (!std::isfinite(losses[i])) {
      v.reason = fmt::format("loss is not finite at iteration {}", i);
      return v;
    }
  for (const InvalidRule &r : spec.invalid)
    for (size_t i = 0; i < losses.size(); ++i) {
      if (r.kind == InvalidRule::Kind::LossAbove && std::fabs(losses[i]) > r.threshold) {
        v.reason =
            fmt::format("|loss| = {} > {} at iteration {}", std::fabs(losses[i]), r.threshold, i);
        return v;
      }
      if (r.kind == InvalidRule::Kind::LossJump && i + 1 < losses.size() &&
          std::fabs(losses[i + 1] - losses[i]) >= r.threshold) {
        v.reason = fmt::format("loss jumps by {} >= {} after iteration {}",
                               std::fabs(losses[i + 1] - losses[i]), r.threshold, i);
        return v;
      }
    }
  v.valid = true;
  switch (spec.kind) {
  case FitnessKind::MaxNegLoss:
    v.fitness = -losses[0];
    for (double l : losses)
      v.fitness = std::max(v.fitness, -l);
    break;
  case FitnessKind::LastNegLoss:
    v.fitness = -losses.back();
    break;
  case FitnessKind::MeanNegLoss: {
    double s = 0;
    for (double l : losses)
      s += l;
    v.fitness = -s / double(losses.size());
    break;
  }
  case FitnessKind::MinNegLoss:
    v.fitness = -*std::max_element(losses.begin(), losses.end());
    break;
  case FitnessKind::FirstNegLoss:
    v.fitness = -losses.front();
    break;
  case FitnessKind::MaxLoss:
    v.fitness = *std::max_element(losses.begin(), losses.end());
    break;
  case FitnessKind::MinLoss:
    v.fitness = *std::min_element(losses.begin(), losses.end());
    break;
  case FitnessKind::MeanLoss: {
    double s = 0;
    for (double l : losses)
      s += l;
    v.fitness = s / double(losses.size());
    break;
  }
  case FitnessKind::LastLoss:
    v.fitness = losses.back();
    break;
  case FitnessKind::FirstLoss:
    v.fitness = losses.front();
    break;
  }
  return v;
}

} // namespace evoc::evolve
