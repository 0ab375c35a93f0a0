// The evolution engine: a (mu + lambda) genetic algorithm over the bodies
// of a BodyModel (BodyModel.h: lattice masks, grammar derivation trees)
// whose fitness comes from a caller-supplied evaluate callback (the
// trainer), writing a crash-safe, resumable run directory (Recorder.h).
//
// Generation 0 evaluates P random bodies; every later generation makes
// lambda = `offspring` varied children (default P: each parent, in rank
// order, makes one), evaluates them in one batch, drops invalid ones and
// selects the next P from parents plus offspring (mu + lambda). No robot is trained twice in a run:
// an archive maps each robot's canonical key (CanonicalHash.h) to its evaluation; a child that
// repeats an archived robot (or a sibling) is re-varied up to
// maxDuplicateRetries times, then reuses the archived result. `generations`
// counts generation 0, so a run logs generations 0 .. generations-1.
#pragma once

#include "evolve/bodies/BodyModel.h"
#include "evolve/bodies/LatticeModel.h"
#include "evolve/engine/Fitness.h"
#include "evolve/engine/Selection.h"
#include "evolve/record/Svg.h"

#include "core/Robot.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace evoc::evolve {

/// One batch of bodies to train and score, in the order the results must
/// come back. seeds[i] is derived from (run seed, ids[i]) only, so the
/// trainer's weight initialisation is the same in a resumed run.
/// What one body may inherit from its parent (EvolutionConfig::inheritWeights):
/// the parent's trained weights and the provenance keys (Phenotype) of the
/// parent's and the body's points and springs.
struct Inheritance {
  nlohmann::json parentParams; ///< PARAMS.json entry; null: nothing to inherit
  std::vector<uint64_t> parentPointKeys, parentSpringKeys, pointKeys, springKeys;
};

struct EvalBatch {
  int generation = 0;
  std::vector<uint64_t> ids;
  std::vector<uint64_t> seeds;
  std::vector<runtime::Robot> robots;
  /// Empty unless inheritWeights; then one per body (generation 0's have
  /// null parentParams).
  std::vector<Inheritance> inherit;
};

/// The trainer's answer for one body.
struct Evaluation {
  std::vector<double> losses; ///< the learning curve (iterations + 1 losses, as ELDiR)
  bool valid = true;          ///< false: the trainer itself rejects the body
  std::string reason;         ///< why, when !valid
  /// Trained parameters as PARAMS.json's entry ({"w1", "b1", "w2", "b2"}).
  /// Either fill `params`, or leave it null and give `paramsFn`, which the
  /// engine calls (before the next evaluate) only for bodies it keeps as best.
  nlohmann::json params;
  std::function<nlohmann::json()> paramsFn;
  /// Simulated robot-steps spent on this body (0: use
  /// EvolutionConfig::robotStepsPerDesign), for robot-steps/s in the log.
  int64_t robotSteps = 0;
  /// Optional: the gradient norm of every iteration (TrainResult::gradNorms),
  /// for the differentiability measures (Metrics.h).
  std::vector<double> gradNorms;
  /// Parameter scalars taken from the parent (Inheritance), for the records.
  int64_t inherited = 0;
  /// The loss's named terms (docs/language.md: a loss that returns a sum of
  /// named lets), each a curve parallel to `losses`; empty when it has none.
  std::vector<std::pair<std::string, std::vector<double>>> terms;
  /// Non-empty when the trainer evaluated the body without learning, saying
  /// why (e.g. nothing to learn: a body without an actuated spring). Recorded
  /// as the design's "not_trained" and counted in the log and progress line.
  std::string notTrained;
};

/// Trains and scores a batch; must return one Evaluation per body.
using EvaluateFn = std::function<std::vector<Evaluation>(const EvalBatch &)>;

/// Optional: frames of a trained robot's gait (a rollout) for the pictures.
using GaitFn =
    std::function<std::vector<GaitFrame>(const runtime::Robot &, const nlohmann::json &params)>;

