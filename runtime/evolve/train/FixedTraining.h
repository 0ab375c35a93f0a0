// The training engine of `train { ... }` programs (docs/multitask.md): one
// fixed body's controller trained batch by batch by runtime::FixedTrainer,
// validated on the commands' grid, in a crash-safe, resumable run directory
// that shares RunDir's machinery (run.json, resolved.evo, the lock, atomic
// writes, state.json) with evolution runs:
//   DIR/log.jsonl          one line per iteration: loss, terms, |g|, seconds
//   DIR/validation.jsonl   one line per validation: the grid's mean per term
//   DIR/validation.svg     the validation total and terms over iterations
//   DIR/weights.json       the current weights (PARAMS.json format)
//   DIR/robot.json         the body trained (ROBOTS.json format)
//   DIR/gaits/case_NN_*.svg  the gait under each validation case (at the end)
//   DIR/state.json         the checkpoint: weights, optimiser, iteration, the
//                          log so far and the continued episodes' states
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "core/FixedTrain.h"
#include "core/Robot.h"
#include "support/CommandSpec.h"
#include "support/Ground.h"

namespace evoc::evolve {

/// A training run's settings, as sema checked them.
struct FixedTrainingConfig {
  std::string dir;                    ///< the run directory
  bool resume = false;                ///< continue `dir` from its state.json
  std::string resolved;               ///< the resolved experiment (resolved.evo)
  std::vector<std::string> termNames; ///< the module's reported loss terms
  int64_t iterations = 1;
  int64_t validateEvery = 0; ///< 0: validate at the start and the end only
  body::CommandSpec commands;
  // The gait pictures: the episode length, the ground and its shape.
  int64_t steps = 1000;
  double groundHeight = 0;
  GroundShape terrain;
  std::FILE *progress = stdout; ///< validation and checkpoint lines; null: silent
};

/// Runs (or resumes) the training of `robot` by `trainer` in cfg.dir and
/// writes the gaits at the end. An invalid iteration is checkpointed (the
/// weights before it stay in weights.json) and thrown as evoc::Error, as is
/// a damaged or foreign run directory.
void runFixedTraining(const FixedTrainingConfig &cfg, runtime::FixedTrainer &trainer,
                      const runtime::Robot &robot);

/// Validation case `c` of the grid as a label ("speed = 0.5, turn = 0") and
/// a file stem ("case_03_speed0.5_turn0").
std::pair<std::string, std::string> validationCaseName(const body::CommandSpec &spec, int64_t steps,
                                                       int64_t c);

} // namespace evoc::evolve
