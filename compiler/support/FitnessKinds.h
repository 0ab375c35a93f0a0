// The forms a `fitness = ...` setting takes (docs/evolution.md, "ELDiR
// controller, learning and fitness"), written once: sema normalises every
// form a .evo file writes to one of them, the evolution engine
// (runtime/evolve/engine/Fitness.h) reduces learning curves by it, and run
// files print its name.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace evoc {

/// X(Kind, reduction, sign, name): fitness = reduction over the learning
/// curve of (sign * loss); higher is better.
#define EVOC_FITNESS_KINDS(X)                                                                      \
  X(MaxNegLoss, "max", -1, "max(-loss)") /* ELDiR's, the default */                                \
  X(LastNegLoss, "last", -1, "last(-loss)")                                                        \
  X(MeanNegLoss, "mean", -1, "mean(-loss)")                                                        \
  X(MinNegLoss, "min", -1, "min(-loss)") /* -max(loss) */                                          \
  X(FirstNegLoss, "first", -1, "first(-loss)")                                                     \
  X(MaxLoss, "max", 1, "max(loss)")                                                                \
  X(MinLoss, "min", 1, "min(loss)")                                                                \
  X(MeanLoss, "mean", 1, "mean(loss)")                                                             \
  X(LastLoss, "last", 1, "last(loss)")                                                             \
  X(FirstLoss, "first", 1, "first(loss)")

enum class FitnessKind : uint8_t {
#define EVOC_X(Kind, reduce, sign, name) Kind,
  EVOC_FITNESS_KINDS(EVOC_X)
#undef EVOC_X
};

namespace detail {
struct FitnessForm {
  FitnessKind kind;
  std::string_view reduce;
  double sign;
  const char *name;
};
inline constexpr FitnessForm kFitnessForms[] = {
#define EVOC_X(Kind, reduce, sign, name) {FitnessKind::Kind, reduce, sign, name},
    EVOC_FITNESS_KINDS(EVOC_X)
#undef EVOC_X
};
} // namespace detail

/// The kind of `reduce(sign * loss)`, reduce one of max, min, mean, last,
/// first and sign -1 or +1; nullopt for any other.
inline std::optional<FitnessKind> fitnessKind(std::string_view reduce, double sign) {
  for (const auto &f : detail::kFitnessForms)
    if (f.reduce == reduce && f.sign == sign)
      return f.kind;
  return std::nullopt;
}

/// The name of a fitness kind as the .evo and run files spell it ("max(-loss)").
inline const char *fitnessName(FitnessKind k) { return detail::kFitnessForms[size_t(k)].name; }

/// `invalid = loss_above(X), loss_jump(X)`: one rule that marks a body
/// invalid; a NaN or infinite loss always does (`nonfinite()` is that rule
/// written out, and adds nothing).
struct InvalidRule {
  enum class Kind : uint8_t {
    LossAbove, ///< some |loss| > threshold
    LossJump,  ///< some |loss[i+1] - loss[i]| >= threshold
  };
  Kind kind = Kind::LossAbove;
  double threshold = 0;
};

/// The rule's name as a .evo file and run files write it ("loss_above").
inline const char *invalidRuleName(InvalidRule::Kind k) {
  return k == InvalidRule::Kind::LossAbove ? "loss_above" : "loss_jump";
}

} // namespace evoc
