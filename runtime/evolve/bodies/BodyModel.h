// The one interface between the evolution engine and a body representation
// (a lattice mask, a grammar derivation tree, ...): sample, vary, express to
// a phenotype, JSON in and out, and the settings a resume must match. A new
// representation is one new implementation of BodyModel.
#pragma once

#include "evolve/engine/EvoRng.h"

#include "core/Robot.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace evoc::evolve {

/// A genotype; each BodyModel defines its own subclass and downcasts.
struct Genome {
  virtual ~Genome() = default;
};
using GenomePtr = std::shared_ptr<const Genome>;

/// An outline drawn around one part in the pictures: point indices of the
/// phenotype, in polygon order.
struct PartOutline {
  std::string part;
  std::vector<int> points;
  /// "#rrggbb" (its material's colour); empty: the pictures' palette
  /// colour for `part`.
  std::string colour;
};

/// A genotype's robot, with where each point and spring came from.
struct Phenotype {
  runtime::Robot robot;
  /// Provenance keys, one per point / spring: elements with equal keys in a
  /// parent and its child are "the same" element (weight inheritance).
  std::vector<uint64_t> pointKeys, springKeys;
  std::vector<PartOutline> outlines; ///< empty: no part outlines to draw
  bool valid = true;
  std::string reason; ///< why not valid (never trained)
};

/// The outcome of varying a parent.
struct Variation {
  GenomePtr genome;
  std::vector<std::string> ops; ///< the operators applied, e.g. {"add", "flip"}
  int attempts = 1;             ///< tries it took (retries under `until changed`)
  bool fallback = false;        ///< every try failed: the child is a copy of the parent
  std::string fallbackOp;       ///< the operator that gave up, when fallback
  /// Operator -> the value its rate expression gave when that was not a
  /// probability (above 1, below 0, or not finite: `add p = 3 / parts` for
  /// a parent of one part); it was clamped to [0, 1] (0 when not finite).
  std::map<std::string, double> clampedRates;
};

/// A body representation behind the engine. Every method is deterministic
/// given the stream's state; none throws on a genotype it produced itself.
class BodyModel {
public:
  virtual ~BodyModel() = default;

  /// "lattice", "grammar", ...
  virtual std::string kind() const = 0;
  /// A random genotype whose phenotype is valid (never fails).
  virtual GenomePtr sample(EvoRng &rng) const = 0;
  /// A child of `parent`; `donors` are other population members that a
  /// crossover operator (combine) may graft from (may be empty).
  virtual Variation vary(const Genome &parent, const std::vector<const Genome *> &donors,
                         EvoRng &rng) const = 0;
  /// The robot a genotype expresses, lifted onto the ground.
  virtual Phenotype express(const Genome &g) const = 0;
  /// The genotype as population.json / state.json store it.
  virtual nlohmann::json toJson(const Genome &g) const = 0;
  /// Reads toJson's format; throws evoc::Error naming the field if malformed.
  virtual GenomePtr fromJson(const nlohmann::json &j) const = 0;
  /// The model's settings a resume must match (state.json "config.body").
  virtual nlohmann::json fingerprint() const = 0;
  /// Height of the ground the robots stand on (pictures).
  virtual double groundY() const = 0;
};

/// The declarations of BodyModel's genotype methods in a model class (its
/// kind() and groundY() are one line each, written beside them).
#define EVOC_BODY_MODEL_METHODS                                                                    \
  GenomePtr sample(EvoRng &rng) const override;                                                    \
  Variation vary(const Genome &parent, const std::vector<const Genome *> &donors, EvoRng &rng)     \
      const override;                                                                              \
  Phenotype express(const Genome &g) const override;                                               \
  nlohmann::json toJson(const Genome &g) const override;                                           \
  GenomePtr fromJson(const nlohmann::json &j) const override;                                      \
  nlohmann::json fingerprint() const override

} // namespace evoc::evolve
