// The training kernels that keep a population's learning on the GPU between
// rollouts: the gradient norm, the optimiser step (normalised step, Adam,
// SGD), the copy of the best parameters and the check of every state of the
// tapes against world.state_limit. emitCuda appends them to every module
// with a differentiated step; runtime/cuda launches them.
//
// Each kernel has the rollout kernels' signature and runs one block per
// robot: `buffers` is the rollout's step table (robot r's buffer b at
// [r * nBuffers + b]), `sizes` the robots' set sizes, and `scratch` the base
// of an array of TrainRecord, one per robot. `a` is a device address of one
// int per robot (the mask of robots the launch acts on; 0: all of them) and
// `b` a kernel-specific number (below).
#pragma once

#include <cstdint>

namespace evoc::codegen::cuda {

/// One robot's training record in device memory (128 bytes; the generated
/// source declares the same struct, in the same order, as evoc_train_record).
struct TrainRecord {
  double step = 0, lr = 0, beta1 = 0, beta2 = 0, eps = 0; // optimiser settings
  double stateLimit = 0;                                  // world.state_limit
  double t = 0, b1t = 1, b2t = 1; // optimiser state: steps taken, beta1^t, beta2^t
  double gradNorm = 0;            // out (norm kernel): ||gradient||
  double gradBad = 0;             // out (norm kernel): 1 when a gradient entry is NaN / inf
  double badTime = -1;            // out (check kernel): first state beyond the limit, -1: none
  double badField = -1;           // its field (index in the rollout's fields)
  double badValue = 0;            // and the value
  uint64_t moments = 0;           // device address of Adam's m then v (np doubles each)
  uint64_t best = 0;              // device address of the best parameters (np elements of F)
};
static_assert(sizeof(TrainRecord) == 128, "TrainRecord must match evoc_train_record");

/// The kernels' symbols. `b` of the update kernel is the optimiser: one of
/// TrainOptimizer. The check kernel takes the number of states T as `b`.
inline constexpr const char *kTrainNorm = "evoc_train_norm";
inline constexpr const char *kTrainUpdate = "evoc_train_update";
inline constexpr const char *kTrainKeepBest = "evoc_train_keep_best";
inline constexpr const char *kTrainCheck = "evoc_train_check";
enum TrainOptimizer : int { kNormalizedStep = 0, kAdam = 1, kSgd = 2 };

} // namespace evoc::codegen::cuda
