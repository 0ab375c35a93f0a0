// The one interface through which the runtime trains a population on a back
// end: a thread pool over robots on the CPU (cpuDevice, here), fused
// whole-population kernels on a GPU (runtime/cuda). runtime::train drives
// either with the same loop: per learning iteration one forward + backward
// over every robot still learning, the verdicts, then one optimiser step.
//
//   TrainDevice &dev = ...;                          // one per experiment
//   int n = dev.chunk(pop, first, opts);             // robots that fit at once
//   auto batch = dev.open(pop, first, n, opts, ids, init);
//   batch->iterate(it, /*backward=*/true, active, out);   // out[i].loss, gradNorm
//   batch->keepBest(improved);  batch->update(active);
//   ParamSet best = batch->bestParams(i);             // copied back when asked
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "codegen/Executable.h"
#include "core/Layout.h"
#include "core/ParamSet.h"
#include "core/Population.h"
#include "core/Rollout.h"

namespace evoc::runtime {

struct TrainOptions;

/// What one learning iteration gave for one robot: its rollouts' outcome (the
/// mean over its episodes when a batch runs; the error names the robot,
/// "robot 3: the loss is NaN or infinite") and its gradient's norm.
struct IterationResult : RolloutOutcome {
  double gradNorm = 0; // ||gradient||, after a backward pass
};

/// A chunk of a population resident on a device while it learns. Robots are
/// numbered 0 .. n-1 inside the chunk; robot i is robot first + i of the
/// population it was opened on (and is named so in error messages).
class DeviceBatch {
public:
  virtual ~DeviceBatch() = default;
  /// Forward (and, when `backward`, backward) rollouts of learning iteration
  /// `it` for every robot i with active[i]; fills out[i] for those. The
  /// gradient stays on the device for update().
  virtual void iterate(int64_t it, bool backward, const std::vector<char> &active,
                       std::vector<IterationResult> &out) = 0;
  /// One optimiser step for every robot i with active[i], on the gradient of
  /// its last backward pass.
  virtual void update(const std::vector<char> &active) = 0;
  /// Records the current parameters of every robot i with keep[i] as its best.
  virtual void keepBest(const std::vector<char> &keep) = 0;
  /// Robot i's parameters now, its recorded best, its last gradient (copied
  /// to the host when they live on a device).
  virtual ParamSet params(int i) = 0;
  virtual ParamSet bestParams(int i) = 0;
  virtual ParamSet grads(int i) = 0;
};

/// A back end's way of training populations.
class TrainDevice {
public:
  virtual ~TrainDevice() = default;
  /// "cpu (2 threads)", "NVIDIA H200 (sm_90)".
  virtual std::string name() const = 0;
  /// Throws evoc::Error, with a sentence naming the setting, when this
  /// device cannot train an experiment with these options (before anything
  /// is uploaded or written). Nothing by default.
  virtual void check(const TrainOptions &) const {}
  /// How many robots from `first` on are trained together next (>= 1): as
  /// many as fit in the device's memory (the CPU: all of them).
  virtual int chunk(const Population &pop, int first, const TrainOptions &o) const = 0;
  /// Initialises the parameters of robots [first, first + n) of `pop`
  /// (seeded from (o.seed, ids[r]), then Init kernels, then `init[r]` when
  /// given) and makes them resident for learning.
  virtual std::unique_ptr<DeviceBatch> open(Population &pop, int first, int n,
                                            const TrainOptions &o, const std::vector<uint64_t> *ids,
                                            const std::vector<ParamSet> *init) = 0;
};

/// The CPU device: any Executable whose run() the runtime may call from
/// several threads (cpu, interp); `threads` <= 0: every core.
std::unique_ptr<TrainDevice> cpuDevice(const ModuleInfo &info, const codegen::Executable &exe,
                                       int threads = 0);

/// The initial parameters of robot r (seeded from (seed, id), the module's
/// Init kernels run by `ro`, then `init` when given), as every device sets them.
void initRobot(Population &pop, int r, Rollout &ro, uint64_t seed, uint64_t id,
               const ParamSet *init);

} // namespace evoc::runtime
