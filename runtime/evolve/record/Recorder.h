// The run directory's file format: state.json (the checkpoint, with the
// archive), gen_NNNN/population.json, log.jsonl, best.json and the pictures.
// The engine hands it a generation's outcome; it alone knows the layout.
#pragma once

#include "evolve/engine/Engine.h"
#include "evolve/record/RunDir.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace evoc::evolve::engine {

/// state.json's version: 2 added body models and the archive.
inline constexpr int kStateVersion = 2;

/// The numbers of one generation that go into its log line.
struct GenerationRecord {
  int generation = 0;
  size_t offspring = 0, offspringValid = 0;
  BreedStats breed;
  EvalStats eval;
  double seconds = 0; ///< wall time of the generation
};

/// Writes (and on resume reads) one run directory.
class Recorder {
public:
  /// Creates the run (or opens it to resume) and locks it; throws
  /// evoc::Error for a directory it must not touch.
  Recorder(const EvolutionConfig &config, const RunOptions &options);

  /// On resume: the checkpoint, checked against this experiment's settings
  /// (evoc::Error naming the first difference, or a damaged / foreign
  /// state), with the log trimmed to the completed generations. Returns
  /// false (and leaves `s` alone) when there is nothing to resume.
  bool load(State &s);

  /// The log records so far (completed generations).
  const std::vector<nlohmann::json> &log() const { return log_; }

  /// Writes generation `rec.generation`'s files, state.json last (the commit
  /// point); `s` is the state after selection with s.generation updated.
  void writeGeneration(const State &s, const std::vector<Child> &children,
                       const GenerationRecord &rec, const GaitFn &gait);

  /// The settings a resume must match (state.json "config").
  const nlohmann::json &fingerprint() const { return fingerprint_; }

  /// State <-> JSON (exposed for tests).
  nlohmann::json stateJson(const State &s) const;
  State stateFromJson(const nlohmann::json &j) const;

private:
  nlohmann::json individualJson(const Individual &ind, bool phenotype) const;
  Individual individualFromJson(const nlohmann::json &j) const;
  void writePictures(const State &s, int generation, const GaitFn &gait) const;
  void writeGaitPicture(const State &s, int generation, const GaitFn &gait,
                        const Phenotype &ph) const;

  const EvolutionConfig &config_;
  const BodyModel &model_;
  RunOptions options_;
  nlohmann::json fingerprint_;
  RunDir dir_;
  std::vector<nlohmann::json> log_;
};

} // namespace evoc::evolve::engine