/// The experiment's evolution settings, as plain numbers (the driver maps the
/// .evo's `body`, `mutation` and `evolve` blocks onto this).
struct EvolutionConfig {
  int population = 50; ///< mu: members kept
  /// lambda: children of every generation after the first, made by the
  /// parents in rank order taking turns (child i by parent i mod P: with
  /// lambda < P the best lambda parents breed, with lambda > P the better
  /// parents make one more child than the others); 0: P, one per parent.
  int offspring = 0;
  int generations = 50; ///< including generation 0; may grow on resume
  uint64_t seed = 1;
  /// The body representation with its variation settings (for a lattice:
  /// LatticeModel.h); required.
  std::shared_ptr<const BodyModel> body;
  FitnessSpec fitness;
  SelectionSpec selection;
  double robotStepsPerDesign = 0; ///< robot-steps/s when Evaluation::robotSteps is 0
  /// population.json holds the phenotype (points, springs) of the best
  /// `phenotypeLimit` members only (genotypes of all): at the paper's scale a
  /// phenotype is ~60 KB of JSON, and any genotype expands to it again.
  int phenotypeLimit = 50;
  int maxInitialAttempts = 10; ///< re-draws of an all-invalid generation 0
  /// Re-variations of a child whose robot was evaluated before (or equals a
  /// sibling's); then it reuses the archived evaluation.
  int maxDuplicateRetries = 5;
  /// `learn { inherit = weights; }`: every member keeps its trained weights
  /// and a child starts from its parent's wherever its body is unchanged
  /// (EvalBatch::inherit). Off (ELDiR): every child learns from its seed.
  bool inheritWeights = false;
  /// The rest of the experiment a resume must match, outside the engine
  /// (the driver's training settings: steps, dt, iterations, optimizer, and
  /// "text_hash", a hash of the experiment's text without its generations,
  /// which covers the loss). A JSON object, or null for none; stored in
  /// state.json's "config" under "experiment".
  nlohmann::json experiment;
};

/// Where and how to run.
struct RunOptions {
  std::filesystem::path dir;    ///< the run directory
  bool resume = false;          ///< continue the run in `dir`
  std::string resolvedSource;   ///< .evo text for resolved.evo (new runs only)
  std::FILE *progress = stderr; ///< null: silent
  int forceTty = -1;            ///< -1 detect, 0 plain lines, 1 \r-updated line
  GaitFn gait;                  ///< optional; without it pictures show the rest pose
  runtime::GroundShape terrain; ///< the ground the pictures draw (empty: flat)
  /// Optional: called after every committed generation (state.json written),
  /// e.g. to refresh the run's report. It must not write the run's own files.
  std::function<void()> afterGeneration;
};

/// What a finished run reports.
struct RunSummary {
  int lastGeneration = -1; ///< last completed generation
  uint64_t bestId = 0;
  double bestFitness = 0;
  uint64_t designsEvaluated = 0; ///< robots sent to the trainer (duplicates are not)
  double seconds = 0;            ///< wall time of this invocation
};

/// Runs (or resumes) an evolution and returns its summary. Throws evoc::Error
/// for a run directory it must not touch, a resume whose settings differ from
/// the run's (only `generations` may change), or an evaluate callback that
/// breaks its contract. A killed run resumes from its last completed
/// generation and ends exactly as an uninterrupted one (timing fields aside).
RunSummary runEvolution(const EvolutionConfig &config, const EvaluateFn &evaluate,
                        const RunOptions &options);

/// lambda, the children of a generation after the first.
inline int offspringCount(const EvolutionConfig &c) {
  return c.offspring > 0 ? c.offspring : c.population;
}

/// The settings a resume must match, as stored in state.json (the body's
/// under "body": BodyModel::fingerprint()).
nlohmann::json configFingerprint(const EvolutionConfig &config);

/// The log.jsonl fields that measure time (differ between identical runs).
inline const std::vector<std::string> kTimingFields = {
    "seconds", "elapsed_seconds", "train_seconds", "designs_per_second", "robot_steps_per_second"};

} // namespace evoc::evolve
