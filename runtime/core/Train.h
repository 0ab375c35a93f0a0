// The runtime's entry points: learning controllers for a batch of bodies
// (`train`, called by runtime/evolve) and `evoc sim` (`simulate`).
//
// Usage (evolution engine):
//   runtime::ModuleInfo info(module);             // once per experiment
//   runtime::TrainOptions o;  o.steps = 1000; o.iterations = 35;
//   o.optimizer = {runtime::OptimizerKind::NormalizedStep, 0.2};
//   o.seed = runSeed; o.groundHeight = 0.1;
//   auto res = runtime::train(info, exe, bodies, o, &bodyIds);
//   // res[i].losses: the learning curve of body i (36 entries); valid / error;
//   // fitness = max over losses of -loss; res[i].bestParams: its weights.
// Weights are initialised from (seed, bodyIds[i]), so a body's result does
// not depend on which batch or thread it ran in. For large batches set
// o.keepGrad = o.keepParams = false (only bestParams is then copied out), and
// o.stopAbove / o.stopJump to the .evo's invalid rules to stop doomed curves
// early; res[i].gradNorms is ||gradient|| per iteration.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "codegen/Executable.h"
#include "core/Layout.h"
#include "core/Optimizer.h"
#include "core/ParamSet.h"
#include "core/Robot.h"
#include "core/Rollout.h"
#include "support/CommandSpec.h"

