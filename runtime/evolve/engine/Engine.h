// The evolution engine's internal steps (breed, evaluate, select) and the
// state they share; runEvolution (Evolution.cpp) strings them together and
// the Recorder (Recorder.h) writes them to the run directory. Not a public
// interface: only runtime/evolve includes it.
#pragma once

#include "evolve/bodies/BodyModel.h"
#include "evolve/engine/CanonicalHash.h"
#include "evolve/engine/Evolution.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace evoc::evolve::engine {

/// A member of the population.
struct Individual {
  uint64_t id = 0;
  int64_t parent = -1; ///< -1: drawn at random
  int born = 0;
  GenomePtr genome;
  double fitness = 0;
  std::vector<double> losses;
  std::vector<double> gradNorms;
  /// The loss's named terms, each a curve parallel to `losses`
  /// (Evaluation::terms); empty when the loss has none or it was not
  /// trained in this run (a reused duplicate).
  std::vector<std::pair<std::string, std::vector<double>>> terms;
  /// With inheritWeights: the trained parameters its fitness came from
  /// (bestParams; PARAMS.json entry), null when it has none (reused, loaded
  /// without). Its children start from them.
  nlohmann::json params;
  /// With MAP-Elites: its descriptors' values (MapElites.h), which place it
  /// in its cell; empty otherwise.
  std::vector<double> descriptors;
};

/// What the archive remembers of one evaluated robot (by canonical key).
struct ArchiveEntry {
  uint64_t id = 0; ///< the design that was trained
  bool valid = false;
  double fitness = 0;         ///< when valid
  std::vector<double> losses; ///< when valid
  std::string reason;         ///< when not valid
};

/// Everything a resume needs (state.json).
struct State {
  int generation = -1; ///< last completed
  uint64_t nextId = 0;
  uint64_t designs = 0; ///< robots sent to the trainer
  double elapsed = 0;
  EvoRng rng{0};
  std::vector<Individual> population; ///< in rank order
  bool haveBest = false;
  Individual best;
  nlohmann::json bestParams;
  std::map<std::string, ArchiveEntry> archive; ///< CanonicalKey::hex() -> evaluation
};

/// One child of a generation on its way through evaluate and select.
struct Child {
  Individual ind;
  Variation variation; ///< generation 0: ops {"sample"}
  Phenotype pheno;
  CanonicalKey key;
  bool reused = false;  ///< a duplicate that reuses an archived evaluation
  bool trained = false; ///< sent to the trainer
  bool valid = false;
  std::string reason;     ///< why not valid
  Evaluation eval;        ///< the trainer's answer, when trained
  int64_t inherited = 0;  ///< parameter scalars it took from its parent (inheritWeights)
  std::string notTrained; ///< Evaluation::notTrained (select() drops `eval`)
};

/// Per-generation counts for the log.
struct BreedStats {
  int duplicatesAvoided = 0; ///< duplicates re-varied into a new robot
  int duplicatesReused = 0;  ///< duplicates that reused an archived evaluation
  std::map<std::string, int> ops, fallbacks;
  /// Operator -> the rate value furthest outside [0, 1] among the kept
  /// children's variations (Variation::clampedRates).
  std::map<std::string, double> clampedRates;
};

/// The generation's children: P random bodies in generation 0, else
/// offspringCount(config) variations, child i of parent i mod P (rank
/// order, taking turns; with MAP-Elites a parent drawn uniformly from the
/// archive), the other population members as donors. A child whose robot is in the
/// archive or equals an earlier child's is re-varied up to config.maxDuplicateRetries times, then
/// marked `reused`.
std::vector<Child> breed(const EvolutionConfig &config, State &s, int generation,
                         BreedStats &stats);

/// Trains the new, expressible children in one batch, judges every child
/// (reused ones from the archive) and adds the new robots to the archive.
/// Returns the number of valid children.
struct EvalStats {
  size_t trained = 0;
  size_t notTrained = 0; ///< of `trained`, evaluated without learning (Evaluation::notTrained)
  double seconds = 0, robotSteps = 0;
};
int evaluate(const EvolutionConfig &config, const EvaluateFn &fn, State &s, int generation,
             std::vector<Child> &children, EvalStats &stats);

/// Survivors of parents plus valid children (with MAP-Elites: the archive
/// after the new, valid children tried their cells); updates the best (never
/// a reused child: its original already competed).
void select(const EvolutionConfig &config, State &s, std::vector<Child> &children);

} // namespace evoc::evolve::engine
