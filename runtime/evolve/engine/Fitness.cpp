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

std::optional<FitnessKind> fitnessKind(const std::string &reduce, double sign) {
  static const struct {
    const char *reduce;
    FitnessKind neg, pos;
  } table[] = {{"max", FitnessKind::MaxNegLoss, FitnessKind::MaxLoss},
               {"min", FitnessKind::MinNegLoss, FitnessKind::MinLoss},
               {"mean", FitnessKind::MeanNegLoss, FitnessKind::MeanLoss},
               {"last", FitnessKind::LastNegLoss, FitnessKind::LastLoss},
               {"first", FitnessKind::FirstNegLoss, FitnessKind::FirstLoss}};
  if (sign != 1 && sign != -1)
    return std::nullopt;
  for (const auto &t : table)
    if (reduce == t.reduce)
      return sign < 0 ? t.neg : t.pos;
  return std::nullopt;
}

const char *fitnessName(FitnessKind k) {
  switch (k) {
  case FitnessKind::MaxNegLoss:
    return "max(-loss)";
  case FitnessKind::LastNegLoss:
    return "last(-loss)";
  case FitnessKind::MeanNegLoss:
    return "mean(-loss)";
  case FitnessKind::MinNegLoss:
    return "min(-loss)";
  case FitnessKind::FirstNegLoss:
    return "first(-loss)";
  case FitnessKind::MaxLoss:
    return "max(loss)";
  case FitnessKind::MinLoss:
    return "min(loss)";
  case FitnessKind::MeanLoss:
    return "mean(loss)";
  case FitnessKind::LastLoss:
    return "last(loss)";
  case FitnessKind::FirstLoss:
    return "first(loss)";
  }
  return "?";
}

} // namespace evoc::evolve
