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
#include <string>

namespace evoc::codegen::cuda {

/// One robot's training record in device memory: one definition, which
/// declares the C++ struct below and prints the generated source's
/// `evoc_train_record` (trainRecordSource), so the two cannot disagree.
/// X(type, name, initial value, what): every field is 8 bytes, so neither
/// side pads.
#define EVOC_TRAIN_RECORD(X)                                                                       \
  X(double, step, 0, "optimiser settings: normalised step")                                        \
  X(double, lr, 0, "learning rate")                                                                \
  X(double, beta1, 0, "Adam's beta1")                                                              \
  X(double, beta2, 0, "Adam's beta2")                                                              \
  X(double, eps, 0, "Adam's epsilon")                                                              \
  X(double, stateLimit, 0, "world.state_limit")                                                    \
  X(double, t, 0, "optimiser state: steps taken")                                                  \
  X(double, b1t, 1, "beta1^t")                                                                     \
  X(double, b2t, 1, "beta2^t")                                                                     \
  X(double, gradNorm, 0, "out (norm kernel): ||gradient||")                                        \
  X(double, gradBad, 0, "out (norm kernel): 1 when a gradient entry is NaN / inf")                 \
  X(double, badTime, -1, "out (check kernel): first state beyond the limit, -1: none")             \
  X(double, badField, -1, "its field (index in the rollout's fields)")                             \
  X(double, badValue, 0, "and the value")                                                          \
  X(uint64_t, moments, 0, "device address of Adam's m then v (np doubles each)")                   \
  X(uint64_t, best, 0, "device address of the best parameters (np elements of F)")                 \
  X(uint64_t, gsum, 0, "device address of a batch's gradient sum (np doubles; batch > 1)")         \
  X(uint64_t, carry, 0, "device address of the carried episode states (continued episodes)")       \
  X(double, steps, 0, "T: the states of a rollout")                                                \
  X(double, badIndex, -1, "and its index in the field's buffer (element * comps + component)")

struct TrainRecord {
#define EVOC_FIELD(type, name, init, what) type name = init;
  EVOC_TRAIN_RECORD(EVOC_FIELD)
#undef EVOC_FIELD
};
#define EVOC_FIELD(type, name, init, what)                                                         \
  static_assert(sizeof(type) == 8, "TrainRecord fields are 8 bytes: " #name);
EVOC_TRAIN_RECORD(EVOC_FIELD)
#undef EVOC_FIELD
static_assert(sizeof(TrainRecord) == 160, "TrainRecord: 20 fields of 8 bytes");

/// The CUDA declaration of TrainRecord (`struct evoc_train_record`), with
/// the same fields in the same order and names.
std::string trainRecordSource();

/// The kernels' symbols. `b` of the update kernel is the optimiser: an
/// OptimizerKind's value. The check kernel takes the number of states T as `b`.
/// A batch of episodes: the accumulate kernel adds the gradient into the
/// record's sum in double (`b`: the episode, 0 starts the sum), the mean
/// kernel replaces the gradient by the sum / `b` (the batch). Continued
/// episodes: the carry kernel copies the state fields' snapshot between the
/// tapes and snapshot `b & 0xffffffff` of the record's carry area, in the
/// direction `b >> 32` (a TrainCarry).
inline constexpr const char *kTrainNorm = "evoc_train_norm";
inline constexpr const char *kTrainUpdate = "evoc_train_update";
inline constexpr const char *kTrainKeepBest = "evoc_train_keep_best";
inline constexpr const char *kTrainCheck = "evoc_train_check";
inline constexpr const char *kTrainAccumulate = "evoc_train_accumulate";
inline constexpr const char *kTrainMean = "evoc_train_mean";
inline constexpr const char *kTrainCarry = "evoc_train_carry";
/// The carry kernel's directions: x[T-1] into a snapshot, a snapshot into
/// x[0], x[0] into a snapshot.
enum TrainCarry : int64_t { kSaveLast = 0, kLoadFirst = 1, kSaveFirst = 2 };

} // namespace evoc::codegen::cuda
