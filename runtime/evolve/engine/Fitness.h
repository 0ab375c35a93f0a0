// Fitness of a trained body from its learning curve, and the rules that mark
// a body invalid (NaN/inf, diverging losses) so selection can drop it.
#pragma once

#include <string>
#include <vector>

#include "support/FitnessKinds.h"

namespace evoc::evolve {

/// How a learning curve becomes one fitness number (support/FitnessKinds.h:
/// the kinds, fitnessKind and fitnessName).
using evoc::FitnessKind;
using evoc::fitnessKind;
using evoc::fitnessName;

/// One rule that marks a body invalid (support/FitnessKinds.h).
using evoc::InvalidRule;

/// The `fitness` and `invalid` settings of a .evo file.
struct FitnessSpec {
  FitnessKind kind = FitnessKind::MaxNegLoss;
  std::vector<InvalidRule> invalid; ///< the paper's: LossAbove 5.5, LossJump 0.5
};

/// The verdict on one learning curve.
struct Verdict {
  bool valid = false;
  double fitness = 0; ///< meaningful only when valid
  std::string reason; ///< why it is invalid, for the population file
};

/// Judges a learning curve: an empty curve or any broken rule is invalid.
Verdict judge(const std::vector<double> &losses, const FitnessSpec &spec);

} // namespace evoc::evolve
