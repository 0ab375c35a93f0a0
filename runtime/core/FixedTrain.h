// Training one fixed body without evolution (`train { ... }`, docs/multitask.md):
// a batch of episodes per iteration, run in parallel, each with its own
// commands; one optimiser step on the mean gradient; and the validation grid
// of constant commands, scored per loss term.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "codegen/Executable.h"
#include "core/Layout.h"
#include "core/Optimizer.h"
#include "core/ParamSet.h"
#include "core/Robot.h"
#include "core/Train.h"

namespace evoc::runtime {

class Population;
class Rollout;
class ThreadPool;

/// One iteration's batch: mean loss and mean reported terms over episodes.
struct BatchStep {
  bool valid = true;
  std::string error;
  double loss = 0;
  std::vector<double> terms;
  double gradNorm = 0;
  int64_t robotSteps = 0;
};

/// One validation case and the grid's means (the paper's metric).
struct ValidationCase {
  std::vector<double> commands; // one value per command column (CommandSpec::columns)
  bool valid = true;
  std::string error;
  double loss = 0;
  std::vector<double> terms;
};
struct Validation {
  std::vector<ValidationCase> cases;
  bool valid = true; // every case valid
  double meanLoss = 0;
  std::vector<double> meanTerms;
};

/// Episodes per kernel call when a batch runs in lanes (docs/architecture.md,
/// "Episodes in lanes"): 16 doubles are two AVX-512 registers (four AVX2
/// ones), independent chains of FMAs; 8 measured no faster than one episode
/// per call on the forward step, 32 leave a batch of 32 one item for two
/// threads.
inline constexpr int kTrainLanes = 16;

class FixedTrainer {
public:
  /// Weights from (opts.seed, body id 0). opts.batch episodes per iteration;
  /// opts.commands (when the module reads commands) draws them. With
  /// `lanesExe` (the module compiled with codegen::CompileOptions::lanes =
  /// `lanes`), the batch's episodes run `lanes` at a time, the rest of the
  /// batch (batch mod lanes) one at a time on `exe`; the gradient is summed
  /// in episode order either way.
  FixedTrainer(const ModuleInfo &info, const codegen::Executable &exe, const Robot &robot,
               const TrainOptions &opts, const codegen::Executable *lanesExe = nullptr,
               int lanes = 1);
  ~FixedTrainer();
  /// Iteration `it` (0-based; it seeds the episodes' commands): forward and
  /// backward over the batch, then one update unless the batch is invalid.
  BatchStep iterate(int64_t it);
  /// Forward rollouts of every case of the validation grid.
  Validation validate();
  /// The state field `field` at `times` (ascending) in validation case `c`
  /// with the current weights (pictures of the gait under each command).
  std::vector<std::vector<double>> caseTrajectory(int64_t c, const std::string &field,
                                                  const std::vector<int64_t> &times);
  ParamSet params() const;
  void setParams(const ParamSet &p);
  /// The episodes' carried final states (continued episodes; state.json).
  EpisodeCarry &carry() { return carry_; }
  const Optimizer &optimizer() const { return *opt_; }
  Optimizer &optimizer() { return *opt_; }

private:
  const ModuleInfo &info_;
  const codegen::Executable &exe_;
  TrainOptions opts_;
  int copies_ = 1;
  std::unique_ptr<Population> pop_;
  std::unique_ptr<ThreadPool> pool_;
  std::vector<std::unique_ptr<Rollout>> ws_;
  const codegen::Executable *lanesExe_ = nullptr;
  int lanes_ = 1;
  std::vector<std::unique_ptr<Rollout>> lanesWs_; // per thread, for lanesExe_
  std::unique_ptr<Optimizer> opt_;
  EpisodeCarry carry_;
  void broadcast(); // copy 0's parameters to every copy
};

} // namespace evoc::runtime
