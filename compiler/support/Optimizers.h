// The optimisers a `learn` block can name, written once: the CPU runtime
// (runtime/core/Optimizer.cpp) applies them, the CUDA training kernels
// (codegen/cuda/TrainEmitter.cpp) switch on the enum's values, and run
// directories record the canonical name (optimizerName); sema hands the
// kind a `learn` block names. A part of the compiler/runtime contract
// (docs/architecture.md, "The one contract").
#pragma once

#include <cstdint>

namespace evoc {

/// X(Kind, canonical name): in this order, which fixes the enum's values.
#define EVOC_OPTIMIZERS(X)                                                                         \
  X(NormalizedStep, "normalized_step") /* p -= step / (||g|| + 1e-6) * g, ||g|| over the robot */  \
  X(Adam, "adam")                      /* Kingma & Ba, with bias correction */                     \
  X(Sgd, "sgd")                        /* p -= lr * g */

enum class OptimizerKind : uint8_t {
#define EVOC_X(Kind, name) Kind,
  EVOC_OPTIMIZERS(EVOC_X)
#undef EVOC_X
};

/// The canonical name of an optimiser ("normalized_step", "adam", "sgd").
inline const char *optimizerName(OptimizerKind k) {
  switch (k) {
#define EVOC_X(Kind, name)                                                                         \
  case OptimizerKind::Kind:                                                                        \
    return name;
    EVOC_OPTIMIZERS(EVOC_X)
#undef EVOC_X
  }
  return "?";
}

} // namespace evoc