namespace evoc::runtime {

class TrainDevice; // core/Device.h

/// How an iteration's episodes start (sema::Episodes): from the body's
/// initial state, or, from iteration `after` on, from the final state of the
/// same batch element in the previous iteration, all but one in every
/// step(it) elements (those with b % step == it % step start afresh).
struct Continuation {
  int64_t after = -1; // < 0: every episode starts afresh
  int64_t resetEvery = 2, resetEveryMax = 2, growEvery = 0;
  bool active() const { return after >= 0; }
  int64_t step(int64_t it) const;
  /// Whether episode b of iteration `it` starts from its previous final state.
  bool continues(int64_t it, int64_t b) const;
};

/// The per-batch-element states carried from one iteration to the next.
class EpisodeCarry {
public:
  EpisodeCarry() = default;
  EpisodeCarry(const Continuation &c, int64_t batch, int64_t stateBytes);
  /// Points episode b of iteration `it` at its start (when it continues)
  /// and at the buffer receiving its final state.
  void bind(RolloutConfig &rc, int64_t it, int64_t b);
  /// The carried states as hex strings (state.json), and back; set() throws
  /// evoc::Error for a wrong count or size.
  std::vector<std::string> save() const;
  void load(const std::vector<std::string> &hex);

private:
  Continuation cont_;
  int64_t stateBytes_ = 0;
  std::vector<std::vector<std::byte>> states_; // empty until the first iteration
  std::vector<char> filled_;
};

/// Settings of a learning run (and of `evoc sim`).
struct TrainOptions {
  int64_t steps = 1000;                          // T: states per rollout (ELDiR: 1000)
  int iterations = 0;                            // 0: one forward + backward, no update
  OptimizerConfig optimizer;                     // per-robot optimiser
  uint64_t seed = 1;                             // parameter initialisation
  int threads = 0;                               // 0: every core
  int64_t checkpointK = 0;                       // 0: chosen (resolveCheckpointK)
  bool fullTape = false;                         // store every state instead of checkpointing
  int64_t fullTapeBudget = kFullTapeBudgetBytes; // RolloutConfig::fullTapeBudget
  double groundHeight = 0;                       // initial placement (the world's ground height)
  GroundShape terrain;                           // terrain and boxes (initial placement on them)
  int upAxis = 1;                                // vertical coordinate
  double stateLimit = kDefaultStateLimit;        // world.state_limit (RolloutConfig::stateLimit)
  int64_t sliceBytes = int64_t(1) << 30;         // train(): robots held at once (trainSliceBytes)
  bool keepBestParams = true;                    // fill TrainResult::bestParams
  bool keepParams = true;                        // fill TrainResult::params (final parameters)
  bool keepGrad = true;                          // fill TrainResult::grad (last gradient)
  // Early stop (saves the rest of a doomed curve; the paper's invalid rules,
  // docs/evolution.md): stop after a loss with |loss| > stopAbove, or one that
  // moved by >= stopJump from the previous loss. The curve keeps that loss, so
  // a judge applying the same rule to it still sees the violation.
  double stopAbove = std::numeric_limits<double>::infinity();
  double stopJump = std::numeric_limits<double>::infinity();
  // Stop a robot after its first iteration when that iteration's gradient is
  // exactly zero and every iteration runs the same episodes (no commands, no
  // continued episodes): no optimiser moves from a zero gradient with a fresh
  // state, so every later iteration would repeat the same loss (a body
  // without an actuated spring: the controller drives nothing). Its curve
  // keeps that one loss and TrainResult::nothingToLearn says so.
  bool stopWithoutGradient = false;
  // Commands (docs/multitask.md, "Commands"): when set, every episode draws
  // its own from the stream (seed, robot id, iteration, episode); required
  // when the module reads commands. `batch` episodes per iteration: the loss
  // is their mean, one update on the mean gradient.
  const body::CommandSpec *commands = nullptr;
  int64_t batch = 1;
  Continuation continuation;
};

/// The rollout settings of a learning run (no commands bound).
RolloutConfig rolloutConfig(const TrainOptions &o);

/// The stream an episode's commands are drawn from.
uint64_t episodeStream(uint64_t seed, uint64_t robotId, int64_t iteration, int64_t episode);
using SimOptions = TrainOptions;

/// What learning produced for one robot.
struct TrainResult {
  bool valid = true;
  std::string error; // why not valid ("robot 3: the state 'point.x' is NaN ...")
  // Loss of every forward pass, in order: iterations + 1 entries when
  // iterations > 0 (the last is the final weights, forward only), else 1.
  std::vector<double> losses;
  // ||gradient|| of every backward pass (max(1, iterations) entries; the
  // final forward-only pass has none): a differentiability measure.
  std::vector<double> gradNorms;
  // The loss's reported terms (Module::lossTerms) of every forward pass,
  // parallel to `losses` (empty when the loss reports none).
  std::vector<std::vector<double>> terms;
  bool stoppedEarly = false;   // stopAbove / stopJump ended the curve
  bool nothingToLearn = false; // stopWithoutGradient ended it after one pass
  double loss = 0;             // the last entry of losses (NaN when none)
  ParamSet grad;               // gradient of the last forward pass
  ParamSet params;             // parameters after the last update
  ParamSet bestParams;         // parameters of the lowest loss, maybe the final ones
  int64_t robotSteps = 0;      // forward steps run (without recomputation)
  RolloutMemory memory;        // state memory of one rollout
};

/// Trains every robot's controller: per robot, max(1, iterations) times a
/// forward rollout and backward sweep, then (iterations > 0) an optimiser
/// update, and (iterations > 0) one last forward-only rollout of the final
/// weights (ELDiR: 35 iterations give 36 losses). `ids` (default: the robot's index) seeds
/// each robot's weights; `init`, when given, replaces the seeded weights (one ParamSet per robot,
/// checked against the module before anything runs: evoc::Error naming the
/// robot and field). Invalid robots (NaN/inf) are reported, never thrown.
std::vector<TrainResult> train(const ModuleInfo &info, const codegen::Executable &exe,
                               const std::vector<Robot> &robots, const TrainOptions &opts,
                               const std::vector<uint64_t> *ids = nullptr,
                               const std::vector<ParamSet> *init = nullptr);

/// The same on any device (core/Device.h): robots are held in slices of at
/// most opts.sliceBytes (trainSliceBytes each; default 1 GiB, one slice for
/// any population of the examples' sizes), and trained in the chunks
/// the device says fit, each with one learning loop over the whole chunk;
/// the CPU device gives bit-identical results to the overload above, and
/// the results do not depend on the slicing.
std::vector<TrainResult> train(const ModuleInfo &info, TrainDevice &device,
                               const std::vector<Robot> &robots, const TrainOptions &opts,
                               const std::vector<uint64_t> *ids = nullptr,
                               const std::vector<ParamSet> *init = nullptr);

/// The bytes robot `r` takes in a slice: its persistent arenas, and for each
/// parameter the copies a device keeps while it learns (the optimiser's two
/// moments, the best weights, a batch's gradient sum).
int64_t trainSliceBytes(const ModuleInfo &info, const Robot &r);

/// `evoc sim`'s result: per robot, and the time it all took.
struct SimResult {
  std::vector<TrainResult> results;
  double seconds = 0;
  double robotStepsPerSecond = 0;
};

/// `evoc sim`: train (or with iterations = 0 just differentiate) the given
/// robots from PARAMS.json's parameters or, without them, from the seed.
/// Write the result with writeJsonFile(path, simResultToJson(result)).
SimResult simulate(const ir::Module &m, const codegen::Executable &exe,
                   const std::vector<Robot> &robots,
                   const std::optional<std::vector<ParamSet>> &params, const SimOptions &opts);
/// The same on any training device.
SimResult simulate(const ModuleInfo &info, TrainDevice &device, const std::vector<Robot> &robots,
                   const std::optional<std::vector<ParamSet>> &params, const SimOptions &opts);

/// The state field `field` (e.g. "point.x") of one robot at the given times
/// (ascending), for rendering a gait. Uses `params` as the controller; an
/// experiment with commands runs the validation grid's first case (or,
/// without a grid, one episode drawn from the seed).
/// With `outputs`, also the controller's output field `outputField` at each
/// time (Rollout::trajectory).
std::vector<std::vector<double>> trajectory(const ModuleInfo &info, const codegen::Executable &exe,
                                            const Robot &robot, const ParamSet &params,
                                            const TrainOptions &opts, const std::string &field,
                                            const std::vector<int64_t> &times,
                                            std::vector<std::vector<double>> *outputs = nullptr,
                                            const std::string &outputField = "");

/// One robot's loss, d loss / d x[0] of the state field `field` (for
/// "point.x": its initial positions, after the lift onto the ground) and, for
/// a module compiled with body gradients, d loss / d each float body buffer
/// (Rollout::bodyAdjoints), from one forward and backward rollout under
/// `params` (the Python module's simulate(point_grads=True, body_grads=True),
/// docs/python.md). Experiments with commands are refused (evoc::Error).
struct InputGradients {
  bool valid = true;
  std::string error;
  double loss = 0;
  std::vector<double> initial;
  std::map<std::string, std::vector<double>> body;
};
InputGradients inputGradients(const ModuleInfo &info, const codegen::Executable &exe,
                              const Robot &robot, const ParamSet &params, const TrainOptions &opts,
                              const std::string &field);

} // namespace evoc::runtime
