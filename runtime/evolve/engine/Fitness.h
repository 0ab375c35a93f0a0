// Fitness of a trained body from its learning curve, and the rules that mark
// a body invalid (NaN/inf, diverging losses) so selection can drop it.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace evoc::evolve {

/// How a learning curve becomes one fitness number (higher is better): a
/// reduction over the curve of -loss or of +loss (every `fitness` form of a
/// .evo file normalises to one of these).
enum class FitnessKind {
  MaxNegLoss,   ///< max over the curve of -loss (ELDiR's, the default)
  LastNegLoss,  ///< -loss at the last iteration
  MeanNegLoss,  ///< mean over the curve of -loss
  MinNegLoss,   ///< min over the curve of -loss (-max(loss))
  FirstNegLoss, ///< -loss at the first iteration
  MaxLoss,      ///< max over the curve of +loss
  MinLoss,      ///< min over the curve of +loss
  MeanLoss,     ///< mean over the curve of +loss
  LastLoss,     ///< +loss at the last iteration
  FirstLoss,    ///< +loss at the first iteration
};

/// The kind of `reduce(sign * loss)`, reduce one of max, min, mean, last,
/// first and sign -1 or +1; nullopt for any other.
std::optional<FitnessKind> fitnessKind(const std::string &reduce, double sign);

/// One rule that marks a body invalid; NaN/inf losses are always invalid.
struct InvalidRule {
  enum class Kind {
    LossAbove, ///< some |loss| > threshold
    LossJump,  ///< some |loss[i+1] - loss[i]| >= threshold
  };
  Kind kind = Kind::LossAbove;
  double threshold = 0;
};

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

/// The name of a fitness kind as the .evo and run files spell it.
const char *fitnessName(FitnessKind k);

} // namespace evoc::evolve
